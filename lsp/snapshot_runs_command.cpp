// oomlens.compareSnapshots, and oomlens.analyzeSnapshot on a folder of ranks:
// the runs are read by the report layer as the CLI reads them, so the JSON and
// the page are `oomlens snapshot --compare A B` and `oomlens snapshot DIR`'s.
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "lsp/markdown.hpp"
#include "lsp/snapshot_command.hpp"
#include "report/snapshot_html.hpp"
#include "report/snapshot_json.hpp"
#include "report/snapshot_run_files.hpp"
#include "report/snapshot_runs.hpp"

namespace oomlens::lsp {
namespace {

namespace snap = analyzer::snapshot;

std::string sz(std::uint64_t b) { return analyzer::format_size(b); }

// The outcome of reading the runs, when it is not a result: stopped, or the
// file at fault.
SnapshotCommandOutcome failed(const report::RunFilesError& e) {
  if (!e.stopped) return refused_outcome(e.path, e.error);
  SnapshotCommandOutcome outcome;
  outcome.cancelled = true;
  return outcome;
}

void changes_markdown(std::string& out, const char* title, const std::vector<snap::SiteChange>& list) {
  if (list.empty()) return;
  out += fmt::format("\n#### {}\n\n", title);
  std::size_t rank = 0;
  for (const auto& c : list) {
    out += fmt::format("{}. **{}**: {} → {} ({} → {} block{})\n", ++rank, report::signed_size(c.change()),
                       sz(c.bytes_a), sz(c.bytes_b), c.count_a, c.count_b, c.count_b == 1 ? "" : "s");
    frames_markdown(out, c.site.frames, &c.site.folded, c.site.missing, 1, "   ");
  }
}

// The figures of both runs side by side, and the sites that grew and shrank
// most, each by its user frame.
std::string compare_markdown(const std::string& path_a, const std::string& path_b, const snap::Comparison& c) {
  std::string out = fmt::format("### Memory snapshots compared\n\n- A: {}\n- B: {}\n\n| | A | B | B − A |\n|---|---|---|---|\n",
                                markdown_code(path_a), markdown_code(path_b));
  using Kind = report::ComparisonRow::Kind;
  for (const auto& row : report::comparison_rows(c)) {
    if (row.kind == Kind::bytes)
      out += fmt::format("| {} | {} | {} | {} |\n", row.name, sz(row.a), sz(row.b),
                         report::signed_size(static_cast<std::int64_t>(row.b) - static_cast<std::int64_t>(row.a)));
    else if (row.kind == Kind::ratio)
      out += fmt::format("| {} | {:.1f}% | {:.1f}% | {:+.1f} pts |\n", row.name, row.ratio_a * 100, row.ratio_b * 100,
                         (row.ratio_b - row.ratio_a) * 100);
    else
      out += fmt::format("| {} | {} | {} | |\n", row.name, row.verdict_a, row.verdict_b);
  }
  if (report::dump_figures_stand_for_peak(c)) out += "\n\\* a snapshot without a trace: its dump-time figures stand for the peak.\n";
  changes_markdown(out, "Grew most (B − A)", c.grew);
  changes_markdown(out, "Shrank most (B − A)", c.shrank);
  if (c.grew.empty() && c.shrank.empty()) out += "\nNo allocation site changed between the runs.\n";
  return out;
}

// The per-rank table, the rank with the highest peak and the imbalance.
std::string job_markdown(const std::string& dir, const snap::JobSummary& job) {
  std::string out = fmt::format("### Memory snapshots of a job: {}\n\n{} rank{}\n\n", markdown_code(dir),
                                job.ranks.size(), job.ranks.size() == 1 ? "" : "s");
  out += "| rank | file | peak allocated | peak reserved | reserved | fragmentation | out of memory |\n"
         "|---|---|---|---|---|---|---|\n";
  bool dump_only = false;
  for (const auto& r : job.ranks) {
    const auto& f = r.figures;
    dump_only = dump_only || !f.peak_from_trace;
    out += fmt::format("| {} | {} | {}{} | {} | {} | {:.1f}% | {} |\n", r.rank, markdown_code(r.name),
                       sz(f.peak_allocated), f.peak_from_trace ? "" : "\\*", sz(f.peak_reserved), sz(f.reserved),
                       f.fragmentation * 100, report::oom_name(f));
  }
  if (dump_only) out += "\n\\* no trace: the dump-time figures stand for the peak.\n";
  const auto& top = job.ranks[job.highest];
  out += fmt::format("\nHighest peak: **rank {}** ({}), {}; mean {}, lowest {}.\n\n", top.rank, markdown_code(top.name),
                     sz(job.peak_max), sz(job.peak_mean), sz(job.peak_min));
  out += fmt::format("Imbalance: **{:.2f}** (highest / mean peak), spread {} (highest − lowest).\n", job.imbalance,
                     sz(job.peak_max - job.peak_min));
  return out;
}

}  // namespace

SnapshotCommandOutcome run_compare_command(const std::string& path_a, const std::string& path_b,
                                           const std::atomic<bool>& cancelled) {
  const auto comparison =
      report::compare_snapshot_files(path_a, path_b, {}, [&cancelled] { return cancelled.load(); });
  if (!comparison) return failed(comparison.error());
  SnapshotCommandOutcome outcome;
  outcome.result = CommandResult{.report = report::snapshot_compare_json(path_a, path_b, *comparison),
                                 .markdown = compare_markdown(path_a, path_b, *comparison),
                                 .html = report::snapshot_compare_html(path_a, path_b, *comparison)};
  return outcome;
}

SnapshotCommandOutcome run_job_command(const std::string& dir, const std::atomic<bool>& cancelled) {
  const auto job = report::read_job_folder(dir, {}, [&cancelled] { return cancelled.load(); });
  if (!job) return failed(job.error());
  SnapshotCommandOutcome outcome;
  outcome.result = CommandResult{.report = report::snapshot_job_json(dir, job->summary, job->highest),
                                 .markdown = job_markdown(dir, job->summary),
                                 .html = report::snapshot_job_html(dir, job->summary, job->highest)};
  return outcome;
}

}  // namespace oomlens::lsp
