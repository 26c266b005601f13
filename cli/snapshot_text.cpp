#include "cli/snapshot_text.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "report/evidence_text.hpp"
#include "report/snapshot_stacks.hpp"
#include "report/snapshot_timeline.hpp"

namespace oomlens::cli {
namespace {

namespace snap = analyzer::snapshot;

constexpr std::size_t kMapSegments = 40;
constexpr std::size_t kMapWidth = 48;
constexpr std::size_t kSparkWidth = 60;

std::string sz(std::uint64_t b) { return analyzer::format_size(b); }

// One segment as a bar of kMapWidth cells: each cell shows the state holding
// most of its bytes (█ allocated, ▒ pending free, ░ free).
std::string segment_bar(const snap::Segment& segment) {
  std::string bar;
  if (segment.total_size == 0) return bar;
  const double cell = static_cast<double>(segment.total_size) / kMapWidth;
  for (std::size_t c = 0; c < kMapWidth; ++c) {
    double lo = cell * static_cast<double>(c), hi = lo + cell;
    double used = 0, pending = 0, free = 0;
    double offset = 0;
    for (const auto& b : segment.blocks) {
      double start = offset, end = offset + static_cast<double>(b.size);
      offset = end;
      double overlap = std::min(end, hi) - std::max(start, lo);
      if (overlap <= 0) continue;
      if (b.state == snap::BlockState::active_allocated) used += overlap;
      else if (b.state == snap::BlockState::active_pending_free) pending += overlap;
      else free += overlap;
    }
    bar += used >= pending && used >= free ? "█" : pending >= free ? "▒" : "░";
  }
  return bar;
}

class Printer {
 public:
  Printer(std::ostream& out, const SnapshotTextStyle& style) : out_(out), style_(style) {}

  void stack(const snap::FrameList& frames, const snap::FoldedStack* folded, snap::MissingStack missing,
             std::size_t max, const char* indent) {
    print_stack(out_, frames, folded, missing, max, indent, style_);
  }

  void sites(const std::vector<snap::SiteFrames>& sites, std::size_t total, const char* indent, const char* frame_indent) {
    std::size_t rank = 0;
    for (const auto& s : sites) {
      out_ << fmt::format("{}#{} {} in {} block{}\n", indent, ++rank, sz(s.bytes), s.count, s.count == 1 ? "" : "s");
      stack(s.frames, &s.folded, s.missing, 4, frame_indent);
    }
    if (total > sites.size()) out_ << indent << "... " << total - sites.size() << " more sites (--top N)\n";
  }

  void moment(const char* what, const snap::DeviceTimeline& t, const snap::TraceMoment& m, bool details = true) {
    out_ << fmt::format("  {} ({}): {} allocated, {} reserved, {} live block{}\n", what, report::moment_label(t, m),
                        sz(m.allocated), sz(m.reserved), m.live_blocks, m.live_blocks == 1 ? "" : "s");
    if (!details) return;
    if (!m.largest.empty()) {
      out_ << "    largest live blocks\n";
      for (const auto& b : m.largest)
        out_ << fmt::format("      {:>11}  {}{}\n", sz(b.size), report::frame_label(b.frames),
                            b.before_trace ? "  (allocated before the trace)" : "");
    }
    if (!m.top_sites.empty()) {
      out_ << "    top sites then\n";
      sites(m.top_sites, m.sites_total, "      ", "          ");
    }
  }

  void timeline(const snap::DeviceTimeline& t) {
    const report::TraceAxis axis = report::trace_axis(t);
    out_ << fmt::format("\ntrace of device {}: {} entr{}{}\n", t.device, t.entries, t.entries == 1 ? "y" : "ies",
                        axis.seconds ? fmt::format(" over {:.3f} s (times below are from its first entry)", axis.extent)
                                     : "");
    const auto reserved = report::curve_reserved(t);
    const std::uint64_t scale = std::max(t.peak_reserved.reserved, t.peak_allocated.allocated);
    out_ << fmt::format("  allocated {}  peak {}\n", report::sparkline(report::curve_allocated(t), kSparkWidth, scale),
                        sz(t.peak_allocated.allocated));
    out_ << fmt::format("  reserved  {}  peak {}\n", report::sparkline(reserved, kSparkWidth, scale),
                        sz(t.peak_reserved.reserved));
    if (t.before_trace_blocks)
      out_ << fmt::format("  note: {} in {} block{} allocated before the trace begins (their allocation is not in it){}\n",
                          sz(t.before_trace_bytes), t.before_trace_blocks, t.before_trace_blocks == 1 ? "" : "s",
                          t.overflow_suspected ? fmt::format("; {} entries looks like a full max_entries ring buffer "
                                                             "that dropped the oldest",
                                                             t.entries)
                                               : "");
    if (t.unaccounted_bytes != 0)
      out_ << fmt::format("  note: {}{} unaccounted: the dump-time blocks and the trace replayed do not agree\n",
                          t.unaccounted_bytes < 0 ? "-" : "",
                          sz(static_cast<std::uint64_t>(t.unaccounted_bytes < 0 ? -t.unaccounted_bytes : t.unaccounted_bytes)));
    if (!axis.seconds)
      out_ << "  note: the entries carry no times, or times that go back: moments are placed by entry count\n";
    moment("at the allocated peak", t, t.peak_allocated);
    if (t.peak_reserved.entries != t.peak_allocated.entries) moment("at the reserved peak", t, t.peak_reserved, false);
    if (t.at_oom) moment("at the oom", t, *t.at_oom);
  }

 private:
  std::ostream& out_;
  const SnapshotTextStyle& style_;
};

}  // namespace

void print_stack(std::ostream& out, const snap::FrameList& frames, const snap::FoldedStack* folded,
                 snap::MissingStack missing, std::size_t max, const char* indent, const SnapshotTextStyle& style) {
  auto shown = report::shown_stack(frames, folded, missing, {max, style.all_frames});
  if (!shown.heading.empty()) out << indent << shown.heading << "\n";
  for (const auto& f : shown.frames) out << indent << f.filename << ":" << f.line << " " << f.name << "\n";
  if (!shown.folded.empty()) out << indent << shown.folded << " (--all-frames shows them)\n";
}

void print_snapshot_text(std::ostream& out, const std::string& path, const snap::Snapshot& snapshot,
                         const rules::SnapshotReport& report, const SnapshotTextStyle& style) {
  const snap::Analysis& a = report.analysis;
  Printer print(out, style);
  out << "snapshot " << path << (snapshot.legacy ? " (PyTorch 1.13 format: no trace, no settings)" : "") << "\n";
  if (a.devices.empty()) out << "\nno segments: nothing was reserved when the snapshot was taken\n";
  for (const auto& d : a.devices) {
    out << "\ndevice " << d.device << "\n";
    out << fmt::format("  reserved        {:>12}  in {} segment{}, {} block{}\n", sz(d.reserved), d.segments,
                       d.segments == 1 ? "" : "s", d.blocks, d.blocks == 1 ? "" : "s");
    out << fmt::format("  allocated       {:>12}\n", sz(d.allocated));
    out << fmt::format("  active          {:>12}  (allocated + freed awaiting stream events)\n", sz(d.active));
    out << fmt::format("  inactive        {:>12}  (free, cached)\n", sz(d.inactive));
    out << fmt::format("  inactive split  {:>12}  (free in segments holding live blocks)\n", sz(d.inactive_split));
    out << fmt::format("  fragmentation   {:>11.1f}%  (inactive split / reserved)\n", d.fragmentation * 100);
    for (const auto& p : d.pools)
      out << fmt::format("  largest free    {:>12}  in the {} pool ({} segment{}, {} free)\n", sz(p.largest_free_block),
                         p.pool, p.segments, p.segments == 1 ? "" : "s", sz(p.free_bytes));
  }
  if (report.oom) {
    const rules::Diagnosis& d = *report.oom;
    const auto& o = report.oom_entry();
    out << "\nout of memory on device " << o.device << ": " << analyzer::to_string(o.verdict.cls) << "\n";
    for (const auto& f : report::verdict_figures(d)) out << fmt::format("  {:<17}{}\n", f.short_label, f.value);
    for (const auto& line : o.verdict.arithmetic) out << "  = " << line << "\n";
    for (const auto& line : o.verdict.notes) out << "  note: " << line << "\n";
    if (o.oom_events > 1) out << "  note: " << o.oom_events << " oom events on this device; the last is shown\n";
    out << "  failed call:\n";
    print.stack(o.frames, nullptr, o.missing, 6, "    ");
  } else if (!snapshot.legacy) {
    out << "\nno out-of-memory event in the trace\n";
  }
  for (const auto& t : a.timelines) print.timeline(t);
  if (!snapshot.segments.empty()) {
    out << "\nsegments (█ allocated, ▒ freed awaiting streams, ░ free)\n";
    std::size_t shown = 0;
    for (const auto& s : snapshot.segments) {
      if (shown == kMapSegments) break;
      ++shown;
      out << fmt::format("  {:>2} {:<5} {:>11} {}\n", s.device, to_string(s.segment_type), sz(s.total_size), segment_bar(s));
    }
    if (snapshot.segments.size() > shown)
      out << "  ... " << snapshot.segments.size() - shown << " more segments (--format json has the figures)\n";
  }
  if (!a.top_sites.empty()) {
    out << "\ntop allocation sites (live blocks, by your frames)\n";
    print.sites(a.top_sites, a.sites_total, "  ", "      ");
  }
}

}  // namespace oomlens::cli
