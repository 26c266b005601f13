// torch.cuda.memory_summary() printed into a log: a
// 77-column box whose header row counts the OOMs the caching allocator has
// raised and the times it flushed its cache to retry cudaMalloc:
//
//   |            CUDA OOMs: 1            |        cudaMalloc retries: 12        |
//   ...
//   | Allocated memory      |  71680 MiB |  76800 MiB |    900 GiB |    830 GiB |
//   | GPU reserved memory   |  75264 MiB |  79872 MiB |   1024 GiB |    950 GiB |
//   | Non-releasable memory |   3584 MiB |   6144 MiB |    300 GiB |    296 GiB |
//
// "CUDA OOMs: N" > 0 is evidence of an OOM (a memory_summary event); the rows
// give its figures. Cur Usage maps as
//
//   Allocated memory       -> allocated             (allocated_bytes.all.current)
//   GPU reserved memory    -> reserved              (reserved_bytes.all.current)
//   reserved - allocated   -> reserved_unallocated  (as every allocator message defines it)
//
// Non-releasable memory (inactive_split_bytes: free blocks inside segments
// that also hold live ones, the part of reserved-but-unallocated that
// empty_cache() cannot return) has no field of its own: it is named in the
// message. Printed after an OOM, the cache has already been flushed, so
// reserved - allocated is then mostly that non-releasable part.
//
// Units: 2.x prints integer B/KiB/MiB/GiB/TiB/PiB, 1.13 B/KB/MB/GB (binary,
// like every other figure; parse_size reads both).
//
// "CUDA OOMs: 0" is no OOM, whatever the retries (the scanner's gate drops
// it: training scripts print such tables every few steps, and retries alone
// are better read from the OOM message they precede). A summary followed by
// more training output reports OOMs the program caught and got past: pressure.
#include <re2/re2.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/oom_context.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

constexpr std::size_t kTableLines = 40;   // the box is 35-38 lines long
constexpr std::size_t kTitleLines = 3;    // border, title, rule above the header row
constexpr std::size_t kFateLines = 120;

struct Row {
  std::string current, peak;  // cells as printed, e.g. "71680 MiB"
  std::optional<std::uint64_t> bytes;
};

struct Table {
  Row allocated, reserved, non_releasable;
  std::size_t last = 0;  // index of the box's last line
};

bool is_box_line(std::string_view text) {
  std::size_t i = text.find_first_not_of(" \t");
  return i != std::string_view::npos && text[i] == '|';
}

Table read_table(const Region& region, std::size_t at) {
  static const RE2 row(
      R"(\|\s*(Allocated memory|GPU reserved memory|Non-releasable memory)\s*\|\s*(\d+\s*(?:[KMGTP]i?B|B))\s*\|)"
      R"(\s*(\d+\s*(?:[KMGTP]i?B|B))\s*\|)",
      RE2::Latin1);
  Table t;
  t.last = at;
  std::size_t cursor = at;
  for (std::size_t n = 0; n < kTableLines; ++n) {
    auto next = next_line_of(region, cursor, region.lines[at].rank);
    if (!next || !is_box_line(region.lines[*next].text)) break;
    cursor = t.last = *next;
    StringPiece name, current, peak;
    if (!RE2::PartialMatch(head(region.lines[cursor].text), row, &name, &current, &peak)) continue;
    Row* r = name == "Allocated memory" ? &t.allocated : name == "GPU reserved memory" ? &t.reserved : &t.non_releasable;
    if (r->bytes) continue;  // the all-pool row comes first; sub-rows say "from large pool"
    r->current = std::string(view(current));
    r->peak = std::string(view(peak));
    r->bytes = parse_size(r->current);
  }
  return t;
}

// "PyTorch CUDA memory summary, device ID 0" in the lines just above.
std::optional<int> device_id_above(const Region& region, std::size_t at) {
  static const RE2 title(R"(memory summary, device ID (\d{1,4}))", RE2::Latin1);
  for (std::size_t k = 0; k < kTitleLines && k < at; ++k) {
    const Line& line = region.lines[at - 1 - k];
    if (line.rank != region.lines[at].rank) continue;
    StringPiece id;
    if (RE2::PartialMatch(head(line.text), title, &id)) return exact_int(view(id));
  }
  return std::nullopt;
}

std::string describe(std::uint64_t ooms, std::uint64_t retries, const Table& t) {
  std::string s = fmt::format("memory_summary(): CUDA OOMs: {}, cudaMalloc retries: {}", ooms, retries);
  auto add = [&](std::string_view label, const Row& r) {
    if (r.bytes) s += fmt::format("; {} {} (peak {})", label, r.current, r.peak);
  };
  add("allocated", t.allocated);
  add("reserved", t.reserved);
  add("non-releasable", t.non_releasable);
  return s;
}

}  // namespace

std::optional<std::size_t> parse_memory_summary(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 header(R"(CUDA OOMs:\s*(\d{1,19})\s*\|\s*cudaMalloc retries:\s*(\d{1,19}))", RE2::Latin1);
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  StringPiece ooms_text, retries_text;
  if (!RE2::PartialMatch(head(line.text), header, &ooms_text, &retries_text)) return std::nullopt;
  std::uint64_t ooms = exact_u64(view(ooms_text)).value_or(0);
  std::uint64_t retries = exact_u64(view(retries_text)).value_or(0);
  if (ooms == 0) return std::nullopt;  // a healthy summary: nothing to say

  Table table = read_table(region, at);
  if (fate_after(region, table.last, kFateLines, is_box_line) == Fate::survived) {
    out.findings.push_back(finding_at(line, FindingKind::allocator_pressure,
                                      fmt::format("memory_summary(): CUDA OOMs: {} the program caught and got past "
                                                  "(training went on after the summary), cudaMalloc retries: {}",
                                                  ooms, retries),
                                      table.reserved.bytes));
    return table.last;
  }

  OomEvent ev = event_at(line, OomFamily::memory_summary);
  ev.framework = Framework::pytorch;
  ev.device = Device::cuda;
  ev.gpu = device_id_above(region, at);
  ev.message = describe(ooms, retries, table);
  MemoryNumbers& n = ev.numbers;
  n.allocated = table.allocated.bytes;
  n.reserved = table.reserved.bytes;
  if (n.allocated && n.reserved && *n.reserved >= *n.allocated) n.reserved_unallocated = *n.reserved - *n.allocated;
  return append_event(region, table.last, std::move(ev), out);
}

}  // namespace oomlens::analyzer::parse
