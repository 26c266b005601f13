#include "lsp/source_features.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lsp/action_support.hpp"
#include "lsp/markdown.hpp"
#include "rules/rule.hpp"
#include "rules/source/lint.hpp"

namespace oomlens::lsp {
namespace {

Range range_of(const DocumentAnalysis& a, std::size_t begin, std::size_t end) {
  return a.doc->lines().range_of(ByteRange{begin, end}, a.encoding);
}

Diagnostic source_diagnostic(const DocumentAnalysis& a, const rules::Diagnosis& d, std::size_t index) {
  return diagnostic_of(a, d, fmt::format("source:{}", index));
}

// A note of ours that is no rule's: no code page, information only.
Diagnostic note(const DocumentAnalysis& a, Range range, std::string ref, std::string message) {
  Diagnostic out;
  out.range = range;
  out.severity = 3;
  out.message = std::move(message);
  out.data.ref = std::move(ref);
  out.data.version = a.doc->version;
  return out;
}

// A script that does not parse gets one diagnostic saying so, and no edits
// anywhere (a wrong tree would give wrong edits). Other Python tools report
// the syntax error itself; this says what it costs here.
Diagnostic syntax_error_diagnostic(const DocumentAnalysis& a) {
  const auto& e = a.script->syntax_errors().front();
  Diagnostic out = note(a, range_of(a, e.range.begin, std::max(e.range.begin, e.range.end)), "syntax",
                        fmt::format("SyntaxError: {} (oomlens offers no fixes until the script parses)", e.message));
  out.code = "E999";
  return out;
}

// An untitled or oddly named configuration document: its kind from its language.
rules::ConfigFileKind config_kind_of_language(std::string_view language) {
  if (language == "dotenv") return rules::ConfigFileKind::dotenv;
  if (language == "dockerfile") return rules::ConfigFileKind::dockerfile;
  if (language == "yaml") return rules::ConfigFileKind::yaml;
  return rules::ConfigFileKind::shell;
}

// A script: parsed (incrementally from `previous` when it holds an earlier
// script of the same document) and linted; a configuration file: linted.
void analyze_source(DocumentAnalysis& a, const DocumentAnalysis* previous, const std::atomic<bool>& cancelled,
                    const std::optional<ProjectMember>& project) {
  if (a.doc->text.size() > kMaxSourceBytes) {
    // A generated module of this size is no training script; parsing it on
    // every keystroke would only stall the editor. `oomlens lint` reads it.
    a.diagnostics.push_back(note(a, Range{}, "too-large",
                                 fmt::format("oomlens does not check files over {} MiB in the editor; run "
                                             "`oomlens lint` on it", kMaxSourceBytes >> 20)));
    return;
  }
  if (a.doc->kind == DocumentKind::config) {
    a.config_kind = rules::config_file_kind(a.doc->uri);
    if (!a.config_kind) a.config_kind = config_kind_of_language(a.doc->language_id);
    a.source_diagnostics = rules::lint_config_file(*a.config_kind, a.doc->text);
    for (std::size_t i = 0; i < a.source_diagnostics.size(); ++i)
      a.diagnostics.push_back(source_diagnostic(a, a.source_diagnostics[i], i));
    return;
  }
  const analyzer::python::Script* before = previous && previous->script ? previous->script.get() : nullptr;
  a.script = std::make_shared<const analyzer::python::Script>(analyzer::python::parse_script(a.doc->text, before));
  if (cancelled.load(std::memory_order_relaxed)) {  // typed over already: the rules would be wasted
    a.cancelled = true;
    return;
  }
  if (project) {
    // Its imports' facts come from the project (each file read once); its
    // own go there for the scripts that import it.
    project->project->keep_facts(project->relative, *a.script);
    a.source_diagnostics = rules::lint_script(*a.script, *project->project->context_for(project->relative));
  } else {
    a.source_diagnostics = rules::lint_script(*a.script);
  }
  if (a.script->has_errors()) a.diagnostics.push_back(syntax_error_diagnostic(a));
  for (std::size_t i = 0; i < a.source_diagnostics.size(); ++i)
    a.diagnostics.push_back(source_diagnostic(a, a.source_diagnostics[i], i));
}

class SourceFeatures final : public DocumentFeatures {
 public:
  void analyze(DocumentAnalysis& a, const AnalysisInputs& in) const override {
    analyze_source(a, in.previous, in.cancelled, in.project);
  }

  std::optional<Hover> hover(const DocumentAnalysis& a, Position position, bool markdown) const override {
    auto offset = a.doc->lines().offset_of(position, a.encoding);
    if (!offset) return std::nullopt;
    std::string text;
    for (const auto& d : a.source_diagnostics)
      if (*offset >= d.location.source->range.begin && *offset <= d.location.source->range.end)
        text += (text.empty() ? "" : "\n---\n") + diagnosis_markdown(d);
    if (text.empty()) return std::nullopt;
    return Hover{markdown, markdown ? text : markdown_to_plaintext(text)};
  }

  std::vector<CodeActionItem> code_actions(const DocumentAnalysis& a, const CodeActionParams& params,
                                           const ActionContext& context) const override {
    return source_code_actions(a, params, context.client);
  }

  std::optional<ResolvedParts> resolve(const DocumentAnalysis& a, const CodeActionResolveParams& action,
                                       const ClientCapabilities& client) const override {
    return resolve_source_code_action(a, action, client);
  }
};

}  // namespace

const DocumentFeatures& source_features() {
  static const SourceFeatures features;
  return features;
}

}  // namespace oomlens::lsp
