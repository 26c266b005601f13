// Diagnoses as Markdown for hovers and command results. The memory bar is
// text in a code block, so it renders in every client.
#pragma once

#include <string>
#include <string_view>

#include "rules/diagnosis.hpp"

namespace oomlens::lsp {

std::string incident_markdown(const rules::Diagnosis& incident);
std::string finding_markdown(const rules::Diagnosis& finding);

// The Markdown explanation of every incident and finding in a report.
std::string report_markdown(const rules::LogReport& report);

// The same text for clients that show hovers as plain text: headings,
// emphasis, code spans and fences removed, links shown as their address.
std::string markdown_to_plaintext(std::string_view markdown);

}  // namespace oomlens::lsp
