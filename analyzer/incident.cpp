#include "analyzer/incident.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "analyzer/traceback.hpp"

namespace oomlens::analyzer {
namespace {

// The part of a message that identifies one failure: the text without the
// exception prefix and whitespace differences.
std::string signature(const OomEvent& e) {
  std::string s;
  for (char c : e.message)
    if (c != ' ' && c != '\t') s.push_back(c);
  return fmt::format("{}|{}", static_cast<int>(e.family), s);
}

bool same_failure_moment(const Incident& inc, const OomEvent& e, const IncidentLimits& l) {
  const OomEvent& last = inc.echoes.empty() ? inc.primary : inc.echoes.back();
  if (e.time_ms && inc.primary.time_ms)
    return *e.time_ms - *inc.primary.time_ms <= l.multirank_max_ms && *e.time_ms >= *inc.primary.time_ms - l.multirank_max_ms;
  return e.line - last.line <= l.multirank_max_lines;
}

bool rank_in(const Incident& inc, const std::optional<int>& rank) {
  if (!rank) return false;
  return std::find(inc.oom_ranks.begin(), inc.oom_ranks.end(), *rank) != inc.oom_ranks.end();
}

bool related_families(OomFamily a, OomFamily b) {
  auto bfc = [](OomFamily f) { return f == OomFamily::tensorflow || f == OomFamily::xla; };
  auto cuda_lib = [](OomFamily f) {
    return f == OomFamily::cuda_runtime || f == OomFamily::nccl || f == OomFamily::cublas || f == OomFamily::cudnn;
  };
  return (bfc(a) && bfc(b)) || (cuda_lib(a) && cuda_lib(b));
}

bool belongs(const Incident& inc, const OomEvent& e, const IncidentLimits& l) {
  const OomEvent& last = inc.echoes.empty() ? inc.primary : inc.echoes.back();
  bool echo = signature(e) == signature(inc.primary) ||
              std::any_of(inc.echoes.begin(), inc.echoes.end(), [&](const OomEvent& x) { return signature(x) == signature(e); });
  if (echo && e.line - last.line <= l.echo_max_lines) return true;
  // Another rank failing at the same moment is the same failure of the job.
  if (e.rank && !rank_in(inc, e.rank) && inc.primary.rank && same_failure_moment(inc, e, l)) return true;
  // Libraries report one failure in several messages: TensorFlow's BFC
  // warning then the op's error, XLA's allocator then the runtime error,
  // NCCL's WARN lines then PyTorch's DistBackendError.
  return e.rank == last.rank && related_families(e.family, last.family) && e.line - last.end_line <= 400;
}

std::size_t richness(const OomEvent& e) {
  const auto& n = e.numbers;
  return !!n.requested + !!n.total + !!n.free + !!n.allocated + !!n.reserved + !!n.largest_free_block +
         !n.other_processes.empty() + !!n.limit;
}

void finish(Incident& inc) {
  // First failing rank: earliest timestamp, else first printed. Numbers come
  // from that rank's message; a richer echo of the same rank can stand in
  // (TensorFlow's BFC summary carries more than the op error).
  std::vector<OomEvent> all;
  all.push_back(std::move(inc.primary));
  for (auto& e : inc.echoes) all.push_back(std::move(e));
  inc.echoes.clear();
  auto first = std::min_element(all.begin(), all.end(), [](const OomEvent& a, const OomEvent& b) {
    if (a.time_ms && b.time_ms && *a.time_ms != *b.time_ms) return *a.time_ms < *b.time_ms;
    return a.line < b.line;
  });
  std::size_t pick = static_cast<std::size_t>(first - all.begin());
  const std::optional<int> first_rank = first->rank;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].rank == all[pick].rank && richness(all[i]) > richness(all[pick])) pick = i;
  inc.primary = std::move(all[pick]);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (i != pick) inc.echoes.push_back(std::move(all[i]));
  inc.first_failing_rank = first_rank ? first_rank : inc.primary.rank;

  inc.oom_ranks.clear();
  auto add_rank = [&](const OomEvent& e) {
    if (e.rank && !rank_in(inc, e.rank)) inc.oom_ranks.push_back(*e.rank);
  };
  add_rank(inc.primary);
  for (const auto& e : inc.echoes) add_rank(e);
  std::sort(inc.oom_ranks.begin(), inc.oom_ranks.end());

  // Where it happened in the user's code: the primary's traceback, else the
  // first echo that has one.
  inc.location = user_frame(inc.primary.traceback);
  inc.entry = entry_frame(inc.primary.traceback);
  for (const auto& e : inc.echoes) {
    if (inc.location) break;
    inc.location = user_frame(e.traceback);
    inc.entry = entry_frame(e.traceback);
  }
  inc.verdict = classify(inc.primary);
}

bool within(const LogFinding& f, const Incident& inc, std::uint64_t max_lines, std::int64_t max_ms) {
  if (f.line < inc.primary.line) return false;
  if (f.time_ms && inc.primary.time_ms) return *f.time_ms - *inc.primary.time_ms <= max_ms;
  return f.line - inc.primary.line <= max_lines;
}

}  // namespace

const LogFinding* allocator_conf_setting(const Incident& inc) {
  // PYTORCH_ALLOC_CONF, when present, shadows the older names entirely.
  const LogFinding* found = nullptr;
  for (const auto& s : inc.settings) {
    std::string name = s.detail.substr(0, s.detail.find('='));
    if (name == "PYTORCH_ALLOC_CONF") return &s;
    if (name.find("ALLOC_CONF") != std::string::npos) found = &s;
  }
  return found;
}

std::vector<Incident> group_incidents(std::vector<OomEvent> events, std::vector<LogFinding>& findings,
                                      const IncidentLimits& limits) {
  std::stable_sort(events.begin(), events.end(), [](const OomEvent& a, const OomEvent& b) { return a.line < b.line; });
  std::vector<Incident> incidents;
  for (auto& e : events) {
    if (!incidents.empty() && belongs(incidents.back(), e, limits)) {
      Incident& inc = incidents.back();
      if (e.rank && !rank_in(inc, e.rank)) inc.oom_ranks.push_back(*e.rank);
      inc.echoes.push_back(std::move(e));
      continue;
    }
    Incident inc;
    if (e.rank) inc.oom_ranks.push_back(*e.rank);
    inc.primary = std::move(e);
    incidents.push_back(std::move(inc));
  }
  for (auto& inc : incidents) finish(inc);

  // Attach findings: collateral failures after an incident belong to it;
  // pressure warnings and settings before it give it context.
  std::vector<LogFinding> rest;
  for (auto& f : findings) {
    bool kept = false;
    if (f.kind == FindingKind::collateral) {
      for (auto it = incidents.rbegin(); it != incidents.rend(); ++it)
        if (within(f, *it, limits.collateral_max_lines, limits.collateral_max_ms)) {
          if (f.rank && !rank_in(*it, f.rank) &&
              std::find(it->collateral_ranks.begin(), it->collateral_ranks.end(), *f.rank) == it->collateral_ranks.end())
            it->collateral_ranks.push_back(*f.rank);
          it->collateral.push_back(f);
          kept = true;
          break;
        }
    } else if (f.kind == FindingKind::allocator_setting) {
      // Keep the latest value of each variable seen before each incident.
      std::string name = f.detail.substr(0, f.detail.find('='));
      for (auto& inc : incidents) {
        if (f.line > inc.primary.line) continue;
        auto same = std::find_if(inc.settings.begin(), inc.settings.end(), [&](const LogFinding& s) {
          return s.detail.substr(0, s.detail.find('=')) == name;
        });
        if (same != inc.settings.end()) *same = f;
        else inc.settings.push_back(f);
      }
      kept = true;  // a setting is context, not a finding of its own
    } else if (f.kind == FindingKind::allocator_pressure) {
      for (auto& inc : incidents)
        if (f.line <= inc.primary.line && inc.primary.line - f.line <= limits.warning_lookback_lines) {
          inc.warnings_before.push_back(f);
          break;
        }
    }
    if (!kept) rest.push_back(std::move(f));
  }
  for (auto& inc : incidents) {
    std::sort(inc.collateral_ranks.begin(), inc.collateral_ranks.end());
    const LogFinding* conf = allocator_conf_setting(inc);
    if (inc.primary.expandable_hint && conf && conf->detail.find("expandable_segments:True") != std::string::npos)
      inc.notes.push_back(fmt::format("The message suggests expandable_segments:True, but the log shows it is already "
                                      "set (line {}: {}). PyTorch prints the hint regardless; look elsewhere.",
                                      conf->line, conf->detail));
    if (!inc.echoes.empty()) {
      std::string lines;
      for (std::size_t i = 0; i < inc.echoes.size() && i < 8; ++i)
        lines += fmt::format("{}{}", i ? ", " : "", inc.echoes[i].line);
      if (inc.echoes.size() > 8) lines += ", ...";
      inc.notes.push_back(fmt::format("The same failure is reported {} more time{} (line{} {}): other ranks, chained "
                                      "exceptions, launcher summaries or a library's own messages. It is one incident.",
                                      inc.echoes.size(), inc.echoes.size() == 1 ? "" : "s",
                                      inc.echoes.size() == 1 ? "" : "s", lines));
    }
  }
  findings = std::move(rest);
  return incidents;
}

}  // namespace oomlens::analyzer
