// Many events, one failure: the same OOM echoed by several ranks, by chained
// exceptions and by launcher summaries is one incident.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/classify.hpp"
#include "analyzer/event.hpp"

namespace oomlens::analyzer {

struct Incident {
  OomEvent primary;             // the first failure: first failing rank by time, else by order
  std::vector<OomEvent> echoes;  // the same failure printed again, or other ranks' OOMs at the same moment
  Verdict verdict;
  std::optional<int> first_failing_rank;
  std::vector<int> oom_ranks;         // every rank that hit a GPU OOM in this incident
  std::vector<int> collateral_ranks;  // ranks that failed because of it (watchdog, SIGTERM...)
  std::vector<LogFinding> collateral;
  std::vector<LogFinding> warnings_before;  // allocator-pressure warnings that preceded it
  std::vector<LogFinding> settings;         // the latest value of each memory setting the log showed before it
  std::optional<Frame> location;            // the user's own frame, innermost
  std::optional<Frame> entry;               // the user's outermost frame: the script that was run
  std::vector<std::string> notes;           // incident-level remarks (hint vs setting, echoes)
};

struct IncidentLimits {
  std::uint64_t echo_max_lines = 20000;       // a re-print of the same message this close is an echo
  std::uint64_t multirank_max_lines = 5000;   // other ranks' OOMs this close belong to the same failure
  std::int64_t multirank_max_ms = 120000;     // ...or this close in time, when both are timestamped
  std::uint64_t collateral_max_lines = 50000;
  std::int64_t collateral_max_ms = 3600000;
  std::uint64_t warning_lookback_lines = 200000;
};

// The allocator configuration in force, of those in `settings`: the variable
// PyTorch reads first (PYTORCH_ALLOC_CONF shadows the older names).
const LogFinding* allocator_conf_setting(const Incident& inc);

// Groups events (in log order) into incidents, classifies each, and attaches
// findings: collateral failures and pressure warnings are moved into the
// incident they belong to; the rest are returned in `findings`.
std::vector<Incident> group_incidents(std::vector<OomEvent> events, std::vector<LogFinding>& findings,
                                      const IncidentLimits& limits = {});

}  // namespace oomlens::analyzer
