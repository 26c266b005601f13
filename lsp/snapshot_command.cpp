#include "lsp/snapshot_command.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "lsp/jsonrpc.hpp"
#include "lsp/local_files.hpp"
#include "lsp/markdown.hpp"
#include "report/evidence_text.hpp"
#include "report/snapshot_file.hpp"
#include "report/snapshot_html.hpp"
#include "report/snapshot_json.hpp"
#include "report/snapshot_stacks.hpp"
#include "rules/snapshot/oom_verdict.hpp"

namespace oomlens::lsp {
namespace {

namespace snap = analyzer::snapshot;

std::string sz(std::uint64_t b) { return analyzer::format_size(b); }

}  // namespace

void frames_markdown(std::string& out, const snap::FrameList& frames, const snap::FoldedStack* folded,
                     snap::MissingStack missing, std::size_t max, std::string_view indent) {
  const report::ShownStack shown = report::shown_stack(frames, folded, missing, {max, false});
  if (!shown.heading.empty()) out += fmt::format("{}- {}\n", indent, shown.heading);
  for (const auto& f : shown.frames)
    out += fmt::format("{}- {} in {}\n", indent, markdown_code(fmt::format("{}:{}", f.filename, f.line)), markdown_code(f.name));
  if (!shown.folded.empty()) out += fmt::format("{}- {}\n", indent, shown.folded);
}

std::string snapshot_argument_path(const std::optional<std::string>& given, std::string_view command,
                                   std::string_view usage) {
  if (!given) throw ParamsError(fmt::format("{} expects {}", command, usage));
  const std::string& text = *given;
  std::string path = text;
  if (text.starts_with("file://")) {
    auto local = path_from_file_uri(text);
    if (!local) throw ParamsError(fmt::format("{}: '{}' is not a local file URI", command, text));
    path = *local;
  }
  if (!path.starts_with('/'))
    throw ParamsError(fmt::format("{} needs an absolute path, got '{}'", command, text));
  if (path.find('\0') != std::string::npos) throw ParamsError(fmt::format("{}: a path with a NUL byte", command));
  return path;
}

SnapshotCommandOutcome refused_outcome(const std::string& path, const report::SnapshotFileError& e) {
  SnapshotCommandOutcome outcome;
  outcome.error_code = InvalidParams;  // the argument names no readable snapshot: the caller's to fix
  outcome.error = e.kind == report::SnapshotFileError::Kind::unreadable
                      ? fmt::format("cannot read snapshot {}: {}", path, e.reason)
                      : fmt::format("snapshot {} refused: {}", path, e.reason);
  return outcome;
}

SnapshotCommandOutcome run_snapshot_command(const std::string& path, const std::atomic<bool>& cancelled) {
  if (report::is_directory(path)) return run_job_command(path, cancelled);
  SnapshotCommandOutcome outcome;
  auto snapshot = report::read_snapshot_file(path);
  if (cancelled.load()) return outcome.cancelled = true, outcome;
  if (!snapshot) return refused_outcome(path, snapshot.error());
  snap::AnalysisOptions options;
  options.replay.all_peak_sites = true;  // for the lines (snapshot_lines)
  const rules::SnapshotReport diagnosed = rules::diagnose_snapshot(snap::analyze(*snapshot, options));
  if (cancelled.load()) return outcome.cancelled = true, outcome;
  outcome.result = CommandResult{.report = report::snapshot_json(*snapshot, diagnosed),
                                 .markdown = snapshot_markdown(*snapshot, diagnosed, path),
                                 .html = report::snapshot_html(*snapshot, diagnosed, path)};
  outcome.lines = snapshot_lines(diagnosed.analysis, path);
  return outcome;
}

std::string snapshot_markdown(const snap::Snapshot& snapshot, const rules::SnapshotReport& report, std::string_view source) {
  const snap::Analysis& a = report.analysis;
  std::string out = fmt::format("### Memory snapshot {}\n\n", markdown_code(source));
  if (snapshot.legacy) out += "PyTorch 1.13 format: no trace, no settings.\n\n";
  if (report.oom) {
    const rules::Diagnosis& d = *report.oom;
    const auto& o = report.oom_entry();
    out += fmt::format("**Out of memory on device {}: {}**\n\n", o.device, analyzer::to_string(o.verdict.cls));
    std::string head = "|", rule = "|", row = "|";
    for (const auto& f : report::verdict_figures(d)) {
      head += fmt::format(" {} |", f.label);
      rule += "---|";
      row += fmt::format(" {} |", f.value);
    }
    out += head + "\n" + rule + "\n" + row + "\n\n";
    for (const auto& line : o.verdict.arithmetic) out += fmt::format("- {}\n", markdown_code(line));
    for (const auto& line : o.verdict.notes) out += fmt::format("- note: {}\n", line);
    out += "\nFailed call:\n\n";
    frames_markdown(out, o.frames, nullptr, o.missing, 6, "");
    out += "\n";
  } else if (!snapshot.legacy) {
    out += "No out-of-memory event in the trace.\n\n";
  }
  if (a.devices.empty()) {
    out += "No segments: nothing was reserved when the snapshot was taken.\n";
  } else {
    out += "| device | reserved | allocated | active | inactive | inactive split | fragmentation | largest free | segments |\n"
           "|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& d : a.devices)
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {:.1f}% | {} | {} |\n", d.device, sz(d.reserved), sz(d.allocated),
                         sz(d.active), sz(d.inactive), sz(d.inactive_split), d.fragmentation * 100,
                         sz(d.largest_free_block), d.segments);
  }
  for (const auto& t : a.timelines) {
    out += fmt::format("\nTrace of device {}: peak allocated **{}** after entry {} of {}, peak reserved **{}**{}{}\n",
                       t.device, sz(t.peak_allocated.allocated), t.peak_allocated.entries, t.entries,
                       sz(t.peak_reserved.reserved),
                       t.at_oom ? fmt::format("; {} allocated at the OOM", sz(t.at_oom->allocated)) : std::string(),
                       t.before_trace_blocks ? fmt::format("; {} allocated before the trace begins", sz(t.before_trace_bytes))
                                             : std::string());
    if (!t.peak_allocated.top_sites.empty()) {
      out += "\nAt the peak:\n\n";
      for (const auto& s : t.peak_allocated.top_sites) {
        out += fmt::format("- **{}** in {} block{}\n", sz(s.bytes), s.count, s.count == 1 ? "" : "s");
        frames_markdown(out, s.frames, &s.folded, s.missing, 1, "   ");
      }
    }
  }
  if (!a.top_sites.empty()) {
    out += "\n#### Top allocation sites (live blocks)\n\n";
    std::size_t rank = 0;
    for (const auto& s : a.top_sites) {
      out += fmt::format("{}. **{}** in {} block{}\n", ++rank, sz(s.bytes), s.count, s.count == 1 ? "" : "s");
      frames_markdown(out, s.frames, &s.folded, s.missing, 4, "   ");
    }
    if (a.sites_total > a.top_sites.size()) out += fmt::format("\n… {} more sites\n", a.sites_total - a.top_sites.size());
  }
  return out;
}

}  // namespace oomlens::lsp
