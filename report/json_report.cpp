// The JSON contract of `oomlens diagnose --format json` (docs/json-contract.md).
// Sizes are exact integers in bytes; a number the log does not give is absent.
#include "report/json_report.hpp"

#include <algorithm>
#include <future>
#include <thread>
#include <utility>

#include "analyzer/log/text.hpp"
#include "rules/breakdown.hpp"

namespace oomlens::report {
namespace {

using nlohmann::json;

// A message's figures: its named numbers (rules::memory_evidence) and the
// processes it lists.
json numbers_json(const std::vector<rules::Evidence>& evidence, const analyzer::MemoryNumbers& n) {
  json j = json::object();
  for (const auto& e : evidence) j[e.name] = e.value;
  if (!n.other_processes.empty()) {
    json list = json::array();
    for (const auto& p : n.other_processes) list.push_back({{"pid", p.pid}, {"bytes", p.bytes}});
    j["other_processes"] = std::move(list);
  }
  if (n.self_process) j["self_process"] = {{"pid", n.self_process->pid}, {"bytes", n.self_process->bytes}};
  return j;
}

json optional_int(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

namespace {

json finding_brief(const FileReport& file, const analyzer::LogFinding& f) {
  json j = {{"file", file.path_of(f.file)},
            {"line", f.line},
            {"rank", optional_int(f.rank)},
            {"kind", analyzer::to_string(f.kind)},
            {"text", f.text}};
  if (!f.detail.empty()) j["detail"] = f.detail;
  j["count"] = f.count;
  if (f.count > 1) {
    // Repeats of one cause are one finding: where the first few and the last are.
    j["last_line"] = f.last_line;
    json lines = json::array({f.line});
    for (auto l : f.more_lines) lines.push_back(l);
    j["lines"] = std::move(lines);
  }
  return j;
}

json rank_failure_json(const FileReport& file, const analyzer::RankFailure& f) {
  json j = {{"rank", optional_int(f.rank)},
            {"rank_from", f.source ? json(analyzer::to_string(*f.source)) : json(nullptr)},
            {"file", file.path_of(f.file)},
            {"line", f.line},
            {"end_line", f.end_line},
            {"class", analyzer::to_string(f.cls)},
            {"family", analyzer::to_string(f.family)},
            {"numbers", numbers_json(rules::memory_evidence(f.numbers), f.numbers)}};
  if (!f.reason.empty()) j["reason"] = f.reason;
  if (f.gpu) j["gpu"] = *f.gpu;
  if (f.time_ms) j["time"] = analyzer::format_time(*f.time_ms);
  return j;
}

}  // namespace

json breakdown_json(const analyzer::MemoryNumbers& numbers) {
  auto b = rules::memory_breakdown(numbers);
  if (b.parts.empty()) return nullptr;
  json parts = json::array();
  for (const auto& p : b.parts)
    parts.push_back({{"kind", rules::to_string(p.kind)}, {"label", p.label}, {"bytes", p.bytes}});
  return {{"total_bytes", b.total}, {"total_is_device", b.total_is_device}, {"parts", std::move(parts)}};
}

json incident_json(const FileReport& file, const rules::Diagnosis& d, const ReportJsonOptions& options) {
  const auto& inc = d.incident();
  const auto& e = inc.primary;
  json j = diagnosis_json(d, file.path_of(d.location.file), DiagnosisContract::log);
  j["class"] = analyzer::to_string(inc.verdict.cls);
  if (!inc.verdict.reason.empty()) j["reason"] = inc.verdict.reason;
  j["end_line"] = d.location.end_line;
  j["device"] = analyzer::to_string(e.device);
  j["framework"] = analyzer::to_string(e.framework);
  j["family"] = analyzer::to_string(e.family);
  if (e.gpu) j["gpu"] = *e.gpu;
  if (!e.exception.empty()) j["exception"] = e.exception;
  j["text"] = e.message;
  j["numbers"] = numbers_json(d.evidence, e.numbers);
  if (options.breakdown) j["breakdown"] = breakdown_json(e.numbers);
  json per_rank = json::array();
  for (const auto& f : inc.per_rank) per_rank.push_back(rank_failure_json(file, f));
  j["ranks"] = {{"first_failing", optional_int(inc.first_failing_rank)},
                {"first_failing_from",
                 inc.first_failing_source ? json(analyzer::to_string(*inc.first_failing_source)) : json(nullptr)},
                {"order", analyzer::to_string(inc.order)},
                {"same_second", inc.same_second},
                {"oom", inc.oom_ranks},
                {"collateral", inc.collateral_ranks},
                {"per_rank", std::move(per_rank)}};
  j["location"] = d.frame ? json{{"file", d.frame->file}, {"line", d.frame->line}, {"function", d.frame->function}}
                         : json(nullptr);
  j["arithmetic"] = inc.verdict.arithmetic;
  json secondary = json::array();
  for (const auto& c : inc.verdict.secondary)
    secondary.push_back({{"class", analyzer::to_string(c.cls)}, {"bytes", c.bytes}, {"what", c.what}});
  j["secondary"] = std::move(secondary);
  json notes = inc.verdict.notes;
  for (const auto& n : inc.notes) notes.push_back(n);
  j["notes"] = std::move(notes);
  if (inc.verdict.unaccounted) j["unaccounted_bytes"] = *inc.verdict.unaccounted;
  j["fixes"] = fixes_json(d.fixes);
  j["verify"] = d.verify;
  json echoes = json::array();
  for (const auto& x : inc.echoes)
    echoes.push_back({{"file", file.path_of(x.file)}, {"line", x.line}, {"rank", optional_int(x.rank)}});
  j["echoes"] = std::move(echoes);
  json collateral = json::array();
  for (const auto& f : inc.collateral) collateral.push_back(finding_brief(file, f));
  j["collateral"] = std::move(collateral);
  json warnings = json::array();
  std::uint64_t warning_count = 0;
  for (const auto& f : inc.warnings_before) {
    warnings.push_back(f.line);
    for (auto l : f.more_lines) warnings.push_back(l);
    warning_count += f.count;
  }
  j["warnings_before"] = std::move(warnings);
  j["warnings_before_count"] = warning_count;
  json settings = json::array();
  for (const auto& s : inc.settings)
    settings.push_back({{"file", file.path_of(s.file)}, {"line", s.line}, {"value", s.detail}});
  j["settings"] = std::move(settings);
  return j;
}

json finding_json(const FileReport& file, const rules::Diagnosis& d) {
  json j = finding_brief(file, d.finding());
  j.update(diagnosis_json(d, file.path_of(d.location.file), DiagnosisContract::log));
  for (const auto& e : d.evidence) j[e.name] = e.value;
  return j;
}

namespace {

// Every incident of every file, in order. Incidents are most of a report's
// JSON (each with its ranks, collateral and fixes: 600 KB for the 36 of a
// 1 GiB benchmark log, 8 ms to build, the largest step after the reading):
// with many, the later half is built on a second thread.
json all_incidents_json(const std::vector<FileReport>& files, const ReportJsonOptions& options) {
  std::vector<std::pair<const FileReport*, const rules::Diagnosis*>> items;
  for (const auto& file : files)
    for (const auto& item : file.report.incidents) items.emplace_back(&file, &item);
  std::vector<json> built(items.size());
  auto build = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) built[i] = incident_json(*items[i].first, *items[i].second, options);
  };
  constexpr std::size_t kSplitFrom = 8;
  if (items.size() >= kSplitFrom && std::thread::hardware_concurrency() > 1) {
    const std::size_t half = items.size() / 2;
    auto later = std::async(std::launch::async, build, half, items.size());
    build(0, half);
    later.get();
  } else {
    build(0, items.size());
  }
  json incidents = json::array();
  for (auto& j : built) incidents.push_back(std::move(j));
  return incidents;
}

}  // namespace

json report_json(const std::vector<FileReport>& files, const ReportJsonOptions& options) {
  json out;
  out["version"] = OOMLENS_VERSION;
  json incidents = all_incidents_json(files, options), findings = json::array(), inputs = json::array();
  for (std::size_t job = 0; job < files.size(); ++job) {
    const auto& file = files[job];
    for (const auto& item : file.report.findings) findings.push_back(finding_json(file, item));
    if (file.inputs.empty()) {
      inputs.push_back({{"path", file.path},
                        {"bytes", file.report.bytes},
                        {"lines", file.report.lines},
                        {"incidents", file.report.incidents.size()},
                        {"findings", file.report.findings.size()},
                        {"capped", file.report.capped},
                        {"ooms_not_analysed", file.report.ooms_not_analysed},
                        {"job", job},
                        {"rank", nullptr}});
      continue;
    }
    // A job's files: each counts the incidents that have a message in it.
    for (std::uint32_t k = 0; k < file.inputs.size(); ++k) {
      const auto& in = file.inputs[k];
      std::size_t n_incidents = 0, n_findings = 0;
      for (const auto& item : file.report.incidents) {
        const auto& inc = item.incident();
        bool here = inc.primary.file == k ||
                    std::any_of(inc.echoes.begin(), inc.echoes.end(), [&](const auto& e) { return e.file == k; });
        n_incidents += here;
      }
      for (const auto& item : file.report.findings) n_findings += item.finding().file == k;
      inputs.push_back({{"path", in.path},
                        {"bytes", in.bytes},
                        {"lines", in.lines},
                        {"incidents", n_incidents},
                        {"findings", n_findings},
                        {"capped", in.capped},
                        {"ooms_not_analysed", in.ooms_not_analysed},
                        {"job", job},
                        {"rank", optional_int(in.rank)}});
    }
  }
  out["incidents"] = std::move(incidents);
  out["findings"] = std::move(findings);
  out["files"] = std::move(inputs);
  return out;
}

}  // namespace oomlens::report
