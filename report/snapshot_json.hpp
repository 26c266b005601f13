// The JSON contract of an analysed memory snapshot (docs/snapshot-json.md),
// shared by `oomlens snapshot --format json` and the language server's
// oomlens.analyzeSnapshot, so both speak exactly the same shape.
#pragma once

#include <nlohmann/json.hpp>

#include "analyzer/snapshot/analysis.hpp"
#include "analyzer/snapshot/compare.hpp"
#include "analyzer/snapshot/ranks.hpp"
#include "rules/snapshot/oom_verdict.hpp"

namespace oomlens::report {

// The analysis' figures, and its out-of-memory verdict from the Diagnosis.
nlohmann::json snapshot_json(const analyzer::snapshot::Snapshot& snapshot, const rules::SnapshotReport& report);

// `oomlens snapshot --compare A B --format json`.
nlohmann::json snapshot_compare_json(const std::string& path_a, const std::string& path_b,
                                     const analyzer::snapshot::Comparison& comparison);

// `oomlens snapshot DIR --format json`: a job's ranks; `highest` is the
// analysis of the rank with the highest peak (its top sites are included).
nlohmann::json snapshot_job_json(const std::string& dir, const analyzer::snapshot::JobSummary& job,
                                 const analyzer::snapshot::Analysis& highest);

// allocator_settings as an object ({} when the snapshot has none).
nlohmann::json snapshot_settings_json(const analyzer::snapshot::AllocatorSettings& settings);

// Frame lists as [{"filename", "line", "name"}]; an empty list for no stack.
nlohmann::json snapshot_frames_json(const analyzer::snapshot::FrameList& frames);

// The text every front end writes: two-space indent, invalid UTF-8 replaced
// (the reader already decodes strings to valid UTF-8; this is a last guard).
std::string snapshot_json_text(const nlohmann::json& json);

}  // namespace oomlens::report
