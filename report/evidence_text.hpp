// A snapshot verdict's figures as every text format shows them (the terminal,
// the editor's Markdown, the HTML page): the same four, in the same order,
// with the same words, each a size as frameworks print them or "not recorded"
// when the oom entry did not give it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/diagnosis.hpp"

namespace oomlens::report {

struct VerdictFigure {
  std::string_view label;        // "largest free block"
  std::string_view short_label;  // the terminal's narrower column: "largest free"
  std::string value;             // "512.00 MiB", or "not recorded"
};

// requested, device free, cached free and largest free block, from the
// verdict's evidence (rules/snapshot/oom_verdict.hpp names it).
std::vector<VerdictFigure> verdict_figures(const rules::Diagnosis& verdict);

}  // namespace oomlens::report
