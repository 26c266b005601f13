// A memory snapshot's out-of-memory verdict as a Diagnosis. The snapshot
// reader judges the failed request in the classes a log's OOM is judged in
// (analyzer/verdict.hpp), so the verdict is the rule of its class, OOM101 to
// OOM105, with the figures it rests on as evidence; every front end renders
// that Diagnosis instead of the analyzer's struct.
#pragma once

#include <optional>

#include "analyzer/snapshot/analysis.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::rules {

// What oomlens says about a snapshot: the analysis (per-device figures, the
// trace's peaks, the allocation sites) and the verdict on its last oom entry.
// The verdict's failed call (device, class, arithmetic) stays in the analysis,
// so a Diagnosis never carries the snapshot reader's model.
struct SnapshotReport {
  analyzer::snapshot::Analysis analysis;
  std::optional<Diagnosis> oom;  // none when the trace holds no oom entry, else made from analysis.oom

  // The oom entry the verdict `oom` was made from; only when there is one.
  const analyzer::snapshot::OomAnalysis& oom_entry() const { return *analysis.oom; }
};

// The verdict on `oom`: the rule of its class; as evidence requested_bytes,
// device_free_bytes (only when the entry recorded it), cached_free_bytes,
// largest_free_block_bytes, reserved_bytes and allocated_bytes; the user's
// innermost frame of the failed call.
Diagnosis diagnose_snapshot_oom(const analyzer::snapshot::OomAnalysis& oom);

// The analysis with its verdict, when its trace has an oom entry.
SnapshotReport diagnose_snapshot(analyzer::snapshot::Analysis analysis);

}  // namespace oomlens::rules
