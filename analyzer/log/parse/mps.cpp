// Apple MPS backend OOM (aten/src/ATen/mps/MPSAllocator.mm), raised as a RuntimeError:
//
//   MPS backend out of memory (MPS allocated: {a}, other allocations: {o}, max allowed: {m}).
//   Tried to allocate {size} on {shared|private} pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0
//   to disable upper limit for memory allocations (may cause system failure).
//
// (one line in source), and without "max allowed" and the hint when the
// watermark is disabled. Sizes say KB/MB/GB but are binary (MPS's format_size
// divides by 1024), which
// parse_size already assumes.
#include <re2/re2.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

constexpr std::size_t kMaxLines = 8;

const RE2& anchor_re() {
  static const RE2 re(R"((MPS\s*backend\s*out\s*of\s*memory\s*\(\s*MPS\s*allocated))");
  return re;
}
const RE2& reserved_re() { static const RE2 re(sized(R"(MPS\s*allocated\s*:\s*)")); return re; }
const RE2& other_re() { static const RE2 re(sized(R"(other\s*allocations\s*:\s*)")); return re; }
const RE2& max_allowed_label_re() { static const RE2 re(R"(max\s*allowed)"); return re; }
const RE2& max_allowed_re() { static const RE2 re(sized(R"(max\s*allowed\s*:\s*)")); return re; }
const RE2& requested_re() {
  static const RE2 re(sized(R"(Tried\s*to\s*allocate\s*)", R"(\s*on\s*(?:shared|private)\s*pool)"));
  return re;
}
// With a limit the message ends with the watermark hint, without one at "pool.".
const RE2& hint_end_re() { static const RE2 re(R"(system\s*failure\s*\)\s*\.)"); return re; }
const RE2& pool_end_re() { static const RE2 re(R"(on\s*(?:shared|private)\s*pool\s*\.)"); return re; }

bool message_complete(std::string_view text) {
  if (RE2::PartialMatch(text, max_allowed_label_re())) return RE2::PartialMatch(text, hint_end_re());
  return RE2::PartialMatch(text, pool_end_re());
}

}  // namespace

std::optional<std::size_t> parse_mps(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& first = region.lines[at];
  if (first.text.find("MPS") == std::string::npos) return std::nullopt;

  std::size_t last = at;
  std::string text = joined_message(region, at, kMaxLines, message_complete, &last);
  re2::StringPiece found;
  if (!RE2::PartialMatch(text, anchor_re(), &found)) return std::nullopt;
  std::size_t start = pos_of(text, found);
  if (start >= first.text.size()) return std::nullopt;  // the anchor belongs to a later line
  std::string_view msg = std::string_view(text).substr(start);

  OomEvent ev = event_at(first, OomFamily::mps);
  ev.framework = Framework::pytorch;
  ev.device = Device::mps;
  ev.exception = exception_before(first.text, start);
  ev.message = capped(msg);
  MemoryNumbers& n = ev.numbers;
  n.reserved = size_of(msg, reserved_re());  // the MPS heaps, cached pools included
  n.non_pytorch = size_of(msg, other_re());  // the device's other allocations
  n.requested = size_of(msg, requested_re());
  if (auto limit = size_of(msg, max_allowed_re())) {  // high watermark x recommended working set
    if (*limit >= kPlaceholderSize) ev.placeholder_limit = true;
    else n.limit = limit;
  }
  return append_event(region, last, std::move(ev), out);
}

}  // namespace oomlens::analyzer::parse
