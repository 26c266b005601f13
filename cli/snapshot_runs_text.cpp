#include <algorithm>

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "cli/snapshot_text.hpp"
#include "report/snapshot_runs.hpp"

namespace oomlens::cli {
namespace {

namespace snap = analyzer::snapshot;

std::string sz(std::uint64_t b) { return analyzer::format_size(b); }

using report::signed_size;

void figure(std::ostream& out, const report::ComparisonRow& row) {
  using Kind = report::ComparisonRow::Kind;
  if (row.kind == Kind::bytes)
    out << fmt::format("  {:<18} {:>12} {:>12} {:>13}\n", row.name, sz(row.a), sz(row.b),
                       signed_size(static_cast<std::int64_t>(row.b) - static_cast<std::int64_t>(row.a)));
  else if (row.kind == Kind::ratio)
    out << fmt::format("  {:<18} {:>11.1f}% {:>11.1f}% {:>+10.1f} pts\n", row.name, row.ratio_a * 100,
                       row.ratio_b * 100, (row.ratio_b - row.ratio_a) * 100);
  else
    out << fmt::format("  {:<18} {:>12} {:>12}\n", row.name, row.verdict_a, row.verdict_b);
}

void changes(std::ostream& out, const char* title, const std::vector<snap::SiteChange>& list,
             const SnapshotTextStyle& style) {
  if (list.empty()) return;
  out << "\n" << title << "\n";
  for (const auto& c : list) {
    out << fmt::format("  {:>13}  {} -> {} ({} -> {} block{})\n", signed_size(c.change()), sz(c.bytes_a), sz(c.bytes_b),
                       c.count_a, c.count_b, c.count_b == 1 ? "" : "s");
    print_stack(out, c.site.frames, &c.site.folded, c.site.missing, 3, "      ", style);
  }
}

}  // namespace

void print_comparison_text(std::ostream& out, const std::string& path_a, const std::string& path_b,
                           const snap::Comparison& c, const SnapshotTextStyle& style) {
  out << "compare A " << path_a << "\n     to B " << path_b << "\n\n";
  out << fmt::format("  {:<18} {:>12} {:>12} {:>13}\n", "", "A", "B", "B - A");
  for (const auto& row : report::comparison_rows(c)) figure(out, row);
  if (report::dump_figures_stand_for_peak(c))
    out << "  * a snapshot without a trace: its dump-time figures stand for the peak\n";
  if (!c.top.empty()) {
    out << "\ntop sites (live at dump, by your frames)\n";
    out << fmt::format("  {:>12} {:>12}\n", "A", "B");
    for (const auto& s : c.top) {
      out << fmt::format("  {:>12} {:>12}\n", sz(s.bytes_a), sz(s.bytes_b));
      print_stack(out, s.site.frames, &s.site.folded, s.site.missing, 3, "      ", style);
    }
    if (c.sites_total > c.top.size()) out << "  ... " << c.sites_total - c.top.size() << " more sites (--top N)\n";
  }
  changes(out, "grew most (B - A)", c.grew, style);
  changes(out, "shrank most (B - A)", c.shrank, style);
}

void print_job_text(std::ostream& out, const std::string& dir, const snap::JobSummary& job,
                    const snap::Analysis& highest, const SnapshotTextStyle& style) {
  out << "job " << dir << ": " << job.ranks.size() << " rank" << (job.ranks.size() == 1 ? "" : "s") << "\n\n";
  std::size_t width = 4;
  for (const auto& r : job.ranks) width = std::max(width, r.name.size());
  out << fmt::format("  {:>4}  {:<{}}  {:>14} {:>14} {:>12} {:>13}  {}\n", "rank", "file", width, "peak allocated",
                     "peak reserved", "reserved", "fragmentation", "out of memory");
  bool dump_only = false;
  for (const auto& r : job.ranks) {
    const auto& f = r.figures;
    dump_only = dump_only || !f.peak_from_trace;
    out << fmt::format("  {:>4}  {:<{}}  {:>13}{} {:>14} {:>12} {:>12.1f}%  {}\n", r.rank, r.name, width,
                       sz(f.peak_allocated), f.peak_from_trace ? " " : "*", sz(f.peak_reserved), sz(f.reserved),
                       f.fragmentation * 100, report::oom_name(f));
  }
  if (dump_only) out << "  * no trace: the dump-time figures stand for the peak\n";
  if (job.ranks.empty()) return;
  const auto& top = job.ranks[job.highest];
  out << fmt::format("\nhighest peak: rank {} ({}), {}; mean {}, lowest {}\n", top.rank, top.name,
                     sz(job.peak_max), sz(job.peak_mean), sz(job.peak_min));
  out << fmt::format("imbalance: {:.2f} (highest / mean peak), spread {} (highest - lowest)\n", job.imbalance,
                     sz(job.peak_max - job.peak_min));
  if (highest.top_sites.empty()) return;
  out << "\ntop allocation sites of rank " << top.rank << " (live at dump, by your frames)\n";
  std::size_t rank = 0;
  for (const auto& s : highest.top_sites) {
    out << fmt::format("  #{} {} in {} block{}\n", ++rank, sz(s.bytes), s.count, s.count == 1 ? "" : "s");
    print_stack(out, s.frames, &s.folded, s.missing, 3, "      ", style);
  }
}

}  // namespace oomlens::cli
