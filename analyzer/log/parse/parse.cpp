#include <array>
#include <string_view>
#include <vector>

#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/traceback.hpp"

namespace oomlens::analyzer::parse {
namespace {

bool is_blank(std::string_view t) { return t.find_first_not_of(" \t") == std::string_view::npos; }

// Frame lines, source lines, caret markers and "[Previous line repeated ...]".
bool in_traceback_body(std::string_view t) {
  std::size_t i = t.find_first_not_of(" \t");
  if (i == std::string_view::npos) return true;
  return i > 0 || t.substr(i).starts_with("File \"") || t.find("Previous line repeated") != std::string_view::npos;
}

// A library, an extension or legacy THC that reports the OOM on a line of its
// own, after which Python raises from the call that failed (THCudaCheck, a
// CUDA extension's "cudaMalloc returned error 2", NCCL's WARN lines): the
// traceback right after the message is that failure's, and locates it when
// no traceback precedes the message.
std::vector<Frame> traceback_after(const Region& region, std::size_t at, std::size_t last) {
  constexpr std::size_t kMaxWalk = 4000;
  const auto& rank = region.lines[at].rank;
  std::size_t i = last + 1;
  while (i < region.lines.size() && (region.lines[i].rank != rank || is_blank(region.lines[i].text))) ++i;
  if (i >= region.lines.size()) return {};
  std::string_view header = region.lines[i].text;
  header.remove_prefix(header.find_first_not_of(" \t"));  // not blank: skipped above
  if (!header.starts_with("Traceback (most recent call last)")) return {};
  for (std::size_t j = i + 1; j < region.lines.size() && j - i < kMaxWalk; ++j) {
    if (region.lines[j].rank != rank) continue;
    if (in_traceback_body(region.lines[j].text)) continue;
    return traceback_before(region, j);  // j is the exception line
  }
  return {};
}

// Regions built by hand (tests) carry no literals: every anchor may.
bool may_state_oom(const Region& region, std::size_t k, std::uint64_t oom_literals) {
  return k >= region.anchor_literals.size() || (region.anchor_literals[k] & oom_literals) != 0;
}

}  // namespace

bool may_want_longer_lookback(const Region& region) {
  if (!region.can_look_further_back) return false;
  const std::uint64_t oom_literals = oom_literal_mask();
  for (std::size_t k = 0; k < region.anchors.size(); ++k) {
    if (!may_state_oom(region, k, oom_literals)) continue;
    bool reached_start = false;
    traceback_before(region, region.anchors[k], &reached_start);
    if (reached_start) return true;
  }
  return false;
}

void parse_region(const Region& region, Parsed& out) {
  struct Entry {
    Parser parse;
    bool reads_oom;  // claims only lines that state an out-of-memory (see oom_literal_mask)
  };
  static constexpr std::array<Entry, 14> kParsers = {{
      {parse_survived_oom, true},      {parse_pytorch_allocator, true}, {parse_cuda_malloc_async, true},
      {parse_mps, true},               {parse_cuda_library, true},      {parse_xla, true},
      {parse_tensorflow, true},        {parse_memory_summary, true},    {parse_allocator_notes, true},
      {parse_pressure_warning, false}, {parse_lookalike, false},        {parse_generic_oom, true},
      {parse_collateral, false},       {parse_allocator_setting, false}}};
  const std::uint64_t oom_literals = oom_literal_mask();
  std::size_t consumed_until = 0;  // anchors at or below a claimed message's last line are its own
  bool consumed_any = false;
  for (std::size_t k = 0; k < region.anchors.size(); ++k) {
    std::size_t at = region.anchors[k];
    if (consumed_any && at <= consumed_until) continue;
    const bool oom_possible = may_state_oom(region, k, oom_literals);
    for (const Entry& parser : kParsers) {
      if (parser.reads_oom && !oom_possible) continue;
      std::size_t before = out.ooms.size();
      if (auto last = parser.parse(region, at, out)) {
        for (std::size_t e = before; e < out.ooms.size(); ++e) {
          bool reached_start = false;
          out.ooms[e].traceback = traceback_before(region, at, &reached_start);
          out.wants_longer_lookback = out.wants_longer_lookback || (reached_start && region.can_look_further_back);
          if (out.ooms[e].traceback.empty()) out.ooms[e].traceback = traceback_after(region, at, *last);
        }
        consumed_until = *last;
        consumed_any = true;
        break;
      }
    }
  }
}

}  // namespace oomlens::analyzer::parse
