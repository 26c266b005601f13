// The binder on its own: typed params read once for every method, a
// malformed field thrown as ParamsError before the handler runs, results
// written through the handler's Reply to the sink the server gives it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lsp/binder.hpp"

using namespace oomlens::lsp;
using nlohmann::json;

namespace {

struct Sent {
  std::vector<json> results;
  std::vector<std::pair<int, std::string>> errors;
};

struct Owner {
  std::vector<HoverParams> hovers;
  std::vector<std::string> closed;
  void hover(const HoverParams& params, const Reply<Hover>& reply) {
    hovers.push_back(params);
    reply(Hover{true, "line " + std::to_string(params.position ? params.position->line : 0)});
    reply(Hover{false, "a second answer is dropped"});
  }
  void fail(HoverParams, const Reply<Hover>& reply) { reply.error(-32803, "no"); }
  void close(DidCloseParams params) { closed.push_back(params.text_document.uri); }
};

Binder bound(Owner& owner, Sent& sent) {
  ReplySink sink;
  sink.result = [&sent](const PendingPtr& p, json result) {
    if (p->answered) return;
    p->answered = true;
    sent.results.push_back(std::move(result));
  };
  sink.error = [&sent](const PendingPtr& p, int code, std::string_view message) {
    if (p->answered) return;
    p->answered = true;
    sent.errors.emplace_back(code, std::string(message));
  };
  Binder binder(std::move(sink));
  binder.request("textDocument/hover", &owner, &Owner::hover);
  binder.request("test/fail", &owner, &Owner::fail);
  binder.notification("textDocument/didClose", &owner, &Owner::close);
  return binder;
}

PendingPtr pending(const std::string& method) {
  auto p = std::make_shared<PendingRequest>();
  p->id = 7;
  p->method = method;
  return p;
}

}  // namespace

TEST_CASE("the binder reads typed params, runs the handler and writes its one answer") {
  Owner owner;
  Sent sent;
  Binder binder = bound(owner, sent);
  CHECK(binder.has_request("textDocument/hover"));
  CHECK_FALSE(binder.has_request("textDocument/definition"));

  // Parsed, as the server gets it: non-negative numbers are unsigned.
  json params = json::parse(R"({"textDocument": {"uri": "file:///a.log"}, "position": {"line": 41, "character": 3}})");
  binder.call("textDocument/hover", params, pending("textDocument/hover"));
  REQUIRE(owner.hovers.size() == 1);
  CHECK(owner.hovers[0].text_document.uri == "file:///a.log");
  REQUIRE(owner.hovers[0].position);
  CHECK(owner.hovers[0].position->character == 3);
  // Both answers reach the sink with the same request; like the server's, it
  // sends the first and drops the second.
  REQUIRE(sent.results.size() == 1);
  CHECK(sent.results[0] == json{{"contents", {{"kind", "markdown"}, {"value", "line 41"}}}});

  binder.call("test/fail", params, pending("test/fail"));
  REQUIRE(sent.errors.size() == 1);
  CHECK(sent.errors[0].first == -32803);
}

TEST_CASE("the binder throws ParamsError for a malformed field before the handler runs") {
  Owner owner;
  Sent sent;
  Binder binder = bound(owner, sent);
  json missing = json::parse(R"({"position": {"line": 1, "character": 0}})");
  CHECK_THROWS_AS(binder.call("textDocument/hover", missing, pending("textDocument/hover")), ParamsError);
  json mistyped = json::parse(R"({"textDocument": {"uri": 42}, "position": {"line": 1, "character": 0}})");
  CHECK_THROWS_AS(binder.call("textDocument/hover", mistyped, pending("textDocument/hover")), ParamsError);
  CHECK(owner.hovers.empty());
  CHECK(sent.results.empty());
}

TEST_CASE("the binder runs bound notifications and ignores the others") {
  Owner owner;
  Sent sent;
  Binder binder = bound(owner, sent);
  json params = {{"textDocument", {{"uri", "file:///b.log"}}}};
  CHECK(binder.notify("textDocument/didClose", params));
  CHECK(owner.closed == std::vector<std::string>{"file:///b.log"});
  CHECK_FALSE(binder.notify("$/somethingElse", params));
  json bad = {{"textDocument", "not an object"}};
  CHECK_THROWS_AS(binder.notify("textDocument/didClose", bad), ParamsError);
}
