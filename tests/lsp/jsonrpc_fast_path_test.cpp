// The fast path for large JSON strings (jsonrpc.cpp): unescape_json_string,
// parse_message on bodies with large strings, and IncrementalMessage. The
// reference is always nlohmann's own parser: same values, same errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lsp/jsonrpc.hpp"
#include "lsp/positions.hpp"

using namespace oomlens::lsp;
using nlohmann::json;

namespace {

// nlohmann's verdict on a JSON string's text: its value, or nullopt.
std::optional<std::string> nlohmann_string(std::string_view raw) {
  try {
    std::string text = "\"";
    text.append(raw);
    text.push_back('"');
    json value = json::parse(text);
    return value.get<std::string>();
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// What parse_message must say about a body, by nlohmann's parser alone: the
// parsed value, or the error text parse_message gives (jsonrpc.cpp describe()).
struct Reference {
  std::optional<json> value;
  std::string error;
};

Reference nlohmann_body(std::string_view body) {
  try {
    return {json::parse(body.begin(), body.end()), ""};
  } catch (const json::parse_error& e) {
    std::string text = e.what();
    if (auto tail = text.find("; last read:"); tail != std::string::npos) text.erase(tail);
    if (text.starts_with("[json.exception")) text.erase(0, text.find("] ") + 2);
    return {std::nullopt, text};
  } catch (const json::exception& e) {
    return {std::nullopt, std::string("could not read the message: ") + e.what()};
  }
}

// The message rebuilt as the JSON it came from (params, method, id), for
// comparison with nlohmann's tree.
json as_json(const Message& message) {
  if (const auto* n = std::get_if<Notification>(&message)) {
    json j{{"jsonrpc", "2.0"}, {"method", n->method}};
    if (!n->params.is_null()) j["params"] = n->params;
    return j;
  }
  if (const auto* r = std::get_if<Request>(&message)) {
    json j{{"jsonrpc", "2.0"}, {"id", r->id}, {"method", r->method}};
    if (!r->params.is_null()) j["params"] = r->params;
    return j;
  }
  return nullptr;
}

// parse_message(body) agrees with nlohmann on the same bytes.
void check_same_as_nlohmann(const std::string& body, const Message& message) {
  Reference expected = nlohmann_body(body);
  if (expected.value) {
    if (const auto* invalid = std::get_if<Invalid>(&message)) {
      // JSON, but not a JSON-RPC message: never a parse error.
      CHECK(invalid->code == InvalidRequest);
      return;
    }
    json reference = *expected.value;
    reference.erase("extra");
    CHECK(as_json(message) == reference);
  } else {
    REQUIRE(std::holds_alternative<Invalid>(message));
    const auto& invalid = std::get<Invalid>(message);
    CHECK(invalid.message == expected.error);
    CHECK(invalid.code == (expected.error.starts_with("could not read") ? InternalError : ParseError));
  }
}

// The same body through an IncrementalMessage, committed in pieces of the
// given sizes (cycled).
Message read_incrementally(const std::string& body, const std::vector<std::size_t>& pieces) {
  IncrementalMessage message(body.size());
  std::size_t at = 0;
  for (std::size_t k = 0; at < body.size(); ++k) {
    std::span<char> room = message.space(pieces[k % pieces.size()]);
    REQUIRE(!room.empty());
    std::size_t n = std::min(room.size(), body.size() - at);
    std::copy_n(body.data() + at, n, room.data());
    message.commit(n);
    at += n;
  }
  return message.finish();
}

void check_all_ways(const std::string& body, std::mt19937& random) {
  INFO("body of " << body.size() << " bytes: " << body.substr(0, 120));
  check_same_as_nlohmann(body, parse_message(body));
  std::vector<std::size_t> pieces;
  for (int k = 0; k < 8; ++k) pieces.push_back(1 + random() % 97);
  check_same_as_nlohmann(body, read_incrementally(body, pieces));
  check_same_as_nlohmann(body, read_incrementally(body, {1}));
  check_same_as_nlohmann(body, read_incrementally(body, {body.size()}));
}

std::string notification_with(std::string_view raw_text, std::string_view extra = "") {
  return R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.log",)"
         R"("languageId":"log","version":1,"text":")" +
         std::string(raw_text) + "\"}}" + std::string(extra) + "}";
}

// Random JSON string text, well-formed or not: plain bytes, every escape,
// \u escapes (surrogates paired, unpaired, bad hex), raw control bytes,
// UTF-8 (valid, overlong, truncated, surrogates, out of range), quotes.
std::string random_raw(std::mt19937& random, std::size_t pieces, bool well_formed) {
  static const std::vector<std::string> good = {
      "a", "plain text ", "0123456789", "~", "\x7f", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t",
      "\\r\\n", "\\u0000", "\\u0041", "\\u00e9", "\\u00E9", "\\u20AC", "\\uffff", "\\u001b[31m", "\\uD83D\\uDE00",
      "\\ud83d\\ude00", "\\uDBFF\\uDFFF", "\\u000a", "\\u000D", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
      "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf", "\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88", "\xed\x9f\xbf", "\xc2\x80"};
  static const std::vector<std::string> bad = {
      "\\x", "\\'", "\\u12", "\\u12G4", "\\uD800", "\\uD800a", "\\uD800\\u0041", "\\uD800\\uD800", "\\uDC00",
      "\\uDFFF\\uD800", "\\", "\"", std::string(1, '\0'), "\x01", "\t", "\n", "\r", "\x1f", "\x80", "\xbf",
      "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xf0\x80\x80\x80", "\xf4\x90\x80\x80",
      "\xf5\x80\x80\x80", "\xff", "\xe2\x82", "\xc3", "\xf0\x9f\x98"};
  std::string raw;
  std::size_t bad_at = well_formed ? pieces : random() % pieces;
  for (std::size_t k = 0; k < pieces; ++k) raw += k == bad_at ? bad[random() % bad.size()] : good[random() % good.size()];
  return raw;
}

}  // namespace

TEST_CASE("unescape_json_string reads every JSON escape") {
  CHECK(unescape_json_string("") == std::string());
  CHECK(unescape_json_string("plain") == "plain");
  CHECK(unescape_json_string(R"(\"\\\/\b\f\n\r\t)") == "\"\\/\b\f\n\r\t");
  CHECK(unescape_json_string(R"(\u0041\u00e9\u00E9\u20ac\uFFFF)") == "A\xc3\xa9\xc3\xa9\xe2\x82\xac\xef\xbf\xbf");
  CHECK(unescape_json_string(R"(\u0000)") == std::string(1, '\0'));
  CHECK(unescape_json_string(R"(\u001b[31mred\u001b[0m)") == "\x1b[31mred\x1b[0m");
  // Surrogate pairs, either case.
  CHECK(unescape_json_string(R"(\uD83D\uDE00)") == "\xf0\x9f\x98\x80");
  CHECK(unescape_json_string(R"(\ud83d\ude00)") == "\xf0\x9f\x98\x80");
  CHECK(unescape_json_string(R"(\uD800\uDC00)") == "\xf0\x90\x80\x80");  // U+10000
  CHECK(unescape_json_string(R"(\uDBFF\uDFFF)") == "\xf4\x8f\xbf\xbf");  // U+10FFFF
  // UTF-8 as it is, DEL as it is.
  CHECK(unescape_json_string("\xc3\xb6\xe2\x96\x88\xf0\x9f\x98\x80\x7f") == "\xc3\xb6\xe2\x96\x88\xf0\x9f\x98\x80\x7f");
  // Long runs cross the 16-byte blocks at every offset.
  for (std::size_t n = 0; n < 40; ++n) {
    std::string pad(n, 'x');
    CHECK(unescape_json_string(pad + "\\n" + pad + "\xe2\x82\xac" + pad) == pad + "\n" + pad + "\xe2\x82\xac" + pad);
  }
}

TEST_CASE("unescape_json_string refuses what strict JSON refuses") {
  for (std::string raw : {"\\x", "\\a", "\\U0041", "\\'", "\\0", "\\", "a\\", "\\u", "\\u1", "\\u12", "\\u123",
                          "\\u12G4", "\\uGGGG", "\\u-123"}) {
    INFO(raw);
    CHECK(!unescape_json_string(raw));
  }
  // Surrogates that are not a pair.
  for (std::string raw : {"\\uD800", "\\uD800x", "\\uD800\\n", "\\uD800\\u0041", "\\uD800\\uD800", "\\uDBFF\\uE000",
                          "\\uDC00", "\\uDFFF\\uD800", "\\uD800\\", "\\uD800\\u", "\\uD800\\uDC0"}) {
    INFO(raw);
    CHECK(!unescape_json_string(raw));
  }
  // Raw control characters, each of them.
  for (int c = 0; c < 0x20; ++c) {
    INFO(c);
    CHECK(!unescape_json_string("ab" + std::string(1, static_cast<char>(c)) + "cd"));
    CHECK(!unescape_json_string(std::string(20, 'x') + std::string(1, static_cast<char>(c)) + std::string(20, 'x')));
  }
  // An unescaped quote.
  CHECK(!unescape_json_string("a\"b"));
  // Ill-formed UTF-8: continuation bytes alone, overlong forms, surrogates,
  // beyond U+10FFFF, truncated sequences, bytes never used.
  for (std::string raw : {"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xed\xa0\x80",
                          "\xed\xbf\xbf", "\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
                          "\xf8\x88\x80\x80\x80", "\xfe", "\xff", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xc3\x28",
                          "\xe2\x28\xa1", "\xf0\x28\x8c\xbc"}) {
    INFO(raw.size());
    CHECK(!unescape_json_string(raw));
    CHECK(!unescape_json_string(std::string(17, 'x') + raw + std::string(17, 'x')));
  }
}

TEST_CASE("unescape_json_string agrees with nlohmann on random strings") {
  std::mt19937 random(20261130);
  for (int round = 0; round < 4000; ++round) {
    std::string raw = random_raw(random, 1 + random() % 40, round % 3 != 0);
    INFO("round " << round);
    CHECK(unescape_json_string(raw) == nlohmann_string(raw));
  }
  // Random bytes, mostly not JSON.
  for (int round = 0; round < 4000; ++round) {
    std::string raw;
    for (std::size_t k = random() % 24; k > 0; --k) raw.push_back(static_cast<char>(random() % 256));
    INFO("bytes round " << round);
    CHECK(unescape_json_string(raw) == nlohmann_string(raw));
  }
}

TEST_CASE("runs of one character beyond ASCII read as nlohmann reads them, however they are cut") {
  // The reader validates the first of a run and compares each repeat with
  // the one before it: a repeat that differs in any byte, a run cut off at
  // the end of a piece, and a bad sequence right after a run must all come
  // out as a reader that validates every character says.
  std::mt19937 random(20261203);
  const std::vector<std::string> chars = {"\xc3\xa9", "\xe2\x96\x88", "\xf0\x9f\x98\x80", "\xc2\x80",
                                          "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf"};
  const std::vector<std::string> after = {"",       "x",       "\\n",   "\xe2\x96\x89", "\xe2\x96",
                                          "\xe2",  "\x80",   "\xed\xa0\x80", "\xc0\x80", "\xe2\x96\x88\x88",
                                          "\xf0\x9f\x98", "\xe2\x96\x08", "\xe2\x16\x88"};
  for (const auto& c : chars)
    for (const auto& tail : after)
      for (std::size_t repeats : {1u, 2u, 5u, 33u, 1500u}) {
        std::string raw;
        for (std::size_t k = 0; k < repeats; ++k) raw += c;
        raw += tail;
        const std::string body = notification_with(raw);
        INFO(repeats << " x " << c.size() << "-byte character, then " << tail.size() << " bytes");
        check_all_ways(body, random);
        CHECK(unescape_json_string(raw) == nlohmann_string(raw));
      }
}

TEST_CASE("a large string is one of at least kLargeStringBytes, and reads the same either side") {
  std::mt19937 random(7);
  for (std::size_t length : {kLargeStringBytes - 2, kLargeStringBytes - 1, kLargeStringBytes, kLargeStringBytes + 1}) {
    INFO("length " << length);
    std::string raw(length, 'y');
    check_all_ways(notification_with(raw), random);
    // An escape across the threshold, at each position around it.
    for (std::size_t at = length > 14 ? length - 14 : 0; at + 12 <= length; ++at) {
      std::string with = raw;
      with.replace(at, 12, "\\uD83D\\uDE00");
      check_same_as_nlohmann(notification_with(with), parse_message(notification_with(with)));
      with = raw;
      with.replace(at, 2, "\\n");
      check_same_as_nlohmann(notification_with(with), parse_message(notification_with(with)));
    }
  }
}

TEST_CASE("parse_message reads bodies with large strings as nlohmann does") {
  std::mt19937 random(42);
  std::string big = random_raw(random, 2000, true);
  REQUIRE(big.size() > kLargeStringBytes);
  // One, several, nested, in arrays, next to small ones.
  check_all_ways(notification_with(big), random);
  check_all_ways(R"({"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"x","arguments":[")" +
                     big + R"(","small",")" + big + R"(",{"deep":[")" + big + R"("]}]}})",
                 random);
  // A string that reads as the placeholder, next to a large one; a large key.
  check_all_ways(notification_with(big, R"(,"extra":"\u0000oomlens:large-string\u0000")"), random);
  check_all_ways(R"({"jsonrpc":"2.0","method":"m","params":{"\u0000oomlens:large-string\u0000":")" + big + R"("}})",
                 random);
  check_all_ways(R"({"jsonrpc":"2.0","method":"m","params":{")" + big + R"(":1}})", random);
  for (const std::string& body :
       {R"({"jsonrpc":"2.0","method":"m","params":{"a":"\u0000oomlens:large-string\u0000","b":")" + big + R"("}})",
        R"({"jsonrpc":"2.0","method":"m","params":{"b":")" + big + R"(","a":"\u0000oomlens:\u006carge-string\u0000"}})"}) {
    check_all_ways(body, random);
    // Read by nlohmann, not by the fast path: no line starts come with it.
    CHECK(std::get<Notification>(read_incrementally(body, {512})).string_lines.empty());
  }
  CHECK(std::get<Notification>(read_incrementally(notification_with(big), {512})).string_lines.size() == 1);
  // Large strings where the message's own fields are.
  check_all_ways(R"({"jsonrpc":"2.0","method":")" + big + R"("})", random);
  check_all_ways(R"({"jsonrpc":"2.0","id":")" + big + R"(","method":"m"})", random);
  check_all_ways(R"({"jsonrpc":")" + big + R"(","method":"m"})", random);
  check_all_ways(R"([")" + big + R"("])", random);
  check_all_ways(R"(")" + big + R"(")", random);
}

TEST_CASE("parse_message refuses bad large strings with nlohmann's error") {
  std::mt19937 random(99);
  for (int round = 0; round < 300; ++round) {
    INFO("round " << round);
    std::string raw = random_raw(random, 600 + random() % 1200, false);
    check_all_ways(notification_with(raw), random);
  }
  std::string big(kLargeStringBytes * 3, 'x');
  // Syntax errors after, before and around a large string keep their line
  // and column.
  check_all_ways(notification_with(big, ","), random);
  check_all_ways(notification_with(big, "}"), random);
  check_all_ways(R"({"jsonrpc":"2.0","method":"m","params":{"a":[1,2,],"t":")" + big + R"("}})", random);
  check_all_ways("{\n\"jsonrpc\":\"2.0\",\n\"method\":\"m\",\n\"params\":[\"" + big + "\",\n\"" + big + "\" \"x\"]}", random);
  check_all_ways(notification_with(big, R"(,"n":1e99999)"), random);  // a number overflow
  // Cut off: inside the large string, inside an escape, after it.
  std::string body = notification_with(big + "\\u00e9" + big);
  for (std::size_t cut : {std::size_t{120}, body.size() / 2, body.find("\\u00e9") + 3, body.size() - 3, body.size() - 1}) {
    check_all_ways(body.substr(0, cut), random);
  }
  // Invalid UTF-8 in a large string, and a raw line end.
  check_all_ways(notification_with(big + "\xff" + big), random);
  check_all_ways(notification_with(big + "\n" + big), random);
  check_all_ways(notification_with(big + "\xed\xa0\x80"), random);
  check_all_ways(notification_with(big + "\\uD800\\u0041"), random);
}

TEST_CASE("parse_message agrees with nlohmann on random bodies with large strings") {
  std::mt19937 random(2026);
  for (int round = 0; round < 60; ++round) {
    INFO("round " << round);
    std::string a = random_raw(random, 1 + random() % 900, round % 4 != 0);
    std::string b = random_raw(random, 1 + random() % 900, round % 5 != 0);
    // Every few rounds the body is large enough for parse_message's fast path too.
    std::string pad = round % 6 == 0 ? std::string(kFastPathBodyBytes, 'p') : "";
    std::string body = R"({"jsonrpc":"2.0","id":)" + std::to_string(round) + R"(,"method":"m","params":{"a":")" + a +
                       R"(","list":[")" + b + R"(",1,null,")" + a + R"("],"pad":")" + pad + R"("}})";
    check_all_ways(body, random);
  }
}

TEST_CASE("the fast path hands over a large string's line starts") {
  std::string raw = "first\\r\\nsecond\\rthird\\n\\nfourth\\u000d\\u000afifth\\u000dsixth\\r";
  while (raw.size() < 3 * kLargeStringBytes) raw += "a line of a log\\n\\rprogress 10%\\rprogress 20%\\r\\n";
  std::string long_raw;
  while (long_raw.size() < kFastPathBodyBytes) long_raw += raw;
  for (const std::string& body : {notification_with(raw), notification_with("\\n" + raw + "\\r\\n"),
                                  notification_with(std::string(kLargeStringBytes, 'x') + "\\n\\n"),
                                  notification_with(long_raw)}) {
    // parse_message takes the fast path only for a large enough body.
    Message message = body.size() >= kFastPathBodyBytes ? parse_message(body) : read_incrementally(body, {1000});
    auto& n = std::get<Notification>(message);
    REQUIRE(n.string_lines.size() == 1);
    const std::string& text = n.params["textDocument"]["text"].get_ref<const std::string&>();
    CHECK(n.string_lines[0].data == text.data());
    CHECK(n.string_lines[0].size == text.size());
    LineIndex scanned(text);
    LineIndex given(text, n.string_lines[0].starts);
    REQUIRE(given.line_count() == scanned.line_count());
    for (std::size_t line = 0; line < scanned.line_count(); ++line) CHECK(given.line_start(line) == scanned.line_start(line));
    for (std::uint64_t line = 0; line <= scanned.line_count() + 1; ++line)
      CHECK(given.newline_line_start(line) == scanned.newline_line_start(line));
  }
}

TEST_CASE("LineStartsBuilder finds what LineIndex finds") {
  std::mt19937 random(5);
  const std::string alphabet = "ab\r\n";
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    for (std::size_t k = random() % 30; k > 0; --k) text.push_back(alphabet[random() % alphabet.size()]);
    LineStartsBuilder builder;
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n' || text[i] == '\r') builder.line_end(text[i], i);
    LineIndex given(text, std::move(builder).finish());
    LineIndex scanned(text);
    INFO("round " << round);
    REQUIRE(given.line_count() == scanned.line_count());
    for (std::size_t line = 0; line < scanned.line_count(); ++line) CHECK(given.line_start(line) == scanned.line_start(line));
    for (std::uint64_t line = 0; line <= scanned.line_count() + 1; ++line)
      CHECK(given.newline_line_start(line) == scanned.newline_line_start(line));
    for (std::size_t offset = 0; offset <= text.size(); ++offset)
      CHECK(given.newline_line_of(offset) == scanned.newline_line_of(offset));
  }
}

TEST_CASE("an IncrementalMessage never needs more room than a window") {
  std::string raw;
  while (raw.size() < (3u << 20)) raw += "step 1 | loss 2.5\\r\\n\\u001b[32m\xe2\x96\x88\xe2\x96\x88\\uD83D\\uDE00";
  std::string body = notification_with(raw);
  IncrementalMessage message(body.size());
  std::size_t at = 0;
  while (at < body.size()) {
    std::span<char> room = message.space(std::size_t{1} << 30);
    REQUIRE(!room.empty());
    CHECK(room.size() <= (std::size_t{1} << 20));
    std::size_t n = std::min(room.size(), body.size() - at);
    std::copy_n(body.data() + at, n, room.data());
    message.commit(n);
    at += n;
  }
  Message parsed = message.finish();
  check_same_as_nlohmann(body, parsed);
  CHECK(std::get<Notification>(parsed).string_lines.size() == 1);
}

TEST_CASE("serialize writes the compact JSON text") {
  // The writer itself is tested against nlohmann in tests/report/json_text_test.cpp.
  const json message = make_notification("window/logMessage", json{{"type", 3}, {"message", "a \"quoted\"\nline"}});
  CHECK(serialize(message) == message.dump(-1, ' ', false, json::error_handler_t::replace));
}

TEST_CASE("parse_message takes the fast path from kFastPathBodyBytes on") {
  std::string small = notification_with(std::string(kFastPathBodyBytes - 500, 's'));
  std::string large = notification_with(std::string(kFastPathBodyBytes, 'l'));
  REQUIRE(small.size() < kFastPathBodyBytes);
  auto read_small = std::get<Notification>(parse_message(small));
  auto read_large = std::get<Notification>(parse_message(large));
  CHECK(read_small.string_lines.empty());  // nlohmann read it all
  CHECK(read_large.string_lines.size() == 1);
  CHECK(read_small.params["textDocument"]["text"] == std::string(kFastPathBodyBytes - 500, 's'));
  CHECK(read_large.params["textDocument"]["text"] == std::string(kFastPathBodyBytes, 'l'));
  // And the same errors on either side.
  std::mt19937 random(3);
  check_all_ways(notification_with(std::string(kFastPathBodyBytes, 'e') + "\\q"), random);
  check_all_ways(notification_with(std::string(kFastPathBodyBytes, 'e') + "\x01"), random);
  check_all_ways(notification_with(std::string(kFastPathBodyBytes, 'e'), ",,"), random);
}
