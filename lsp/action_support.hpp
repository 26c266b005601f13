// What the two kinds of code actions (logs: lsp/code_actions.cpp; scripts and
// launch files: lsp/source_features.cpp) share: reading the request, and the
// LSP shapes of ranges and severities.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lsp/document_analysis.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::lsp {

nlohmann::json range_json(const Range& range);
int lsp_severity(rules::Severity severity);
// An LSP Diagnostic of a diagnosis on `bytes` of the analysed document; its
// data names the diagnosis (`ref`, e.g. "incident:0", "source:2") and the
// document version, which code actions check.
nlohmann::json diagnostic_json(const DocumentAnalysis& analysis, const rules::Diagnosis& diagnosis, ByteRange bytes,
                               const std::string& ref);

// Whether an action of `kind` passes the request's context.only (LSP kinds
// are hierarchical: "source" admits "source.oomlens.explain").
bool kind_allowed(const std::string& kind, const nlohmann::json& only);
// True only when `only` is given and admits `kind`: document-wide actions are
// offered when asked for by kind, never on every cursor move.
bool explicitly_asked(const std::string& kind, const nlohmann::json& only);
// context.only of a codeAction request, or null.
nlohmann::json requested_kinds(const nlohmann::json& params);

// The references (data.oomlens) of the diagnostics a codeAction request is
// about: those the client sent back for this version, else ours whose lines
// touch the requested range.
std::vector<std::string> refs_in_request(const DocumentAnalysis& analysis, const nlohmann::json& params);
// Our diagnostic with that reference, or null.
const nlohmann::json* diagnostic_for(const DocumentAnalysis& analysis, const std::string& ref);

}  // namespace oomlens::lsp
