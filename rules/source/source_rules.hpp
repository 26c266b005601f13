// Rules over Python training scripts (issue 4): each one file under
// rules/source/, matching on the parsed view of analyzer/python/script.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/python/script.hpp"
#include "rules/diagnosis.hpp"
#include "rules/rule.hpp"

namespace oomlens::rules {

// One diagnostic on a script: where it sits, and its automatic fix as exact
// byte-range edits on the source (none for a file with syntax errors).
struct SourceDiagnostic {
  Diagnosis diagnosis;
  analyzer::python::ByteRange range;
  analyzer::python::Point start;
  std::optional<FixSafety> fix_safety;  // set when `edits` is an automatic fix
  std::vector<TextEdit> edits;          // sorted, non-overlapping
};

// A code action on a script that no diagnostic needs to trigger (set the
// allocator configuration, record a memory snapshot): exact byte-range edits
// on the source, sorted and non-overlapping.
struct ScriptAction {
  std::string title;
  FixSafety safety = FixSafety::unsafe;
  std::vector<TextEdit> edits;
};

struct SourceRule {
  RuleInfo info;
  void (*check)(const analyzer::python::Script&, std::vector<SourceDiagnostic>&);
};

namespace source {
SourceRule empty_cache_in_loop_rule();       // OOM301
SourceRule alloc_conf_too_late_rule();       // OOM302 (rules/source/alloc_conf_too_late.cpp)
SourceRule invalid_alloc_conf_rule();        // OOM303 (rules/source/invalid_alloc_conf.cpp)
SourceRule snapshot_never_dumped_rule();     // OOM304 (rules/source/snapshot_never_dumped.cpp)
}

}  // namespace oomlens::rules
