// What the source rules' tests check of a diagnosis' automatic fix.
#pragma once

#include <optional>
#include <vector>

#include "rules/diagnosis.hpp"

namespace oomlens::rules {

// The edits of the fix `lint --fix` would apply; none without one.
inline std::vector<TextEdit> edits_of(const Diagnosis& d) {
  const Fix* fix = d.automatic_fix();
  return fix ? fix->edits : std::vector<TextEdit>{};
}

// Its safety; nothing without one.
inline std::optional<FixSafety> fix_safety_of(const Diagnosis& d) {
  const Fix* fix = d.automatic_fix();
  return fix ? std::optional(fix->safety) : std::nullopt;
}

}  // namespace oomlens::rules
