// XLA device OOMs, as JAX prints them and as TF does
// when it compiles with XLA:
//
//   RESOURCE_EXHAUSTED: Out of memory while trying to allocate {N} bytes.      (also "16.00GiB.")
//   Resource exhausted: Out of memory while trying to allocate {N} bytes.      (2019-2021 status style)
//   RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device ordinal 0
//   RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm.
//     Used 49.34G of 32.00G hbm. Exceeded hbm capacity by 17.34G.              (TPU compile time)
//   RESOURCE_EXHAUSTED: Attempting to reserve 6.20G at the bottom of memory. That was not possible.
//     There are 4.10G free, 0B reserved, and 4.10G reservable.                  (TPU runtime)
//     (then "Top-of-Memory reserved ..." / "Currently allocated ..." lines)
//
// A terminal or log wrapper may cut any of them mid-sentence or mid-number
// ("... trying to allocate" / "17179869184 bytes."): the continuation is joined.
//
// usually after "jaxlib.xla_extension.XlaRuntimeError: " / "jaxlib._jax.XlaRuntimeError: " /
// "jax.errors.JaxRuntimeError: ", and followed by a BufferAssignment report and
// sometimes a BFC "Stats:" block, both consumed here. "Out of host memory ..."
// is host RAM: a cpu_alloc_failure finding.
#include <re2/re2.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/log/parse/bfc_summary.hpp"
#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

constexpr std::size_t kWrappedLines = 3;     // TPU messages are printed over up to 3 lines
constexpr std::size_t kReportLines = 600;    // BufferAssignment lists ~15 peak buffers of ~8 lines; keep bounded
constexpr std::size_t kReportBlankRun = 2;   // blank lines separate peak buffers

// -- the message ------------------------------------------------------------

// Fields the message line(s) give.
struct Message {
  std::size_t pos = 0;  // where the message starts on the anchor line (the status prefix, when printed)
  MemoryNumbers numbers;
  std::optional<int> gpu;
  bool tpu_reserve = false;  // followed by "Top-of-Memory reserved" / "Currently allocated" lines
};

std::optional<std::uint64_t> bytes_or_size(std::string_view number, std::string_view unit) {
  if (unit.empty() || unit == "bytes") return exact_u64(number);  // exact: N > 2^53 must not go through a double
  return parse_size(std::string(number) + std::string(unit));
}

// `text` is the anchor line, possibly with its wrapped continuation appended.
std::optional<Message> read_message(std::string_view text) {
  static const std::string status = R"((?:(?:RESOURCE_EXHAUSTED|Resource exhausted):\s*)?)";
  static const RE2 out_of_memory("(" + status +
                                     R"(Out of memory while trying to allocate\s*([0-9]+(?:\.[0-9]+)?)\s*(bytes|[KMGTPE]i?B|B)?))",
                                 RE2::Latin1);
  static const RE2 request("(" + status +
                               R"(Failed to allocate request for\s*\S+\s*\((\d+)B\)(?:\s*on device ordinal (\d+))?))",
                           RE2::Latin1);
  static const RE2 tpu_compile("(" + status + R"((?:XLA:TPU compile permanent error\.\s*)?)" +
                                   R"(Ran out of memory in memory space (\w+)\.\s*Used ([0-9.]+\s*[KMGTPE]?i?B?) of ([0-9.]+\s*[KMGTPE]?i?B?)))",
                               RE2::Latin1);
  static const RE2 tpu_runtime("(" + status +
                                   R"(Attempting to allocate ([0-9.]+\s*[KMGTPE]?i?B?)\. That was not possible\.)"
                                   R"((?:\s*There are ([0-9.]+\s*[KMGTPE]?i?B?) free)?))",
                               RE2::Latin1);
  static const RE2 tpu_reserve("(" + status +
                                   R"(Attempting\s*to\s*reserve\s*([0-9.]+\s*[KMGTPE]?i?B?)\s*at\s*the\s*bottom\s*of\s*memory\.)"
                                   R"(\s*That\s*was\s*not\s*possible\.(?:\s*There\s*are\s*([0-9.]+\s*[KMGTPE]?i?B?)\s*free)?))",
                               RE2::Latin1);
  // Other RESOURCE_EXHAUSTED memory failures (TPU HBM usage lines, wrapped
  // forms): an XLA OOM without numbers. "Resource exhausted: OOM when
  // allocating" is TensorFlow's and excluded by the caller.
  static const RE2 other(R"(((?:RESOURCE_EXHAUSTED|Resource exhausted):).*(?i:out of memory|\bhbm\b|ran out of))",
                         RE2::Latin1);

  Message m;
  StringPiece found, a, b, c;
  if (RE2::PartialMatch(text, out_of_memory, &found, &a, &b)) {
    m.numbers.requested = bytes_or_size(view(a), view(b));
  } else if (RE2::PartialMatch(text, request, &found, &a, &b)) {
    m.numbers.requested = exact_u64(view(a));  // the exact "(184549376B)", not the rounded MiB figure
    m.gpu = exact_int(view(b));
  } else if (RE2::PartialMatch(text, tpu_compile, &found, &a, &b, &c)) {
    // The compiled program needs `Used` bytes at once; the space holds `of`. Only
    // HBM is the device's memory (vmem is a kernel's scratchpad).
    if (a == "hbm") {
      m.numbers.requested = parse_size(view(b));
      m.numbers.total = parse_size(view(c));
    }
  } else if (RE2::PartialMatch(text, tpu_runtime, &found, &a, &b)) {
    m.numbers.requested = parse_size(view(a));
    if (!b.empty()) m.numbers.free = parse_size(view(b));
  } else if (RE2::PartialMatch(text, tpu_reserve, &found, &a, &b)) {
    m.numbers.requested = parse_size(view(a));
    if (!b.empty()) m.numbers.free = parse_size(view(b));
    m.tpu_reserve = true;
  } else if (RE2::PartialMatch(text, other, &found)) {
  } else {
    return std::nullopt;
  }
  m.pos = pos_of(text, found);
  return m;
}

// -- what follows the message ---------------------------------------------

enum class Block { none, report, stats };

// XLA's "BufferAssignment OOM Debugging." report; TPU memory reports.
bool starts_report(std::string_view text) {
  static const RE2 re(
      R"(^\s*(?:BufferAssignment OOM Debugging\.|Ran out of memory in memory space|Used [0-9.]+\s*\w* of)"
      R"(|Exceeded \w+ capacity by|Total \w+ usage|Program \w+ requirement|Largest program allocations))",
      RE2::Latin1);
  return RE2::PartialMatch(text, re);
}

bool continues_report(std::string_view text) {
  static const RE2 key(
      R"(^\s*(?:BufferAssignment stats:|Peak buffers:|Buffer \d+:|Size:|Operator:|XLA [Ll]abel:|Shape:)"
      R"(|Entry Parameter Subshape:|Allocation type:|=+\s*$|[\w ]+ (?:allocation|fragmentation):))",
      RE2::Latin1);
  if (RE2::PartialMatch(text, key) || starts_report(text)) return true;
  bool indented = !text.empty() && (text[0] == ' ' || text[0] == '\t');
  return indented && text.find("File \"") == std::string_view::npos;  // not a Python frame
}

// Consumes the report and the BFC Stats block (bfc_summary.hpp) after `cursor`;
// returns the last line used.
std::size_t consume_reports(const Region& region, std::size_t cursor, const std::optional<int>& rank,
                            MemoryNumbers& numbers) {
  std::size_t last = cursor;
  Block block = Block::none;
  std::size_t blanks = 0;
  for (std::size_t n = 0; n < kReportLines; ++n) {
    auto next = next_line_of(region, cursor, rank);
    if (!next) break;
    cursor = *next;
    std::string_view raw = head(region.lines[cursor].text);
    std::string_view text = raw;
    strip_log_prefix(text);  // the BFC summary prints each of its lines through LOG
    if (text.find_first_not_of(" \t") == std::string_view::npos) {
      if (++blanks > kReportBlankRun) break;
      continue;  // kept only if a report goes on after it
    }
    blanks = 0;
    if (is_bfc_stats_header(text)) block = Block::stats;
    else if (starts_report(text)) block = Block::report;
    else if (block == Block::report && continues_report(raw)) {}
    else if (block == Block::stats && (read_bfc_stat(text, numbers) || is_bfc_occupancy_render(text))) {}
    else break;
    last = cursor;
  }
  return last;
}

// XLA's host form, "Out of host memory ...": host RAM for staging buffers,
// not the device.
std::optional<std::size_t> host_memory(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 re(R"(Out of host memory while trying to allocate (\d+) bytes)", RE2::Latin1);
  const Line& line = region.lines[at];
  StringPiece bytes;
  if (!RE2::PartialMatch(line.text, re, &bytes)) return std::nullopt;
  out.findings.push_back(
      finding_at(line, FindingKind::cpu_alloc_failure,
                 "XLA ran out of host memory (XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB), not device memory",
                 exact_u64(view(bytes))));
  return at;
}

// JAX on GPU names no device; TPU messages say TPU or HBM. Only the message
// is read: report lines carry user paths and op names ("gpu_train.py").
Device device_of(std::string_view message) {
  static const RE2 tpu(R"((?i)\btpu\b|\bhbm\b)", RE2::Latin1);
  static const RE2 gpu(R"((?i)gpu|cuda)", RE2::Latin1);
  if (RE2::PartialMatch(message, tpu)) return Device::tpu;
  if (RE2::PartialMatch(message, gpu)) return Device::cuda;
  return Device::unknown;
}

// TF's runtime wraps XLA's message in its own exception type.
Framework framework_of(std::string_view text, std::string_view exception) {
  auto in = [](std::string_view hay, std::string_view s) { return hay.find(s) != std::string_view::npos; };
  if (in(exception, "tensorflow") || in(exception, "ResourceExhaustedError") || in(text, "tensorflow/"))
    return Framework::tensorflow;
  return Framework::jax;
}

// The text ends inside a message that goes on: right after the phrase that
// introduces a size, or in the middle of the number.
bool ends_inside_message(std::string_view text) {
  static const RE2 re(
      R"((?i)(?:out\s*of\s*memory\s*while\s*trying\s*to\s*allocate|failed\s*to\s*allocate\s*request\s*for)"
      R"(|attempting\s*to\s*(?:reserve|allocate)|at\s*the\s*bottom\s*of\s*memory\.|that\s*was\s*not\s*possible\.)"
      R"(|there\s*are)\s*[0-9.,]*\s*$)",
      RE2::Latin1);
  return RE2::PartialMatch(text.substr(text.size() > kHeadBytes ? text.size() - kHeadBytes : 0), re);
}

bool starts_record(std::string_view text) {
  std::size_t i = text.find_first_not_of(" \t");
  if (i == std::string_view::npos) return true;
  std::string_view s = text.substr(i);
  return s.starts_with("Traceback (most recent call last)") || s.starts_with("File \"") ||
         s.starts_with("During handling of the above exception") ||
         s.starts_with("The above exception was the direct cause");
}

// TPU's reserve failure goes on with the memory state: "Top-of-Memory
// reserved: X" and "Currently allocated: Y" (allocated on the device).
std::size_t consume_tpu_state(const Region& region, std::size_t last, const std::optional<int>& rank,
                              MemoryNumbers& numbers) {
  static const RE2 state(R"(^\s*(Top-of-Memory reserved|Currently allocated)\W*?([0-9.]+\s*[KMGTPE]?i?B?)\b)",
                         RE2::Latin1);
  for (std::size_t n = 0; n < kWrappedLines; ++n) {
    auto next = next_line_of(region, last, rank);
    StringPiece key, size;
    if (!next || !RE2::PartialMatch(head(region.lines[*next].text), state, &key, &size)) break;
    if (key == "Currently allocated" && !numbers.allocated) numbers.allocated = parse_size(view(size));
    last = *next;
  }
  return last;
}

// Every message above starts with one of these on its first line: a cheap
// test before any pattern runs (most anchor lines are other families').
bool may_start_message(std::string_view text) {
  for (std::string_view phrase : {"RESOURCE_EXHAUSTED", "Resource exhausted", "Out of memory while", "Out of host memory",
                                  "Failed to allocate request", "Attempting", "Ran out of memory in memory space"})
    if (text.find(phrase) != std::string_view::npos) return true;
  return false;
}

}  // namespace

std::optional<std::size_t> parse_xla(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  if (!may_start_message(line.text)) return std::nullopt;
  if (auto last = host_memory(region, at, out)) return last;
  if (line.text.find("OOM when allocating") != std::string::npos) return std::nullopt;  // TensorFlow's

  // A TPU message wraps after "compile permanent error." or "hbm.": join the
  // continuation lines that carry its numbers.
  static const RE2 wrapped(R"(^\s*(?:Ran out of memory in memory space|Used [0-9.]+\s*\w* of|Exceeded \w+ capacity by))",
                           RE2::Latin1);
  std::string text = line.text;
  std::size_t last = at;
  for (std::size_t n = 0; n < kWrappedLines && ends_inside_message(text); ++n) {
    auto next = next_line_of(region, last, line.rank);
    if (!next || starts_record(region.lines[*next].text)) break;
    text += region.lines[*next].text;  // a hard wrap cuts words and numbers: no separator
    last = *next;
  }
  for (std::size_t n = 0; n < kWrappedLines; ++n) {
    auto next = next_line_of(region, last, line.rank);
    if (!next || !RE2::PartialMatch(head(region.lines[*next].text), wrapped)) break;
    text += ' ';
    text += region.lines[*next].text;
    last = *next;
  }
  auto message = read_message(text);
  if (!message || message->pos >= line.text.size()) {
    // Nothing here, or the message starts on a later line (its own anchor).
    return std::nullopt;
  }
  if (!message->numbers.requested) {
    // A wrap anywhere, even mid-word ("... trying to alloca" / "te 17179869184
    // bytes."), leaves a sizeless message: take the next lines when they
    // complete it.
    std::string joined = text;
    std::size_t joined_last = last;
    for (std::size_t n = 0; n < kWrappedLines; ++n) {
      auto next = next_line_of(region, joined_last, line.rank);
      if (!next || starts_record(region.lines[*next].text)) break;
      joined += region.lines[*next].text;
      joined_last = *next;
      if (ends_inside_message(joined)) continue;  // cut mid-number: "... allocate 171798" / "69184 bytes."
      auto whole = read_message(joined);
      if (whole && whole->numbers.requested && whole->pos < line.text.size()) {
        text = std::move(joined);
        last = joined_last;
        message = whole;
        break;
      }
    }
  }

  OomEvent ev = event_at(line, OomFamily::xla);
  ev.numbers = message->numbers;
  ev.gpu = message->gpu;
  ev.exception = exception_before(line.text, message->pos);
  ev.framework = framework_of(line.text, ev.exception);
  ev.message = capped(std::string_view(text).substr(message->pos));
  ev.device = message->tpu_reserve ? Device::tpu : device_of(text);
  if (message->tpu_reserve) last = consume_tpu_state(region, last, line.rank, ev.numbers);
  last = consume_reports(region, last, line.rank, ev.numbers);
  return append_event(region, last, std::move(ev), out);
}

}  // namespace oomlens::analyzer::parse
