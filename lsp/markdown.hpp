// Diagnoses as Markdown for hovers and command results. The memory bar is
// text in a code block, so it renders in every client.
#pragma once

#include <string>

#include "rules/diagnosis.hpp"

namespace oomlens::lsp {

std::string incident_markdown(const rules::IncidentDiagnosis& item);
std::string finding_markdown(const rules::FindingDiagnosis& item);

}  // namespace oomlens::lsp
