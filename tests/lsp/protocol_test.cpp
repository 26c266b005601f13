#include <catch2/catch.hpp>

#include "lsp/protocol.hpp"

using nlohmann::json;
using namespace oomlens::lsp;

namespace {

template <class P>
P read_params(json j) {
  P params;
  read(j, params);
  return params;
}

template <class P>
std::string params_error(json j) {
  try {
    read_params<P>(std::move(j));
  } catch (const ParamsError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a malformed field of a request is named in its error") {
  CHECK(params_error<HoverParams>({{"position", {{"line", 0}, {"character", 0}}}}) == "missing 'textDocument'");
  CHECK(params_error<HoverParams>({{"textDocument", {{"uri", 5}}}, {"position", json::object()}}) ==
        "'uri' has the wrong type");
  CHECK(params_error<HoverParams>(json::array({1, 2})) == "expected an object with 'textDocument'");
  CHECK(params_error<CodeActionParams>({{"textDocument", {{"uri", "file:///a.log"}}}}) == "missing 'range'");
  CHECK(params_error<DidChangeParams>({{"textDocument", {{"uri", "u"}, {"version", 2}}},
                                       {"contentChanges", {{{"text", "x"}, {"range", {{"start", 1}}}}}}}) ==
        "a content change has a malformed range");
  CHECK(params_error<ExecuteCommandParams>({{"command", 12}}) == "'command' has the wrong type");
  CHECK(params_error<InitializeParams>(nullptr) == "initialize expects an object");
}

TEST_CASE("a document's text moves out of the message, not copied") {
  json j = {{"textDocument", {{"uri", "file:///a.log"}, {"languageId", "log"}, {"version", 1},
                              {"text", std::string(64 * 1024, 'x')}}}};
  const char* buffer = j["textDocument"]["text"].get_ref<const std::string&>().data();
  DidOpenParams params;
  read(j, params);
  CHECK(params.text.data() == buffer);
  CHECK(params.uri == "file:///a.log");
  CHECK(params.version == 1);
}

TEST_CASE("a hover at something that is not a position is no hover, not an error") {
  auto params = read_params<HoverParams>(
      {{"textDocument", {{"uri", "u"}}}, {"position", {{"line", -1}, {"character", "a"}}}});
  CHECK_FALSE(params.position.has_value());
}

TEST_CASE("code action context: our diagnostics sent back and the kinds asked for") {
  auto params = read_params<CodeActionParams>(json::parse(R"({
      "textDocument": {"uri": "u"},
      "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
      "context": {"diagnostics": [{"data": {"oomlens": "incident:0", "version": 3}}, {"message": "another server's"}],
                  "only": ["quickfix", 7]}})"));
  REQUIRE(params.range);
  CHECK(params.range->end.line == 2);
  REQUIRE(params.diagnostics.size() == 1);
  CHECK(params.diagnostics[0].ref == "incident:0");
  CHECK(params.diagnostics[0].version == 3);
  REQUIRE(params.only);
  CHECK(*params.only == std::vector<std::string>{"quickfix", ""});
}

TEST_CASE("a workspace edit is versioned documentChanges or a changes map, as the client takes it") {
  WorkspaceEdit edit;
  edit.documents.push_back({"file:///t.py", std::nullopt, {TextEdit{Range{{1, 0}, {1, 4}}, "x"}}});
  json changes = edit;
  CHECK(changes == json::parse(R"({"changes": {"file:///t.py": [{"range": {"start": {"line": 1, "character": 0},
                                   "end": {"line": 1, "character": 4}}, "newText": "x"}]}})"));
  edit.document_changes = true;
  json documents = edit;
  CHECK(documents["documentChanges"][0]["textDocument"] == json::parse(R"({"uri": "file:///t.py", "version": null})"));
}

TEST_CASE("resolve fills in only what the action left out") {
  json action = {{"title", "t"}, {"command", {{"title", "kept"}, {"command", "oomlens.explain"}}}};
  ResolvedParts parts{Command{"new", "oomlens.showFix", {}}, std::nullopt};
  json resolved = resolved_action(action, parts);
  CHECK(resolved["command"]["title"] == "kept");
  CHECK(resolved_action({{"title", "t"}}, parts)["command"]["title"] == "new");
}

TEST_CASE("the client's capabilities are read from initialize, leniently") {
  auto params = read_params<InitializeParams>(json::parse(R"({
      "capabilities": {"general": {"positionEncodings": ["utf-16", "utf-8"]},
                       "textDocument": {"diagnostic": {}, "hover": {"contentFormat": ["plaintext", "markdown"]},
                                        "codeAction": {"dataSupport": true,
                                                       "resolveSupport": {"properties": ["edit", 3]}}},
                       "workspace": {"configuration": true, "inlayHint": {"refreshSupport": "yes"}},
                       "window": {"workDoneProgress": true}}})"));
  const ClientCapabilities& c = params.capabilities;
  CHECK(c.encoding == PositionEncoding::utf8);
  CHECK(c.pull_diagnostics);
  CHECK(c.markdown_hover);
  CHECK(c.resolve_edit);
  CHECK_FALSE(c.resolve_command);
  CHECK(c.configuration);
  CHECK(c.work_done_progress);
  CHECK_FALSE(c.inlay_hint_refresh);  // not a boolean
  CHECK_FALSE(c.code_action_literals);
  CHECK(read_params<InitializeParams>(json::object()).capabilities.encoding == PositionEncoding::utf16);
}

TEST_CASE("settings: the oomlens section of initializationOptions, with what is wrong in it") {
  auto params = read_params<InitializeParams>(
      {{"initializationOptions", {{"oomlens", {{"allocatorOption", "no colon"}, {"progressThresholdBytes", 10u}}}}}});
  REQUIRE(params.settings);
  CHECK(params.settings->settings.rules.fragmentation_option == "expandable_segments:True");
  CHECK(params.settings->settings.progress_threshold_bytes == 10);
  REQUIRE(params.settings->problems.size() == 1);
  CHECK(params.settings->problems[0].starts_with("oomlens.allocatorOption must be"));

  auto changed = read_params<DidChangeConfigurationParams>(
      {{"settings", {{"allocatorOption", "garbage_collection_threshold:0.6"}}}});
  REQUIRE(changed.settings);
  CHECK(changed.settings->settings.rules.fragmentation_option == "garbage_collection_threshold:0.6");
  CHECK_FALSE(read_params<DidChangeConfigurationParams>({{"settings", 3}}).settings);
}

TEST_CASE("the answer to workspace/configuration is the section itself, or nothing to use") {
  ConfigurationResult answer;
  read(json::parse(R"([{"progressThresholdBytes": -1}])"), answer);
  REQUIRE(answer.settings);
  CHECK(answer.settings->problems == std::vector<std::string>{"oomlens.progressThresholdBytes must be a non-negative integer"});
  ConfigurationResult empty;
  read(json::array(), empty);
  CHECK_FALSE(empty.settings);
  ConfigurationResult not_an_array;
  read(json{{"progressThresholdBytes", 1}}, not_an_array);
  CHECK_FALSE(not_an_array.settings);
}

TEST_CASE("command arguments: oomlens.verify's and oomlens.analyzeSnapshot's") {
  VerifyArgument v = verify_argument(json::parse(R"([{"uri": "file:///t.py", "conf": "expandable_segments:True"}])"));
  CHECK(v.uri == "file:///t.py");
  CHECK(v.conf == "expandable_segments:True");
  CHECK_FALSE(verify_argument(json::parse(R"([{"uri": "u"}])")).conf);
  auto verify_error = [](json args) -> std::string {
    try {
      verify_argument(args);
    } catch (const ParamsError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(verify_error(json::array({"u"})) == R"(oomlens.verify expects [{"uri": ..., "conf"?: ...}])");
  CHECK(verify_error(json::parse(R"([{"uri": "u", "conf": 1}])")) == "'conf' has the wrong type");

  CHECK(snapshot_argument(json::array({"/a.pickle"})) == "/a.pickle");
  CHECK(snapshot_argument(json::parse(R"([{"path": 1, "uri": "file:///b.pickle"}])")) == "file:///b.pickle");
  CHECK_FALSE(snapshot_argument(json::parse(R"([{"file": "/c.pickle"}])")));
  CHECK_FALSE(snapshot_argument(json::array()));
  // oomlens.compareSnapshots reads each of its two the same way.
  CHECK(snapshot_argument(json::parse(R"(["/a.pickle", {"uri": "file:///b.pickle"}])"), 1) == "file:///b.pickle");
  CHECK_FALSE(snapshot_argument(json::array({"/a.pickle"}), 1));

  auto fix = show_fix_argument(json::parse(R"([{"kind": "env", "name": "PYTORCH_CUDA_ALLOC_CONF"}])"));
  REQUIRE(fix);
  CHECK(fix->name == "PYTORCH_CUDA_ALLOC_CONF");
  CHECK_FALSE(show_fix_argument(json::array({"not a fix"})));
  CHECK_FALSE(show_fix_argument(json::array()));
}

TEST_CASE("an inlay hint's tooltip is Markdown content or plain text") {
  json markdown = InlayHint{{3, 10}, "2.00 GiB", true, "**2.00 GiB**"};
  CHECK(markdown == json::parse(R"({"position": {"line": 3, "character": 10}, "label": "2.00 GiB",
                                    "paddingLeft": true, "tooltip": {"kind": "markdown", "value": "**2.00 GiB**"}})"));
  json plain = InlayHint{{0, 0}, "1 KiB", false, "1 KiB"};
  CHECK(plain["tooltip"] == "1 KiB");
}

TEST_CASE("executeCommand answers a command's result or a script's fix") {
  json result = CommandAnswer(CommandResult{.command = "oomlens verify"});
  CHECK(result == json{{"command", "oomlens verify"}});
  json fix = CommandAnswer(ScriptFix{.message = "nothing to fix"});
  CHECK(fix["message"] == "nothing to fix");
}
