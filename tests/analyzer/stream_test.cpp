#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "analyzer/log/stream.hpp"

using namespace oomlens::analyzer;

namespace {

struct Collected {
  std::vector<Region> regions;
  std::uint64_t lines = 0;
};

// The stream's mechanics, with literals of its own: which literals the
// parsers need, and their gates, are tested with the parsers.
const LiteralScanner& test_scanner() {
  static const LiteralScanner scanner({"memory", "killed", "oom when"});
  return scanner;
}

Collected stream_all(std::string_view text, std::size_t piece, StreamLimits limits = {}) {
  const LiteralScanner& scanner = test_scanner();
  Collected c;
  LogStream stream(scanner, [&](Region&& r) { c.regions.push_back(std::move(r)); return false; }, limits);
  for (std::size_t i = 0; i < text.size(); i += piece) stream.feed(text.substr(i, piece));
  stream.finish();
  c.lines = stream.lines_seen();
  return c;
}

std::vector<std::pair<std::uint64_t, std::string>> anchor_lines(const Collected& c) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (const auto& r : c.regions)
    for (auto i : r.anchors) out.emplace_back(r.lines[i].number, r.lines[i].text);
  return out;
}

std::string filler(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "step " + std::to_string(i) + " loss 0.25 lr 3e-4\n";
  return s;
}

}  // namespace

TEST_CASE("anchors come with their '\\n' line numbers and cleaned text") {
  std::string log = filler(10) + "[rank1]:\x1b[31mCUDA out of memory\x1b[0m. Tried\n" + filler(5);
  auto c = stream_all(log, 1 << 20);
  auto anchors = anchor_lines(c);
  REQUIRE(anchors.size() == 1);
  CHECK(anchors[0].first == 11);
  CHECK(anchors[0].second == "CUDA out of memory. Tried");
  CHECK(c.lines == 16);
  REQUIRE(c.regions.size() == 1);
  CHECK(c.regions[0].lines.front().number == 1);  // lookback reaches the start
  CHECK(c.regions[0].lines[10].rank == 1);
}

TEST_CASE("the result does not depend on how the input is cut") {
  std::string log = filler(300);
  log += "progress 10%\rprogress 50%\rTraceback (most recent call last):\n";
  log += "  File \"/home/u/train.py\", line 3, in <module>\n    main()\n";
  log += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\r\n";
  log += filler(400) + "Killed\n" + filler(50) + "no newline at the end: memory";
  auto whole = anchor_lines(stream_all(log, log.size()));
  REQUIRE(whole.size() == 3);
  CHECK(whole[0].first == 304);
  CHECK(whole[0].second == "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.");
  CHECK(whole[1].second == "Killed");
  CHECK(whole[2].second == "no newline at the end: memory");
  for (std::size_t piece : {1u, 2u, 3u, 7u, 64u, 1000u, 4096u}) {
    INFO("piece " << piece);
    CHECK(anchor_lines(stream_all(log, piece)) == whole);
  }
}

TEST_CASE("'\\r' redraws become separate lines with the same number") {
  std::string log = "a\n10%|#   |\r50%|##  |\rtorch.OutOfMemoryError: CUDA out of memory.\nb\n";
  auto c = stream_all(log, 5);
  REQUIRE(c.regions.size() == 1);
  const auto& lines = c.regions[0].lines;
  REQUIRE(lines.size() == 5);
  CHECK(lines[1].number == 2);
  CHECK(lines[3].number == 2);
  CHECK(lines[3].text == "torch.OutOfMemoryError: CUDA out of memory.");
  CHECK(c.regions[0].anchors == std::vector<std::size_t>{3});
}

TEST_CASE("a huge line keeps a window around its anchor, memory stays bounded") {
  std::string big(20 * 1024 * 1024, 'x');
  big.replace(15 * 1024 * 1024, 18, " out of memory yes");
  std::string log = "start\n" + big + "\nend\n";
  StreamLimits limits;
  auto c = stream_all(log, 1 << 20, limits);
  auto anchors = anchor_lines(c);
  REQUIRE(anchors.size() == 1);
  CHECK(anchors[0].first == 2);
  CHECK(anchors[0].second.find("out of memory yes") != std::string::npos);
  CHECK(anchors[0].second.size() <= limits.max_line_bytes + 64);
  CHECK(c.lines == 3);
}

TEST_CASE("an anchor split by a hard cut in a line without newlines is found once") {
  StreamLimits limits;
  limits.max_unbroken_bytes = 4096;
  for (std::size_t at : {4090u, 4093u, 4096u, 4100u}) {
    std::string log(10000, 'y');
    log.replace(at, 6, "MEMORY");
    auto anchors = anchor_lines(stream_all(log, 1000, limits));
    INFO("at " << at);
    CHECK(anchors.size() == 1);
  }
}

TEST_CASE("many anchors close together share a region; each anchor is in one region, in order") {
  std::string log;
  for (int i = 0; i < 50; ++i) log += "memory pressure " + std::to_string(i) + "\n" + filler(3);
  log += filler(1000);
  for (int i = 0; i < 3; ++i) log += "Killed\n" + filler(600);
  auto c = stream_all(log, 777);
  auto anchors = anchor_lines(c);
  CHECK(anchors.size() == 53);
  CHECK(c.regions.size() == 4);  // the 50 close ones share one
  for (std::size_t i = 1; i < anchors.size(); ++i) CHECK(anchors[i].first > anchors[i - 1].first);
}

TEST_CASE("a region reads only as far as its anchors' parsers need") {
  StreamLimits limits;
  limits.anchors = {AnchorPolicy{nullptr, {false, 3}}, AnchorPolicy{nullptr, {false, 3}}, AnchorPolicy{nullptr, {true, 3}}};
  std::string log = filler(50) + "memory one\n" + filler(20) + "memory two\n" + filler(20);
  auto c = stream_all(log, 1 << 20, limits);
  REQUIRE(c.regions.size() == 2);
  CHECK(c.regions[0].lines.size() <= 4 + 1 + 3 + 1);
  CHECK(c.regions[1].lines.size() <= 4 + 1 + 3 + 1);
  CHECK(c.regions[1].lines[c.regions[1].anchors[0]].number == 72);
}

TEST_CASE("a gate drops hits on the raw text, and escapes bypass it") {
  StreamLimits limits;
  auto only_errors = [](std::string_view piece, std::size_t) { return piece.find("Error") != std::string_view::npos; };
  limits.anchors = {AnchorPolicy{only_errors, {true, 8}}};
  std::string log = filler(5) + "memory is fine\n" + filler(5) + "MemoryError: x\rprogress memory 5%\n" +
                    "\x1b[1mmemory\x1b[0m is bold\n" + filler(5);
  auto anchors = anchor_lines(stream_all(log, 13, limits));
  REQUIRE(anchors.size() == 2);
  CHECK(anchors[0].first == 12);  // only the '\r' piece holding "Error", not the bar after it
  CHECK(anchors[0].second == "MemoryError: x");
  CHECK(anchors[1].first == 13);
}

TEST_CASE("a deep anchor reads the traceback above it even when another region just ended there") {
  StreamLimits limits;
  limits.anchors = {AnchorPolicy{nullptr, {false, 2}}, AnchorPolicy{nullptr, {false, 2}}, AnchorPolicy{nullptr, {true, 2}}};
  std::string log = filler(3) + "memory warning\n" + filler(6) + "oom when allocating\n";
  auto c = stream_all(log, 1 << 20, limits);
  REQUIRE(c.regions.size() == 2);
  CHECK(c.regions[1].lines.front().number == 1);  // lookback reaches the start again
  CHECK(c.regions[1].lines[c.regions[1].anchors[0]].number == 11);
}

TEST_CASE("random logs: cutting never changes what is found") {
  std::mt19937 rng(7);
  const char* words[] = {"memory", "x", "\r", "\n", "Killed", "abc ", "\x1b[31m", "[rank2]: ", "oom when", "\n\n"};
  for (int round = 0; round < 30; ++round) {
    std::string log;
    int n = static_cast<int>(rng() % 400);
    for (int i = 0; i < n; ++i) log += words[rng() % 10];
    auto whole = anchor_lines(stream_all(log, log.size() + 1));
    for (std::size_t piece : {1u, 5u, 33u}) CHECK(anchor_lines(stream_all(log, piece)) == whole);
  }
}

TEST_CASE("reading a contiguous input in place finds the same and releases what is behind") {
  std::string log;
  for (int i = 0; i < 40; ++i) log += filler(20000) + "torch.OutOfMemoryError: CUDA out of memory. #" + std::to_string(i) + "\n";
  auto expected = anchor_lines(stream_all(log, 1 << 20));
  REQUIRE(expected.size() == 40);

  const LiteralScanner& scanner = test_scanner();
  Collected c;
  std::uint64_t released_until = 0;
  bool ordered = true;
  LogStream stream(scanner, [&](Region&& r) { c.regions.push_back(std::move(r)); return false; });
  stream.feed_contiguous(log, [&](std::uint64_t offset, std::uint64_t length) {
    ordered = ordered && offset == released_until;
    released_until = offset + length;
  });
  stream.finish();
  CHECK(anchor_lines(c) == expected);
  CHECK(ordered);
  CHECK(released_until > log.size() / 2);  // memory behind the reader was given back
  CHECK(released_until <= log.size());
  CHECK(stream.lines_seen() == 40 * 20001);
}

TEST_CASE("a hit whose reach states no OOM adds no literal bit to its line") {
  StreamLimits limits;
  // "memory" is literal 0, "killed" literal 1: a reach may say that one form
  // of a literal never states an OOM (here: the lines naming a cgroup).
  auto refine = [](std::string_view piece, std::size_t) {
    return Reach{false, 1, piece.find("cgroup") == std::string_view::npos};
  };
  limits.anchors = {AnchorPolicy{nullptr, {false, 1}, refine}, AnchorPolicy{nullptr, {false, 1}}};
  std::string log = filler(5) + "memory cgroup limit reached\n" + filler(5) + "CUDA out of memory\n" + filler(5) +
                    "memory cgroup: task killed\n" + filler(5);
  auto c = stream_all(log, 1 << 20, limits);
  std::vector<std::uint64_t> masks;
  for (const auto& r : c.regions) masks.insert(masks.end(), r.anchor_literals.begin(), r.anchor_literals.end());
  CHECK(masks == std::vector<std::uint64_t>{0, 1, 2});  // the last line keeps "killed"'s bit
}

// The full look back, offered only when a region says it reaches further,
// starts where a stream whose first look back is the full one starts: for
// anchors under fewer lines than the first look back reads, as many, more,
// more than the full one reads, and under lines so long that bytes bound it.
TEST_CASE("a region reaches further back exactly when the full look back starts earlier") {
  const std::string wide_line = std::string(500, 'x') + "\n";
  for (const bool wide : {false, true}) {
    for (const int above : {0, 10, 62, 63, 64, 65, 66, 300, 530, 1499, 1500, 1501, 1502, 3000}) {
      CAPTURE(wide, above);
      std::string log;
      for (int i = 0; i < above; ++i) log += wide ? wide_line : "step " + std::to_string(i) + " loss 0.25\n";
      log += "oom when allocating\n" + filler(3);
      StreamLimits limits;
      limits.anchors = {AnchorPolicy{}, AnchorPolicy{}, AnchorPolicy{nullptr, {true, 2}}};

      std::vector<std::uint64_t> offered;  // each region's first line
      bool further = false;
      LogStream stream(test_scanner(), [&](Region&& r) {
        offered.push_back(r.lines.front().number);
        if (offered.size() == 1) further = r.can_look_further_back;
        return r.can_look_further_back;
      }, limits);
      stream.feed(log);
      stream.finish();

      StreamLimits full = limits;
      full.first_lookback_lines = limits.lookback_lines;
      full.first_lookback_bytes = limits.lookback_bytes;
      const Collected oracle = stream_all(log, 1 << 20, full);
      REQUIRE(oracle.regions.size() == 1);
      const std::uint64_t full_start = oracle.regions[0].lines.front().number;

      REQUIRE_FALSE(offered.empty());
      CHECK(further == (full_start < offered.front()));
      CHECK(offered.size() == (further ? 2u : 1u));
      CHECK(offered.back() == full_start);
    }
  }
}
