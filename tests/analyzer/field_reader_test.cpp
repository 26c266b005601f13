// The hand-written field readers against the patterns they replace: on every
// string of a small alphabet that holds the keys, cut and joined in every
// way, each must give what RE2's unanchored search captures (or nothing
// when it does not match).
#include <catch2/catch.hpp>

#include <re2/re2.h>

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"

using namespace oomlens::analyzer;

namespace {

std::optional<std::string> by_pattern(std::string_view text, const RE2& re) {
  re2::StringPiece capture;
  if (!RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), re, &capture)) return std::nullopt;
  return std::string(capture.data(), capture.size());
}

std::optional<std::string> owned(std::optional<std::string_view> v) {
  return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

// Strings made of pieces that meet the readers' edge cases: keys, digits
// (runs up to past 19), words, spaces, punctuation, and the keys cut short.
std::vector<std::string> samples(const std::vector<std::string>& pieces, std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> length(0, 9), pick(0, pieces.size() - 1);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) {
    std::string s;
    for (std::size_t n = length(rng); n > 0; --n) s += pieces[pick(rng)];
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("DeepSpeed's flush count is read as its pattern reads it") {
  static const RE2 pattern(R"(\b(\d{1,19}) (?:\w+ )?allocator cache flushes since last step)", RE2::Latin1);
  const std::vector<std::string> pieces = {
      "allocator cache flushes since last step", "allocator cache flushes since last", " ", "  ", "4", "12",
      " 4 allocator cache flushes since last step", "3 pytorch allocator cache flushes since last step",
      "1234567890", "12345678901234567890", "pytorch", "x", "_", "-", ".", "[", ":", "\t", "é"};
  std::size_t matched = 0;
  for (const std::string& s : samples(pieces, 200000, 7)) {
    const auto want = by_pattern(s, pattern);
    INFO(s);
    REQUIRE(owned(parse::cache_flush_count(s)) == want);
    matched += want.has_value();
  }
  CHECK(matched > 1000);  // the alphabet reaches the matching cases, not only the misses
  CHECK(parse::cache_flush_count("[stage3.py:1850:step] 4 pytorch allocator cache flushes since last step. this") ==
        std::optional<std::string_view>("4"));
}

TEST_CASE("A field's value is read as key(\\w+) or key(\\d+)then reads it") {
  struct Field {
    std::string key;
    bool (*value)(char);
    std::string then;
    std::string pattern;
  };
  const std::vector<Field> fields = {
      {"OpType=", parse::is_word_byte, "", R"(OpType=(\w+))"},
      {"SeqNum=", parse::is_digit_byte, "", R"(SeqNum=(\d+))"},
      {"Timeout(ms)=", parse::is_digit_byte, "", R"(Timeout\(ms\)=(\d+))"},
      {"ran for ", parse::is_digit_byte, " milliseconds", R"(ran for (\d+) milliseconds)"},
  };
  for (const Field& f : fields) {
    const RE2 pattern(f.pattern, RE2::Latin1);
    REQUIRE(pattern.ok());
    const std::vector<std::string> pieces = {f.key,  f.key.substr(0, f.key.size() - 1), f.then, " milli", "7",
                                             "600000", "ALLREDUCE", "_", ",", " ", "(", "=", "é",
                                             f.key + "12" + f.then, f.key + "AB" + f.then};
    std::size_t matched = 0;
    for (const std::string& s : samples(pieces, 100000, 11)) {
      const auto want = by_pattern(s, pattern);
      INFO(f.pattern << " on " << s);
      REQUIRE(owned(parse::value_after(s, f.key, f.value, f.then)) == want);
      matched += want.has_value();
    }
    CHECK(matched > 1000);
  }
}

TEST_CASE("A glog/TSL line prefix is stripped where its pattern, alone, would strip it") {
  // strip_log_prefix rules most lines out without its pattern (the prefix ends
  // at the first ']' after a source file and line): the same lines, the same
  // rest and the same file as the pattern by itself.
  static const RE2 pattern(R"(^[^\]]{0,48}?\b[IWEF](?:\d{4}\s+[0-9:.]+\s+\d+)?\s+([\w./-]+\.(?:cc|h|cpp)):\d+\]\s?)",
                           RE2::Latin1);
  const std::vector<std::string> pieces = {
      "I", "W0301", "E", "F", " ", "  ", "12:00:00.123456", "4242", "bfc_allocator", "tensorflow/core/", ".cc",
      ".h", ".cpp", ".c", ":", "1036", "]", "] ", "[rank0]", "x", "-", "\t", "I bfc.cc:12]",
      "W0301 12:00:00.1 7 a.h:3] "};
  std::size_t stripped = 0;
  for (const std::string& s : samples(pieces, 200000, 13)) {
    re2::StringPiece rest(s), source;
    const bool want = RE2::Consume(&rest, pattern, &source);
    std::string_view text = s, file;
    INFO(s);
    REQUIRE(parse::strip_log_prefix(text, &file) == want);
    if (!want) {
      CHECK(text == s);
      continue;
    }
    CHECK(text == std::string_view(rest.data(), rest.size()));
    CHECK(file == std::string_view(source.data(), source.size()));
    ++stripped;
  }
  CHECK(stripped > 1000);
}

TEST_CASE("A pattern tried at each place of its first word captures what its unanchored search does") {
  // The allocator message's figures, each as its first word anchors it, and
  // the words of each as a message prints them.
  struct Figure {
    std::string literal, before, after, said_before, said_after;
  };
  const std::vector<Figure> figures = {
      {"Tried", R"(Tried\s*to\s*allocate\s*)", "", "Tried to allocate ", ""},
      {"total", R"(total\s*capaci?ty\s*of\s*)", "", "total capacty of", ""},
      {"of", R"(of\s*which\s*)", R"(\s*is\s*free)", "of which ", " is free"},
      {"with", R"(with\s*)", R"(\s*allocated\s*in\s*private\s*pools)", "with ", " allocated in private pools"},
      {"this", R"(this\s*process\s*has\s*)", R"(\s*memory\s*in\s*use)", "this process has", "memory in use"},
  };
  for (const Figure& f : figures) {
    const RE2 unanchored(parse::sized(f.before, f.after));
    const RE2 anchored(parse::sized("^" + f.before, f.after));
    REQUIRE(unanchored.ok());
    REQUIRE(anchored.ok());
    // The words whole, cut short and with a size or something else after
    // them: a first place of the word often fails and a later one matches.
    const std::vector<std::string> pieces = {
        f.literal, f.literal.substr(0, f.literal.size() - 1), f.said_before, f.said_before + "x", f.said_after,
        f.said_before + "2.00 GiB" + f.said_after, f.said_before + "512 bytes", f.said_before + "1.5",
        "7" + f.said_after, " ", "2.00 GiB", "MiB", ".", "x"};
    std::size_t matched = 0;
    for (const std::string& s : samples(pieces, 60000, 13)) {
      const auto want = by_pattern(s, unanchored);
      re2::StringPiece capture;
      std::optional<std::string> got;
      if (parse::match_at_literal(s, f.literal, anchored, &capture)) got = std::string(capture.data(), capture.size());
      INFO(f.before << " on " << s);
      REQUIRE(got == want);
      matched += want.has_value();
    }
    CHECK(matched > 1000);
  }
}

TEST_CASE("A C10 suffix line is recognised as its pattern recognises it") {
  static const RE2 pattern(
      R"(^\s*(?:Search for `\w+' in https?://|(?:CUDA|HIP) kernel errors might be asynchronously reported)"
      R"(|For debugging consider passing (?:CUDA_LAUNCH_BLOCKING|AMD_SERIALIZE_KERNEL)=)"
      R"(|Compile with `TORCH_USE_(?:CUDA|HIP)_DSA`))",
      RE2::Latin1);
  REQUIRE(pattern.ok());
  const std::vector<std::string> pieces = {
      " ", "\t", "\r", "\f", "\v", "Search for `", "Search for ", "cudaErrorIllegalAddress", "_", "é", "'", "' in ",
      "' in http://", "' in https://", "' in http:/", "CUDA kernel errors might be asynchronously reported",
      "HIP kernel errors might be asynchronously", "For debugging consider passing CUDA_LAUNCH_BLOCKING=",
      "For debugging consider passing AMD_SERIALIZE_KERNEL", "Compile with `TORCH_USE_HIP_DSA`",
      "Compile with `TORCH_USE_CUDA_DSA", "x", "S", "C"};
  std::size_t matched = 0;
  for (const std::string& s : samples(pieces, 200000, 17)) {
    const bool want = RE2::PartialMatch(re2::StringPiece(s.data(), std::min<std::size_t>(s.size(), parse::kHeadBytes)),
                                        pattern);
    INFO(s);
    REQUIRE(parse::is_c10_suffix(s) == want);
    matched += want;
  }
  CHECK(matched > 1000);
  // Only the line's head is read: spaces past it leave nothing to match.
  CHECK(!parse::is_c10_suffix(std::string(parse::kHeadBytes, ' ') + "CUDA kernel errors might be asynchronously reported"));
  CHECK(parse::is_c10_suffix("  Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/"));
}
