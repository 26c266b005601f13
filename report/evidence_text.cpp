#include "report/evidence_text.hpp"

#include <array>

#include "analyzer/size.hpp"

namespace oomlens::report {

namespace {

struct FigureName {
  std::string_view label;
  std::string_view short_label;
  std::string_view evidence;
};

constexpr std::array<FigureName, 4> kFigures = {{
    {"requested", "requested", "requested_bytes"},
    {"device free", "device free", "device_free_bytes"},
    {"cached free", "cached free", "cached_free_bytes"},
    {"largest free block", "largest free", "largest_free_block_bytes"},
}};

}  // namespace

std::vector<VerdictFigure> verdict_figures(const rules::Diagnosis& verdict) {
  std::vector<VerdictFigure> out;
  out.reserve(kFigures.size());
  for (const auto& f : kFigures) {
    const auto bytes = verdict.evidence_of(f.evidence);
    out.push_back({f.label, f.short_label, bytes ? analyzer::format_size(*bytes) : std::string("not recorded")});
  }
  return out;
}

}  // namespace oomlens::report
