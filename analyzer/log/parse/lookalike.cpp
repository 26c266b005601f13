// Messages that look like a GPU OOM, or sit where one would, and are not one.
// Each becomes a finding, never an OomEvent, so that a host OOM kill or an
// illegal memory access is not "fixed" with allocator settings:
//
//   host_oom_kill      kernel "Out of memory: Killed process {pid} ({name})", "oom-kill:",
//                      oom_kill_process, Kubernetes OOMKilled, Slurm "oom-kill event(s)",
//                      bash's "Killed" after SIGKILL
//   dataloader_killed  "DataLoader worker (pid {n}) is killed by signal: {sig}.",
//                      "DataLoader worker (pid(s) ...) exited unexpectedly", bus errors from /dev/shm
//   cpu_alloc_failure  DefaultCPUAllocator, std::bad_alloc, Python MemoryError, numpy, ENOMEM,
//                      an out-of-memory of pinned/host/CPU memory in any runtime's words
//                      ("failed to allocate 512.00 MiB of pinned memory: out of memory",
//                      "cudaHostAlloc ... out of memory", "host out of memory")
//   not_memory_error   illegal memory access, device-side assert, misaligned address (the
//                      same C10_CUDA_CHECK form as "CUDA error: out of memory")
//
// The plain word "memory" in prose ("memory usage 30%") is none of these, and
// neither is "Killed" inside a sentence ("Killed 3 zombie workers"): only the
// forms the kernel, bash, Slurm and Kubernetes print count.
#include <re2/re2.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/oom_context.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"
#include "analyzer/log/text.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

// A look-alike log holds tens of thousands of these lines a GiB. Each
// pattern runs only where its own literal is on the line (a plain search),
// and a pattern that is only a literal is that search.
bool contains(std::string_view text, std::string_view literal) { return text.find(literal) != std::string_view::npos; }

struct Found {
  FindingKind kind;
  std::string detail;
  std::optional<std::uint64_t> bytes;
  bool c10_suffix = false;  // followed by the C10_CUDA_CHECK suffix lines
};

std::optional<Found> not_memory_error(std::string_view text, const FoldedText& words) {
  static const RE2 misaligned(R"((?i)\bmisaligned address\b)", RE2::Latin1);
  if (words.has_any({"an illegal memory access was encountered", "cuda_error_illegal_address"}))
    return Found{FindingKind::not_memory_error,
                 "illegal memory access: a kernel read or wrote outside its buffers (a bug or corrupted state), "
                 "not an out-of-memory",
                 std::nullopt, true};
  if (contains(text, "device-side assert triggered"))
    return Found{FindingKind::not_memory_error,
                 "device-side assert triggered (often an index out of range), not an out-of-memory", std::nullopt,
                 true};
  if (words.has("misaligned address") && RE2::PartialMatch(text, misaligned))
    return Found{FindingKind::not_memory_error, "misaligned address: a kernel bug, not an out-of-memory",
                 std::nullopt, true};
  if (contains(text, "Memory access fault by GPU node"))
    return Found{FindingKind::not_memory_error,
                 "GPU memory access fault (ROCm's illegal memory access), not an out-of-memory", std::nullopt};
  return std::nullopt;
}

std::optional<Found> cpu_alloc_failure(std::string_view text) {
  static constexpr std::string_view kDefaultCpu = "DefaultCPUAllocator: ", kNumpy = "Unable to allocate ";
  static const RE2 default_cpu(
      R"(^DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate (\d+) bytes)",
      RE2::Latin1);
  static const RE2 numpy(R"(^Unable to allocate ([0-9.]+\s*[KMGTPE]?i?B) for an array with shape)", RE2::Latin1);
  // Python's own exception, not torch.OutOfMemoryError or numpy's _ArrayMemoryError.
  static const RE2 memory_error(R"((?:^|[^\w.])MemoryError(?::|\s*$))", RE2::Latin1);
  StringPiece n;
  if (match_at_literal(text, kDefaultCpu, default_cpu, &n))
    return Found{FindingKind::cpu_alloc_failure, "PyTorch's CPU allocator could not allocate host memory",
                 exact_u64(view(n))};
  if (match_at_literal(text, kNumpy, numpy, &n))
    return Found{FindingKind::cpu_alloc_failure, "numpy could not allocate host memory", parse_size(view(n))};
  if (contains(text, "std::bad_alloc"))
    return Found{FindingKind::cpu_alloc_failure, "C++ std::bad_alloc: a host allocation failed", std::nullopt};
  if (contains(text, "[Errno 12] Cannot allocate memory") || contains(text, "Cannot allocate memory (errno 12)"))
    return Found{FindingKind::cpu_alloc_failure, "ENOMEM: the host could not allocate memory", std::nullopt};
  if (contains(text, "MemoryError") && RE2::PartialMatch(text, memory_error))
    return Found{FindingKind::cpu_alloc_failure, "Python MemoryError: a host allocation failed", std::nullopt};
  return std::nullopt;
}

// An out-of-memory statement about host memory: the memory words tie to the
// host (pinned, page-locked, host, CPU, system memory, RAM, the CUDA host
// allocation calls), not merely appear on the line.
std::optional<Found> host_memory_oom(std::string_view text) {
  static const RE2 host(
      R"((?i)\b(?:pinned|page[- ]locked|host|cpu|system|main)\s+(?:\w+\s+)?(?:memory|ram)\b|\bram\b|\bof pinned\b)"
      R"(|cudaHostAlloc|cudaMallocHost|hipHostMalloc|cuMemHostAlloc|\bhost out of memory)",
      RE2::Latin1);
  if (!oom_statement(text) || !RE2::PartialMatch(head(text), host) || is_code(text)) return std::nullopt;
  MemoryNumbers numbers;
  read_stated_sizes(text, numbers);
  return Found{FindingKind::cpu_alloc_failure,
               "out of pinned/host memory (host RAM, page-locked buffers), not GPU device memory", numbers.requested};
}

std::optional<Found> dataloader_killed(std::string_view text) {
  static constexpr std::string_view kBySignal = "DataLoader worker (pid ", kExited = "DataLoader worker (pid(s) ";
  static const RE2 by_signal(R"(^DataLoader worker \(pid (\d+)\) is killed by signal: ([^.]{1,64}))", RE2::Latin1);
  static const RE2 exited(R"(^DataLoader worker \(pid\(s\) ([^)]{0,256})\) exited unexpectedly)", RE2::Latin1);
  StringPiece pid, sig;
  if (match_at_literal(text, kBySignal, by_signal, &pid, &sig))
    return Found{FindingKind::dataloader_killed,
                 fmt::format("DataLoader worker pid {} killed by signal: {}", view(pid), view(sig)), std::nullopt};
  if (match_at_literal(text, kExited, exited, &pid))
    return Found{FindingKind::dataloader_killed, fmt::format("DataLoader worker(s) pid {} exited unexpectedly", view(pid)),
                 std::nullopt};
  if (contains(text, "Unexpected bus error encountered in worker. This might be caused by insufficient shared memory"))
    return Found{FindingKind::dataloader_killed, "DataLoader worker bus error: insufficient shared memory (/dev/shm)",
                 std::nullopt};
  return std::nullopt;
}

// The first `key` at or after `from` that starts a word (\bkey in RE2).
std::size_t word_start(std::string_view text, std::string_view key, std::size_t from) {
  for (std::size_t at = text.find(key, from); at != std::string_view::npos; at = text.find(key, at + 1))
    if (at == 0 || !is_word_byte(text[at - 1])) return at;
  return std::string_view::npos;
}

// The kernel's "Out of memory: Killed process N (name)" at its leftmost
// place, as an unanchored search finds it: the anchored pattern tried from
// the byte before each "ut of memory: Kill" (match_at_literal's way, one
// byte back so that the pattern decides between "Out" and "out").
bool kernel_kill(std::string_view text, const RE2& anchored, StringPiece* pid, StringPiece* name) {
  constexpr std::string_view kTail = "ut of memory: Kill";
  for (std::size_t at = text.find(kTail, 1); at != std::string_view::npos; at = text.find(kTail, at + 1))
    if (RE2::PartialMatch(text.substr(at - 1), anchored, pid, name)) return true;
  return false;
}

// The kernel's "oom-kill:constraint=...,task=NAME,pid=N,uid=..." line, read
// as the oom_kill pattern's first branch reads it ("oom-kill:.*?\btask=
// ([^,\s]*).*?\bpid=(\d+)"), without its cost: captures with lazy
// repetition made RE2 walk most of a 250-byte line twice, on every line of
// a dmesg epilogue. Only where that branch would be the leftmost match;
// nothing when the line is not of that shape (the pattern decides then).
std::optional<std::pair<std::string_view, std::string_view>> oom_kill_task(std::string_view text) {
  const std::size_t at = text.find("oom-kill:");
  if (at == std::string_view::npos) return std::nullopt;
  // Another branch starting further left would be the match, without captures.
  for (std::string_view other : {"invoked oom-killer", "oom_kill_process", "oom-kill event"})
    if (text.find(other) < at) return std::nullopt;
  const std::size_t task = word_start(text, "task=", at + 9);
  if (task == std::string_view::npos) return std::nullopt;
  const std::size_t name = task + 5;
  std::size_t name_end = name;
  while (name_end < text.size() && text[name_end] != ',' && text[name_end] != ' ' && text[name_end] != '\t' &&
         text[name_end] != '\n' && text[name_end] != '\f' && text[name_end] != '\r')
    ++name_end;
  for (std::size_t pid = word_start(text, "pid=", name_end); pid != std::string_view::npos;
       pid = word_start(text, "pid=", pid + 1)) {
    std::size_t digits = pid + 4, end = digits;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end > digits) return std::pair{text.substr(name, name_end - name), text.substr(digits, end - digits)};
  }
  return std::nullopt;
}

// `words` is `text` folded: each pattern runs only on a line that holds the
// words it cannot match without (a dmesg epilogue is mostly lines of one
// pattern, and the others would each walk the whole line for nothing).
std::optional<Found> host_oom_kill(std::string_view text, const FoldedText& words) {
  // Kernel: "Out of memory: Killed process 4242 (python) total-vm:...kB, anon-rss:...kB, ..."
  // (older: "Kill process ... or sacrifice child"; cgroups: "Memory cgroup out of memory: ...").
  // Anchored: kernel_kill tries it at each place its literal is.
  static const RE2 kernel(R"(^[Oo]ut of memory: Kill(?:ed)? process (\d+) \(([^)]{0,64})\))", RE2::Latin1);
  static const RE2 killed_process(R"(^\s*Killed process (\d+) \(([^)]{0,64})\))", RE2::Latin1);
  static const RE2 anon_rss(R"(^anon-rss:\s*(\d+)kB)", RE2::Latin1);
  static const RE2 oom_kill(R"(oom-kill:.*?\btask=([^,\s]*).*?\bpid=(\d+)|invoked oom-killer|oom_kill_process|oom-kill event|oom-kill:)",
                            RE2::Latin1);
  static const RE2 k8s(R"((?i)\bOOMKilled\b)", RE2::Latin1);
  // bash: "Killed" alone, "./run.sh: line 12: 4242 Killed   python train.py",
  // "[1]+  Killed   python ..."; srun: "srun: error: node1: task 0: Killed".
  static const RE2 bash(R"(^\s*(?:Killed|.*: line \d+:\s+(\d+) Killed\b.*|\[\d+\][+-]?\s+Killed\b.*|srun: error: .*: tasks? [\d,-]+: Killed)\s*$)",
                        RE2::Latin1);
  StringPiece pid, name;
  if ((words.has("out of memory: kill") && kernel_kill(text, kernel, &pid, &name)) ||
      (words.has("killed process") && RE2::PartialMatch(text, killed_process, &pid, &name))) {
    Found f{FindingKind::host_oom_kill,
            fmt::format("the kernel's OOM killer killed pid {} ({}): host RAM, not GPU memory", view(pid), view(name)),
            std::nullopt};
    StringPiece kb;
    if (match_at_literal(text, "anon-rss:", anon_rss, &kb)) {
      auto k = exact_u64(view(kb));
      if (k && *k <= UINT64_MAX / 1024) f.bytes = *k * 1024;  // the victim's resident memory
    }
    return f;
  }
  if (const auto read = oom_kill_task(text))
    return Found{FindingKind::host_oom_kill,
                 fmt::format("the kernel's OOM killer killed pid {} ({}): host RAM, not GPU memory", read->second,
                             read->first),
                 std::nullopt};
  // Without "oom-kill:" the pattern's first branch, the only one that
  // captures, cannot match: whether the others do is four plain searches,
  // each a literal the pattern is (about 5,000 such lines a GiB of a
  // look-alike log; the pattern took 2,500 cycles a line).
  static constexpr std::string_view kRan = "the kernel's OOM killer ran: host RAM, not GPU memory";
  StringPiece task;
  if (!contains(text, "oom-kill:")) {
    if (contains(text, "invoked oom-killer") || contains(text, "oom_kill_process") || contains(text, "oom-kill event"))
      return Found{FindingKind::host_oom_kill, std::string(kRan), std::nullopt};
  } else if (words.has_any({"oom-kill", "oom_kill_process"}) && RE2::PartialMatch(text, oom_kill, &task, &pid)) {
    return Found{FindingKind::host_oom_kill,
                 pid.empty() ? std::string(kRan)
                             : fmt::format("the kernel's OOM killer killed pid {} ({}): host RAM, not GPU memory",
                                           view(pid), view(task)),
                 std::nullopt};
  }
  if (words.has("oomkilled") && RE2::PartialMatch(text, k8s))
    return Found{FindingKind::host_oom_kill,
                 "Kubernetes OOMKilled: the container exceeded its memory limit (host RAM, not GPU memory)",
                 std::nullopt};
  if (words.has("killed") && RE2::PartialMatch(text, bash, &pid))
    return Found{FindingKind::host_oom_kill,
                 "the process was killed with SIGKILL (\"Killed\"), most often by the host's OOM killer", std::nullopt};
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> parse_lookalike(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  std::string_view text(line.text);
  // Each family's patterns run only where the words they all require appear.
  const FoldedText words(text);
  std::optional<Found> found;
  if (words.has_any({"illegal memory", "illegal_address", "device-side assert", "misaligned address",
                     "memory access fault"}))
    found = not_memory_error(text, words);
  if (!found && words.has_any({"dataloader worker", "unexpected bus error"})) found = dataloader_killed(text);
  if (!found && words.has_any({"defaultcpuallocator", "unable to allocate", "bad_alloc", "cannot allocate memory",
                               "memoryerror"}))
    found = cpu_alloc_failure(text);
  if (!found && words.has("kill")) found = host_oom_kill(text, words);
  if (!found && words.has_any({"memory", "ram", "pinned", "hostalloc", "mallochost", "hostmalloc"}))
    found = host_memory_oom(text);
  // A traceback shows the source line that raised ("raise RuntimeError(f\"DataLoader
  // worker (pid(s) {pids_str}) exited unexpectedly\")"): the words, not the failure.
  if (!found || is_code(text)) return std::nullopt;

  out.findings.push_back(finding_at(line, found->kind, std::move(found->detail), found->bytes));
  // The suffix's "...to enable device-side assertions." line is not read as an assert.
  return found->c10_suffix ? c10_suffix_end(region, at) : at;
}

}  // namespace oomlens::analyzer::parse
