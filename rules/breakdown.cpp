#include "rules/breakdown.hpp"

#include <algorithm>
#include <cmath>

namespace oomlens::rules {

MemoryBreakdown memory_breakdown(const analyzer::MemoryNumbers& n) {
  using K = MemoryPart::Kind;
  MemoryBreakdown b;
  auto add = [&](K kind, const char* label, std::uint64_t bytes) {
    if (bytes) b.parts.push_back({kind, label, bytes});
  };
  std::uint64_t others = 0;
  for (const auto& p : n.other_processes) others += p.bytes;
  std::uint64_t cached = n.reserved_unallocated.value_or(0) + n.private_pools.value_or(0);
  std::uint64_t live = n.allocated.value_or(0);
  if (!n.allocated && n.reserved) live = *n.reserved - std::min(*n.reserved, cached);
  add(K::allocated, "allocated", live);
  add(K::reserved_unallocated, "reserved-unallocated", cached);
  add(K::non_pytorch, "non-PyTorch", n.non_pytorch.value_or(0));
  add(K::other_processes, "other processes", others);
  std::uint64_t known = 0;
  for (const auto& p : b.parts) known += p.bytes;
  if (n.total && n.free) {
    std::uint64_t in_use = *n.total > *n.free ? *n.total - *n.free : 0;
    // Two-decimal rounding of every printed figure leaves a few MiB over;
    // only a real gap (1% of the device) is worth a segment.
    if (in_use > known && (in_use - known) * 100 >= *n.total) add(K::unaccounted, "unaccounted", in_use - known);
  }
  add(K::free, "free", n.free.value_or(0));
  known = 0;
  for (const auto& p : b.parts) known += p.bytes;
  // Over capacity (WSL spill): the bar's whole is what is in use, not the
  // device. The sum of rounded figures may exceed the total by their
  // rounding (up to 1%): that is still the device (the bar is capped at it).
  b.total_is_device = n.total && *n.total + *n.total / 100 >= known;
  b.total = b.total_is_device ? *n.total : known;
  if (b.parts.size() < 2 || b.total == 0) b.parts.clear();
  return b;
}

std::vector<MemoryPart::Kind> bar_cells(const MemoryBreakdown& b, std::size_t width) {
  std::vector<MemoryPart::Kind> cells;
  if (b.parts.empty() || width == 0) return cells;
  // Largest-remainder apportionment, with every non-zero part visible.
  std::vector<std::size_t> n(b.parts.size());
  std::vector<double> rem(b.parts.size());
  std::uint64_t sum = 0;
  for (const auto& p : b.parts) sum += p.bytes;
  // Cells the parts fill; the rest stays blank when they do not fill the whole.
  auto target = std::min(width, static_cast<std::size_t>(std::llround(static_cast<double>(sum) * static_cast<double>(width) /
                                                                      static_cast<double>(b.total))));
  std::size_t used = 0;
  for (std::size_t i = 0; i < b.parts.size(); ++i) {
    double exact = static_cast<double>(b.parts[i].bytes) * static_cast<double>(width) / static_cast<double>(b.total);
    n[i] = std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(exact)));
    rem[i] = exact - std::floor(exact);
    used += n[i];
  }
  while (used < target) {
    auto i = static_cast<std::size_t>(std::max_element(rem.begin(), rem.end()) - rem.begin());
    ++n[i];
    rem[i] = -1;
    ++used;
    if (std::all_of(rem.begin(), rem.end(), [](double r) { return r < 0; })) break;
  }
  while (used > std::max(target, b.parts.size())) {  // the minimum of one cell overshot: take from the largest
    auto i = static_cast<std::size_t>(std::max_element(n.begin(), n.end()) - n.begin());
    if (n[i] <= 1) break;
    --n[i];
    --used;
  }
  for (std::size_t i = 0; i < b.parts.size(); ++i) cells.insert(cells.end(), n[i], b.parts[i].kind);
  return cells;
}

const char* to_string(MemoryPart::Kind k) {
  switch (k) {
    case MemoryPart::Kind::allocated: return "allocated";
    case MemoryPart::Kind::reserved_unallocated: return "reserved_unallocated";
    case MemoryPart::Kind::non_pytorch: return "non_pytorch";
    case MemoryPart::Kind::other_processes: return "other_processes";
    case MemoryPart::Kind::unaccounted: return "unaccounted";
    case MemoryPart::Kind::free: return "free";
  }
  return "free";
}

const char* bar_glyph(MemoryPart::Kind k) {
  switch (k) {
    case MemoryPart::Kind::allocated: return "█";
    case MemoryPart::Kind::reserved_unallocated: return "▓";
    case MemoryPart::Kind::non_pytorch: return "▒";
    case MemoryPart::Kind::other_processes: return "░";
    case MemoryPart::Kind::unaccounted: return "╌";
    case MemoryPart::Kind::free: return " ";
  }
  return " ";
}

std::string text_bar(const MemoryBreakdown& b, std::size_t width) {
  std::string s = "[";
  std::size_t drawn = 0;
  for (auto k : bar_cells(b, width)) {
    s += bar_glyph(k);
    ++drawn;
  }
  s.append(width > drawn ? width - drawn : 0, ' ');
  return s + "]";
}

}  // namespace oomlens::rules
