// Requests about documents and commands. Each reads the analysis of the
// document's current version (waiting for it when it is still running).
#include <fmt/format.h>

#include "lsp/local_files.hpp"
#include "lsp/params.hpp"
#include "lsp/source_features.hpp"
#include "lsp/server.hpp"
#include "lsp/snapshot_command.hpp"
#include "report/json_report.hpp"
#include "rules/rule.hpp"

namespace oomlens::lsp {

using nlohmann::json;
using vt = json::value_t;

void Server::pull_diagnostics(const PendingPtr& p, json& params) {
  std::string uri = document_uri(params);
  std::string previous = params.is_object() && params.contains("previousResultId") && params["previousResultId"].is_string()
                             ? params["previousResultId"].get<std::string>()
                             : std::string();
  if (!documents_.get(uri)) {
    // Not open (or closed meanwhile): nothing to report, and nothing stale.
    reply(p, {{"kind", "full"}, {"items", json::array()}});
    return;
  }
  with_analysis(p, uri, [this, p, previous, uri](const DocumentAnalysis& a) {
    // Version and analysis serial: after a settings change the same version
    // has other diagnostics (fix titles in data), and a resultId of the
    // version alone would have answered "unchanged" to the client's old id.
    // The callback runs while the slot holds exactly this analysis.
    std::string result_id = fmt::format("{}.{}", a.doc->version, analyses_.at(uri).serial);
    if (!previous.empty() && previous == result_id)
      reply(p, {{"kind", "unchanged"}, {"resultId", result_id}});
    else
      reply(p, {{"kind", "full"}, {"resultId", result_id}, {"items", a.diagnostics}});
  });
}

void Server::hover(const PendingPtr& p, json& params) {
  std::string uri = document_uri(params);
  const json& position = member(params, "position", vt::object);
  with_analysis(p, uri, [this, p, position](const DocumentAnalysis& a) {
    reply(p, is_source(a) ? source_hover(a, position, client_.markdown_hover) : hover_at(a, position, client_.markdown_hover));
  });
}

void Server::code_action(const PendingPtr& p, json& params) {
  std::string uri = document_uri(params);
  member(params, "range", vt::object);
  // The params (with the diagnostics the client sent back) move along: no copy.
  with_analysis(p, uri, [this, p, params = std::move(params)](const DocumentAnalysis& a) {
    reply(p, is_source(a) ? source_code_actions(a, params, client_)
                           : code_actions(a, params, client_, [this](const std::string& uri) { return documents_.get(uri); }));
  });
}

void Server::code_action_resolve(const PendingPtr& p, json& params) {
  if (!params.is_object() || !params.contains("data") || !params["data"].is_object() || !params["data"].contains("uri") ||
      !params["data"]["uri"].is_string())
    throw ParamsError("codeAction/resolve expects an action this server made (with its data)");
  std::string uri = params["data"]["uri"].get<std::string>();
  with_analysis(p, uri, [this, p, params = std::move(params)](const DocumentAnalysis& a) {
    json resolved = is_source(a) ? resolve_source_code_action(a, params, client_) : resolve_code_action(a, params);
    if (resolved.is_null())
      reply_error(p, ContentModified, "the document changed since this action was offered");
    else
      reply(p, resolved);
  });
}

void Server::execute_command(const PendingPtr& p, json& params) {
  std::string name = member(params, "command", vt::string).get<std::string>();
  // Moved, not copied: a selection to diagnose can be large.
  json args = params.contains("arguments") && params["arguments"].is_array() ? std::move(params["arguments"])
                                                                            : json::array();
  auto first_string = [&](const char* what) -> std::string {
    if (args.empty()) throw ParamsError(fmt::format("{} expects {}", name, what));
    if (args[0].is_string()) return std::move(args[0].get_ref<std::string&>());
    if (args[0].is_object() && args[0].contains("text") && args[0]["text"].is_string())
      return std::move(args[0]["text"].get_ref<std::string&>());
    throw ParamsError(fmt::format("{} expects {}", name, what));
  };

  if (name == kDiagnoseText) {
    // Any text: a selected traceback, a terminal's output. Runs in the
    // background so a large selection cannot stall the server.
    std::string text = first_string("the text to diagnose");
    std::string label = args[0].is_object() && args[0].contains("source") && args[0]["source"].is_string()
                            ? args[0]["source"].get<std::string>()
                            : std::string("selection");
    Settings settings = settings_;
    auto cancelled = p->cancelled;
    io_.run_in_background([this, p, text = std::move(text), label, settings, cancelled] {
      auto report = analyze_text_report(text, settings, *cancelled);
      json result = report::report_json({{label, report}}, {.breakdown = true});
      std::string markdown = report_markdown(report);
      io_.run_on_protocol([this, p, result = std::move(result), markdown = std::move(markdown)]() mutable {
        if (p->cancelled->load()) return;  // answered already with -32800
        reply(p, {{"json", std::move(result)}, {"markdown", std::move(markdown)}});
      });
    });
    return;
  }
  if (name == kAnalyzeSnapshot) {
    // A snapshot can be hundreds of MiB: read and analysed in the background.
    std::string path = snapshot_argument_path(args);
    io_.run_in_background([this, p, path = std::move(path)] {
      SnapshotCommandOutcome outcome = run_snapshot_command(path, *p->cancelled);
      io_.run_on_protocol([this, p, outcome = std::move(outcome)]() mutable {
        if (p->cancelled->load() || outcome.cancelled) return;  // answered already with -32800
        if (outcome.error_code) reply_error(p, outcome.error_code, outcome.error);
        else reply(p, std::move(outcome.result));
      });
    });
    return;
  }
  if (name == kFixScript) {
    if (args.empty() || !args[0].is_object() || !args[0].contains("uri") || !args[0]["uri"].is_string() ||
        !args[0].contains("fix") || !args[0]["fix"].is_object())
      throw ParamsError("oomlens.fixScript expects [{\"uri\": \"file:///.../train.py\", \"fix\": {\"kind\": ...}}]");
    std::string uri = args[0]["uri"].get<std::string>();
    json fix = std::move(args[0]["fix"]);
    if (documents_.get(uri)) {
      // Open in the client: the edit is made on, and names, the version it holds.
      with_analysis(p, uri, [this, p, fix = std::move(fix)](const DocumentAnalysis& a) {
        reply(p, script_fix(a, fix, client_, true));
      });
      return;
    }
    // Not open: read from disk; the edit names no version.
    auto path = path_from_file_uri(uri);
    if (!path) throw ParamsError(fmt::format("oomlens.fixScript: '{}' is not a local file URI", uri));
    std::string error;
    auto a = analyze_file_for_fixes(uri, *path, client_, settings_, error);
    if (!a) throw ParamsError(fmt::format("oomlens.fixScript: {}: {}", *path, error));
    reply(p, script_fix(*a, fix, client_, false));
    return;
  }
  if (name == kExplain) {
    std::string code = first_string("a rule code");
    auto doc = rules::rule_doc(code);
    if (!doc) throw ParamsError(fmt::format("no rule named '{}'", code));
    reply(p, {{"markdown", std::string(*doc)}});
    return;
  }
  if (name == kExplainDocument) {
    std::string uri = first_string("a document URI");
    with_analysis(p, uri, [this, p](const DocumentAnalysis& a) { reply(p, {{"markdown", report_markdown(a.report)}}); });
    return;
  }
  if (name == kCopyVerification || name == kRunVerification) {
    // The server never runs commands itself: an editor integration copies or
    // runs it in a terminal the user sees; other clients show it.
    std::string command = first_string("a command line");
    notify("window/showMessage",
           {{"type", 3}, {"message", fmt::format("{} this command in a terminal: {}",
                                                 name == kRunVerification ? "Run" : "Copy", command)}});
    reply(p, {{"command", command}});
    return;
  }
  if (name == kShowFix) {
    if (args.empty() || !args[0].is_object()) throw ParamsError("oomlens.showFix expects a fix object");
    const json& fix = args[0];
    std::string text;
    if (fix.value("kind", "") == "env") {
      std::string script = fix.value("script", "");
      text = fmt::format("Set {}={} in the environment before torch starts{}", fix.value("name", ""),
                         fix.value("value", ""),
                         script.empty() ? "." : fmt::format(", e.g. {}='{}' python {}", fix.value("name", ""),
                                                            fix.value("value", ""), script));
    } else {
      text = fix.value("detail", "");
    }
    notify("window/showMessage", {{"type", 3}, {"message", text}});
    reply(p, {{"message", text}});
    return;
  }
  throw ParamsError(fmt::format("unknown command '{}'", name));
}

}  // namespace oomlens::lsp
