// Many events, one failure: the same OOM echoed by several ranks, by chained
// exceptions and by launcher summaries is one incident -- also when the ranks
// wrote separate files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/log/classify.hpp"
#include "analyzer/log/event.hpp"

namespace oomlens::analyzer {

// Where a rank number came from, strongest first.
enum class RankSource {
  prefix,        // the launcher's or logger's prefix on the line ([rank3]:, srun's 3:, rank=3 worker tags)
  path,          // the file's path (attempt_0/3/stderr.log, rank3.log, %j-%t.out) when lines carry none
  launcher,      // the launcher's summary (ChildFailedError root cause, "failed (exitcode: 1) local_rank: 3")
  device_index,  // NCCL's "host:pid:tid [N]": the CUDA device index, usually the local rank
};
const char* to_string(RankSource s);

// How the first failing rank was told from the others.
enum class FailureOrder {
  single,       // one rank (or none) failed: nothing to order
  timestamps,   // the ranks' first failures are timestamped
  launcher,     // no usable timestamps; the launcher's root cause names one of the ranks
  print_order,  // no timestamps; one file, so the order the lines were printed in
  unknown,      // no timestamps and several files: the order across files is not known
};
const char* to_string(FailureOrder o);

// One rank's own failure in an incident: its class and numbers, from its own
// fullest message.
struct RankFailure {
  std::optional<int> rank;  // none: events no prefix, path or launcher attributes to a rank
  std::optional<RankSource> source;
  std::uint32_t file = 0;  // the message's input (OomEvent::file)
  std::uint64_t line = 0;
  std::uint64_t end_line = 0;
  std::optional<std::int64_t> time_ms;  // the rank's earliest failure time, when timestamped
  OomFamily family = OomFamily::pytorch_allocator;
  std::optional<int> gpu;
  OomClass cls = OomClass::unquantified;
  std::string reason;  // Verdict::reason of that message
  MemoryNumbers numbers;
};

// Where an incident's failure was printed again: what the report, the
// related places and the editor's anchors need of an echo. A loop that
// catches OOMs and goes on can print 100 000 of them; keeping each one's
// whole message, numbers and traceback cost kilobytes an echo.
struct EchoPlace {
  std::uint32_t file = 0;  // OomEvent::file
  std::uint64_t line = 0;
  std::uint64_t end_line = 0;
  std::optional<int> rank;
};

struct Incident {
  // The message the verdict comes from: the first failing rank's fullest one
  // when it carries numbers, else the fullest message of another rank that
  // does (a bare "CUDA error: out of memory" has none). first_failing_rank
  // stays the rank that failed first either way.
  OomEvent primary;
  std::vector<EchoPlace> echoes;  // the same failure printed again, or other ranks' OOMs at the same moment
  Verdict verdict;
  std::optional<int> first_failing_rank;
  std::optional<RankSource> first_failing_source;
  FailureOrder order = FailureOrder::single;
  // Ranks whose first failure falls in the same second as the first failing
  // rank's (that rank included); empty when no other rank does.
  std::vector<int> same_second;
  std::vector<RankFailure> per_rank;  // in failure order when known, else by rank; an unattributed entry last
  std::vector<int> oom_ranks;         // every rank that hit a GPU OOM in this incident
  std::vector<int> collateral_ranks;  // ranks that failed because of it (watchdog, SIGTERM...)
  std::vector<LogFinding> collateral;
  std::vector<LogFinding> warnings_before;  // allocator-pressure warnings that preceded it
  std::vector<LogFinding> settings;         // the latest value of each memory setting the log showed before it
  std::optional<Frame> location;            // the user's own frame, innermost
  std::optional<Frame> entry;               // the user's outermost frame: the script that was run
  std::vector<std::string> notes;           // incident-level remarks (hint vs setting, echoes, rank order)
};

struct IncidentLimits {
  std::uint64_t echo_max_lines = 20000;       // a re-print of the same message this close is an echo
  std::uint64_t multirank_max_lines = 5000;   // other ranks' OOMs this close belong to the same failure
  std::int64_t multirank_max_ms = 120000;     // ...or this close in time, when both are timestamped
  std::uint64_t collateral_max_lines = 50000;
  std::int64_t collateral_max_ms = 3600000;
  std::uint64_t warning_lookback_lines = 200000;
};

// What the caller knows about each input (indexed by OomEvent::file) when one
// job's log is several files.
struct InputInfo {
  std::string name;         // how notes name the input ("logs/rank3.log"); empty for a single input
  std::optional<int> rank;  // from the path, for lines that carry none
};

// The allocator configuration in force, of those in `settings`: the variable
// PyTorch reads first (PYTORCH_ALLOC_CONF shadows the older names).
const LogFinding* allocator_conf_setting(const Incident& inc);

// Groups events into incidents, classifies each, and attaches findings:
// collateral failures and pressure warnings are moved into the incident they
// belong to; the rest are returned in `findings`. Events of several inputs
// (one job's per-rank files, `inputs` saying what each is) are merged into one
// timeline first: within a file by line, across files by timestamp; without
// timestamps, each file's last failure is taken as the job's final one.
std::vector<Incident> group_incidents(std::vector<OomEvent> events, std::vector<LogFinding>& findings,
                                      const IncidentLimits& limits = {}, const std::vector<InputInfo>& inputs = {});

}  // namespace oomlens::analyzer
