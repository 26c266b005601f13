// Runs the source rules over a script, applies their fixes, renders diffs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/source/source_rules.hpp"

namespace oomlens::rules {

// The source rules of the catalogue (rules/registry.cpp).
const std::vector<SourceRule>& source_rules();

// Every source rule's diagnostics, in source order. A script with syntax
// errors gets its diagnostics without edits (never a wrong edit). In a
// project, what its imports do in the project's other files counts too.
std::vector<Diagnosis> lint_script(const analyzer::python::Script& script,
                                   const source::ProjectContext& project = source::no_project());

// The edits of the fixes that `--fix` applies (safe ones; unsafe too when
// asked), sorted, overlapping ones dropped (first wins).
std::vector<TextEdit> fix_edits(const std::vector<Diagnosis>& diagnostics, bool unsafe = false);
// The source with the edits applied (edits sorted, non-overlapping).
std::string apply_edits(std::string_view source, const std::vector<TextEdit>& edits);
// Line-aligned edits turning `before` into `after` (Myers' O(ND) line diff):
// what a diff shows after several rounds of fixes whose edits no longer share
// coordinates.
std::vector<TextEdit> line_edits(std::string_view before, std::string_view after);
// A unified diff (3 lines of context) from `source` to the edited source;
// empty when there are no edits.
std::string unified_diff(std::string_view path, std::string_view source, const std::vector<TextEdit>& edits);

}  // namespace oomlens::rules
