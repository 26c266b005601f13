#include "report/snapshot_timeline.hpp"

#include <algorithm>
#include <array>

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

}  // namespace

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
  constexpr double kLeft = 70, kWidth = 640, kHeight = 160, kTop = 10;
  const double n = static_cast<double>(std::max<std::size_t>(1, t.curve.size()));
  u64 scale = 1;
  for (const auto& p : t.curve) scale = std::max({scale, p.allocated, p.reserved});
  auto x = [&](double point) { return kLeft + kWidth * point / std::max(1.0, n - 1); };
  auto y = [&](u64 v) { return kTop + kHeight * (1.0 - static_cast<double>(v) / static_cast<double>(scale)); };
  auto point_of = [&](std::size_t entries) {
    return static_cast<double>(entries ? (entries - 1) / std::max<std::size_t>(1, t.entries_per_point) : 0);
  };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" role=\"img\" "
      "aria-label=\"memory over the trace, device {}\">\n",
      kLeft + kWidth + 10, kTop + kHeight + 30, t.device);
  std::string reserved = fmt::format("M{:.1f},{:.1f}", x(0), y(0));
  std::string allocated;
  for (std::size_t i = 0; i < t.curve.size(); ++i) {
    reserved += fmt::format(" L{:.1f},{:.1f}", x(static_cast<double>(i)), y(t.curve[i].reserved));
    allocated += fmt::format("{}{:.1f},{:.1f}", i ? " L" : "M", x(static_cast<double>(i)), y(t.curve[i].allocated));
  }
  reserved += fmt::format(" L{:.1f},{:.1f} Z", x(n - 1), y(0));
  out += fmt::format("<path class=\"tl-r\" d=\"{}\"><title>reserved</title></path>\n", reserved);
  out += fmt::format("<path class=\"tl-a\" d=\"{}\"><title>allocated</title></path>\n", allocated);
  out += fmt::format("<text x=\"0\" y=\"{:.0f}\">{}</text><text x=\"0\" y=\"{:.0f}\">0</text>\n", kTop + 10,
                     analyzer::format_size(scale), kTop + kHeight);
  out += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">entry 0</text><text x=\"{:.0f}\" y=\"{:.0f}\" "
                     "text-anchor=\"end\">entry {}</text>\n",
                     kLeft, kTop + kHeight + 18, kLeft + kWidth, kTop + kHeight + 18, t.entries);
  const double px = x(point_of(t.peak_allocated.entries));
  out += fmt::format("<line class=\"tl-peak\" x1=\"{:.1f}\" y1=\"{:.0f}\" x2=\"{:.1f}\" y2=\"{:.0f}\"><title>peak "
                     "allocated {} after entry {}</title></line>\n",
                     px, kTop, px, kTop + kHeight, analyzer::format_size(t.peak_allocated.allocated),
                     t.peak_allocated.entries);
  // The label sits left of the marker when the peak is in the right half.
  const bool left = px > kLeft + kWidth / 2;
  const double lx = left ? px - 4 : px + 4, ly = y(t.peak_allocated.allocated) + 12;
  const char* anchor = left ? " text-anchor=\"end\"" : "";
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}>peak {}</text>\n", lx, ly, anchor,
                     analyzer::format_size(t.peak_allocated.allocated));
  // The sites holding most of it, by the user's frame, under the label.
  for (std::size_t i = 0; i < std::min<std::size_t>(3, t.peak_allocated.top_sites.size()); ++i) {
    const auto& site = t.peak_allocated.top_sites[i];
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}>{} {}</text>\n", lx, ly + 14 * static_cast<double>(i + 1),
                       anchor, analyzer::format_size(site.bytes), html_escape(frame_label(site.frames)));
  }
  if (t.at_oom) {
    const double ox = x(point_of(t.at_oom->entries + 1));
    out += fmt::format("<line class=\"tl-oom\" x1=\"{:.1f}\" y1=\"{:.0f}\" x2=\"{:.1f}\" y2=\"{:.0f}\"><title>out of "
                       "memory after entry {}</title></line><text x=\"{:.1f}\" y=\"{:.0f}\" "
                       "text-anchor=\"end\">OOM</text>\n",
                       ox, kTop, ox, kTop + kHeight, t.at_oom->entries, ox - 3, kTop + kHeight - 4);
  }
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
