// The page is built as one string with fmt: no template engine, and every
// value that can come from the file goes through html_escape on the way in.
#include "report/snapshot_html.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "report/evidence_text.hpp"
#include "report/snapshot_html_parts.hpp"
#include "report/snapshot_json.hpp"
#include "report/snapshot_stacks.hpp"
#include "report/snapshot_timeline.hpp"

namespace oomlens::report {
namespace {

namespace snap = analyzer::snapshot;
using html::frames_list;
using html::sites_list;
using u64 = std::uint64_t;

std::string sz(u64 b) { return analyzer::format_size(b); }

// Three states are drawn; a state this reader does not know counts as free
// space (it is not memory a tensor holds that we know of).
enum class Fill { allocated, pending, inactive };
Fill fill_of(snap::BlockState s) {
  if (s == snap::BlockState::active_allocated) return Fill::allocated;
  if (s == snap::BlockState::active_pending_free) return Fill::pending;
  return Fill::inactive;
}
const char* css_class(Fill f) { return f == Fill::allocated ? "a" : f == Fill::pending ? "p" : "f"; }
const char* fill_name(Fill f) {
  return f == Fill::allocated ? "allocated" : f == Fill::pending ? "freed, awaiting stream events" : "free (cached)";
}

constexpr const char* kStyle = R"(body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}
code,.mono{font-family:ui-monospace,monospace;font-size:.92em}
table{border-collapse:collapse}td,th{padding:.2em .5em;text-align:right;border-bottom:1px solid #eee}td{white-space:nowrap}
th:first-child,td:first-child{text-align:left}
.verdict{font-weight:600;padding:.1em .5em;border-radius:.3em;background:#eee}
.fragmentation{background:#fde2c4}.capacity{background:#f7c6c6}.external{background:#d9e4f5}.limit{background:#e5dcf3}
ul.arith li{font-family:ui-monospace,monospace;font-size:.92em}ul.notes{color:#555}
ol.frames{font-family:ui-monospace,monospace;font-size:.88em;color:#333;margin:.2em 0 .8em;overflow-wrap:anywhere}
.legend span{display:inline-block;width:1em;height:1em;vertical-align:middle;margin:0 .3em 0 1em;border:1px solid #999}
svg text{font:12px ui-monospace,monospace;fill:#333;white-space:pre}
.a{fill:#3b6ea8}.p{fill:#e39b2d}.f{fill:#e4e4e4}.req{fill:#c0392b}.out{fill:none;stroke:#888;stroke-width:.6}
span.a{background:#3b6ea8}span.p{background:#e39b2d}span.f{background:#e4e4e4}
.more{color:#555;font-style:italic}
.tl-r{fill:#cfdcec;stroke:#8aa6c8}.tl-a{fill:none;stroke:#3b6ea8;stroke-width:1.5}.tl-peak{stroke:#c0392b;stroke-dasharray:3 2}
.tl-oom{stroke:#000;stroke-width:2}span.tl-r{background:#cfdcec}span.tl-a{background:#3b6ea8}
details{font-size:.88em;color:#555}summary{cursor:pointer}.tl-tick{stroke:#888}
.run{fill:none;stroke-width:1.5}.run-res{stroke-width:1;stroke-dasharray:4 2}.run-a{stroke:#3b6ea8}.run-b{stroke:#c26a00}
circle.run-a{fill:#3b6ea8}circle.run-b{fill:#c26a00}span.run-a{background:#3b6ea8}span.run-b{background:#c26a00}
tr.highest td{background:#fdf0d5}.grew{color:#a33}.shrank{color:#2a7a2a})";

void devices_section(std::string& out, const snap::Analysis& a) {
  out += "<section id=\"devices\"><h2>Devices</h2>\n";
  if (a.devices.empty()) {
    out += "<p>No segments: nothing was reserved when the snapshot was taken.</p></section>\n";
    return;
  }
  out += "<table><tr><th>device</th><th>reserved</th><th>allocated</th><th>active</th><th>inactive</th>"
         "<th>inactive split</th><th>fragmentation</th><th>largest free block</th><th>segments</th><th>blocks</th></tr>\n";
  for (const auto& d : a.devices)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td>"
                       "<td>{}</td><td>{}</td></tr>\n",
                       d.device, sz(d.reserved), sz(d.allocated), sz(d.active), sz(d.inactive), sz(d.inactive_split),
                       d.fragmentation * 100, sz(d.largest_free_block), d.segments, d.blocks);
  out += "</table>\n<p class=\"notes\">active = allocated + freed blocks awaiting stream events; inactive split = free "
         "blocks in segments that also hold a live block; fragmentation = inactive split / reserved.</p>\n";
  for (const auto& d : a.devices)
    for (const auto& p : d.pools)
      out += fmt::format("<p class=\"mono\">device {}: largest free {} in the {} pool ({} segment{}, {} free)</p>\n",
                         d.device, sz(p.largest_free_block), html_escape(p.pool), p.segments,
                         p.segments == 1 ? "" : "s", sz(p.free_bytes));
  out += "</section>\n";
}

// The failed request against the largest free block (and all cached free
// memory), on one scale: the picture of why the allocator said no.
void request_svg(std::string& out, const rules::Diagnosis& d) {
  struct Row {
    const char* label;
    u64 bytes;
    const char* cls;
  };
  const Row rows[] = {{"requested", d.evidence_of("requested_bytes").value_or(0), "req"},
                      {"largest free block", d.evidence_of("largest_free_block_bytes").value_or(0), "f"},
                      {"cached free (all)", d.evidence_of("cached_free_bytes").value_or(0), "f"}};
  u64 scale = std::max({rows[0].bytes, rows[1].bytes, rows[2].bytes, u64{1}});
  constexpr double kLabel = 170, kWidth = 560, kRow = 22;
  out += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" role=\"img\" "
                     "aria-label=\"requested versus largest free block\">\n",
                     kLabel + kWidth + 100, kRow * 3 + 6);
  for (std::size_t i = 0; i < 3; ++i) {
    double y = 4 + kRow * static_cast<double>(i);
    double w = std::max(1.0, kWidth * static_cast<double>(rows[i].bytes) / static_cast<double>(scale));
    out += fmt::format("<text x=\"0\" y=\"{:.0f}\">{}</text><rect class=\"{}\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.1f}\" "
                       "height=\"14\"/><rect class=\"out\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"14\"/>"
                       "<text x=\"{:.1f}\" y=\"{:.0f}\">{}</text>\n",
                       y + 11, rows[i].label, rows[i].cls, kLabel, y, w, kLabel, y, w, kLabel + w + 6, y + 11,
                       sz(rows[i].bytes));
  }
  out += "</svg>\n";
}

void oom_section(std::string& out, const snap::Snapshot& snapshot, const rules::SnapshotReport& report) {
  out += "<section id=\"oom\">";
  if (!report.oom) {
    out += snapshot.legacy ? "<h2>Out of memory</h2><p>A PyTorch 1.13 snapshot records no trace, so no OOM event.</p>"
                           : "<h2>Out of memory</h2><p>No out-of-memory event in the trace.</p>";
    out += "</section>\n";
    return;
  }
  const rules::Diagnosis& d = *report.oom;
  const auto& o = report.oom_entry();
  const char* cls = analyzer::to_string(o.verdict.cls);
  out += fmt::format("<h2>Out of memory on device {}: <span class=\"verdict {}\">{}</span></h2>\n", o.device, cls, cls);
  out += "<table>";
  for (const auto& f : verdict_figures(d)) out += fmt::format("<tr><td>{}</td><td>{}</td></tr>", f.label, f.value);
  out += "</table>\n";
  request_svg(out, d);
  if (!o.verdict.arithmetic.empty()) {
    out += "<ul class=\"arith\">";
    for (const auto& line : o.verdict.arithmetic) out += "<li>" + html_escape(line) + "</li>";
    out += "</ul>\n";
  }
  out += "<ul class=\"notes\">";
  for (const auto& line : o.verdict.notes) out += "<li>" + html_escape(line) + "</li>";
  if (o.oom_events > 1) out += fmt::format("<li>{} oom events on this device; the last is shown</li>", o.oom_events);
  out += "</ul>\n";
  out += "<h3>Failed call</h3>\n";
  frames_list(out, o.frames, nullptr, o.missing);
  out += "</section>\n";
}

struct Span {
  double start, end;  // fractions of the segment, 0..1
  Fill fill;
  u64 bytes;
  std::size_t blocks;
};

// Consecutive blocks of one state become one span; past `max_spans`, the
// segment is cut into that many cells, each taking its majority state.
std::vector<Span> segment_spans(const snap::Segment& s, std::size_t max_spans) {
  u64 sum = 0;
  for (const auto& b : s.blocks) sum += b.size;
  const double total = static_cast<double>(std::max({s.total_size, sum, u64{1}}));
  std::vector<Span> spans;
  u64 at = 0;
  for (const auto& b : s.blocks) {
    Fill f = fill_of(b.state);
    double start = static_cast<double>(at) / total;
    at += b.size;
    if (!spans.empty() && spans.back().fill == f) {
      spans.back().end = static_cast<double>(at) / total;
      spans.back().bytes += b.size;
      ++spans.back().blocks;
    } else {
      spans.push_back({start, static_cast<double>(at) / total, f, b.size, 1});
    }
  }
  if (spans.size() <= max_spans || max_spans == 0) return spans;
  std::vector<std::array<double, 3>> cells(max_spans, {0, 0, 0});
  const double n = static_cast<double>(max_spans);
  for (const auto& sp : spans) {
    auto first = static_cast<std::size_t>(sp.start * n), last = static_cast<std::size_t>(sp.end * n);
    for (std::size_t c = first; c <= last && c < max_spans; ++c) {
      double lo = static_cast<double>(c) / n, hi = static_cast<double>(c + 1) / n;
      double overlap = std::min(hi, sp.end) - std::max(lo, sp.start);
      if (overlap > 0) cells[c][static_cast<std::size_t>(sp.fill)] += overlap;
    }
  }
  std::vector<Span> merged;
  for (std::size_t c = 0; c < max_spans; ++c) {
    const auto& w = cells[c];
    Fill f = w[0] >= w[1] && w[0] >= w[2] ? Fill::allocated : w[1] >= w[2] ? Fill::pending : Fill::inactive;
    double lo = static_cast<double>(c) / n, hi = static_cast<double>(c + 1) / n;
    if (!merged.empty() && merged.back().fill == f)
      merged.back().end = hi;
    else
      merged.push_back({lo, hi, f, 0, 0});
  }
  return merged;
}

void segments_section(std::string& out, const snap::Snapshot& snapshot, const SnapshotHtmlOptions& options) {
  if (snapshot.segments.empty()) return;
  std::vector<std::size_t> order(snapshot.segments.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto& segs = snapshot.segments;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return segs[x].total_size > segs[y].total_size; });
  const std::size_t shown = std::min(order.size(), options.max_segments);
  u64 hidden_bytes = 0;
  for (std::size_t i = shown; i < order.size(); ++i) hidden_bytes += segs[order[i]].total_size;
  order.resize(shown);
  // Drawn by device, largest first within it.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return segs[x].device < segs[y].device; });
  u64 widest = 1;
  for (std::size_t i : order) widest = std::max(widest, segs[i].total_size);

  out += "<section id=\"segments\"><h2>Segments</h2>\n<p class=\"legend\"><span class=\"a\"></span>allocated"
         "<span class=\"p\"></span>freed, awaiting stream events<span class=\"f\"></span>free (cached)</p>\n";
  out += fmt::format("<p>{} segment{}, each a bar as long as its size (the largest: {}); "
                     "hover a piece for its size.</p>\n",
                     segs.size(), segs.size() == 1 ? "" : "s", sz(widest));
  constexpr double kLabel = 230, kWidth = 600, kRow = 18;
  out += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" role=\"img\" "
                     "aria-label=\"segment map\">\n",
                     kLabel + kWidth + 4, kRow * static_cast<double>(shown) + 4);
  for (std::size_t row = 0; row < shown; ++row) {
    const auto& s = segs[order[row]];
    double y = 2 + kRow * static_cast<double>(row);
    double width = std::max(2.0, kWidth * static_cast<double>(s.total_size) / static_cast<double>(widest));
    std::string pool = s.pool_id == std::pair<std::int64_t, std::int64_t>{0, 0}
                           ? std::string(to_string(s.segment_type))
                           : fmt::format("pool ({},{})", s.pool_id.first, s.pool_id.second);
    out += fmt::format("<g><title>device {} segment at 0x{:x}: {} ({} blocks, {} allocated)</title>"
                       "<text x=\"0\" y=\"{:.0f}\">{:>2} {:<11} {:>11}</text>\n",
                       s.device, s.address, sz(s.total_size), s.blocks.size(), sz(s.allocated_size), y + 12, s.device,
                       html_escape(pool), sz(s.total_size));
    for (const auto& sp : segment_spans(s, options.max_rects_per_segment)) {
      double x = kLabel + sp.start * width, w = std::max(0.3, (sp.end - sp.start) * width);
      if (sp.blocks)
        out += fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"14\"><title>{}: {} in "
                           "{} block{}</title></rect>",
                           css_class(sp.fill), x, y, w, fill_name(sp.fill), sz(sp.bytes), sp.blocks,
                           sp.blocks == 1 ? "" : "s");
      else
        out += fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"14\"/>", css_class(sp.fill),
                           x, y, w);
    }
    out += fmt::format("<rect class=\"out\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"14\"/></g>\n", kLabel, y,
                       width);
  }
  out += "</svg>\n";
  if (segs.size() > shown)
    out += fmt::format("<p class=\"more\">and {} more segment{} ({} reserved) not drawn: the {} largest are shown.</p>\n",
                       segs.size() - shown, segs.size() - shown == 1 ? "" : "s", sz(hidden_bytes), shown);
  out += "</section>\n";
}

void sites_section(std::string& out, const snap::Analysis& a) {
  if (a.top_sites.empty()) return;
  out += "<section id=\"sites\"><h2>Top allocation sites (live blocks)</h2>\n";
  sites_list(out, a.top_sites);
  if (a.sites_total > a.top_sites.size())
    out += fmt::format("<p class=\"more\">and {} more sites.</p>\n", a.sites_total - a.top_sites.size());
  out += "</section>\n";
}

void moment_html(std::string& out, const char* what, const snap::TraceMoment& m) {
  out += fmt::format("<h3>{} (after entry {})</h3>\n<p>{} allocated, {} reserved, {} live block{}.</p>\n", what, m.entries,
                     sz(m.allocated), sz(m.reserved), m.live_blocks, m.live_blocks == 1 ? "" : "s");
  if (!m.top_sites.empty()) sites_list(out, m.top_sites);
}

void timeline_section(std::string& out, const snap::Analysis& a) {
  if (a.timelines.empty()) return;
  out += "<section id=\"timeline\"><h2>Memory over the trace</h2>\n<p class=\"legend\"><span class=\"tl-r\"></span>"
         "reserved<span class=\"tl-a\"></span>allocated</p>\n";
  for (const auto& t : a.timelines) {
    out += fmt::format("<h3>Device {}: {} trace entries; peak allocated {}, peak reserved {}</h3>\n", t.device, t.entries,
                       sz(t.peak_allocated.allocated), sz(t.peak_reserved.reserved));
    out += timeline_svg(t);
    if (t.before_trace_blocks)
      out += fmt::format("<p class=\"notes\">{} in {} block{} allocated before the trace begins (their allocation is not "
                         "in it){}.</p>\n",
                         sz(t.before_trace_bytes), t.before_trace_blocks, t.before_trace_blocks == 1 ? "" : "s",
                         t.overflow_suspected ? "; the trace looks cut by a full max_entries ring buffer" : "");
    if (t.unaccounted_bytes != 0)
      out += fmt::format("<p class=\"notes\">{} bytes unaccounted: the dump-time blocks and the trace replayed do not "
                         "agree.</p>\n",
                         t.unaccounted_bytes);
    moment_html(out, "At the allocated peak", t.peak_allocated);
    if (t.peak_reserved.entries != t.peak_allocated.entries) moment_html(out, "At the reserved peak", t.peak_reserved);
    if (t.at_oom) moment_html(out, "At the out-of-memory event", *t.at_oom);
  }
  out += "</section>\n";
}

void settings_section(std::string& out, const snap::Snapshot& snapshot) {
  nlohmann::json settings = snapshot_settings_json(snapshot.settings);
  if (settings.empty()) return;
  out += "<section id=\"settings\"><h2>Allocator settings</h2>\n<table>\n";
  for (const auto& [key, value] : settings.items()) {
    std::string text = value.is_string() ? value.get<std::string>() : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td></tr>\n", html_escape(key), html_escape(text));
  }
  out += "</table></section>\n";
}

}  // namespace

namespace html {

void page_open(std::string& out, std::string_view title) {
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  out += fmt::format("<title>{}</title>\n<style>\n{}\n</style></head><body>\n", html_escape(title), kStyle);
}

void page_close(std::string& out, std::string_view made_from) {
  out += fmt::format("<p class=\"notes\">Made by oomlens " OOMLENS_VERSION " from {} alone; nothing was uploaded.</p>\n"
                     "</body></html>\n",
                     made_from);
}

void frames_list(std::string& out, const snap::FrameList& frames, const snap::FoldedStack* folded,
                 snap::MissingStack missing) {
  const ShownStack shown = shown_stack(frames, folded, missing, {6, false});
  if (!shown.heading.empty()) out += "<p class=\"notes\">" + html_escape(shown.heading) + "</p>\n";
  if (!shown.frames.empty()) {
    out += "<ol class=\"frames\">";
    for (const auto& f : shown.frames)
      out += fmt::format("<li>{}:{} <b>{}</b></li>", html_escape(f.filename), f.line, html_escape(f.name));
    out += "</ol>\n";
  }
  if (shown.folded.empty()) return;
  out += fmt::format("<details><summary>{}: all {} frames</summary><ol class=\"frames\">", html_escape(shown.folded),
                     frames->size());
  for (const auto& f : *frames)
    out += fmt::format("<li>{}:{} <b>{}</b></li>", html_escape(f.filename), f.line, html_escape(f.name));
  out += "</ol></details>\n";
}

void sites_list(std::string& out, const std::vector<snap::SiteFrames>& sites) {
  out += "<ol>\n";
  for (const auto& s : sites) {
    out += fmt::format("<li><b>{}</b> in {} block{}\n", sz(s.bytes), s.count, s.count == 1 ? "" : "s");
    frames_list(out, s.frames, &s.folded, s.missing);
    out += "</li>\n";
  }
  out += "</ol>\n";
}

}  // namespace html

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string snapshot_html(const snap::Snapshot& snapshot, const rules::SnapshotReport& report, std::string_view source,
                          const SnapshotHtmlOptions& options) {
  const snap::Analysis& a = report.analysis;
  std::string out;
  html::page_open(out, "oomlens snapshot: " + std::string(source));
  out += fmt::format("<h1>Memory snapshot <code>{}</code></h1>\n", html_escape(source));
  if (snapshot.legacy) out += "<p class=\"notes\">PyTorch 1.13 format: no trace, no settings.</p>\n";
  oom_section(out, snapshot, report);
  devices_section(out, a);
  timeline_section(out, a);
  segments_section(out, snapshot, options);
  sites_section(out, a);
  settings_section(out, snapshot);
  html::page_close(out, "the snapshot");
  return out;
}

}  // namespace oomlens::report
