#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lsp/framing.hpp"
#include "lsp/skipped_request.hpp"

using namespace oomlens::lsp;

namespace {

std::optional<std::string> scan(std::string_view body, std::size_t piece = 0) {
  SkippedRequestScanner scanner;
  if (piece == 0) piece = body.size();
  for (std::size_t i = 0; i < body.size(); i += piece) scanner.feed(body.substr(i, piece));
  return scanner.request_id();
}

// Every error the reader gives for `stream`, with the skipped request id after a '|'.
std::vector<std::string> errors(std::string_view stream, FrameLimits limits, std::size_t piece) {
  FrameReader reader(limits);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < stream.size(); i += piece) {
    reader.feed(stream.substr(i, piece));
    for (;;) {
      FrameEvent event = reader.next();
      if (std::holds_alternative<NeedMoreBytes>(event)) break;
      if (auto* e = std::get_if<FramingError>(&event))
        out.push_back(e->description + "|" + e->skipped_request_id.value_or("-"));
      if (auto* m = std::get_if<FramedMessage>(&event)) out.push_back("msg:" + m->body);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the id of a request is read from its bytes, wherever the key is", "[framing][hostile]") {
  CHECK(scan(R"({"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"b"}})") == "7");
  CHECK(scan(R"({"method":"x","params":{"id":1,"t":"\"id\":2,"},"id" : "a,}\"b" })") == R"("a,}\"b")");
  CHECK(scan(R"({"method":"x","params":["id",{"id":3}],"id":-12})", 1) == "-12");
  // A response (no method), an id that is no id, no id, not an object: nothing to answer.
  CHECK_FALSE(scan(R"({"id":7,"result":null})"));
  CHECK_FALSE(scan(R"({"method":"x","id":{"a":1}})"));
  CHECK_FALSE(scan(R"({"method":"x","idx":5,"params":{"id":4}})"));
  CHECK_FALSE(scan(R"([{"method":"x","id":1}])"));
  CHECK_FALSE(scan(R"({"method":"x","id":")" + std::string(1000, '9') + "\"}"));
}

TEST_CASE("a request skipped for its size is reported with its id, after its last byte", "[framing][hostile]") {
  FrameLimits limits;
  limits.max_body_bytes = 64;
  std::string body = R"({"jsonrpc":"2.0","method":"workspace/executeCommand","params":{"arguments":[")" +
                     std::string(200, 'x') + R"("]},"id":41})";
  std::string stream = frame(body) + frame("{}");
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, stream.size()}) {
    auto events = errors(stream, limits, piece);
    REQUIRE(events.size() == 3);
    CHECK(events[0].ends_with("|-"));  // the header's error: the id is not known yet
    CHECK(events[1] == "request of " + std::to_string(body.size()) + " bytes not handled: it exceeds the limit of 64 bytes|41");
    CHECK(events[2] == "msg:{}");
  }
}
