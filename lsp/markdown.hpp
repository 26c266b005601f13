// Diagnoses as Markdown for hovers and command results. The memory bar is
// text in a code block, so it renders in every client.
#pragma once

#include <string>
#include <string_view>

#include "rules/diagnose_log.hpp"

namespace oomlens::lsp {

// One diagnosis as every hover and explanation shows it, whatever its input
// (a log's incident or finding, a script, a configuration file, a snapshot):
//
//   ### CODE name (· class, for a log's incident)
//   the message
//   the user's frame; the evidence: an incident's ranks and memory bar, else
//   the named figures (a finding's quoted line comes after the explanation)
//   the explanation
//   **Fixes**: safety, title, the setting or command, why
//   **Verify**: the command to run next
//   [CODE documentation](the rule's page)
std::string diagnosis_markdown(const rules::Diagnosis& diagnosis);

// Text from a file inside a Markdown code span: a delimiter longer than any
// backtick run inside, so a frame name cannot end the span (or start HTML).
std::string markdown_code(std::string_view text);

// The Markdown explanation of every incident and finding in a report.
std::string report_markdown(const rules::LogReport& report);

// The same text for clients that show hovers as plain text: headings,
// emphasis, code spans and fences removed, links shown as their address.
std::string markdown_to_plaintext(std::string_view markdown);

}  // namespace oomlens::lsp
