// The JSON contract of an analysed memory snapshot (docs/snapshot-json.md),
// shared by `oomlens snapshot --format json` and the language server's
// oomlens.analyzeSnapshot, so both speak exactly the same shape.
#pragma once

#include <nlohmann/json.hpp>

#include "analyzer/snapshot/analysis.hpp"

namespace oomlens::report {

nlohmann::json snapshot_json(const analyzer::snapshot::Snapshot& snapshot, const analyzer::snapshot::Analysis& analysis);

// allocator_settings as an object ({} when the snapshot has none).
nlohmann::json snapshot_settings_json(const analyzer::snapshot::AllocatorSettings& settings);

// Frame lists as [{"filename", "line", "name"}]; an empty list for no stack.
nlohmann::json snapshot_frames_json(const analyzer::snapshot::FrameList& frames);

// The text every front end writes: two-space indent, invalid UTF-8 replaced
// (the reader already decodes strings to valid UTF-8; this is a last guard).
std::string snapshot_json_text(const nlohmann::json& json);

}  // namespace oomlens::report
