#include "report/snapshot_timeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "report/snapshot_html.hpp"

namespace oomlens::report {
namespace {

namespace snap = analyzer::snapshot;
using u64 = std::uint64_t;

std::string file_name(const std::string& path) {
  auto slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

using Axis = TraceAxis;

double seconds_since(std::int64_t time_us, std::int64_t start_us) {
  return static_cast<double>(time_us - start_us) / 1e6;
}

// The drawing area of a chart and its two scales.
struct ChartFrame {
  double left, width, top, height;
  Axis axis;
  u64 scale;  // bytes at the top
  double x(double v) const { return left + width * v / axis.extent; }
  double y(u64 v) const { return top + height * (1.0 - static_cast<double>(v) / static_cast<double>(scale)); }
};

// Point i's place: the end of its span of entries.
double point_at(const snap::DeviceTimeline& t, std::size_t i, const Axis& axis) {
  if (axis.seconds) return seconds_since(t.curve[i].time_us, t.start.time_us);
  return static_cast<double>(std::min(t.entries, (i + 1) * t.entries_per_point));
}

// The allocated (or reserved) curve as a path; `area` closes it down to zero.
std::string curve_path(const snap::DeviceTimeline& t, const ChartFrame& f, bool allocated, bool area) {
  auto value = [&](const snap::CurvePoint& p) { return allocated ? p.allocated : p.reserved; };
  if (t.curve.empty()) return "";
  std::string d = area ? fmt::format("M{:.1f},{:.1f} L{:.1f},{:.1f}", f.x(0), f.y(0), f.x(0), f.y(value(t.curve[0])))
                       : fmt::format("M{:.1f},{:.1f}", f.x(0), f.y(value(t.curve[0])));
  for (std::size_t i = 0; i < t.curve.size(); ++i)
    d += fmt::format(" L{:.1f},{:.1f}", f.x(point_at(t, i, f.axis)), f.y(value(t.curve[i])));
  if (area) d += fmt::format(" L{:.1f},{:.1f} Z", f.x(point_at(t, t.curve.size() - 1, f.axis)), f.y(0));
  return d;
}

// A round step giving four or five ticks over `extent` (1, 2, 2.5 or 5 times
// a power of ten; whole numbers for entries).
double tick_step(double extent, bool seconds) {
  const double raw = extent / 4;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude * 10;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  return seconds ? step : std::max(1.0, std::ceil(step));
}

// The byte scale on the left, the ticks of time (or entries) below.
std::string axes_svg(const ChartFrame& f) {
  const double bottom = f.top + f.height;
  std::string out = fmt::format("<text x=\"0\" y=\"{:.0f}\">{}</text><text x=\"0\" y=\"{:.0f}\">0</text>\n",
                                f.top + 10, analyzer::format_size(f.scale), bottom);
  const double step = tick_step(f.axis.extent, f.axis.seconds);
  for (std::size_t i = 0; static_cast<double>(i) * step <= f.axis.extent * (1 + 1e-9); ++i) {
    const double v = static_cast<double>(i) * step, x = f.x(v);
    const std::string label = f.axis.seconds ? fmt::format("{:g} s", v) : fmt::format("{:.0f}", v);
    out += fmt::format("<line class=\"tl-tick\" x1=\"{:.1f}\" y1=\"{:.0f}\" x2=\"{:.1f}\" y2=\"{:.0f}\"/>"
                       "<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>\n",
                       x, bottom, x, bottom + 4, x, bottom + 17, label);
  }
  out += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{}</text>\n", f.left + f.width,
                     bottom + 34, f.axis.seconds ? "seconds from the first trace entry" : "trace entries (no times recorded)");
  return out;
}

std::string oom_svg(const snap::DeviceTimeline& t, const ChartFrame& f, const char* css, const std::string& label) {
  const double ox = f.x(oom_at(t, f.axis));
  return fmt::format("<line class=\"{}\" x1=\"{:.1f}\" y1=\"{:.0f}\" x2=\"{:.1f}\" y2=\"{:.0f}\"><title>out of "
                     "memory {}</title></line><text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"end\">{}</text>\n",
                     css, ox, f.top, ox, f.top + f.height, moment_label(t, *t.at_oom), ox - 3, f.top + f.height - 4,
                     html_escape(label));
}

}  // namespace

TraceAxis trace_axis(const snap::DeviceTimeline& t) {
  if (t.timed && !t.curve.empty()) return {true, seconds_since(t.curve.back().time_us, t.start.time_us)};
  return {false, static_cast<double>(std::max<std::size_t>(1, t.entries))};
}

TraceAxis shared_axis(const std::vector<const snap::DeviceTimeline*>& timelines) {
  bool seconds = !timelines.empty();
  for (const auto* t : timelines) seconds = seconds && trace_axis(*t).seconds;
  TraceAxis axis{seconds, 0};
  for (const auto* t : timelines)
    axis.extent = std::max(axis.extent, seconds ? trace_axis(*t).extent : static_cast<double>(t->entries));
  if (axis.extent <= 0) axis.extent = 1;
  return axis;
}

double moment_at(const snap::DeviceTimeline& t, const snap::TraceMoment& m, const TraceAxis& axis) {
  return axis.seconds ? seconds_since(m.time_us, t.start.time_us) : static_cast<double>(m.entries);
}

double oom_at(const snap::DeviceTimeline& t, const TraceAxis& axis) {
  if (!t.at_oom) return 0;
  // at_oom's time is the oom entry's own; its entries count those before it.
  return axis.seconds ? seconds_since(t.at_oom->time_us, t.start.time_us) : static_cast<double>(t.at_oom->entries + 1);
}

std::string moment_label(const snap::DeviceTimeline& t, const snap::TraceMoment& m) {
  if (!t.timed) return fmt::format("after entry {}", m.entries);
  return fmt::format("after entry {}, +{:.3f} s", m.entries, seconds_since(m.time_us, t.start.time_us));
}

std::string runs_svg(const std::vector<ChartRun>& runs, const ChartSize& size, u64 scale) {
  std::vector<const snap::DeviceTimeline*> timelines;
  for (const auto& r : runs) {
    timelines.push_back(r.timeline);
    if (scale == 0) scale = std::max({scale, r.timeline->peak_allocated.allocated, r.timeline->peak_reserved.reserved});
  }
  const double left = size.labels ? 70 : 2, top = size.labels ? 10 : 2;
  const ChartFrame f{left, size.width, top, size.height, shared_axis(timelines), std::max<u64>(1, scale)};
  std::string out = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
                                "role=\"img\" aria-label=\"memory over the trace{}\">\n",
                                f.left + f.width + (size.labels ? 10 : 2), f.top + f.height + (size.labels ? 44 : 2),
                                runs.size() == 1 ? "" : "s, on one axis");
  for (const auto& r : runs) {
    const snap::DeviceTimeline& t = *r.timeline;
    const std::string name = html_escape(r.label), css = html_escape(r.css);
    out += fmt::format("<path class=\"run run-res {}\" d=\"{}\"><title>{} reserved</title></path>\n", css,
                       curve_path(t, f, false, false), name);
    out += fmt::format("<path class=\"run {}\" d=\"{}\"><title>{} allocated</title></path>\n", css,
                       curve_path(t, f, true, false), name);
    const double px = f.x(moment_at(t, t.peak_allocated, f.axis)), py = f.y(t.peak_allocated.allocated);
    out += fmt::format("<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"><title>{} peak allocated {} {}"
                       "</title></circle>\n",
                       css, px, py, name, analyzer::format_size(t.peak_allocated.allocated), moment_label(t, t.peak_allocated));
    if (size.labels) {
      const bool left_side = px > f.left + f.width / 2;
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}>{} peak {}</text>\n", left_side ? px - 5 : px + 5, py - 4,
                         left_side ? " text-anchor=\"end\"" : "", name, analyzer::format_size(t.peak_allocated.allocated));
    }
    if (t.at_oom) out += oom_svg(t, f, "tl-oom", size.labels ? r.label + " OOM" : "");
  }
  if (size.labels) out += axes_svg(f);
  out += "</svg>\n";
  return out;
}

std::string sparkline(const std::vector<u64>& values, std::size_t width, u64 scale) {
  static constexpr std::array<const char*, 8> kBars = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty() || width == 0) return "";
  if (scale == 0) scale = *std::max_element(values.begin(), values.end());
  const std::size_t cells = std::min(width, values.size());
  std::string out;
  for (std::size_t c = 0; c < cells; ++c) {
    const std::size_t lo = c * values.size() / cells, hi = std::max(lo + 1, (c + 1) * values.size() / cells);
    const u64 v = *std::max_element(values.begin() + static_cast<std::ptrdiff_t>(lo),
                                    values.begin() + static_cast<std::ptrdiff_t>(hi));
    const std::size_t level = scale ? std::min<std::size_t>(7, static_cast<std::size_t>(
                                                                    static_cast<double>(v) * 8 / static_cast<double>(scale)))
                                    : 0;
    out += kBars[level];
  }
  return out;
}

std::vector<u64> curve_allocated(const snap::DeviceTimeline& t) {
  std::vector<u64> v;
  for (const auto& p : t.curve) v.push_back(p.allocated);
  return v;
}

std::vector<u64> curve_reserved(const snap::DeviceTimeline& t) {
  std::vector<u64> v;
  for (const auto& p : t.curve) v.push_back(p.reserved);
  return v;
}

std::string frame_label(const snap::FrameList& frames) {
  if (!frames || frames->empty()) return "(no stack recorded)";
  const snap::FoldedStack folded = snap::fold_stack(*frames);
  if (folded.lead.empty()) return "(only C++ frames)";
  const auto& f = folded.lead.front();
  return fmt::format("{}{}:{} {}", folded.in_user_code ? "" : "(framework) ", file_name(f.filename), f.line, f.name);
}

std::string timeline_svg(const snap::DeviceTimeline& t) {
  const ChartFrame f{70, 640, 10, 160, trace_axis(t), std::max<u64>(1, std::max(t.peak_allocated.allocated, t.peak_reserved.reserved))};
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" role=\"img\" "
      "aria-label=\"memory over the trace, device {}\">\n",
      f.left + f.width + 10, f.top + f.height + 44, t.device);
  out += fmt::format("<path class=\"tl-r\" d=\"{}\"><title>reserved</title></path>\n", curve_path(t, f, false, true));
  out += fmt::format("<path class=\"tl-a\" d=\"{}\"><title>allocated</title></path>\n", curve_path(t, f, true, false));
  out += axes_svg(f);
  const double px = f.x(moment_at(t, t.peak_allocated, f.axis));
  out += fmt::format("<line class=\"tl-peak\" x1=\"{:.1f}\" y1=\"{:.0f}\" x2=\"{:.1f}\" y2=\"{:.0f}\"><title>peak "
                     "allocated {} {}</title></line>\n",
                     px, f.top, px, f.top + f.height, analyzer::format_size(t.peak_allocated.allocated),
                     moment_label(t, t.peak_allocated));
  // The label sits left of the marker when the peak is in the right half.
  const bool left = px > f.left + f.width / 2;
  const double lx = left ? px - 4 : px + 4, ly = f.y(t.peak_allocated.allocated) + 12;
  const char* anchor = left ? " text-anchor=\"end\"" : "";
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}>peak {}</text>\n", lx, ly, anchor,
                     analyzer::format_size(t.peak_allocated.allocated));
  // The sites holding most of it, by the user's frame, under the label.
  for (std::size_t i = 0; i < std::min<std::size_t>(3, t.peak_allocated.top_sites.size()); ++i) {
    const auto& site = t.peak_allocated.top_sites[i];
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}>{} {}</text>\n", lx, ly + 14 * static_cast<double>(i + 1),
                       anchor, analyzer::format_size(site.bytes), html_escape(frame_label(site.frames)));
  }
  if (t.at_oom) out += oom_svg(t, f, "tl-oom", "OOM");
  out += "</svg>\n";
  if (!t.peak_allocated.largest.empty()) {
    out += "<ol class=\"frames\">";
    for (const auto& b : t.peak_allocated.largest)
      out += fmt::format("<li><b>{}</b> {}{}</li>", analyzer::format_size(b.size), html_escape(frame_label(b.frames)),
                         b.before_trace ? " (allocated before the trace)" : "");
    out += "</ol>\n";
  }
  return out;
}

}  // namespace oomlens::report
