// The scanner's literals: for each, what a hit must look like on the raw line
// to be worth a region (the gate), and how far around it the parsers read.
//
// Every parser's trigger text contains one of these literals, case
// insensitively. A literal that ordinary training output also prints
// ("Killed 3 zombie workers", "received signal", a config dump naming
// PYTORCH_CUDA_ALLOC_CONF) gets a gate that drops such hits on the raw bytes,
// before any line is cleaned: the cost of a log then follows its failures,
// not its chatter. Gates only ever drop what no parser would claim; when in
// doubt they keep the hit and let the parser judge.
//
// Several literals cover one message on purpose: a terminal that hard-wraps
// at 80 columns, or a user who selects only part of a message, leaves some of
// them whole ("tried to allocate", "total capacity", "reserved in total",
// "by pytorch").
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/text.hpp"

namespace oomlens::analyzer::parse {
namespace {

template <std::size_t N>
bool contains_any_folded(std::string_view hay, const std::array<std::string_view, N>& needles) {
  return std::any_of(needles.begin(), needles.end(), [&](std::string_view n) { return contains_folded(hay, n); });
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A printed size ("2.00 GiB", "512 bytes", "1.5GB") within `radius` bytes of
// the hit: the partial-selection literals are only worth a region next to one.
bool size_near(std::string_view piece, std::size_t at, std::size_t radius) {
  std::size_t lo = at > radius ? at - radius : 0;
  std::size_t hi = std::min(piece.size(), at + radius);
  for (std::size_t i = lo; i < hi; ++i) {
    if (!is_digit(piece[i])) continue;
    std::size_t j = i;
    while (j < piece.size() && (is_digit(piece[j]) || piece[j] == '.')) ++j;
    while (j < piece.size() && piece[j] == ' ') ++j;
    if (j < piece.size()) {
      char u = ascii_lower(piece[j]);
      if (u == 'b' || ((u == 'k' || u == 'm' || u == 'g' || u == 't') && j + 1 < piece.size() &&
                       (ascii_lower(piece[j + 1]) == 'b' || ascii_lower(piece[j + 1]) == 'i')))
        return true;
    }
    i = j;
  }
  return false;
}

bool gate_size_near(std::string_view piece, std::size_t at) { return size_near(piece, at, 48); }

// "Failed to CUDA calloc 4096 bytes" (NCCL), not every calloc in a C++ trace.
bool gate_calloc(std::string_view piece, std::size_t) { return contains_folded(piece, "fail"); }

// TPU: "Attempting to reserve 6.20G ... That was not possible."
bool gate_not_possible(std::string_view piece, std::size_t) {
  return contains_folded(piece, "reserve") || contains_folded(piece, "allocate");
}

// memory_summary()'s "CUDA OOMs: N": evidence only when N > 0.
bool gate_oom_count(std::string_view piece, std::size_t at) {
  std::size_t i = at + std::string_view("cuda ooms:").size();  // `at` is where the literal starts
  while (i < piece.size() && piece[i] == ' ') ++i;
  if (i >= piece.size() || !is_digit(piece[i])) return false;
  while (i < piece.size() && piece[i] == '0') ++i;
  return i < piece.size() && is_digit(piece[i]);
}

// An assertion inside the caching allocator (what follows an OOM with
// expandable segments), not any INTERNAL ASSERT.
bool gate_allocator_assert(std::string_view piece, std::size_t) { return contains_folded(piece, "cachingallocator"); }

// bash's "Killed", the kernel's "Killed process", DataLoader's "killed by
// signal", Kubernetes' OOMKilled, srun's "task 0: Killed".
bool gate_killed(std::string_view piece, std::size_t at) {
  static constexpr std::array<std::string_view, 4> kForms = {"killed by signal", "killed process", "oomkilled",
                                                            "kill process"};
  if (contains_any_folded(piece, kForms)) return true;
  // The word ends the line's text, or stands after a PID or job number.
  std::size_t end = at + 6;
  while (end < piece.size() && piece[end] == ' ') ++end;
  if (end == piece.size()) return true;
  std::size_t before = at;
  while (before > 0 && piece[before - 1] == ' ') --before;
  return before > 0 && (is_digit(piece[before - 1]) || piece[before - 1] == ']' || piece[before - 1] == '+' ||
                        piece[before - 1] == '-' || piece[before - 1] == ':');
}

// "DataLoader worker (pid(s) 4242) exited unexpectedly", not the source line a
// traceback shows for it ("...(pid(s) {pids_str}) exited unexpectedly")").
bool gate_exited(std::string_view piece, std::size_t at) {
  return !(at >= 3 && piece[at - 2] == ')' && piece[at - 3] == '}');
}

bool gate_signal(std::string_view piece, std::size_t) {
  static constexpr std::array<std::string_view, 6> kForms = {"closing signal", "got signal", "signals.sig",
                                                            "death signal", "killed by signal", "received signal"};
  return contains_any_folded(piece, kForms);
}

bool gate_watchdog(std::string_view piece, std::size_t) {
  static constexpr std::array<std::string_view, 3> kForms = {"timeout", "stuck", "terminated"};
  return contains_any_folded(piece, kForms);
}

// The exception line "...ChildFailedError:", not "raise ChildFailedError(".
bool gate_child_failed(std::string_view piece, std::size_t at) {
  std::size_t end = at + 16;
  return end < piece.size() && piece[end] == ':';
}

// torchrun's "failed (exitcode: 1) local_rank: 3 (pid: 4242)".
bool gate_exitcode(std::string_view piece, std::size_t) { return contains_folded(piece, "local_rank"); }

// A setting's name followed by '=' or ':' (an assignment, a dict, YAML), or
// the deprecation warning, or a Kubernetes "name:" line. Not a mention in prose.
bool gate_setting(std::string_view piece, std::size_t at) {
  if (contains_folded(piece, "deprecated") || contains_folded(piece, "name:")) return true;
  std::size_t i = at;
  while (i < piece.size() && (std::isalnum(static_cast<unsigned char>(piece[i])) || piece[i] == '_')) ++i;
  while (i < piece.size() && (piece[i] == '\'' || piece[i] == '"' || piece[i] == ']' || piece[i] == ' ')) ++i;
  return i < piece.size() && (piece[i] == '=' || piece[i] == ':');
}

// "Unexpected bus error ... insufficient shared memory" from DataLoader workers.
bool gate_shared_memory(std::string_view piece, std::size_t) {
  return contains_folded(piece, "bus error") || contains_folded(piece, "insufficient");
}

constexpr bool kDeep = true, kShallow = false;
// Lines ahead: what follows a library's or runtime's message (its C10
// suffix, the traceback printed after it, whether the run went on: 120
// lines) for OOMs; a line and its C10 suffix for one-line findings.
constexpr std::uint32_t kMessage = 200, kSummary = 400, kTable = 40, kLine = 8, kPair = 2;
// A one-line finding, and one followed by PyTorch's C10_CUDA_CHECK suffix.
constexpr std::uint32_t kOne = 1, kSuffix = 6;
// PyTorch's allocator message wraps to at most 12 lines even with ranks
// interleaved; TensorFlow's BFC dump lists every chunk (its parser reads up
// to 4096 lines), XLA's BufferAssignment report up to 600.
constexpr std::uint32_t kAllocatorMessage = 24, kBfcDump = 4096, kXlaReport = 600;

// The reach of an out-of-memory statement depends on whose it is: the
// kernel's OOM killer and TensorFlow's "not a failure" note are one line
// with nothing above or after to read; a BFC or XLA report goes on for
// hundreds of lines; PyTorch's allocator message for a dozen.
Reach refine_out_of_memory(std::string_view piece, std::size_t) {
  // The kernel's OOM killer ("Out of memory: Killed process 4242 (python)",
  // "Memory cgroup out of memory: Kill process ..."): host RAM, read by the
  // look-alike parser; no GPU OOM parser ever claims it.
  static constexpr std::array<std::string_view, 3> kKernel = {"killed process", "kill process", "memory cgroup"};
  if (contains_any_folded(piece, kKernel)) return {kShallow, kPair, /*may_state_oom=*/false};
  if (contains_folded(piece, "not a failure")) return {kShallow, kPair};
  if (contains_folded(piece, "ran out of memory trying")) return {kDeep, kBfcDump};
  if (contains_folded(piece, "while trying to allocate") || contains_folded(piece, "exhausted")) return {kDeep, kXlaReport};
  if (contains_folded(piece, "tried to allocate")) return {kDeep, kAllocatorMessage};
  return {kDeep, kMessage};
}

// PyTorch's CPU allocator words its failure as the CUDA one does ("you tried
// to allocate 1024 bytes"), but it is host memory, read by the look-alike
// parser: one line, no traceback to walk, no GPU OOM parser to try.
Reach refine_tried_to_allocate(std::string_view piece, std::size_t) {
  if (contains_folded(piece, "defaultcpuallocator")) return {kShallow, kOne, /*may_state_oom=*/false};
  return {kDeep, kAllocatorMessage};
}

// RESOURCE_EXHAUSTED is XLA's (a report follows) unless it is TensorFlow's
// "OOM when allocating tensor" (a few trailer lines).
Reach refine_exhausted(std::string_view piece, std::size_t) {
  if (contains_folded(piece, "oom when")) return {kDeep, kLine};
  return {kDeep, kXlaReport};
}

// Whether a literal may belong to an out-of-memory statement (every OOM
// parser's trigger holds one). The others are only ever findings' (look-
// alikes, collateral failures, warnings, settings): a line with none of the
// former skips the OOM parsers, which on logs full of look-alikes would
// otherwise run a dozen parsers' patterns over every one of them.
constexpr bool kStatesOom = true;

struct Entry {
  std::string_view literal;
  AnchorPolicy policy;
  bool states_oom = false;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      // GPU out-of-memory statements, in any runtime's words.
      {"out of memory", {nullptr, {kDeep, kMessage}, refine_out_of_memory}, kStatesOom},
      {"outofmemory", {nullptr, {kDeep, kMessage}, refine_out_of_memory}, kStatesOom},     // OutOfMemoryError, hipErrorOutOfMemory
      {"out_of_memory", {nullptr, {kDeep, kMessage}}, kStatesOom},   // CUDA_ERROR_OUT_OF_MEMORY
      {"memoryallocation", {nullptr, {kDeep, kMessage}}, kStatesOom},  // cudaErrorMemoryAllocation
      {"xhausted", {nullptr, {kDeep, kMessage}, refine_exhausted}, kStatesOom},  // RESOURCE_EXHAUSTED, ResourceExhaustedError
      {"status_alloc_failed", {nullptr, {kDeep, kMessage}}, kStatesOom},  // CUBLAS_/CUDNN_STATUS_ALLOC_FAILED
      {"alloc_failed", {nullptr, {kDeep, kMessage}}, kStatesOom},    // CUFFT_ALLOC_FAILED, CUSPARSE_/CUSOLVER_STATUS_ALLOC_FAILED
      {"oom when", {nullptr, {kDeep, kLine}}, kStatesOom},        // TensorFlow "OOM when allocating tensor"
      {"enough memory", {nullptr, {kDeep, kMessage}}, kStatesOom},   // "Not enough memory for workspace!", host forms
      {"failed to alloc", {nullptr, {kDeep, kMessage}}, kStatesOom},  // stream_executor, XLA "Failed to allocate request"
      {"cuda calloc", {gate_calloc, {kDeep, kMessage}}, kStatesOom},      // NCCL "Failed to CUDA calloc N bytes"
      {"pt_devmem", {nullptr, {kDeep, kMessage}}, kStatesOom},       // Gaudi "MODULE:PT_DEVMEM Allocation failed"
      {"_use_uvm", {nullptr, {kDeep, kMessage}}, kStatesOom},        // "[_use_uvm] FAILED to allocate"
      {"unhandled cuda error", {nullptr, {kDeep, kMessage}}, kStatesOom},  // NCCL
      // Pieces of the allocator message a selection or a hard wrap leaves whole.
      {"tried to allocate", {nullptr, {kDeep, kAllocatorMessage}, refine_tried_to_allocate}, kStatesOom},
      {"total capacity", {gate_size_near, {kDeep, kAllocatorMessage}}, kStatesOom},
      {"capacty", {gate_size_near, {kDeep, kAllocatorMessage}}, kStatesOom},  // PyTorch 2.1's typo
      {"already allocated", {gate_size_near, {kDeep, kAllocatorMessage}}, kStatesOom},
      {"reserved in total", {gate_size_near, {kDeep, kAllocatorMessage}}, kStatesOom},
      {"by pytorch", {gate_size_near, {kDeep, kAllocatorMessage}}, kStatesOom},  // "allocated by PyTorch", "reserved by PyTorch"
      // Reports that carry an OOM's numbers without its usual header.
      {"in-use chunks", {nullptr, {kDeep, kTable}}, kStatesOom},     // TF BFC "Sum Total of in-use chunks"
      {"was not possible", {gate_not_possible, {kDeep, kTable}}, kStatesOom},  // TPU reserve failure
      {"cuda ooms:", {gate_oom_count, {kShallow, kTable}}, kStatesOom},   // memory_summary() "CUDA OOMs: N"
      {"internal assert", {gate_allocator_assert, {kDeep, kMessage}}, kStatesOom},
      // Look-alikes: host memory, access errors, killed processes.
      {"illegal memory", {nullptr, {kShallow, kSuffix}}},
      {"device-side assert", {nullptr, {kShallow, kSuffix}}},
      {"misaligned address", {nullptr, {kShallow, kSuffix}}},
      {"memory access fault", {nullptr, {kShallow, kSuffix}}},
      {"bad_alloc", {nullptr, {kShallow, kOne}}},
      {"memoryerror", {nullptr, {kShallow, kOne}}},     // Python's MemoryError
      {"allocate memory", {nullptr, {kShallow, kOne}}},  // "can't allocate memory", ENOMEM
      {"unable to allocate", {nullptr, {kShallow, kOne}}},  // numpy
      {"shared memory", {gate_shared_memory, {kShallow, kOne}}},
      {"exited unexpectedly", {gate_exited, {kShallow, kOne}}},  // DataLoader workers
      {"killed", {gate_killed, {kShallow, kOne}}},
      {"oom-kill", {nullptr, {kShallow, kOne}}},
      {"oom_kill", {nullptr, {kShallow, kOne}}},
      // Collateral failures of other ranks, launcher summaries.
      {"signal", {gate_signal, {kShallow, kOne}}},
      {"watchdog", {gate_watchdog, {kShallow, kOne}}},
      {"childfailederror", {gate_child_failed, {kShallow, kSummary}}},
      {"exitcode", {gate_exitcode, {kShallow, kOne}}},
      // Pressure warnings.
      {"cache flush", {nullptr, {kShallow, kOne}}},     // DeepSpeed "allocator cache flushes"
      {"deallocate free memory", {nullptr, {kShallow, kOne}}},  // TF BFC garbage collection
      // Settings the advice depends on.
      {"_alloc_conf", {gate_setting, {kShallow, kPair}}},  // PYTORCH_(CUDA_|HIP_)ALLOC_CONF
      {"no_cuda_memory_caching", {gate_setting, {kShallow, kPair}}},
      {"xla_python_client", {gate_setting, {kShallow, kPair}}},
      {"tf_gpu_allocator", {gate_setting, {kShallow, kPair}}},
      {"tf_force_gpu_allow_growth", {gate_setting, {kShallow, kPair}}},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& anchor_literals() {
  static const std::vector<std::string> literals = [] {
    std::vector<std::string> v;
    for (const auto& e : entries()) v.emplace_back(e.literal);
    return v;
  }();
  return literals;
}

std::uint64_t oom_literal_mask() {
  static const std::uint64_t mask = [] {
    std::uint64_t m = 0;
    for (std::size_t i = 0; i < entries().size() && i < 64; ++i)
      if (entries()[i].states_oom) m |= std::uint64_t{1} << i;
    return m;
  }();
  return mask;
}

const std::vector<AnchorPolicy>& anchor_policies() {
  static const std::vector<AnchorPolicy> policies = [] {
    std::vector<AnchorPolicy> v;
    for (const auto& e : entries()) v.push_back(e.policy);
    return v;
  }();
  return policies;
}

}  // namespace oomlens::analyzer::parse
