#include "lsp/snapshot_lines.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "lsp/markdown.hpp"

namespace oomlens::lsp {
namespace {

namespace snap = analyzer::snapshot;

const snap::DeviceTimeline* shown_timeline(const snap::Analysis& analysis) {
  const snap::DeviceTimeline* best = nullptr;
  for (const auto& t : analysis.timelines) {
    if (analysis.oom && t.device == analysis.oom->device) return &t;
    if (!best || t.peak_allocated.allocated > best->peak_allocated.allocated) best = &t;
  }
  return best;
}

std::string normal(const std::string& path) { return std::filesystem::path(path).lexically_normal().string(); }

std::string blocks_text(std::size_t n) { return fmt::format("{} block{}", n, n == 1 ? "" : "s"); }

}  // namespace

std::optional<SnapshotLines> snapshot_lines(const snap::Analysis& analysis, std::string snapshot) {
  const snap::DeviceTimeline* t = shown_timeline(analysis);
  if (!t) return std::nullopt;
  SnapshotLines out;
  out.snapshot = std::move(snapshot);
  out.device = t->device;
  out.peak_allocated = t->peak_allocated.allocated;
  out.peak_entry = t->peak_allocated.entries;
  out.entries = t->entries;
  out.sites = t->peak_allocated.all_sites;
  for (std::size_t s = 0; s < out.sites.size(); ++s) {
    const auto& site = out.sites[s];
    if (!site.frames) continue;
    // A line that appears twice in one stack (recursion) holds the blocks once.
    std::set<std::pair<std::string_view, std::int64_t>> seen;
    for (std::size_t f = 0; f < site.frames->size(); ++f) {
      const snap::Frame& frame = (*site.frames)[f];
      if (frame.filename.empty() || frame.line <= 0 || !seen.emplace(frame.filename, frame.line).second) continue;
      LineMemory& memory = out.files[frame.filename][frame.line];
      memory.bytes += site.bytes;
      memory.blocks += site.count;
      memory.sites.push_back({s, f});  // sites come most bytes first
    }
  }
  return out;
}

std::vector<std::pair<std::int64_t, const LineMemory*>> lines_of_document(const SnapshotLines& lines,
                                                                          const std::string& path,
                                                                          const std::vector<std::string>& folders) {
  const std::string wanted = normal(path);
  std::vector<std::pair<std::int64_t, const LineMemory*>> out;
  for (const auto& entry : lines.files) {
    // A named reference, not a structured binding: clang 14 cannot capture those in a lambda.
    const std::string& file = entry.first;
    const auto& by_line = entry.second;
    bool match = false;
    if (file.starts_with('/')) {
      match = normal(file) == wanted;
    } else {
      match = std::any_of(folders.begin(), folders.end(),
                          [&](const std::string& folder) { return normal(folder + "/" + file) == wanted; });
    }
    if (!match) continue;
    for (const auto& [line, memory] : by_line) out.emplace_back(line, &memory);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::string line_memory_label(const LineMemory& memory) {
  return fmt::format("+{} at peak, {}", analyzer::format_size(memory.bytes), blocks_text(memory.blocks));
}

std::string line_memory_markdown(const SnapshotLines& lines, const LineMemory& memory) {
  std::string out = fmt::format(
      "**{} alive at the peak** in {} allocated through this line: the peak of device {}'s trace in {} "
      "({} allocated, after entry {} of {})\n\n",
      analyzer::format_size(memory.bytes), blocks_text(memory.blocks), lines.device, markdown_code(lines.snapshot),
      analyzer::format_size(lines.peak_allocated), lines.peak_entry, lines.entries);
  constexpr std::size_t kSitesShown = 5, kFramesShown = 6;
  std::size_t shown = 0;
  for (const LineSite& share : memory.sites) {
    if (shown++ == kSitesShown) {
      out += fmt::format("- … {} more call paths\n", memory.sites.size() - kSitesShown);
      break;
    }
    const auto& site = lines.sites[share.site];
    out += fmt::format("- **{}** in {}{}\n", analyzer::format_size(site.bytes), blocks_text(site.count),
                       share.frame == 0 ? ", allocated here" : ", allocated by:");
    // The call path from the allocation up to (not including) this line, innermost first.
    // This line calls frame - 1, which calls frame - 2, ... down to the allocation at 0.
    const std::size_t last = share.frame > kFramesShown ? share.frame - kFramesShown : 0;
    for (std::size_t f = share.frame; f-- > last;) {
      const snap::Frame& frame = (*site.frames)[f];
      out += fmt::format("   - {} in {}\n", markdown_code(fmt::format("{}:{}", frame.filename, frame.line)),
                         markdown_code(frame.name));
    }
    if (last > 0) out += fmt::format("   - … {} more frames down to the allocation\n", last);
  }
  return out;
}

}  // namespace oomlens::lsp
