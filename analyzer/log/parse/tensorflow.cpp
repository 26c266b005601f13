// TensorFlow's OOMs: the op-level error
//
//   OOM when allocating tensor with shape{shape} and type {dtype} on {device} by allocator {allocator}
//
// (after "ResourceExhaustedError:", "Resource exhausted:" or "RESOURCE_EXHAUSTED:"),
// and the BFC allocator's warning, old and new wordings:
//
//   Allocator ({name}) ran out of memory trying to allocate {hr} (rounded to {N})requested by op {op}
//   Allocator ({name}) ran out of memory trying to allocate {hr} (rounded to {N}) from the {end} end requested by op {op}
//
// followed by "Current allocation summary follows." and a dump ending in a
// "Stats:" block, consumed here. One failure usually prints both the warning
// and the error: both are events, the incident grouping merges them.
//
// The BFC summary is TSL's, so JAX prints it too: its source path tells which.
// The "... with freed_by_count=0. The caller indicates that this is not a
// failure ..." variant is a warning (allocator_pressure), and a tensor that did
// not fit in host memory (device CPU, host allocators) is a cpu_alloc_failure.
//
// Also TensorFlow's wordings as they print in practice:
//
//   the BFC dump without its "ran out of memory" line (a selection, a log cut
//   at the top, an output cell truncated): "Summary of in-use Chunks by
//   size:", "N Chunks of size ...", "Sum Total of in-use chunks: ...", then
//   the Stats block. BFC dumps only when an allocation failed, so this is
//   still a TF GPU OOM, with the limit (total) and in-use (allocated)
//   figures, and the request when the dump's "Bin for X was Y" line shows.
//
//   eager ops: "ResourceExhaustedError: {{function_node __wrapped__MatMul_device_
//   /job:localhost/replica:0/task:0/device:GPU:0}} failed to allocate memory [Op:MatMul]".
#include <re2/re2.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analyzer/log/parse/bfc_summary.hpp"
#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

constexpr std::size_t kTrailerLines = 8;    // "[[{{node ...}}]]", "Hint: ...", "[Op:...]"
constexpr std::size_t kDumpLines = 4096;    // the BFC dump lists every chunk; keep bounded

// Host allocators: "cpu", "mklcpu", the pinned "gpu_host_bfc"/"cuda_host_bfc".
bool is_host_allocator(std::string_view name) {
  static const RE2 re(R"((?i)cpu|host)", RE2::Latin1);
  return RE2::PartialMatch(name, re);
}

// -- OOM when allocating ----------------------------------------------------

// DataTypeString names and their sizes; others (string, variant) have none.
std::optional<std::uint64_t> dtype_bytes(std::string_view dtype) {
  struct Entry { std::string_view name; std::uint64_t bytes; };
  static constexpr Entry kSizes[] = {
      {"float", 4},  {"double", 8},  {"half", 2},   {"bfloat16", 2}, {"int8", 1},        {"uint8", 1},
      {"int16", 2},  {"uint16", 2},  {"int32", 4},  {"uint32", 4},   {"int64", 8},       {"uint64", 8},
      {"bool", 1},   {"complex64", 8}, {"complex128", 16}, {"qint8", 1}, {"quint8", 1}, {"qint16", 2},
      {"quint16", 2}, {"qint32", 4}, {"float8_e5m2", 1}, {"float8_e4m3fn", 1}};
  for (const auto& e : kSizes)
    if (e.name == dtype) return e.bytes;
  return std::nullopt;
}

// The tensor's size from "[32,1024,64,64]" and the dtype: the message gives
// no byte count, but the shape states it exactly. Unknown dims or overflow: none.
std::optional<std::uint64_t> tensor_bytes(std::string_view shape, std::string_view dtype) {
  auto total = dtype_bytes(dtype);
  if (!total || shape.size() < 2) return std::nullopt;
  std::string_view dims = shape.substr(1, shape.size() - 2);
  while (!dims.empty()) {
    std::size_t comma = dims.find(',');
    std::string_view dim = dims.substr(0, comma);
    while (!dim.empty() && dim.front() == ' ') dim.remove_prefix(1);
    auto n = exact_u64(dim);
    if (!n || __builtin_mul_overflow(*total, *n, &*total)) return std::nullopt;
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
  }
  return total;
}

// "[[{{node conv2d/Conv2D}}]]", the report_tensor_allocations_upon_oom hint, "[Op:__inference_...]".
bool is_oom_trailer(std::string_view text) {
  static const RE2 re(
      R"(^\s*(?:\[\[|\(defined at |Hint: If you want to see a list of allocated tensors when OOM happens|\[Op:))",
      RE2::Latin1);
  return RE2::PartialMatch(head(text), re);
}

std::optional<std::size_t> oom_when_allocating(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 re(
      R"(((?:(?:Resource exhausted|RESOURCE_EXHAUSTED):\s*)?OOM when allocating tensor (?:with|of) shape\s*(\[[^\]]*\])?)"
      R"(\s*and type (\w+)(?:\s+on (\S+))?(?:\s+by allocator (\S+))?))",
      RE2::Latin1);
  static const RE2 device_re(R"((?i)device:(?:XLA_)?(GPU|TPU|CPU):(\d+))", RE2::Latin1);
  const Line& line = region.lines[at];
  StringPiece found, shape, dtype, device, allocator;
  if (!RE2::PartialMatch(line.text, re, &found, &shape, &dtype, &device, &allocator)) return std::nullopt;

  std::size_t last = at;
  for (std::size_t n = 0; n < kTrailerLines; ++n) {
    auto next = next_line_of(region, last, line.rank);
    if (!next || !is_oom_trailer(region.lines[*next].text)) break;
    last = *next;
  }

  auto bytes = tensor_bytes(view(shape), view(dtype));
  StringPiece kind, index;
  bool on_device = RE2::PartialMatch(device, device_re, &kind, &index);
  bool host = on_device ? (kind == "CPU" || kind == "cpu") : is_host_allocator(view(allocator));
  if (host) {
    out.findings.push_back(finding_at(
        line, FindingKind::cpu_alloc_failure,
        fmt::format("TensorFlow could not allocate a {} tensor{} in host memory (allocator {})", view(dtype),
                    view(shape), allocator.empty() ? "unknown" : view(allocator)),
        bytes));
    return last;
  }

  OomEvent ev = event_at(line, OomFamily::tensorflow);
  ev.framework = Framework::tensorflow;
  std::size_t pos = pos_of(line.text, found);
  ev.numbers.requested = bytes;
  if (on_device && (kind == "TPU" || kind == "tpu")) ev.device = Device::tpu;
  else if (on_device) ev.device = Device::cuda;
  if (on_device) ev.gpu = exact_int(view(index));
  // "...ResourceExhaustedError: OOM when" names the type right before; "(0)
  // Resource exhausted: OOM when" has none.
  ev.exception = exception_before(line.text, pos);
  ev.message = capped(std::string_view(line.text).substr(pos));
  return append_event(region, last, std::move(ev), out);
}

// -- BFC "ran out of memory" ------------------------------------------------

// Lines of the BFC allocator's DumpMemoryLog and its Stats block; a line that starts
// another message ends the dump.
bool is_dump_line(std::string_view raw, MemoryNumbers& numbers) {
  static const RE2 other_message(R"((?i)ran out of memory|oom when|garbage collection|resource_?exhausted)",
                                 RE2::Latin1);
  static const RE2 dump(
      R"(^\s*(?:Current allocation summary follows|If the cause is memory fragmentation|If this is caused by memory fragmentation)"
      R"(|BFCAllocator dump for|Bin \(\d+\):|Bin for .* was|Chunk State|Size: .*\|\s*Requested Size|Next region of size)"
      R"(|(?:InUse|Free)\s+at\s+[0-9a-fA-Fx]+|Chunk at|Summary of in-use Chunks by size|\d+ Chunks of size)"
      R"(|Sum Total of in-use chunks|Total bytes in pool|total_region_allocated_bytes_))",
      RE2::Latin1);
  std::string_view text = head(raw);
  std::string_view file;
  bool prefixed = strip_log_prefix(text, &file);
  if (read_bfc_stat(text, numbers) || is_bfc_stats_header(text) || is_bfc_occupancy_render(text)) return true;
  if (RE2::PartialMatch(text, dump)) return true;
  if (RE2::PartialMatch(text, other_message)) return false;
  return prefixed && file.ends_with("bfc_allocator.cc");  // whatever else BFC logs in its dump
}

// The dump, up to its occupancy render. LOG adds a newline after the Stats
// block's own, so one blank line may sit inside it.
std::size_t consume_dump(const Region& region, std::size_t at, MemoryNumbers& numbers) {
  std::size_t last = at, cursor = at;
  bool blank_before = false;
  for (std::size_t n = 0; n < kDumpLines; ++n) {
    auto next = next_line_of(region, cursor, region.lines[at].rank);
    if (!next) break;
    cursor = *next;
    std::string_view text = region.lines[cursor].text;
    if (text.find_first_not_of(" \t") == std::string_view::npos) {
      if (blank_before) break;
      blank_before = true;
      continue;
    }
    blank_before = false;
    if (!is_dump_line(text, numbers)) break;
    last = cursor;
  }
  return last;
}

// JAX vendors the same BFC allocator: its builds log from external/xla,
// external/tsl or (older) external/org_tensorflow; TF's from tensorflow/ or
// external/local_tsl, external/local_xla.
Framework bfc_framework(std::string_view text) {
  static const RE2 jax(R"(external/(?:org_tensorflow|xla|tsl)/|jaxlib)", RE2::Latin1);
  return RE2::PartialMatch(text, jax) ? Framework::jax : Framework::tensorflow;
}

std::optional<std::size_t> bfc_ran_out(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 re(
      R"((Allocator \(([^)]*)\) ran out of memory trying to allocate\s*([0-9]+(?:\.[0-9]+)?\s*[KMGTPE]?i?B))"
      R"((?:\s*\(rounded to (\d+)\))?))",
      RE2::Latin1);
  static const RE2 not_a_failure(R"(freed_by_count=|The caller indicates that this is not a failure)", RE2::Latin1);
  static const RE2 gpu_name(R"((?i)gpu_(\d+)_)", RE2::Latin1);
  const Line& line = region.lines[at];
  StringPiece found, name, shown, rounded;
  if (!RE2::PartialMatch(line.text, re, &found, &name, &shown, &rounded)) return std::nullopt;
  auto shown_bytes = parse_size(view(shown));

  if (rounded.empty() && RE2::PartialMatch(line.text, not_a_failure)) {
    out.findings.push_back(finding_at(
        line, FindingKind::allocator_pressure,
        fmt::format("BFC allocator ({}) could not allocate {}; the caller went on without it (not a failure)",
                    view(name), view(shown)),
        shown_bytes));
    return at;
  }

  MemoryNumbers numbers;
  // The rounded figure is what BFC looked for; TF 1.x printed only the size.
  numbers.requested = rounded.empty() ? shown_bytes : exact_u64(view(rounded));
  std::size_t last = consume_dump(region, at, numbers);

  if (is_host_allocator(view(name))) {
    out.findings.push_back(finding_at(line, FindingKind::cpu_alloc_failure,
                                      fmt::format("BFC host allocator ({}) ran out of memory", view(name)),
                                      numbers.requested));
    return last;
  }
  OomEvent ev = event_at(line, OomFamily::tensorflow);
  ev.framework = bfc_framework(line.text);
  ev.numbers = numbers;
  int gpu = 0;
  if (RE2::PartialMatch(name, gpu_name, &gpu)) ev.gpu = gpu;
  static const RE2 gpu_word(R"((?i)gpu|cuda)", RE2::Latin1);
  if (RE2::PartialMatch(name, gpu_word)) ev.device = Device::cuda;
  std::size_t pos = pos_of(line.text, found);
  ev.message = capped(std::string_view(line.text).substr(pos));
  return append_event(region, last, std::move(ev), out);
}

// -- the BFC dump without its header ----------------------------------------

constexpr std::size_t kDumpLookback = 4096;

// The dump's own lines above the anchor: "BFCAllocator dump for {name}" names
// the allocator, "Bin for {hr} was {hr}, Chunk State:" the request it failed.
struct DumpAbove {
  std::optional<std::uint64_t> requested;
  std::string allocator;
};

DumpAbove read_dump_above(const Region& region, std::size_t at) {
  static const RE2 bin_for(R"(^\s*Bin for ([0-9]+(?:\.[0-9]+)?\s*[KMGTPE]?i?B) was)", RE2::Latin1);
  static const RE2 dump_for(R"(^\s*BFCAllocator dump for (\S+))", RE2::Latin1);
  DumpAbove above;
  const auto& rank = region.lines[at].rank;
  for (std::size_t k = 0, seen = 0; k < at && seen < kDumpLookback; ++k) {
    const Line& line = region.lines[at - 1 - k];
    if (line.rank != rank) continue;
    ++seen;
    std::string_view text = head(line.text);
    strip_log_prefix(text);
    StringPiece v;
    if (!above.requested && RE2::PartialMatch(text, bin_for, &v)) above.requested = parse_size(view(v));
    if (RE2::PartialMatch(text, dump_for, &v)) {
      above.allocator = std::string(view(v));
      break;  // the top of the dump
    }
    MemoryNumbers ignored;
    if (!is_dump_line(line.text, ignored)) break;
  }
  return above;
}

std::optional<std::size_t> bfc_dump_without_header(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 anchor(R"(^\s*(?:Summary of in-use Chunks by size:|Sum Total of in-use chunks:))", RE2::Latin1);
  static const RE2 gpu_name(R"((?i)gpu_(\d+)_)", RE2::Latin1);
  const Line& line = region.lines[at];
  std::string_view text = head(line.text);
  if (text.find("n-use Chunks") == std::string_view::npos && text.find("n-use chunks") == std::string_view::npos)
    return std::nullopt;
  strip_log_prefix(text);
  if (!RE2::PartialMatch(text, anchor)) return std::nullopt;

  DumpAbove above = read_dump_above(region, at);
  MemoryNumbers numbers;
  numbers.requested = above.requested;
  std::size_t last = consume_dump(region, at, numbers);
  if (!above.allocator.empty() && is_host_allocator(above.allocator)) {
    out.findings.push_back(finding_at(line, FindingKind::cpu_alloc_failure,
                                      fmt::format("BFC host allocator ({}) ran out of memory", above.allocator),
                                      numbers.requested));
    return last;
  }
  OomEvent ev = event_at(line, OomFamily::tensorflow);
  ev.framework = bfc_framework(line.text);
  ev.numbers = numbers;
  int gpu = 0;
  if (RE2::PartialMatch(above.allocator, gpu_name, &gpu)) ev.gpu = gpu;
  ev.device = Device::cuda;  // a device allocator (GPU_0_bfc), or none named: BFC dumps are almost always the GPU's
  std::string message = "BFC allocator dump without its \"ran out of memory\" line";
  if (!above.allocator.empty()) message += fmt::format(" ({})", above.allocator);
  if (numbers.total) message += fmt::format("; Limit: {}", *numbers.total);
  if (numbers.allocated) message += fmt::format(", InUse: {}", *numbers.allocated);
  if (numbers.largest_free_block) message += fmt::format(", LargestFreeBlock: {}", *numbers.largest_free_block);
  ev.message = std::move(message);
  return append_event(region, last, std::move(ev), out);
}

// -- eager ops: "failed to allocate memory" ----------------------------------

std::optional<std::size_t> eager_failed_to_allocate(const Region& region, std::size_t at, Parsed& out) {
  // The exception type, or the status prefix of a root-error list, then the message.
  static const RE2 typed(R"((?:^|\s)((?:[\w.]*\.)?ResourceExhaustedError):\s*(.*?\bfailed to allocate memory\b.*)$)",
                         RE2::Latin1);
  static const RE2 status(R"(((?:Resource exhausted|RESOURCE_EXHAUSTED):\s*.*?\bfailed to allocate memory\b.*)$)",
                          RE2::Latin1);
  static const RE2 device_re(R"((?i)device:(?:XLA_)?(GPU|TPU|CPU):(\d+))", RE2::Latin1);
  const Line& line = region.lines[at];
  std::string_view text = head(line.text);
  if (text.find("failed to allocate memory") == std::string_view::npos) return std::nullopt;
  StringPiece exception, message;
  if (!RE2::PartialMatch(text, typed, &exception, &message) && !RE2::PartialMatch(text, status, &message))
    return std::nullopt;
  StringPiece kind, index;
  bool on_device = RE2::PartialMatch(text, device_re, &kind, &index);
  if (on_device && (kind == "CPU" || kind == "cpu")) {
    out.findings.push_back(finding_at(line, FindingKind::cpu_alloc_failure,
                                      "TensorFlow could not allocate memory for an op on the CPU (host memory)"));
    return at;
  }
  OomEvent ev = event_at(line, OomFamily::tensorflow);
  ev.framework = Framework::tensorflow;
  if (on_device) {
    ev.device = kind == "TPU" || kind == "tpu" ? Device::tpu : Device::cuda;
    ev.gpu = exact_int(view(index));
  }
  ev.exception = std::string(view(exception));
  ev.message = capped(view(message));
  std::size_t last = at;
  for (std::size_t n = 0; n < kTrailerLines; ++n) {
    auto next = next_line_of(region, last, line.rank);
    if (!next || !is_oom_trailer(region.lines[*next].text)) break;
    last = *next;
  }
  return append_event(region, last, std::move(ev), out);
}

}  // namespace

std::optional<std::size_t> parse_tensorflow(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  if (auto last = oom_when_allocating(region, at, out)) return last;
  if (auto last = bfc_ran_out(region, at, out)) return last;
  if (auto last = eager_failed_to_allocate(region, at, out)) return last;
  return bfc_dump_without_header(region, at, out);
}

}  // namespace oomlens::analyzer::parse
