// oomlens snapshot FILE: reads a PyTorch memory snapshot (never executing
// anything in it) and says why the allocation failed.
#include <algorithm>
#include <charconv>
#include <iostream>
#include <optional>
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "analyzer/snapshot/analysis.hpp"
#include "cli/commands.hpp"
#include "report/snapshot_file.hpp"
#include "report/snapshot_html.hpp"
#include "report/snapshot_json.hpp"

namespace oomlens::cli {
namespace {

namespace snap = analyzer::snapshot;

constexpr const char* kAbout = R"(Reads a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot("x.pickle"))
without executing anything inside it, and shows per device the reserved,
allocated and free memory, the fragmentation, the OOM recorded in the trace
with its verdict (fragmentation, capacity, external, limit) and the arithmetic,
a map of the segments, and the allocation sites holding the most memory.
--format html writes one self-contained page (inline SVG and CSS, no scripts).

Exit status: 0 when the snapshot was analysed, 2 when it cannot be read or is
refused (the reason on stderr).)";

struct Options {
  std::string path;
  std::string format = "text";
  snap::AnalysisOptions analysis;
};

// "79.19 GiB" or a count of bytes; nothing for anything else or zero.
std::optional<std::uint64_t> device_total(const std::string& s) {
  auto bytes = analyzer::parse_size(s);
  if (!bytes) {
    std::uint64_t raw = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), raw);
    if (ec == std::errc() && ptr == s.data() + s.size()) bytes = raw;
  }
  if (!bytes || *bytes == 0) return std::nullopt;
  return bytes;
}

constexpr std::size_t kMapSegments = 40;
constexpr std::size_t kMapWidth = 48;

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

void print_frames(std::ostream& out, const snap::FrameList& frames, std::size_t max, const char* indent) {
  if (!frames || frames->empty()) {
    out << indent << "(no stack recorded)\n";
    return;
  }
  std::size_t n = std::min(max, frames->size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& f = (*frames)[i];
    out << indent << f.filename << ":" << f.line << " " << f.name << "\n";
  }
  if (frames->size() > n) out << indent << "... " << frames->size() - n << " more frames\n";
}

void print_text(std::ostream& out, const std::string& path, const snap::Snapshot& snapshot, const snap::Analysis& a) {
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
  if (a.oom) {
    const auto& o = *a.oom;
    out << "\nout of memory on device " << o.device << ": " << analyzer::to_string(o.verdict.cls) << "\n";
    out << "  requested        " << sz(o.requested) << "\n";
    out << "  device free      " << (o.device_free_known ? sz(o.device_free) : std::string("not recorded")) << "\n";
    out << "  cached free      " << sz(o.cached_free) << "\n";
    out << "  largest free     " << sz(o.largest_free_block) << "\n";
    for (const auto& line : o.verdict.arithmetic) out << "  = " << line << "\n";
    for (const auto& line : o.verdict.notes) out << "  note: " << line << "\n";
    if (o.oom_events > 1) out << "  note: " << o.oom_events << " oom events on this device; the last is shown\n";
    if (o.frames && !o.frames->empty()) {
      out << "  failed call:\n";
      print_frames(out, o.frames, 6, "    ");
    }
  } else if (!snapshot.legacy) {
    out << "\nno out-of-memory event in the trace\n";
  }
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
    out << "\ntop allocation sites (live blocks)\n";
    std::size_t rank = 0;
    for (const auto& s : a.top_sites) {
      out << fmt::format("  #{} {} in {} block{}\n", ++rank, sz(s.bytes), s.count, s.count == 1 ? "" : "s");
      print_frames(out, s.frames, 4, "      ");
    }
    if (a.sites_total > a.top_sites.size())
      out << "  ... " << a.sites_total - a.top_sites.size() << " more sites (--top N)\n";
  }
}

int snapshot(const Options& o) {
  const std::string& path = o.path;
  const std::string& format = o.format;
  auto snapshot = report::read_snapshot_file(path);
  if (!snapshot) {
    const auto& e = snapshot.error();
    if (e.kind == report::SnapshotFileError::Kind::unreadable)
      std::cerr << "oomlens snapshot: error: cannot read " << path << ": " << e.reason << "\n";
    else
      std::cerr << "oomlens snapshot: error: " << path << ": " << e.reason << "\n";
    return kExitUsage;
  }
  const snap::Analysis analysis = snap::analyze(*snapshot, o.analysis);
  if (format == "json")
    std::cout << report::snapshot_json_text(report::snapshot_json(*snapshot, analysis)) << "\n";
  else if (format == "html")
    std::cout << report::snapshot_html(*snapshot, analysis, path);
  else
    print_text(std::cout, path, *snapshot, analysis);
  return kExitClean;
}

}  // namespace

void add_snapshot(CLI::App& app, Action& action) {
  auto o = std::make_shared<Options>();
  CLI::App* command =
      app.add_subcommand("snapshot", "Explain a PyTorch memory snapshot FILE (.pickle), read without running it");
  command->add_option("FILE", o->path, "The snapshot (.pickle)")->required()->type_name("");
  add_format_option(*command, o->format, {"text", "json", "html"}, "Output format [default: text]");
  // Digits only: CLI11 would read "-1" as the largest number and "010" as octal.
  command
      ->add_option_function<std::string>(
          "--top",
          [o](const std::string& n) {
            auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), o->analysis.top_sites);
            if (ec != std::errc() || ptr != n.data() + n.size())
              throw CLI::ValidationError("--top", "expects a number, got '" + n + "'");
          },
          "Number of allocation sites to show [default: 10]")
      ->type_name("N");
  command
      ->add_option_function<std::string>(
          "--device-total",
          [o](const std::string& s) {
            o->analysis.device_total = device_total(s);
            if (!o->analysis.device_total)
              throw CLI::ValidationError("--device-total", "expects a size such as \"80 GiB\", got '" + s + "'");
          },
          "The device's total memory (e.g. \"79.19 GiB\", from the log's \"total capacity\"): a snapshot does not "
          "record it, and it settles external versus capacity")
      ->type_name("SIZE");
  command->footer(kAbout);
  command->callback([o, &action] { action = [o] { return snapshot(*o); }; });
}

}  // namespace oomlens::cli
