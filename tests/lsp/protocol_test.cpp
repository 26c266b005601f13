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
