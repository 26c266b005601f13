// The JSON writer against nlohmann's dump, on random values that hold every
// kind of string trouble (escapes, control bytes, UTF-8 of every length,
// bytes that are not UTF-8) at every nesting.
#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "report/json_text.hpp"

using namespace oomlens::report;
using nlohmann::json;

namespace {

struct RandomJson {
  std::mt19937 random{11};
  std::string random_string() {
    std::string s;
    static const std::vector<std::string> parts = {"a", "plain words ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t",
                                                   std::string(1, '\0'), "\x01", "\x1f", "\x7f", "\xc3\xb6",
                                                   "\xe2\x96\x88", "\xf0\x9f\x98\x80", "\xff", "\xc3", "\xed\xa0\x80",
                                                   "\xe2\x82", std::string(40, 'x')};
    for (std::size_t k = random() % 12; k > 0; --k) s += parts[random() % parts.size()];
    return s;
  }
  json random_value(int depth) {
    switch (depth > 3 ? random() % 6 : random() % 8) {
      case 0: return nullptr;
      case 1: return random() % 2 == 0;
      case 2: return static_cast<std::int64_t>(random()) - (1ll << 31);
      case 3: return static_cast<std::uint64_t>(random()) << 32 | random();
      case 4: return (static_cast<double>(random()) - 1e9) / 7.0;
      case 5: return random_string();
      case 6: {
        json a = json::array();
        for (std::size_t k = random() % 5; k > 0; --k) a.push_back(random_value(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (std::size_t k = random() % 5; k > 0; --k) o[random_string()] = random_value(depth + 1);
        return o;
      }
    }
  }
};

}  // namespace

TEST_CASE("json_text writes what nlohmann's dump writes, compact and indented") {
  RandomJson random;
  for (int round = 0; round < 3000; ++round) {
    json value = random.random_value(0);
    INFO("round " << round);
    for (int indent : {-1, 0, 2, 4})
      CHECK(json_text(value, indent) == value.dump(indent, ' ', false, json::error_handler_t::replace));
  }
  for (const json& value : {json(1.0), json(-0.0), json(1e300), json(0.1), json(std::int64_t{INT64_MIN}),
                     json(std::uint64_t{UINT64_MAX}), json::array(), json::object(), json(""), json::binary({1, 2}),
                     json{{"nested", json::array({json::binary({3}), 0.5})}}}) {
    for (int indent : {-1, 2})
      CHECK(json_text(value, indent) == value.dump(indent, ' ', false, json::error_handler_t::replace));
  }
  // Appending keeps what the string held.
  std::string out = "x";
  append_json_text(json{{"k", json::array()}}, out, 2);
  CHECK(out == "x{\n  \"k\": []\n}");
}


TEST_CASE("write_json_text streams what json_text writes, also across its blocks") {
  // Values of a few hundred KiB, so that the text goes out in several
  // blocks, with strings that are not UTF-8 (written again whole, by
  // nlohmann) wherever a block ends.
  RandomJson random;
  for (int round = 0; round < 4; ++round) {
    json value = json::array();
    for (std::size_t size = 0; size < (300u << 10);) {
      value.push_back(random.random_value(0));
      size += json_text(value.back()).size();
    }
    for (int indent : {-1, 2}) {
      std::ostringstream streamed;
      write_json_text(streamed, value, indent);
      CHECK(streamed.str() == json_text(value, indent));
    }
  }
  std::ostringstream small;
  write_json_text(small, json{{"k", json::array()}}, 2);
  CHECK(small.str() == "{\n  \"k\": []\n}");
}
