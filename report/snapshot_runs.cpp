#include "report/snapshot_runs.hpp"

#include <fmt/format.h>

#include "analyzer/size.hpp"

namespace oomlens::report {

namespace snap = analyzer::snapshot;

std::string signed_size(std::int64_t change) {
  if (change == 0) return analyzer::format_size(0);
  const auto magnitude = change < 0 ? static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(change)
                                    : static_cast<std::uint64_t>(change);
  return fmt::format("{}{}", change < 0 ? '-' : '+', analyzer::format_size(magnitude));
}

std::string oom_name(const snap::RunFigures& run) {
  return run.oom ? std::string(analyzer::to_string(*run.oom)) : std::string("none");
}

bool dump_figures_stand_for_peak(const snap::Comparison& c) { return !c.a.peak_from_trace || !c.b.peak_from_trace; }

std::vector<ComparisonRow> comparison_rows(const snap::Comparison& c) {
  const std::string mark = dump_figures_stand_for_peak(c) ? "*" : "";
  using Kind = ComparisonRow::Kind;
  auto bytes = [](std::string name, std::uint64_t a, std::uint64_t b) {
    ComparisonRow row;
    row.name = std::move(name), row.a = a, row.b = b;
    return row;
  };
  std::vector<ComparisonRow> rows = {bytes("peak allocated" + mark, c.a.peak_allocated, c.b.peak_allocated),
                                     bytes("peak reserved" + mark, c.a.peak_reserved, c.b.peak_reserved),
                                     bytes("reserved at dump", c.a.reserved, c.b.reserved),
                                     bytes("allocated at dump", c.a.allocated, c.b.allocated),
                                     bytes("inactive split", c.a.inactive_split, c.b.inactive_split)};
  ComparisonRow fragmentation;
  fragmentation.name = "fragmentation", fragmentation.kind = Kind::ratio;
  fragmentation.ratio_a = c.a.fragmentation, fragmentation.ratio_b = c.b.fragmentation;
  rows.push_back(std::move(fragmentation));
  ComparisonRow oom;
  oom.name = "out of memory", oom.kind = Kind::verdict;
  oom.verdict_a = oom_name(c.a), oom.verdict_b = oom_name(c.b);
  rows.push_back(std::move(oom));
  return rows;
}

}  // namespace oomlens::report
