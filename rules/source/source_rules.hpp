// Rules over Python training scripts (issue 4): each one file under
// rules/source/, matching on the parsed view of analyzer/python/script.hpp.
#pragma once

#include <optional>
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

struct SourceRule {
  RuleInfo info;
  void (*check)(const analyzer::python::Script&, std::vector<SourceDiagnostic>&);
};

namespace source {
SourceRule empty_cache_in_loop_rule();  // OOM301
}

}  // namespace oomlens::rules
