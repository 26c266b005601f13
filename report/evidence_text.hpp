// A diagnosis' evidence as every text format prints it (the terminal, the
// editor's Markdown, the HTML page): a size as frameworks print them, or
// "not recorded" when the input did not give that figure.
#pragma once

#include <string>
#include <string_view>

#include "rules/diagnosis.hpp"

namespace oomlens::report {

std::string evidence_size(const rules::Diagnosis& diagnosis, std::string_view name);

}  // namespace oomlens::report
