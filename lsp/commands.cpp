// workspace/executeCommand: the oomlens.* commands. Diagnosing a selection and
// reading a snapshot run off the protocol thread; the rest answer at once or
// once the document's analysis is ready.
#include <map>

#include <fmt/format.h>

#include "lsp/local_files.hpp"
#include "lsp/log_features.hpp"
#include "lsp/markdown.hpp"
#include "lsp/server.hpp"
#include "lsp/snapshot_command.hpp"
#include "lsp/source_features.hpp"
#include "report/json_report.hpp"
#include "rules/rule.hpp"

namespace oomlens::lsp {

namespace {

// What oomlens.showFix says of a fix: the setting to make, or the fix's own words.
std::string show_fix_message(const FixRequest& fix) {
  if (fix.kind != "env") return fix.detail.value_or("");
  std::string name = fix.name.value_or(""), value = fix.value.value_or(""), script = fix.script.value_or("");
  return fmt::format("Set {}={} in the environment before torch starts{}", name, value,
                     script.empty() ? "." : fmt::format(", e.g. {}='{}' python {}", name, value, script));
}

// The command's first argument as text (a string, or {"text": ...}).
TextArgument text_of(CommandArguments& args, std::string_view command, const char* what) {
  auto text = text_argument(args);
  if (!text) throw ParamsError(fmt::format("{} expects {}", command, what));
  return std::move(*text);
}

}  // namespace

void Server::execute_command(ExecuteCommandParams params, const CommandReply& reply) {
  using Handler = void (Server::*)(CommandArguments&, const CommandReply&);
  static const std::map<std::string, Handler, std::less<>> commands = {
      {kDiagnoseText, &Server::diagnose_text},       {kAnalyzeSnapshot, &Server::analyze_snapshot},
      {kCompareSnapshots, &Server::compare_snapshots},
      {kFixScript, &Server::fix_script},             {kExplain, &Server::explain},
      {kExplainDocument, &Server::explain_document}, {kCopyVerification, &Server::copy_verification},
      {kRunVerification, &Server::run_verification}, {kShowFix, &Server::show_fix},
      {kVerify, &Server::verify},
  };
  auto it = commands.find(params.command);
  if (it == commands.end()) throw ParamsError(fmt::format("unknown command '{}'", params.command));
  (this->*(it->second))(params.arguments, reply);
}

void Server::diagnose_text(CommandArguments& args, const CommandReply& reply) {
  // Any text: a selected traceback, a terminal's output. Runs in the
  // background so a large selection cannot stall the server.
  TextArgument text = text_of(args, kDiagnoseText, "the text to diagnose");
  std::string label = text.source.value_or("selection");
  io_.run_in_background([this, reply, text = std::move(text.text), label, settings = settings_] {
    auto report = analyze_text_report(text, settings, *reply.request()->cancelled);
    CommandResult result{.report = report::report_json({{label, report}}, {.breakdown = true}), .markdown = report_markdown(report)};
    io_.run_on_protocol([reply, result = std::move(result)] {
      if (reply.cancelled()) return;  // answered already with -32800
      reply(result);
    });
  });
}

void Server::analyze_snapshot(CommandArguments& args, const CommandReply& reply) {
  answer_snapshot_command(reply, [path = snapshot_argument_path(snapshot_argument(args))](const std::atomic<bool>& cancelled) {
    return run_snapshot_command(path, cancelled);
  });
}

void Server::compare_snapshots(CommandArguments& args, const CommandReply& reply) {
  constexpr std::string_view usage =
      "[{\"path\": \"/abs/a.pickle\"}, {\"path\": \"/abs/b.pickle\"}], each a path or a file:// URI";
  if (!args.is_array() || args.size() != 2)
    throw ParamsError(fmt::format("{} expects two snapshots, {}; got {}", kCompareSnapshots, usage,
                                  args.is_array() ? fmt::format("{} argument{}", args.size(), args.size() == 1 ? "" : "s")
                                                  : std::string("no list")));
  answer_snapshot_command(reply, [a = snapshot_argument_path(snapshot_argument(args, 0), kCompareSnapshots, usage),
                                  b = snapshot_argument_path(snapshot_argument(args, 1), kCompareSnapshots, usage)](
                                     const std::atomic<bool>& cancelled) { return run_compare_command(a, b, cancelled); });
}

void Server::answer_snapshot_command(const CommandReply& reply, SnapshotRun run) {
  // A snapshot can be hundreds of MiB: read and analysed in the background.
  io_.run_in_background([this, reply, run = std::move(run)] {
    SnapshotCommandOutcome outcome = run(*reply.request()->cancelled);
    io_.run_on_protocol([this, reply, outcome = std::move(outcome)]() mutable {
      if (reply.cancelled() || outcome.cancelled) return;  // answered already with -32800
      if (outcome.error_code) return reply.error(outcome.error_code, outcome.error);
      reply(outcome.result);
      show_snapshot_lines(std::move(outcome.lines));
    });
  });
}

void Server::fix_script(CommandArguments& args, const CommandReply& reply) {
  auto arg = fix_script_argument(args);
  if (!arg) throw ParamsError("oomlens.fixScript expects [{\"uri\": \"file:///.../train.py\", \"fix\": {\"kind\": ...}}]");
  auto fix = fix_request(arg->fix);
  if (!fix || fix->kind.empty())
    throw ParamsError("oomlens.fixScript expects {\"uri\", \"fix\": {\"kind\": \"env\"|\"snapshot\"|\"empty_cache\"|\"fixAll\", ...}}");
  if (documents_.get(arg->uri)) {
    // Open in the client: the edit is made on, and names, the version it holds.
    with_analysis(reply.request(), arg->uri, [this, reply, fix = std::move(*fix)](const DocumentAnalysis& a) {
      reply(script_fix(a, fix, client_, true));
    });
    return;
  }
  // Not open: read from disk; the edit names no version.
  auto path = path_from_file_uri(arg->uri);
  if (!path) throw ParamsError(fmt::format("oomlens.fixScript: '{}' is not a local file URI", arg->uri));
  std::string error;
  auto a = analyze_file_for_fixes(arg->uri, *path, client_, settings_, error);
  if (!a) throw ParamsError(fmt::format("oomlens.fixScript: {}: {}", *path, error));
  reply(script_fix(*a, *fix, client_, false));
}

void Server::explain(CommandArguments& args, const CommandReply& reply) {
  std::string code = text_of(args, kExplain, "a rule code").text;
  auto doc = rules::rule_doc(code);
  if (!doc) throw ParamsError(fmt::format("no rule named '{}'", code));
  reply(CommandResult{.markdown = std::string(*doc)});
}

void Server::explain_document(CommandArguments& args, const CommandReply& reply) {
  std::string uri = text_of(args, kExplainDocument, "a document URI").text;
  with_analysis(reply.request(), uri, [reply](const DocumentAnalysis& a) {
    reply(CommandResult{.markdown = report_markdown(a.report)});
  });
}

void Server::copy_verification(CommandArguments& args, const CommandReply& reply) {
  pass_verification(args, reply, false);
}

void Server::run_verification(CommandArguments& args, const CommandReply& reply) {
  pass_verification(args, reply, true);
}

void Server::pass_verification(CommandArguments& args, const CommandReply& reply, bool run) {
  // The server never runs commands itself: an editor integration copies or
  // runs it in a terminal the user sees; other clients show it.
  std::string command = text_of(args, run ? kRunVerification : kCopyVerification, "a command line").text;
  notify("window/showMessage",
         MessageParams{3, fmt::format("{} this command in a terminal: {}", run ? "Run" : "Copy", command)});
  reply(CommandResult{.command = command});
}

void Server::verify(CommandArguments& args, const CommandReply& reply) {
  // [{"uri": ..., "conf"?: "expandable_segments:True"}]: the `oomlens verify`
  // command for an open script (the setting given, else the one the server
  // proposes) or log (its first incident's). Like the verification commands,
  // it is for the editor to run in a terminal the user sees.
  auto [uri, conf] = verify_argument(args);
  if (!documents_.get(uri)) throw ParamsError(fmt::format("oomlens.verify: '{}' is not open", uri));
  with_analysis(reply.request(), uri, [this, reply, conf = std::move(conf)](const DocumentAnalysis& a) {
    std::string command = verify_command_for(a, conf);
    if (command.empty()) {
      reply.error(InvalidParams, "oomlens.verify: this document has no failure or script to verify");
      return;
    }
    notify("window/showMessage", MessageParams{3, fmt::format("Run this command in a terminal: {}", command)});
    reply(CommandResult{.command = command});
  });
}

void Server::show_fix(CommandArguments& args, const CommandReply& reply) {
  auto fix = show_fix_argument(args);
  if (!fix) throw ParamsError("oomlens.showFix expects a fix object");
  std::string text = show_fix_message(*fix);
  notify("window/showMessage", MessageParams{3, text});
  reply(CommandResult{.message = text});
}

}  // namespace oomlens::lsp
