#include <array>
#include <cctype>
#include <string>

#include "analyzer/parse/parser.hpp"
#include "analyzer/traceback.hpp"

namespace oomlens::analyzer::parse {

const std::vector<std::string>& anchor_literals() {
  // Each parser's trigger text contains one of these (case-insensitively).
  // Chosen to be rare in ordinary training output: a frequent anchor costs a
  // region (cleaning and parsing a few hundred lines) per hit.
  static const std::vector<std::string> literals = {
      "memory",            // every "out of memory" form, workspace, CPU allocator, illegal memory access
      "xhausted",          // RESOURCE_EXHAUSTED, Resource exhausted, ResourceExhaustedError
      "status_alloc_failed",  // CUBLAS_/CUDNN_STATUS_ALLOC_FAILED
      "oom when",          // TensorFlow "OOM when allocating tensor"
      "oom-kill", "oom_kill", "oomkill",  // kernel and Kubernetes OOM killers
      "killed",            // bash's "Killed", DataLoader worker killed by signal
      "signal",            // SIGTERM/SIGKILL of ranks, Signals.SIGKILL
      "watchdog",          // NCCL watchdog timeouts
      "childfailederror",  // torchrun's summary
      "exitcode",          // torchrun's "exitcode: -9"
      "device-side assert",
      "_alloc_conf",       // PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF / PYTORCH_HIP_ALLOC_CONF
      "xla_python_client", // JAX memory settings
      "tf_gpu_allocator",  // TensorFlow allocator setting
      "unhandled cuda error",  // NCCL
      "cache flush",       // DeepSpeed allocator cache flushes
      "bad_alloc",         // std::bad_alloc from host allocations
      "misaligned address",  // a CUDA bug often mistaken for memory trouble
      "exited unexpectedly",  // DataLoader workers
      "tf_force_gpu_allow_growth",
  };
  return literals;
}

const std::vector<bool>& anchors_needing_traceback() {
  // OOM messages need the lines above them (the traceback); signals,
  // settings and warnings are read from their own line and the ones after.
  static const std::vector<bool> deep = [] {
    std::vector<bool> v;
    for (const auto& literal : anchor_literals())
      v.push_back(literal == "memory" || literal == "xhausted" || literal == "status_alloc_failed" ||
                  literal == "oom when" || literal == "unhandled cuda error");
    return v;
  }();
  return deep;
}

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "memory" is the anchor every OOM message family shares, and also a word
// training scripts print on every step ("max memory allocated: 12.3 GB").
// Running ten parsers on each such line made a memory-chatty log crawl
// (10 MB/s). So a line whose only anchor is "memory" must use the word the
// way memory-related messages do: inside an identifier (OUT_OF_MEMORY,
// MemoryError, cudaErrorMemoryAllocation), ending a message ("memory.",
// "(out of memory)", "'out of memory'"), or next to one of these words.
bool memory_in_context(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kWordsBefore = {"of", "allocate", "host", "shared", "enough",
                                                                   "allowed", "illegal"};
  static constexpr std::array<std::string_view, 11> kWordsAfter = {
      "access", "management", "for", "pressure", "fragmentation", "space", "in", "fault", "allocations", "error",
      "cgroup"};
  auto word_before = [&](std::size_t at) {
    std::size_t end = at;
    while (end > 0 && text[end - 1] == ' ') --end;
    std::size_t begin = end;
    while (begin > 0 && std::isalpha(static_cast<unsigned char>(text[begin - 1]))) --begin;
    return text.substr(begin, end - begin);
  };
  auto word_after = [&](std::size_t at) {
    std::size_t begin = at;
    while (begin < text.size() && text[begin] == ' ') ++begin;
    std::size_t end = begin;
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
    return text.substr(begin, end - begin);
  };
  for (std::size_t at = 0; at + 6 <= text.size(); ++at) {
    if ((text[at] | 0x20) != 'm' || !iequals(text.substr(at, 6), "memory")) continue;
    char before = at > 0 ? text[at - 1] : ' ';
    char after = at + 6 < text.size() ? text[at + 6] : ' ';
    if (is_word_char(before) || is_word_char(after) || after == '.' || after == ')' || after == '\'') return true;
    std::string_view prev = word_before(at), next = word_after(at + 6);
    for (auto w : kWordsBefore)
      if (iequals(prev, w)) return true;
    for (auto w : kWordsAfter)
      if (iequals(next, w)) return true;
  }
  return false;
}

bool worth_parsing(const Region& region, std::size_t k) {
  if (k >= region.anchor_literals.size()) return true;  // no literal information: parse
  static const std::uint32_t memory_bit = [] {
    const auto& literals = anchor_literals();
    for (std::size_t i = 0; i < literals.size(); ++i)
      if (literals[i] == "memory") return std::uint32_t{1} << i;
    return std::uint32_t{0};
  }();
  std::uint32_t mask = region.anchor_literals[k];
  if (mask != memory_bit) return true;  // another anchor is on the line
  return memory_in_context(region.lines[region.anchors[k]].text);
}

}  // namespace

void parse_region(const Region& region, Parsed& out) {
  static constexpr std::array<Parser, 10> kParsers = {
      parse_pytorch_allocator, parse_cuda_malloc_async, parse_mps,      parse_cuda_library,
      parse_xla,               parse_tensorflow,        parse_pressure_warning, parse_lookalike,
      parse_collateral,        parse_allocator_setting};
  std::size_t consumed_until = 0;  // anchors at or below a claimed message's last line are its own
  bool consumed_any = false;
  for (std::size_t k = 0; k < region.anchors.size(); ++k) {
    std::size_t at = region.anchors[k];
    if (consumed_any && at <= consumed_until) continue;
    if (!worth_parsing(region, k)) continue;
    for (Parser parser : kParsers) {
      std::size_t before = out.ooms.size();
      if (auto last = parser(region, at, out)) {
        for (std::size_t k = before; k < out.ooms.size(); ++k) out.ooms[k].traceback = traceback_before(region, at);
        consumed_until = *last;
        consumed_any = true;
        break;
      }
    }
  }
}

}  // namespace oomlens::analyzer::parse
