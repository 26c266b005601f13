#include "cli/verify/verify_report.hpp"

#include <fmt/format.h>

#include "analyzer/size.hpp"

namespace oomlens::cli::verify {
namespace {

namespace v = rules::verify;
using nlohmann::json;

std::string ended(const v::RunMeasure& r) {
  if (r.interrupted) return "Ctrl-C";
  if (r.timed_out) return "time limit";
  if (r.signal) return fmt::format("signal {}", r.signal);
  return std::to_string(r.exit_code);
}

std::string oom_cell(const v::RunMeasure& r) {
  if (r.oom) return fmt::format("{} ({})", analyzer::to_string(r.oom->cls), r.oom->rule);
  return v::ran_out_of_memory(r) ? "yes (probe)" : "none";
}

std::string size_cell(bool measured, std::uint64_t bytes) {
  return measured ? analyzer::format_size(bytes) : "-";
}

std::string run_title(const VerifyResult& result, const v::RunMeasure& r) {
  if (result.baseline && &r == &*result.baseline) return "A  without the setting";
  if (result.settings.empty()) return "   the run";
  return result.baseline ? "B  with the setting" : "   with the setting";
}

json process_json(const v::ProcessMeasure& p) {
  json j = {{"pid", p.pid},
            {"rank", p.rank ? json(*p.rank) : json(nullptr)},
            {"written_at", p.reason},
            {"torch_version", p.torch_version},
            {"cuda_initialized", p.cuda_initialized},
            {"devices", json::array()},
            {"allocator_backend", p.allocator.backend.empty() ? json(nullptr) : json(p.allocator.backend)},
            {"allocator_settings", p.allocator.settings},
            {"ooms", json::array()},
            {"snapshot", p.snapshot.empty() ? json(nullptr) : json(p.snapshot)}};
  for (const auto& d : p.devices)
    j["devices"].push_back({{"index", d.index},
                            {"name", d.name},
                            {"total_memory", d.total_memory},
                            {"peak_reserved", d.peak_reserved},
                            {"peak_allocated", d.peak_allocated},
                            {"inactive_split_peak", d.inactive_split_peak},
                            {"num_alloc_retries", d.num_alloc_retries},
                            {"num_ooms", d.num_ooms}});
  for (const auto& o : p.ooms)
    j["ooms"].push_back({{"device", o.device}, {"requested", o.requested}, {"seconds", o.seconds}});
  return j;
}

json run_json(const v::RunMeasure& r) {
  auto t = v::totals_of(r);
  json j = {{"run", r.label},
            {"exit_code", r.signal || r.timed_out || r.interrupted ? json(nullptr) : json(r.exit_code)},
            {"signal", r.signal ? json(r.signal) : json(nullptr)},
            {"timed_out", r.timed_out},
            {"interrupted", r.interrupted},
            {"wall_seconds", r.wall_seconds},
            {"oom", nullptr},
            {"measured", t.measured},
            {"peak_reserved", t.measured ? json(t.peak_reserved) : json(nullptr)},
            {"peak_allocated", t.measured ? json(t.peak_allocated) : json(nullptr)},
            {"num_alloc_retries", t.measured ? json(t.num_alloc_retries) : json(nullptr)},
            {"num_ooms", t.measured ? json(t.num_ooms) : json(nullptr)},
            {"log", r.log_path},
            {"processes", json::array()}};
  if (r.oom)
    j["oom"] = {{"class", analyzer::to_string(r.oom->cls)}, {"rule", r.oom->rule}, {"message", r.oom->message}};
  for (const auto& p : r.processes) j["processes"].push_back(process_json(p));
  return j;
}

}  // namespace

void render_verify_text(std::ostream& out, const VerifyResult& result, bool color) {
  std::vector<const v::RunMeasure*> runs;
  if (result.baseline) runs.push_back(&*result.baseline);
  if (result.b_ran) runs.push_back(&result.with_setting);

  out << "\n";
  if (!result.settings.empty()) {
    std::string named;
    for (const auto& s : result.settings) named += (named.empty() ? "" : " ") + s.variable + "=" + s.value;
    out << "oomlens verify: " << (result.baseline ? "A/B of " : "a run with ") << named << "\n";
  }
  auto row = [&](const std::string& run, const std::string& exit, const std::string& wall, const std::string& oom,
                 const std::string& reserved, const std::string& allocated, const std::string& gap,
                 const std::string& retries) {
    out << fmt::format("{:<24}{:<12}{:>9}  {:<26}{:>14}{:>16}{:>20}{:>9}\n", run, exit, wall, oom, reserved, allocated,
                       gap, retries);
  };
  row("run", "exit", "wall", "OOM", "peak reserved", "peak allocated", "reserved-allocated", "retries");
  for (const auto* r : runs) {
    auto t = v::totals_of(*r);
    std::uint64_t gap = t.peak_reserved > t.peak_allocated ? t.peak_reserved - t.peak_allocated : 0;
    row(run_title(result, *r), ended(*r), fmt::format("{:.1f} s", r->wall_seconds), oom_cell(*r),
        size_cell(t.measured, t.peak_reserved), size_cell(t.measured, t.peak_allocated), size_cell(t.measured, gap),
        t.measured ? std::to_string(t.num_alloc_retries) : "-");
    // Each rank has its own device: show them when there are several.
    std::size_t cuda_processes = 0;
    for (const auto& p : r->processes) cuda_processes += p.cuda_initialized;
    if (cuda_processes < 2) continue;
    for (const auto& p : r->processes) {
      if (!p.cuda_initialized) continue;
      v::RunMeasure one;
      one.processes = {p};
      auto pt = v::totals_of(one);
      row(p.rank ? fmt::format("     rank {}", *p.rank) : fmt::format("     pid {}", p.pid), "", "",
          pt.num_ooms ? "yes" : "", size_cell(true, pt.peak_reserved), size_cell(true, pt.peak_allocated),
          size_cell(true, pt.peak_reserved > pt.peak_allocated ? pt.peak_reserved - pt.peak_allocated : 0),
          std::to_string(pt.num_alloc_retries));
    }
  }
  out << "\n";
  const char* paint = "";
  switch (result.verdict.kind) {
    case v::VerdictKind::fixed:
    case v::VerdictKind::improved:
    case v::VerdictKind::passed: paint = "\x1b[1;32m"; break;
    case v::VerdictKind::not_fixed: paint = "\x1b[1;31m"; break;
    case v::VerdictKind::inconclusive: paint = "\x1b[1;33m"; break;
  }
  out << (color ? paint : "") << v::to_string(result.verdict.kind) << (color ? "\x1b[0m" : "") << ": "
      << result.verdict.summary << "\n";
  for (const auto& reason : result.verdict.reasons) out << "  - " << reason << "\n";
  for (const auto& w : result.warnings) out << "  warning: " << w << "\n";
  out << "Logs and probe reports: " << result.out_dir << "\n";
  std::vector<std::string> snapshots;
  for (const auto* r : runs)
    for (const auto& p : r->processes)
      if (!p.snapshot.empty()) snapshots.push_back(p.snapshot);
  if (snapshots.size() == 2 && result.baseline)
    out << "Snapshots: oomlens snapshot --compare " << snapshots[0] << " " << snapshots[1] << "\n";
  else
    for (const auto& s : snapshots) out << "Snapshot: oomlens snapshot " << s << "\n";
}

json verify_json(const VerifyResult& result) {
  json j = {{"oomlens_version", OOMLENS_VERSION},
            {"command", result.command},
            {"settings", json::array()},
            {"runs", json::array()},
            {"verdict",
             {{"kind", v::to_string(result.verdict.kind)},
              {"summary", result.verdict.summary},
              {"reasons", result.verdict.reasons},
              {"exit_status", v::exit_status(result.verdict.kind)}}},
            {"out_dir", result.out_dir},
            {"warnings", result.warnings}};
  for (const auto& s : result.settings) j["settings"].push_back({{"variable", s.variable}, {"value", s.value}});
  if (result.baseline) j["runs"].push_back(run_json(*result.baseline));
  if (result.b_ran) j["runs"].push_back(run_json(result.with_setting));
  return j;
}

}  // namespace oomlens::cli::verify
