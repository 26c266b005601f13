// What the features of every kind of document share: a diagnosis as an LSP
// Diagnostic, and reading a codeAction request (which kinds it admits,
// which of our diagnostics it is about).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lsp/document_analysis.hpp"
#include "lsp/protocol.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::lsp {

int lsp_severity(rules::Severity severity);
// The one conversion of a diagnosis to an LSP Diagnostic, on `bytes` of the
// analysed document. Its data names the diagnosis (`ref`, e.g. "incident:0",
// "source:2") and the document version, which code actions check, and
// carries what they need without a second analysis: the automatic fix's
// safety; an incident's class, fixes, verification command and script.
Diagnostic diagnostic_of(const DocumentAnalysis& analysis, const rules::Diagnosis& diagnosis, ByteRange bytes,
                         std::string ref);
// The same on the diagnosis' own place: a source file's bytes, a log's lines.
Diagnostic diagnostic_of(const DocumentAnalysis& analysis, const rules::Diagnosis& diagnosis, std::string ref);

using Kinds = std::optional<std::vector<std::string>>;
// Whether an action of `kind` passes the request's context.only (LSP kinds
// are hierarchical: "source" admits "source.oomlens.explain").
bool kind_allowed(const std::string& kind, const Kinds& only);
// True only when `only` is given and admits `kind`: document-wide actions are
// offered when asked for by kind, never on every cursor move.
bool explicitly_asked(const std::string& kind, const Kinds& only);

// The references (data.oomlens) of the diagnostics a codeAction request is
// about: those the client sent back for this version, else ours whose lines
// touch the requested range.
std::vector<std::string> refs_in_request(const DocumentAnalysis& analysis, const CodeActionParams& params);
// Our diagnostic with that reference, or null.
const Diagnostic* diagnostic_for(const DocumentAnalysis& analysis, const std::string& ref);
// The diagnostic an action is about, as CodeAction::diagnostics holds it:
// all a client compares to find its own diagnostic (range, severity, code,
// source, message, related places) and the reference back to ours, without
// the payload of `data` (an incident's fixes, verification command, script),
// which the published diagnostic already carries. Echoing that payload in
// every action made it most of a code action's cost: four actions each
// carried a copy of a 3-4 KB diagnostic.
std::vector<Diagnostic> about(const Diagnostic* diagnostic);

}  // namespace oomlens::lsp
