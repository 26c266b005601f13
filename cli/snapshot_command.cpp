// oomlens snapshot FILE: reads a PyTorch memory snapshot (never executing
// anything in it) and says why the allocation failed.
#include <algorithm>
#include <charconv>
#include <iostream>
#include <optional>
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "analyzer/snapshot/analysis.hpp"
#include "analyzer/snapshot/compare.hpp"
#include "cli/commands.hpp"
#include "cli/snapshot_text.hpp"
#include "report/snapshot_file.hpp"
#include "report/snapshot_html.hpp"
#include "report/snapshot_json.hpp"
#include "report/snapshot_run_files.hpp"
#include "rules/snapshot/oom_verdict.hpp"

namespace oomlens::cli {
namespace {

namespace snap = analyzer::snapshot;

constexpr const char* kAbout = R"(Reads a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot("x.pickle"))
without executing anything inside it, and shows per device the reserved,
allocated and free memory, the fragmentation, the OOM recorded in the trace
with its verdict (fragmentation, capacity, external, limit) and the arithmetic,
a map of the segments, and the allocation sites holding the most memory, each
stack led by the innermost frame of your own code (C++ and framework frames
folded; --all-frames shows them). The trace is replayed: the peaks of
allocated and reserved memory, what was alive then and at the OOM, and a
sparkline of the curve, with the times of the peak and of the OOM from the
trace's first entry. --format html writes one self-contained page (inline SVG
and CSS, no scripts) with the curve drawn against time (against entry counts
when the trace carries no times).

--compare A B puts two runs side by side: peaks, reserved, fragmentation, the
top sites and the sites that grew or shrank most. FILE may be a folder of
per-rank snapshots (rank0.pickle, ... or one folder per rank): a table per
rank, the rank with the highest peak and the imbalance. Both write html too:
the runs' curves on one axis, or a small curve per rank.

Exit status: 0 when the snapshot was analysed, 2 when it cannot be read or is
refused (the reason on stderr).)";

struct Options {
  std::string path;
  std::vector<std::string> compare;  // --compare A B
  std::string format = "text";
  snap::AnalysisOptions analysis;
  SnapshotTextStyle text;
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

// Says on stderr why a file could not be read or was refused.
void report_error(const std::string& path, const report::SnapshotFileError& e) {
  if (e.kind == report::SnapshotFileError::Kind::unreadable)
    std::cerr << "oomlens snapshot: error: cannot read " << path << ": " << e.reason << "\n";
  else
    std::cerr << "oomlens snapshot: error: " << path << ": " << e.reason << "\n";
}

// Reads and parses a snapshot, or says why not on stderr.
std::optional<snap::Snapshot> read_or_report(const std::string& path) {
  auto snapshot = report::read_snapshot_file(path);
  if (snapshot) return std::move(*snapshot);
  report_error(path, snapshot.error());
  return std::nullopt;
}

int compare(const Options& o) {
  const std::string &path_a = o.compare[0], &path_b = o.compare[1];
  const auto comparison = report::compare_snapshot_files(path_a, path_b, o.analysis);
  if (!comparison) return report_error(comparison.error().path, comparison.error().error), kExitUsage;
  if (o.format == "json")
    std::cout << report::snapshot_json_text(report::snapshot_compare_json(path_a, path_b, *comparison)) << "\n";
  else if (o.format == "html")
    std::cout << report::snapshot_compare_html(path_a, path_b, *comparison);
  else
    print_comparison_text(std::cout, path_a, path_b, *comparison, o.text);
  return kExitClean;
}

// A folder of per-rank snapshots read as one job, one rank at a time.
int job(const Options& o) {
  const auto job = report::read_job_folder(o.path, o.analysis);
  if (!job) return report_error(job.error().path, job.error().error), kExitUsage;
  if (o.format == "json")
    std::cout << report::snapshot_json_text(report::snapshot_job_json(o.path, job->summary, job->highest)) << "\n";
  else if (o.format == "html")
    std::cout << report::snapshot_job_html(o.path, job->summary, job->highest);
  else
    print_job_text(std::cout, o.path, job->summary, job->highest, o.text);
  return kExitClean;
}

int snapshot(const Options& o) {
  if (!o.compare.empty()) return compare(o);
  if (report::is_directory(o.path)) return job(o);
  const std::string& path = o.path;
  const std::string& format = o.format;
  auto snapshot = read_or_report(path);
  if (!snapshot) return kExitUsage;
  const rules::SnapshotReport diagnosed = rules::diagnose_snapshot(snap::analyze(*snapshot, o.analysis));
  if (format == "json")
    std::cout << report::snapshot_json_text(report::snapshot_json(*snapshot, diagnosed)) << "\n";
  else if (format == "html")
    std::cout << report::snapshot_html(*snapshot, diagnosed, path);
  else
    print_snapshot_text(std::cout, path, *snapshot, diagnosed, o.text);
  return kExitClean;
}

}  // namespace

void add_snapshot(CLI::App& app, Action& action) {
  auto o = std::make_shared<Options>();
  CLI::App* command =
      app.add_subcommand("snapshot", "Explain a PyTorch memory snapshot FILE (.pickle), read without running it");
  CLI::Option* file = command->add_option("FILE", o->path, "The snapshot (.pickle), or a folder of per-rank snapshots")->type_name("");
  CLI::Option* compare_option =
      command->add_option("--compare", o->compare, "Compare two runs' snapshots A and B")
          ->expected(2)
          ->type_name("A B");
  file->excludes(compare_option);
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
  command->add_flag("--all-frames", o->text.all_frames,
                    "Show every recorded frame (C++ and framework too), not only your own with the rest folded");
  command->footer(kAbout);
  command->callback([o, &action] {
    if (o->path.empty() && o->compare.empty()) throw CLI::RequiredError("FILE");
    action = [o] { return snapshot(*o); };
  });
}

}  // namespace oomlens::cli
