#include <catch2/catch.hpp>

#include <string>

#include "lsp/jsonrpc.hpp"

using namespace oomlens::lsp;
using nlohmann::json;

namespace {

Invalid invalid(std::string_view body) {
  Message message = parse_message(body);
  REQUIRE(std::holds_alternative<Invalid>(message));
  return std::get<Invalid>(message);
}

}  // namespace

TEST_CASE("parse_message reads requests with integer and string ids") {
  Message message = parse_message(R"({"jsonrpc":"2.0","id":7,"method":"initialize","params":{"a":1}})");
  REQUIRE(std::holds_alternative<Request>(message));
  const auto& request = std::get<Request>(message);
  CHECK(request.id == 7);
  CHECK(request.method == "initialize");
  CHECK(request.params == json{{"a", 1}});

  auto with_string_id = std::get<Request>(parse_message(R"({"jsonrpc":"2.0","id":"abc","method":"m","params":[1,2]})"));
  CHECK(with_string_id.id == "abc");
  CHECK(with_string_id.params == json::array({1, 2}));

  // The largest ids nlohmann can hold are still integers.
  CHECK(std::get<Request>(parse_message(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"m"})")).id ==
        18446744073709551615ULL);
  CHECK(std::get<Request>(parse_message(R"({"jsonrpc":"2.0","id":-3,"method":"m"})")).id == -3);
}

TEST_CASE("parse_message treats absent and null params as null") {
  auto absent = std::get<Request>(parse_message(R"({"jsonrpc":"2.0","id":1,"method":"shutdown"})"));
  CHECK(absent.params.is_null());
  auto explicit_null = std::get<Request>(parse_message(R"({"jsonrpc":"2.0","id":1,"method":"shutdown","params":null})"));
  CHECK(explicit_null.params.is_null());
}

TEST_CASE("parse_message reads notifications") {
  Message message = parse_message(R"({"method":"exit","jsonrpc":"2.0"})");
  REQUIRE(std::holds_alternative<Notification>(message));
  CHECK(std::get<Notification>(message).method == "exit");
  auto cancel = std::get<Notification>(parse_message(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3},"extra":true})"));
  CHECK(cancel.params["id"] == 3);
}

TEST_CASE("parse_message reads responses") {
  auto ok = std::get<Response>(parse_message(R"({"jsonrpc":"2.0","id":4,"result":null})"));
  CHECK(ok.id == 4);
  CHECK(!ok.error);
  CHECK(ok.result.is_null());

  auto with_value = std::get<Response>(parse_message(R"({"jsonrpc":"2.0","id":"s","result":{"applied":true}})"));
  CHECK(with_value.result["applied"] == true);

  auto failed = std::get<Response>(parse_message(
      R"({"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"no such method","data":{"x":1}}})"));
  REQUIRE(failed.error);
  CHECK(failed.error->code == MethodNotFound);
  CHECK(failed.error->message == "no such method");
  CHECK(failed.error->data == json{{"x", 1}});

  auto null_id = std::get<Response>(parse_message(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})"));
  CHECK(null_id.id.is_null());
  REQUIRE(null_id.error);
  CHECK(null_id.error->data.is_null());
}

TEST_CASE("parse_message answers invalid JSON with a parse error and a null id") {
  for (std::string body : {"", "{", "{\"jsonrpc\":\"2.0\",\"id\":1,", "nope", "{} trailing", "{'a':1}",
                           "{\"a\":1,}", "\xef\xbb"}) {
    INFO(body);
    Invalid error = invalid(body);
    CHECK(error.code == ParseError);
    CHECK(error.id.is_null());
    CHECK(error.reply_owed);
    CHECK(!error.message.empty());
  }
}

TEST_CASE("parse_message answers invalid UTF-8 with a parse error, never a throw") {
  for (std::string body : {
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"t\":\"\xff\"}}"),
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\"}"),            // truncated sequence
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\xaf\"}"),        // overlong '/'
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}"),    // encoded surrogate
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xf4\x90\x80\x80\"}"),  // above U+10FFFF
           std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\ud800\"}"),          // lone surrogate escape
           std::string("\xff{}"),
       }) {
    INFO(body);
    Invalid error = invalid(body);
    CHECK(error.code == ParseError);
    CHECK(error.id.is_null());
    // The description does not echo the bad bytes back.
    for (char c : error.message) CHECK(static_cast<unsigned char>(c) < 0x80);
  }
}

TEST_CASE("parse_message reads valid non-ASCII text") {
  auto request = std::get<Request>(parse_message("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"t\":\"ö漢😀\\ud83d\\ude00\"}}"));
  CHECK(request.params["t"] == "ö漢😀😀");
}

TEST_CASE("parse_message rejects a message that is not an object") {
  for (std::string body : {"[]", R"([{"jsonrpc":"2.0","id":1,"method":"m"}])", "1", "\"x\"", "null", "true"}) {
    INFO(body);
    Invalid error = invalid(body);
    CHECK(error.code == InvalidRequest);
    CHECK(error.id.is_null());
    CHECK(error.reply_owed);
  }
  CHECK_THAT(invalid("[]").message, Catch::Contains("batch"));
}

TEST_CASE("parse_message needs \"jsonrpc\": \"2.0\" and keeps a readable id") {
  auto missing = invalid(R"({"id":3,"method":"m"})");
  CHECK(missing.code == InvalidRequest);
  CHECK(missing.id == 3);
  CHECK(invalid(R"({"jsonrpc":"1.0","id":"x","method":"m"})").id == "x");
  CHECK(invalid(R"({"jsonrpc":2.0,"id":3,"method":"m"})").id == 3);
  CHECK(invalid(R"({"jsonrpc":"2.0 ","method":"m"})").id.is_null());
  CHECK(invalid(R"({"jsonrpc":null,"id":1.5,"method":"m"})").id.is_null());
}

TEST_CASE("parse_message rejects a method that is not a string") {
  for (std::string body : {R"({"jsonrpc":"2.0","id":9,"method":1})", R"({"jsonrpc":"2.0","id":9,"method":null})",
                           R"({"jsonrpc":"2.0","id":9,"method":["m"]})"}) {
    INFO(body);
    Invalid error = invalid(body);
    CHECK(error.code == InvalidRequest);
    CHECK(error.id == 9);
    CHECK_THAT(error.message, Catch::Contains("method"));
  }
  // The JSON-RPC spec's own example: a reply with a null id is owed.
  Invalid spec_example = invalid(R"({"jsonrpc": "2.0", "method": 1, "params": "bar"})");
  CHECK(spec_example.id.is_null());
  CHECK(spec_example.reply_owed);
}

TEST_CASE("parse_message rejects ids that are not integers or strings") {
  for (std::string id : {"1.5", "1.0", "true", "{}", "[1]", "null"}) {
    INFO(id);
    Invalid error = invalid(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"m"})");
    CHECK(error.code == InvalidRequest);
    CHECK(error.id.is_null());
    CHECK_THAT(error.message, Catch::Contains("id"));
  }
}

TEST_CASE("parse_message rejects params that are not an object or array") {
  for (std::string params : {"1", "\"x\"", "true"}) {
    INFO(params);
    Invalid error = invalid(R"({"jsonrpc":"2.0","id":"q","method":"m","params":)" + params + "}");
    CHECK(error.code == InvalidRequest);
    CHECK(error.id == "q");
  }
  CHECK(invalid(R"({"jsonrpc":"2.0","method":"n","params":2})").id.is_null());  // a notification has no id
}

TEST_CASE("parse_message rejects a message with neither method nor result") {
  Invalid error = invalid(R"({"jsonrpc":"2.0","id":12})");
  CHECK(error.code == InvalidRequest);
  CHECK(error.id == 12);
  CHECK(error.reply_owed);
  CHECK(invalid(R"({"jsonrpc":"2.0"})").id.is_null());
}

TEST_CASE("parse_message flags malformed responses as owing no reply") {
  for (std::string body : {
           R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}})",
           R"({"jsonrpc":"2.0","id":1,"error":"boom"})",
           R"({"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"x"}})",
           R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}})",
           R"({"jsonrpc":"2.0","id":1,"error":{"code":1}})",
           R"({"jsonrpc":"2.0","result":1})",
           R"({"jsonrpc":"2.0","id":null,"result":1})",
           R"({"jsonrpc":"2.0","id":true,"result":1})",
           R"({"id":1,"result":1})",
       }) {
    INFO(body);
    Invalid error = invalid(body);
    CHECK(error.code == InvalidRequest);
    CHECK(!error.reply_owed);
  }
  CHECK(invalid(R"({"jsonrpc":"2.0","id":1,"error":"boom"})").id == 1);
}

TEST_CASE("parse_message survives deeply nested input") {
  std::string deep = R"({"jsonrpc":"2.0","id":1,"method":"m","params":)" + std::string(200000, '[') +
                     std::string(200000, ']') + "}";
  Message message = parse_message(deep);
  CHECK(std::holds_alternative<Request>(message));
  CHECK(invalid(std::string(200000, '[')).code == ParseError);
}

TEST_CASE("make_* build JSON-RPC 2.0 messages") {
  CHECK(make_result(1, nullptr) == json::parse(R"({"jsonrpc":"2.0","id":1,"result":null})"));
  CHECK(make_result("a", {{"x", 1}}) == json::parse(R"({"jsonrpc":"2.0","id":"a","result":{"x":1}})"));
  CHECK(make_error(nullptr, ParseError, "bad") ==
        json::parse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}})"));
  CHECK(make_error(2, RequestCancelled, "cancelled", json{{"retry", false}}) ==
        json::parse(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"cancelled","data":{"retry":false}}})"));
  CHECK(make_notification("exit") == json::parse(R"({"jsonrpc":"2.0","method":"exit"})"));
  CHECK(make_notification("window/logMessage", {{"type", 3}, {"message", "hi"}}) ==
        json::parse(R"({"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"hi"}})"));
  CHECK(make_request(5, "workspace/diagnostic/refresh") ==
        json::parse(R"({"jsonrpc":"2.0","id":5,"method":"workspace/diagnostic/refresh"})"));
  CHECK(make_request("p1", "window/workDoneProgress/create", {{"token", "t"}})["params"]["token"] == "t");
}

TEST_CASE("every error code has its JSON-RPC / LSP value") {
  CHECK(ParseError == -32700);
  CHECK(InvalidRequest == -32600);
  CHECK(MethodNotFound == -32601);
  CHECK(InvalidParams == -32602);
  CHECK(InternalError == -32603);
  CHECK(ServerNotInitialized == -32002);
  CHECK(RequestCancelled == -32800);
  CHECK(ContentModified == -32801);
  CHECK(RequestFailed == -32803);
}

TEST_CASE("an Invalid turns into the error reply it owes") {
  Invalid error = invalid(R"({"jsonrpc":"2.0","id":"z","method":"m","params":3})");
  CHECK(make_error(error.id, error.code, error.message)["error"]["code"] == -32600);
  CHECK(make_error(error.id, error.code, error.message)["id"] == "z");
}

TEST_CASE("serialize writes compact JSON and replaces invalid UTF-8 instead of throwing") {
  CHECK(serialize(make_result(1, "ö😀")) == "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":\"ö😀\"}");
  std::string log_text = "tried to allocate \xff\xfe 2.00 GiB";
  std::string text;
  REQUIRE_NOTHROW(text = serialize(make_notification("window/logMessage", {{"message", log_text}})));
  CHECK_THAT(text, Catch::Contains("tried to allocate \xef\xbf\xbd"));
  CHECK(std::holds_alternative<Notification>(parse_message(text)));
}

TEST_CASE("messages survive a serialize/parse round trip") {
  auto request = std::get<Request>(parse_message(serialize(make_request(42, "textDocument/hover", {{"p", {1, 2}}}))));
  CHECK(request.id == 42);
  CHECK(request.method == "textDocument/hover");
  CHECK(request.params == json{{"p", {1, 2}}});
  auto reply = std::get<Response>(parse_message(serialize(make_error("k", ContentModified, "changed"))));
  CHECK(reply.id == "k");
  REQUIRE(reply.error);
  CHECK(reply.error->code == ContentModified);
}
