// Notes of PyTorch's caching allocator that change how an OOM next to them
// reads:
//
//   [_use_uvm] FAILED to allocate {N} bytes ({x} GiB) via UVM. CUDACachingAllocator will raise an
//   OOM error as a result. You can ignore free-memory numbers reported by PyTorch as they are
//   irrelevant for UVM.
//
// precedes an OOM whose free figures mean nothing: an allocator_pressure
// finding whose detail starts "uvm:", for the classifier to see beside the
// OOM it precedes.
//
//   RuntimeError: !handles_.at(i) INTERNAL ASSERT FAILED at ".../c10/cuda/CUDACachingAllocator.cpp":{n},
//   please report a bug to PyTorch.
//
// repeats on every allocation after an OOM with expandable segments: the
// allocator's state broke in that first OOM. A collateral finding (detail
// "allocator assert: ..."), so that it joins the OOM it follows and is never
// mistaken for the failure itself.
#include <re2/re2.h>

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

constexpr std::size_t kCppTraceLines = 64;  // TORCH_SHOW_CPP_STACKTRACES=1 frames after the message

std::optional<std::size_t> uvm_failure(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 re(R"(\[_use_uvm\]\s*(?i:failed) to allocate (\d{1,20}) bytes(?:\s*\(([0-9.]+\s*GiB)\))?)",
                      RE2::Latin1);
  const Line& line = region.lines[at];
  if (line.text.find("_use_uvm") == std::string::npos) return std::nullopt;
  StringPiece bytes, shown;
  if (!RE2::PartialMatch(head(line.text), re, &bytes, &shown)) return std::nullopt;
  auto n = exact_u64(view(bytes));
  std::string size = shown.empty() ? (n ? format_size(*n) : std::string(view(bytes)) + " bytes") : std::string(view(shown));
  out.findings.push_back(finding_at(
      line, FindingKind::allocator_pressure,
      fmt::format("uvm: PyTorch's UVM mode (torch.cuda._use_uvm) could not allocate {}; the OOM it raises next comes "
                  "from UVM, and the free-memory figures in that message do not apply",
                  size),
      n));
  return at;
}

std::optional<std::size_t> allocator_assert(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 where(R"re(^\s*INTERNAL ASSERT FAILED at "?[^"]*?((?:CUDA|HIP)CachingAllocator\.cpp)"?:(\d+))re",
                         RE2::Latin1);
  static const RE2 cpp_trace(R"(^\s*(?:Exception raised from |frame #\d+:))", RE2::Latin1);
  const Line& line = region.lines[at];
  std::string_view text = head(line.text);
  std::size_t pos = text.find(" INTERNAL ASSERT FAILED at ");
  if (pos == std::string_view::npos) return std::nullopt;
  StringPiece file, number;
  if (!RE2::PartialMatch(text.substr(pos), where, &file, &number)) return std::nullopt;
  // The condition: what stands between the exception's "Name: " and the assert.
  std::string_view what = text.substr(0, pos);
  if (auto colon = what.rfind(": "); colon != std::string_view::npos) what.remove_prefix(colon + 2);
  while (!what.empty() && (what.front() == ' ' || what.front() == '\t')) what.remove_prefix(1);
  bool expandable = what.find("handles_") != std::string_view::npos;
  out.findings.push_back(finding_at(
      line, FindingKind::collateral,
      fmt::format("allocator assert: {} failed in {}:{}; {}", what, view(file), view(number),
                  expandable ? "the caching allocator's expandable-segment state broke in an earlier OOM and every "
                               "allocation after it fails this way: the first OOM is the failure"
                             : "the caching allocator's state is inconsistent, often after an earlier OOM: look for "
                               "the first OOM above")));
  std::size_t last = at;
  for (std::size_t n = 0; n < kCppTraceLines; ++n) {
    auto next = next_line_of(region, last, line.rank);
    if (!next || !RE2::PartialMatch(head(region.lines[*next].text), cpp_trace)) break;
    last = *next;
  }
  return last;
}

}  // namespace

std::optional<std::size_t> parse_allocator_notes(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  if (auto last = uvm_failure(region, at, out)) return last;
  return allocator_assert(region, at, out);
}

}  // namespace oomlens::analyzer::parse
