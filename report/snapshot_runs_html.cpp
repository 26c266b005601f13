// The pages of several runs: two compared, or a job's ranks. What they show
// is decided in snapshot_runs (the rows) and snapshot_timeline (the curves);
// these functions only lay it out.
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "report/snapshot_html.hpp"
#include "report/snapshot_html_parts.hpp"
#include "report/snapshot_runs.hpp"
#include "report/snapshot_timeline.hpp"

namespace oomlens::report {
namespace {

namespace snap = analyzer::snapshot;
using u64 = std::uint64_t;

std::string sz(u64 b) { return analyzer::format_size(b); }

void figures_section(std::string& out, const snap::Comparison& c) {
  out += "<section id=\"figures\"><h2>Figures</h2>\n<table><tr><th></th><th>A</th><th>B</th><th>B − A</th></tr>\n";
  using Kind = ComparisonRow::Kind;
  for (const auto& row : comparison_rows(c)) {
    if (row.kind == Kind::bytes)
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", row.name, sz(row.a), sz(row.b),
                         signed_size(static_cast<std::int64_t>(row.b) - static_cast<std::int64_t>(row.a)));
    else if (row.kind == Kind::ratio)
      out += fmt::format("<tr><td>{}</td><td>{:.1f}%</td><td>{:.1f}%</td><td>{:+.1f} pts</td></tr>\n", row.name,
                         row.ratio_a * 100, row.ratio_b * 100, (row.ratio_b - row.ratio_a) * 100);
    else
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td></td></tr>\n", row.name, row.verdict_a, row.verdict_b);
  }
  out += "</table>\n";
  if (dump_figures_stand_for_peak(c))
    out += "<p class=\"notes\">* a snapshot without a trace: its dump-time figures stand for the peak.</p>\n";
  out += "</section>\n";
}

// Where each run's moments lie, in words: the chart's axis and its fallback.
void axis_note(std::string& out, const std::vector<const snap::DeviceTimeline*>& timelines) {
  if (shared_axis(timelines).seconds)
    out += "<p class=\"notes\">Time runs from each trace's first entry.</p>\n";
  else
    out += "<p class=\"notes\">Placed by trace entry: a trace here carries no times, or times that go back.</p>\n";
}

void curves_section(std::string& out, const snap::Comparison& c) {
  if (!c.a.peak_timeline || !c.b.peak_timeline) {
    out += "<section id=\"timeline\"><h2>Memory over the traces</h2>\n<p>No curve: ";
    out += !c.a.peak_timeline && !c.b.peak_timeline ? "neither snapshot records a trace.</p>\n"
           : !c.a.peak_timeline                     ? "A records no trace.</p>\n"
                                                    : "B records no trace.</p>\n";
    out += "</section>\n";
    return;
  }
  const snap::DeviceTimeline &ta = *c.a.peak_timeline, &tb = *c.b.peak_timeline;
  out += "<section id=\"timeline\"><h2>Memory over the traces</h2>\n<p class=\"legend\"><span class=\"run-a\"></span>"
         "A<span class=\"run-b\"></span>B (solid: allocated, dashed: reserved)</p>\n";
  out += fmt::format("<p>A: device {}, {} trace entries; B: device {}, {} trace entries (each run's device with the "
                     "highest peak).</p>\n",
                     ta.device, ta.entries, tb.device, tb.entries);
  out += runs_svg({{&ta, "A", "run-a"}, {&tb, "B", "run-b"}}, {});
  axis_note(out, {&ta, &tb});
  out += "</section>\n";
}

void changes_section(std::string& out, const char* id, const char* title, const std::vector<snap::SiteChange>& list) {
  if (list.empty()) return;
  out += fmt::format("<section id=\"{}\"><h2>{}</h2>\n<ol>\n", id, title);
  for (const auto& s : list) {
    out += fmt::format("<li><b class=\"{}\">{}</b> {} → {} ({} → {} block{})\n", id, signed_size(s.change()),
                       sz(s.bytes_a), sz(s.bytes_b), s.count_a, s.count_b, s.count_b == 1 ? "" : "s");
    html::frames_list(out, s.site.frames, &s.site.folded, s.site.missing);
    out += "</li>\n";
  }
  out += "</ol></section>\n";
}

void top_section(std::string& out, const snap::Comparison& c) {
  if (c.top.empty()) return;
  out += "<section id=\"sites\"><h2>Top sites (live at dump, by your frames)</h2>\n<ol>\n";
  for (const auto& s : c.top) {
    out += fmt::format("<li>A <b>{}</b>, B <b>{}</b>\n", sz(s.bytes_a), sz(s.bytes_b));
    html::frames_list(out, s.site.frames, &s.site.folded, s.site.missing);
    out += "</li>\n";
  }
  out += "</ol>\n";
  if (c.sites_total > c.top.size())
    out += fmt::format("<p class=\"more\">and {} more sites.</p>\n", c.sites_total - c.top.size());
  out += "</section>\n";
}

// Every rank's curve on the job's scale, so their heights compare.
std::string rank_curve(const snap::RunFigures& f, u64 scale) {
  if (!f.peak_timeline) return "no trace";
  return runs_svg({{&*f.peak_timeline, "", "run-a"}}, {160, 32, false}, scale);
}

}  // namespace

std::string snapshot_compare_html(const std::string& path_a, const std::string& path_b, const snap::Comparison& c) {
  std::string out;
  html::page_open(out, "oomlens snapshot compare: " + path_a + " and " + path_b);
  out += fmt::format("<h1>Two memory snapshots compared</h1>\n<p>A <code>{}</code><br>B <code>{}</code></p>\n",
                     html_escape(path_a), html_escape(path_b));
  figures_section(out, c);
  curves_section(out, c);
  changes_section(out, "grew", "Grew most (B − A)", c.grew);
  changes_section(out, "shrank", "Shrank most (B − A)", c.shrank);
  top_section(out, c);
  html::page_close(out, "the two snapshots");
  return out;
}

std::string snapshot_job_html(const std::string& dir, const snap::JobSummary& job, const snap::Analysis& highest) {
  std::string out;
  html::page_open(out, "oomlens snapshot job: " + dir);
  out += fmt::format("<h1>Job <code>{}</code>: {} rank{}</h1>\n", html_escape(dir), job.ranks.size(),
                     job.ranks.size() == 1 ? "" : "s");
  u64 scale = 0;
  std::vector<const snap::DeviceTimeline*> timelines;
  for (const auto& r : job.ranks)
    if (r.figures.peak_timeline) {
      scale = std::max({scale, r.figures.peak_allocated, r.figures.peak_reserved});
      timelines.push_back(&*r.figures.peak_timeline);
    }
  out += "<section id=\"ranks\"><h2>Ranks</h2>\n<table><tr><th>rank</th><th>file</th><th>peak allocated</th>"
         "<th>peak reserved</th><th>reserved</th><th>fragmentation</th><th>out of memory</th><th>curve</th></tr>\n";
  bool dump_only = false;
  for (std::size_t i = 0; i < job.ranks.size(); ++i) {
    const auto& r = job.ranks[i];
    const auto& f = r.figures;
    const bool top = i == job.highest;
    dump_only = dump_only || !f.peak_from_trace;
    out += fmt::format("<tr{}><td>{}{}</td><td><code>{}</code></td><td>{}{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td>"
                       "<td>{}</td><td>{}</td></tr>\n",
                       top ? " class=\"highest\"" : "", r.rank, top ? " <b>highest peak</b>" : "", html_escape(r.name),
                       sz(f.peak_allocated), f.peak_from_trace ? "" : "*", sz(f.peak_reserved), sz(f.reserved),
                       f.fragmentation * 100, oom_name(f), rank_curve(f, scale));
  }
  out += "</table>\n";
  if (dump_only) out += "<p class=\"notes\">* no trace: the dump-time figures stand for the peak.</p>\n";
  if (!timelines.empty()) {
    out += "<p class=\"notes\">Each curve is its rank's device with the highest peak, on one memory scale (" + sz(scale) +
           " at the top); solid: allocated, dashed: reserved.</p>\n";
    axis_note(out, timelines);
  }
  if (!job.ranks.empty()) {
    const auto& top = job.ranks[job.highest];
    out += fmt::format("<p>Highest peak: <b>rank {}</b> (<code>{}</code>), {}; mean {}, lowest {}.</p>\n", top.rank,
                       html_escape(top.name), sz(job.peak_max), sz(job.peak_mean), sz(job.peak_min));
    out += fmt::format("<p>Imbalance: <b>{:.2f}</b> (highest / mean peak), spread {} (highest − lowest).</p>\n",
                       job.imbalance, sz(job.peak_max - job.peak_min));
    if (!highest.top_sites.empty()) {
      out += fmt::format("</section>\n<section id=\"sites\"><h2>Top allocation sites of rank {} (live at dump, by your "
                         "frames)</h2>\n",
                         top.rank);
      html::sites_list(out, highest.top_sites);
    }
  }
  out += "</section>\n";
  html::page_close(out, "the snapshots");
  return out;
}

}  // namespace oomlens::report
