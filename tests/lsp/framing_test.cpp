#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "lsp/framing.hpp"

using namespace oomlens::lsp;

namespace {

// Events as text, so sequences compare and print easily:
// "msg:<body>" or "err:<description>".
std::vector<std::string> drain(FrameReader& reader) {
  std::vector<std::string> events;
  while (true) {
    FrameEvent event = reader.next();
    if (std::holds_alternative<NeedMoreBytes>(event)) return events;
    if (auto* message = std::get_if<FramedMessage>(&event)) events.push_back("msg:" + message->body);
    if (auto* error = std::get_if<FramingError>(&event)) events.push_back("err:" + error->description);
  }
}

std::vector<std::string> read_whole(std::string_view stream, FrameLimits limits = {}) {
  FrameReader reader(limits);
  reader.feed(stream);
  auto events = drain(reader);
  if (auto error = reader.at_eof()) events.push_back("eof:" + error->description);
  return events;
}

std::vector<std::string> read_in_chunks(std::string_view stream, std::vector<std::size_t> sizes,
                                        FrameLimits limits = {}) {
  FrameReader reader(limits);
  std::vector<std::string> events;
  std::size_t i = 0;
  for (std::size_t k = 0; i < stream.size(); ++k) {
    std::size_t n = std::min(sizes[k % sizes.size()], stream.size() - i);
    reader.feed(stream.substr(i, n));
    i += n;
    for (auto& e : drain(reader)) events.push_back(std::move(e));
  }
  if (auto error = reader.at_eof()) events.push_back("eof:" + error->description);
  return events;
}

std::vector<std::string> read_byte_by_byte(std::string_view stream, FrameLimits limits = {}) {
  return read_in_chunks(stream, {1}, limits);
}

bool is_error(const std::string& event) { return event.starts_with("err:"); }

// A sink that keeps the body, and hands out room in small pieces.
struct StringSink : BodySink {
  explicit StringSink(std::size_t length, std::size_t piece = 5) : body(length, '\0'), piece(piece) {}
  std::span<char> space(std::size_t max) override {
    return {body.data() + received, std::min({max, piece, body.size() - received})};
  }
  void commit(std::size_t n) override { received += n; }
  std::string body;
  std::size_t piece;
  std::size_t received = 0;
};

// Like drain(), for a reader whose large bodies go to StringSinks.
std::vector<std::string> drain_sinks(FrameReader& reader) {
  std::vector<std::string> events;
  while (true) {
    FrameEvent event = reader.next();
    if (std::holds_alternative<NeedMoreBytes>(event)) return events;
    if (auto* message = std::get_if<FramedMessage>(&event)) {
      if (message->sink) {
        auto& sink = static_cast<StringSink&>(*message->sink);
        events.push_back("sink:" + sink.body.substr(0, sink.received));
      } else {
        events.push_back("msg:" + message->body);
      }
    }
    if (auto* error = std::get_if<FramingError>(&event)) events.push_back("err:" + error->description);
  }
}

FrameReader sink_reader(std::size_t sink_min_bytes) {
  FrameLimits limits;
  limits.sink_min_bytes = sink_min_bytes;
  return FrameReader(limits, [](std::size_t length) { return std::make_unique<StringSink>(length); });
}

}  // namespace

TEST_CASE("frame writes Content-Length and the body") {
  CHECK(frame("{}") == "Content-Length: 2\r\n\r\n{}");
  CHECK(frame("") == "Content-Length: 0\r\n\r\n");
  CHECK(frame("\"ö😀\"") == "Content-Length: 8\r\n\r\n\"ö😀\"");  // bytes, not characters
}

TEST_CASE("FrameReader reads one message, several in one feed, and empty bodies") {
  CHECK(read_whole(frame("{\"a\":1}")) == std::vector<std::string>{"msg:{\"a\":1}"});
  CHECK(read_whole(frame("1") + frame("22") + frame("333")) ==
        std::vector<std::string>{"msg:1", "msg:22", "msg:333"});
  CHECK(read_whole(frame("")) == std::vector<std::string>{"msg:"});
  CHECK(read_whole("") == std::vector<std::string>{});
}

TEST_CASE("FrameReader needs more bytes until a body is complete") {
  FrameReader reader;
  std::string stream = frame("{\"method\":\"x\"}");
  reader.feed(stream.substr(0, 10));
  CHECK(std::holds_alternative<NeedMoreBytes>(reader.next()));
  reader.feed(stream.substr(10, 15));
  CHECK(std::holds_alternative<NeedMoreBytes>(reader.next()));
  reader.feed(stream.substr(25));
  auto event = reader.next();
  REQUIRE(std::holds_alternative<FramedMessage>(event));
  CHECK(std::get<FramedMessage>(event).body == "{\"method\":\"x\"}");
  CHECK(std::holds_alternative<NeedMoreBytes>(reader.next()));
  CHECK(reader.buffered_bytes() == 0);
  CHECK(!reader.at_eof());
}

TEST_CASE("FrameReader reads bodies fed byte by byte, and non-ASCII bodies by byte count") {
  std::string body = "{\"text\":\"Grüße 漢字 😀\\r\\n\"}";
  std::string stream = frame(body) + frame("{}");
  CHECK(read_byte_by_byte(stream) == std::vector<std::string>{"msg:" + body, "msg:{}"});
}

TEST_CASE("FrameReader header names are case-insensitive; Content-Type and other headers are ignored") {
  CHECK(read_whole("content-length: 2\r\n\r\n{}") == std::vector<std::string>{"msg:{}"});
  CHECK(read_whole("CONTENT-LENGTH:2\r\n\r\n{}") == std::vector<std::string>{"msg:{}"});
  CHECK(read_whole("Content-Length: \t2 \r\n\r\n{}") == std::vector<std::string>{"msg:{}"});
  CHECK(read_whole("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}") ==
        std::vector<std::string>{"msg:{}"});
  CHECK(read_whole("Content-Length: 2\r\nContent-Type: whatever\r\nX-Other: 1\r\n\r\n{}") ==
        std::vector<std::string>{"msg:{}"});
  // The same length twice is harmless; leading zeros are still a number.
  CHECK(read_whole("Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}") == std::vector<std::string>{"msg:{}"});
  CHECK(read_whole("Content-Length: 002\r\n\r\n{}") == std::vector<std::string>{"msg:{}"});
}

TEST_CASE("FrameReader passes bodies through untouched") {
  // Header-like text and invalid UTF-8 inside a body are just body bytes.
  std::string body = "Content-Length: 5\r\n\r\n\xff\xfe";
  body += '\0';
  body += " tail";
  CHECK(read_byte_by_byte(frame(body) + frame("{}")) == std::vector<std::string>{"msg:" + body, "msg:{}"});
}

TEST_CASE("FrameReader reports a header block without Content-Length and reads the next message") {
  auto events = read_whole("Content-Type: text/plain\r\n\r\n" + frame("{}"));
  REQUIRE(events.size() == 2);
  CHECK(is_error(events[0]));
  CHECK_THAT(events[0], Catch::Contains("without Content-Length"));
  CHECK(events[1] == "msg:{}");

  auto empty_block = read_whole("\r\n\r\n" + frame("{}"));
  REQUIRE(empty_block.size() == 2);
  CHECK(is_error(empty_block[0]));
  CHECK(empty_block[1] == "msg:{}");
}

TEST_CASE("FrameReader resyncs after a Content-Length that is not a number") {
  for (std::string bad : {"abc", "", "-5", "12abc", "+3", "1.5", "0x10", "99999999999999999999999"}) {
    INFO("Content-Length: " << bad);
    std::string stream = "Content-Length: " + bad + "\r\n\r\n{\"lost\":true}" + frame("{\"next\":1}");
    auto events = read_whole(stream);
    REQUIRE(events.size() == 2);
    CHECK(is_error(events[0]));
    CHECK(events[1] == "msg:{\"next\":1}");
    CHECK(read_byte_by_byte(stream) == events);
  }
  CHECK_THAT(read_whole("Content-Length: -5\r\n\r\n")[0], Catch::Contains("negative"));
  CHECK_THAT(read_whole("Content-Length: abc\r\n\r\n")[0], Catch::Contains("not a number"));
  CHECK_THAT(read_whole("Content-Length: 99999999999999999999999\r\n\r\n")[0], Catch::Contains("64 bits"));
}

TEST_CASE("FrameReader resyncs after conflicting Content-Length headers") {
  auto events = read_whole("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}" + frame("{\"next\":1}"));
  REQUIRE(events.size() == 2);
  CHECK_THAT(events[0], Catch::Contains("conflicting"));
  CHECK(events[1] == "msg:{\"next\":1}");
}

TEST_CASE("FrameReader skips the body of an oversized message exactly") {
  FrameLimits limits;
  limits.max_body_bytes = 16;
  // The skipped body looks like a frame: skipping by length must not read it.
  std::string body = "Content-Length: 2\r\n\r\n{}" + std::string(10, 'x');
  std::string stream = frame(body) + frame("{\"next\":1}");
  auto events = read_whole(stream, limits);
  REQUIRE(events.size() == 2);
  CHECK_THAT(events[0], Catch::Contains("exceeds") && Catch::Contains("16 bytes"));
  CHECK(events[1] == "msg:{\"next\":1}");
  CHECK(read_byte_by_byte(stream, limits) == events);
  CHECK(read_in_chunks(stream, {7, 3, 40}, limits) == events);

  // The default limit is 256 MiB: room for the didOpen of a 100 MiB log,
  // whose JSON-escaped text is larger than the log.
  CHECK_THAT(read_whole("Content-Length: 268435457\r\n\r\n")[0], Catch::Contains("256 MiB"));
  CHECK(read_whole("Content-Length: 268435456\r\n\r\n").size() == 1);  // at the limit: waits, then truncated at eof
}

TEST_CASE("FrameReader does not buffer the bytes of a body it skips") {
  FrameLimits limits;
  limits.max_body_bytes = 1024;
  FrameReader reader(limits);
  reader.feed("Content-Length: 10000000\r\n\r\n");
  REQUIRE(drain(reader).size() == 1);
  std::string chunk(64 * 1024, 'x');
  for (int i = 0; i < 152; ++i) {  // 9961472 bytes
    reader.feed(chunk);
    CHECK(drain(reader).empty());
    CHECK(reader.buffered_bytes() == 0);
  }
  reader.feed(std::string(10000000 - 152 * chunk.size(), 'x') + frame("{}"));
  CHECK(drain(reader) == std::vector<std::string>{"msg:{}"});
}

TEST_CASE("FrameReader resyncs after a header block longer than the limit") {
  std::string garbage = "X-Junk: " + std::string(9000, 'j');  // no blank line in the first 8 KiB
  std::string stream = garbage + "\r\n\r\n" + frame("{\"next\":1}");
  auto events = read_whole(stream);
  REQUIRE(events.size() == 2);
  CHECK_THAT(events[0], Catch::Contains("longer than 8192 bytes"));
  CHECK(events[1] == "msg:{\"next\":1}");
  CHECK(read_byte_by_byte(stream) == events);

  // A stream that is not LSP at all: the garbage is dropped while waiting,
  // and a message after it is still found.
  FrameLimits small;
  small.max_header_bytes = 32;
  FrameReader reader(small);
  reader.feed(std::string(100000, 'g'));
  CHECK(drain(reader).size() == 1);
  CHECK(reader.buffered_bytes() < 16);
  reader.feed("Content-Len");
  reader.feed("gth: 2\r\n\r\n{}");
  CHECK(drain(reader) == std::vector<std::string>{"msg:{}"});
}

TEST_CASE("FrameReader drops bytes left before a header by a too-small Content-Length") {
  // A client that counted characters, not bytes: "ö" is 2 bytes.
  std::string body = "{\"t\":\"ö\"}";
  std::string stream = "Content-Length: " + std::to_string(body.size() - 1) + "\r\n\r\n" + body +
                       frame("{\"next\":1}") + frame("{\"after\":2}");
  auto events = read_whole(stream);
  REQUIRE(events.size() == 4);
  CHECK(events[0] == "msg:" + body.substr(0, body.size() - 1));
  CHECK_THAT(events[1], Catch::Contains("skipped 1 bytes"));
  CHECK(events[2] == "msg:{\"next\":1}");
  CHECK(events[3] == "msg:{\"after\":2}");
  CHECK(read_byte_by_byte(stream) == events);
}

TEST_CASE("FrameReader reports truncated input at eof") {
  auto truncated_body = read_whole("Content-Length: 10\r\n\r\n{\"a\"");
  REQUIRE(truncated_body.size() == 1);
  CHECK_THAT(truncated_body[0], Catch::StartsWith("eof:") && Catch::Contains("4 of 10"));

  auto truncated_header = read_whole(frame("{}") + "Content-Len");
  REQUIRE(truncated_header.size() == 2);
  CHECK(truncated_header[0] == "msg:{}");
  CHECK_THAT(truncated_header[1], Catch::StartsWith("eof:") && Catch::Contains("header"));

  auto between_header_and_body = read_whole("Content-Length: 2\r\n\r\n");
  REQUIRE(between_header_and_body.size() == 1);
  CHECK_THAT(between_header_and_body[0], Catch::Contains("0 of 2"));

  CHECK(read_whole(frame("{}")) == std::vector<std::string>{"msg:{}"});
}

TEST_CASE("FrameReader starts afresh after at_eof") {
  FrameReader reader;
  reader.feed("Content-Length: 10\r\n\r\n{");
  CHECK(drain(reader).empty());
  CHECK(reader.at_eof());
  CHECK(reader.buffered_bytes() == 0);
  reader.feed(frame("{}"));
  CHECK(drain(reader) == std::vector<std::string>{"msg:{}"});
  CHECK(!reader.at_eof());
}

TEST_CASE("FrameReader errors are short and ASCII") {
  auto events = read_whole("Content-Length: \xff\xfe" + std::string(100, 'z') + "\r\n\r\n");
  REQUIRE(!events.empty());
  CHECK_THAT(events[0], Catch::Contains("\\xff\\xfe") && Catch::Contains("..."));
  CHECK(events[0].size() < 120);
  for (char c : events[0]) CHECK(static_cast<unsigned char>(c) < 0x80);
}

TEST_CASE("FrameReader gives the same events however a messy stream is split") {
  FrameLimits limits;
  limits.max_body_bytes = 64;
  limits.max_header_bytes = 128;
  std::string stream = frame("{\"a\":\"ö😀\"}") + "Content-Type: x\r\n\r\n" + frame("[1]") +
                       "Content-Length: nope\r\n\r\nbody" + frame("2") +
                       frame(std::string(100, 'o')) + frame("3") + std::string(300, '#') + frame("4") +
                       "Content-Length: 3\r\n\r\n{}}junk" + frame("5") + "Content-Length: 3\r\n\r\n{";
  auto expected = read_whole(stream, limits);
  std::vector<std::string> messages;
  for (const auto& e : expected) {
    if (e.starts_with("msg:")) messages.push_back(e);
  }
  CHECK(messages == std::vector<std::string>{"msg:{\"a\":\"ö😀\"}", "msg:[1]", "msg:2", "msg:3", "msg:4",
                                             "msg:{}}", "msg:5"});
  CHECK_THAT(expected.back(), Catch::StartsWith("eof:"));

  CHECK(read_byte_by_byte(stream, limits) == expected);
  std::mt19937 random(12345);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::size_t> sizes;
    for (int k = 0; k < 16; ++k) sizes.push_back(1 + random() % 40);
    INFO("round " << round);
    CHECK(read_in_chunks(stream, sizes, limits) == expected);
  }
}

TEST_CASE("FrameReader resyncs after an absurd Content-Length instead of skipping the session") {
  oomlens::lsp::FrameReader reader;
  reader.feed("Content-Length: 99999999999\r\n\r\n{}");
  reader.feed(oomlens::lsp::frame(R"({"jsonrpc":"2.0","id":1,"method":"shutdown"})"));
  auto first = reader.next();
  REQUIRE(std::holds_alternative<oomlens::lsp::FramingError>(first));
  CHECK_THAT(std::get<oomlens::lsp::FramingError>(first).description, Catch::Contains("absurd"));
  bool got_message = false;
  for (int i = 0; i < 4 && !got_message; ++i) {
    auto e = reader.next();
    if (auto* m = std::get_if<oomlens::lsp::FramedMessage>(&e)) got_message = m->body.find("shutdown") != std::string::npos;
    if (std::holds_alternative<oomlens::lsp::NeedMoreBytes>(e)) break;
  }
  CHECK(got_message);
}

TEST_CASE("FrameReader hands large bodies to a sink, however the bytes arrive") {
  std::string big(300, 'b');
  std::string stream = frame("{}") + frame(big) + frame("[1]") + frame(std::string(100, 'c')) + frame("x");
  std::vector<std::string> expected = {"msg:{}", "sink:" + big, "msg:[1]", "sink:" + std::string(100, 'c'), "msg:x"};
  for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{64}, std::size_t{1000}}) {
    INFO("chunk " << chunk);
    FrameReader reader = sink_reader(100);
    std::vector<std::string> events;
    for (std::size_t i = 0; i < stream.size(); i += chunk) {
      reader.feed(std::string_view(stream).substr(i, chunk));
      for (auto& e : drain_sinks(reader)) events.push_back(std::move(e));
    }
    CHECK(events == expected);
    CHECK(!reader.at_eof());
  }
}

TEST_CASE("FrameReader lets the transport read a sink's body in place") {
  std::string big(1000, 'z');
  big[0] = '{';
  std::string stream = frame(big) + frame("{}");
  FrameReader reader = sink_reader(100);
  std::vector<std::string> events;
  std::size_t direct = 0;
  for (std::size_t i = 0; i < stream.size();) {
    std::span<char> room = reader.direct_space(7);
    std::size_t n;
    if (!room.empty()) {
      CHECK(room.size() <= 7);
      n = std::min(room.size(), stream.size() - i);
      std::copy_n(stream.data() + i, n, room.data());
      reader.commit_direct(n);
      direct += n;
    } else {
      n = std::min<std::size_t>(30, stream.size() - i);
      reader.feed(std::string_view(stream).substr(i, n));
    }
    i += n;
    for (auto& e : drain_sinks(reader)) events.push_back(std::move(e));
  }
  CHECK(events == std::vector<std::string>{"sink:" + big, "msg:{}"});
  CHECK(direct > 900);  // all but what came with the header
  CHECK(reader.direct_space(7).empty());  // between messages: feed()
}

TEST_CASE("FrameReader reports a sink's body cut short at the end of input") {
  FrameReader reader = sink_reader(100);
  reader.feed("Content-Length: 500\r\n\r\n" + std::string(120, 'q'));
  CHECK(drain_sinks(reader).empty());
  auto error = reader.at_eof();
  REQUIRE(error);
  CHECK(error->description == "input ended after 120 of 500 body bytes");
  // The reader starts over, sink factory and all.
  reader.feed(frame(std::string(200, 'r')));
  CHECK(drain_sinks(reader) == std::vector<std::string>{"sink:" + std::string(200, 'r')});
}

TEST_CASE("FrameReader does not keep a large body's room after it") {
  FrameReader reader;
  std::string body(4 << 20, 'w');
  std::string stream = frame(body) + frame("{}");
  for (std::size_t i = 0; i < stream.size(); i += 65536) {
    reader.feed(std::string_view(stream).substr(i, 65536));
    auto events = drain(reader);
    if (!events.empty()) {
      CHECK(events.front().size() == body.size() + 4);
    }
  }
  reader.feed(frame("{}"));
  drain(reader);
  CHECK(reader.buffer_capacity() < (1 << 20));
}
