#include "analyzer/log/scan.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/log/parse/parser.hpp"

using oomlens::analyzer::count_newlines;
using oomlens::analyzer::LiteralScanner;
using oomlens::analyzer::ScanHit;
using oomlens::analyzer::detail::path_supported;
using oomlens::analyzer::detail::ScanPath;

namespace {

// The anchor set the diagnose command scans for.
const std::vector<std::string> kAnchors = {
    "memory",      "xhausted",          "status_alloc_failed",  "oom when",   "oom-kill",
    "oom_kill",    "oomkill",           "killed",               "signal",     "watchdog",
    "childfailederror", "exitcode",     "device-side assert",   "_alloc_conf",
    "xla_python_client", "unhandled cuda error", "cache flush"};

// Every implementation this machine runs; `best` is one of them but goes
// through the dispatch, so it is tested too.
std::vector<ScanPath> paths() {
  std::vector<ScanPath> out{ScanPath::best, ScanPath::scalar};
  if (path_supported(ScanPath::avx2)) out.push_back(ScanPath::avx2);
  if (path_supported(ScanPath::avx512)) out.push_back(ScanPath::avx512);
  return out;
}

const char* name(ScanPath p) {
  switch (p) {
    case ScanPath::best: return "best";
    case ScanPath::scalar: return "scalar";
    case ScanPath::avx2: return "avx2";
    case ScanPath::avx512: return "avx512";
  }
  return "?";
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c | 0x20) : c; }

// Hits as text, so that a failure shows them: "offset:literal ...".
std::string show(const std::vector<ScanHit>& hits) {
  std::string out;
  for (const ScanHit& h : hits) out += std::to_string(h.offset) + ":" + std::to_string(h.literal) + " ";
  return out;
}

// The newlines each hit says are before it, against a count of the buffer.
bool newlines_agree(std::string_view buf, const std::vector<ScanHit>& hits) {
  for (const ScanHit& h : hits)
    if (h.newlines_before != static_cast<std::size_t>(std::count(buf.begin(), buf.begin() + h.offset, '\n')))
      return false;
  return true;
}

// The reference: every offset, every literal, compared byte by byte.
std::string naive(std::string_view buf, const std::vector<std::string>& lits) {
  std::vector<ScanHit> hits;
  for (std::size_t off = 0; off < buf.size(); ++off) {
    for (std::size_t i = 0; i < lits.size(); ++i) {
      const std::string& lit = lits[i];
      if (lit.size() > buf.size() - off) continue;
      bool same = true;
      for (std::size_t k = 0; k < lit.size() && same; ++k) same = lower(buf[off + k]) == lower(lit[k]);
      if (same) hits.push_back(ScanHit{off, static_cast<std::uint32_t>(i)});
    }
  }
  return show(hits);
}

struct Result {
  std::string hits;
  std::size_t newlines;
  bool hit_newlines_right;  // every hit's newlines_before is exact
};

// Scans a heap copy of exactly buf.size() bytes, so that a sanitizer build
// catches any read past the end.
Result scan(const LiteralScanner& s, std::string_view buf, ScanPath path) {
  std::unique_ptr<char[]> copy(new char[buf.size()]);
  std::copy(buf.begin(), buf.end(), copy.get());
  std::vector<ScanHit> hits;
  const std::size_t newlines = s.scan(std::string_view(copy.get(), buf.size()), hits, path);
  return Result{show(hits), newlines, newlines_agree(buf, hits)};
}

// Checks every path against the reference on one buffer.
void check_all_paths(const LiteralScanner& s, std::string_view buf) {
  const std::string want = naive(buf, s.literals());
  const auto newlines = static_cast<std::size_t>(std::count(buf.begin(), buf.end(), '\n'));
  for (ScanPath path : paths()) {
    INFO("path " << name(path) << ", buffer of " << buf.size() << " bytes");
    const Result got = scan(s, buf, path);
    CHECK(got.hits == want);
    CHECK(got.newlines == newlines);
    CHECK(got.hit_newlines_right);
  }
}

// Log-like filler that holds none of the anchors.
std::string filler(std::size_t n) {
  const std::string text = "[rank3]:2024-05-01 12:00:01 INFO step 12 loss 0.42 lr 3e-4\n";
  std::string out;
  while (out.size() < n) out += text;
  out.resize(n);
  return out;
}

}  // namespace

TEST_CASE("scan finds each anchor at every offset across block boundaries", "[scan]") {
  const LiteralScanner s(kAnchors);
  for (std::uint32_t i = 0; i < kAnchors.size(); ++i) {
    for (std::size_t off = 0; off <= 100; ++off) {
      for (std::size_t tail : {0, 1, 2, 31, 64}) {
        const std::string buf = filler(off) + kAnchors[i] + filler(tail);
        INFO("literal " << kAnchors[i] << " at " << off << ", tail " << tail);
        const std::string want = naive(buf, kAnchors);
        REQUIRE(want.find(std::to_string(off) + ":" + std::to_string(i) + " ") != std::string::npos);
        for (ScanPath path : paths()) {
          INFO("path " << name(path));
          CHECK(scan(s, buf, path).hits == want);
        }
      }
    }
  }
}

// The production anchors scan on the plan made at build time (the test
// above plans its list when the scanner is built): the same hits, on every
// path, with either baked plan.
TEST_CASE("the anchor literals' baked plans find each anchor at every offset", "[scan]") {
  const std::vector<std::string>& anchors = oomlens::analyzer::parse::anchor_literals();
  for (ScanPath planned_for : {ScanPath::scalar, ScanPath::avx2}) {
    const LiteralScanner s(anchors, planned_for);
    REQUIRE(s.plan_was_baked());
    for (std::uint32_t i = 0; i < anchors.size(); ++i) {
      for (std::size_t off : {0, 1, 7, 31, 32, 33, 63, 64, 65, 100}) {
        const std::string buf = filler(off) + anchors[i] + filler(40);
        INFO("planned for " << name(planned_for) << ", literal " << anchors[i] << " at " << off);
        const std::string want = naive(buf, anchors);
        REQUIRE(want.find(std::to_string(off) + ":" + std::to_string(i) + " ") != std::string::npos);
        for (ScanPath path : paths()) {
          INFO("path " << name(path));
          CHECK(scan(s, buf, path).hits == want);
        }
      }
    }
  }
}

TEST_CASE("scan finds literals at the start, middle and end of a long buffer", "[scan]") {
  const LiteralScanner s(kAnchors);
  const std::string buf =
      "CUDA out of memory." + filler(5000) + "Killed process 12 (python)" + filler(3000) + "cache flush";
  check_all_paths(s, buf);
  std::vector<ScanHit> hits;
  s.scan(buf, hits);
  REQUIRE(hits.size() == 3);
  CHECK(hits[0].offset == 12);
  CHECK(hits[0].literal == 0);
  CHECK(hits[1].literal == 7);
  CHECK(hits[2].offset == buf.size() - 11);
  CHECK(hits[2].literal == 16);
}

TEST_CASE("scan matches ASCII letters case-insensitively and nothing else", "[scan]") {
  const LiteralScanner s({"OOM-Kill", "aa[bb", "_alloc_conf", "xx@yy"});
  for (ScanPath path : paths()) {
    INFO("path " << name(path));
    CHECK(scan(s, "oom-kill OOM-KILL oOm-KiLl", path).hits == "0:0 9:0 18:0 ");
    // x | 0x20 folds these pairs in the filter; the exact check must not.
    CHECK(scan(s, "AA{BB aa{bb AA[BB", path).hits == "12:1 ");
    CHECK(scan(s, "\x7f" "alloc_conf _ALLOC_CONF", path).hits == "12:2 ");
    CHECK(scan(s, "xx`yy XX@YY", path).hits == "6:3 ");
    // Bytes >= 0x80 that equal a letter in their low 7 bits are not letters.
    CHECK(scan(s, "\xef\xef\xed-kill \xcf\xcfM-kill", path).hits.empty());
  }
}

TEST_CASE("scan reports overlapping literals and literals sharing a prefix", "[scan]") {
  SECTION("one literal overlapping itself") {
    const LiteralScanner s({"aaaaa"});
    for (ScanPath path : paths()) CHECK(scan(s, "aaaaaaa", path).hits == "0:0 1:0 2:0 ");
  }
  SECTION("several literals at one offset, in literal order") {
    const LiteralScanner s({"oom-killed", "oom-k", "oom-kill", "kille", "killed", "oom when"});
    for (ScanPath path : paths()) {
      INFO("path " << name(path));
      CHECK(scan(s, "an oom-killed job", path).hits == "3:0 3:1 3:2 7:3 7:4 ");
    }
    check_all_paths(s, filler(40) + "oom-killed oom when oom-kill" + filler(40));
  }
  SECTION("duplicate literals are each reported") {
    const LiteralScanner s({"signal", "SIGNAL"});
    for (ScanPath path : paths()) CHECK(scan(s, "got signal 9", path).hits == "4:0 4:1 ");
  }
}

TEST_CASE("scan reports only literals wholly inside the buffer", "[scan]") {
  const LiteralScanner s(kAnchors);
  for (ScanPath path : paths()) {
    INFO("path " << name(path));
    for (std::size_t pad : {0, 10, 40, 100}) {
      CHECK(scan(s, filler(pad) + "out of memor", path).hits.empty());
      CHECK(scan(s, filler(pad) + "out of memory", path).hits == std::to_string(pad + 7) + ":0 ");
      // Cut off at the start: the window of "memory" may sit past its start.
      CHECK(scan(s, "emory" + filler(pad), path).hits.empty());
      CHECK(scan(s, "ory" + filler(pad), path).hits.empty());
      CHECK(scan(s, "\n\n" + filler(pad) + "out of memory", path).hit_newlines_right);
    }
  }
}

TEST_CASE("scan reports no literal cut off at either end of the buffer", "[scan]") {
  // Views into a text that goes on past the view's ends: a scan that read
  // outside its buffer would find the whole literal.
  const LiteralScanner s(kAnchors);
  for (const std::string& lit : kAnchors) {
    for (std::size_t pad : {0, 5, 40, 70}) {
      const std::string text = filler(pad) + lit + filler(pad);
      for (std::size_t cut = 0; cut < lit.size(); ++cut) {
        const std::string_view head = std::string_view(text).substr(0, pad + cut);
        const std::string_view tail = std::string_view(text).substr(pad + lit.size() - cut);
        for (ScanPath path : paths()) {
          INFO(lit << ", pad " << pad << ", cut " << cut << ", path " << name(path));
          std::vector<ScanHit> hits;
          s.scan(head, hits, path);
          s.scan(tail, hits, path);
          CHECK(show(hits).empty());
        }
      }
    }
  }
}

TEST_CASE("scan appends to the hits it is given", "[scan]") {
  const LiteralScanner s(kAnchors);
  std::vector<ScanHit> hits{ScanHit{999, 5}};
  s.scan("x signal y", hits);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].offset == 999);
  CHECK(hits[1].offset == 2);
}

TEST_CASE("scan of an empty buffer, and a scanner without literals", "[scan]") {
  const LiteralScanner s(kAnchors);
  const LiteralScanner none({});
  for (ScanPath path : paths()) {
    CHECK(scan(s, "", path).hits.empty());
    CHECK(scan(s, "", path).newlines == 0);
    CHECK(scan(none, "memory\nmemory\n", path).hits.empty());
    CHECK(scan(none, "memory\nmemory\n", path).newlines == 2);
  }
  CHECK(none.longest() == 0);
  CHECK(s.longest() == 20);
  CHECK(s.literals() == kAnchors);
}

TEST_CASE("LiteralScanner rejects short and non-ASCII literals", "[scan]") {
  CHECK_THROWS_AS(LiteralScanner({"memory", "oom"}), std::invalid_argument);
  CHECK_THROWS_AS(LiteralScanner({""}), std::invalid_argument);
  CHECK_THROWS_AS(LiteralScanner({"m\xc3\xa9moire"}), std::invalid_argument);
}

TEST_CASE("scan agrees with the reference on buffers of every length 0..200", "[scan]") {
  const LiteralScanner s(kAnchors);
  const std::string text =
      "killed\nOOM-KILL oom_kill\n\nmemoryMEMORY signal watchdog exitcode\n_alloc_conf xhausted "
      "cache flush oomkill\nstatus_alloc_failed device-side assert childfailederror\n"
      "xla_python_client unhandled cuda error oom when\n";
  for (std::size_t len = 0; len <= 200; ++len) {
    for (std::size_t start : {0, 1, 7}) check_all_paths(s, std::string_view(text + text).substr(start, len));
  }
}

TEST_CASE("count_newlines is exact on every path", "[scan]") {
  std::mt19937 rng(7);
  std::vector<std::string> bufs = {"", "\n", "a", std::string(5000, '\n'), std::string(100000, '\n')};
  for (std::size_t len = 0; len <= 300; ++len) {
    std::string b(len, 'x');
    for (char& c : b) c = rng() % 3 == 0 ? '\n' : static_cast<char>(rng());
    bufs.push_back(b);
  }
  std::string big(3 << 20, 'y');
  for (char& c : big) c = rng() % 50 == 0 ? '\n' : static_cast<char>(rng() % 256);
  bufs.push_back(big);
  for (const std::string& b : bufs) {
    const auto want = static_cast<std::size_t>(std::count(b.begin(), b.end(), '\n'));
    CHECK(count_newlines(b) == want);
    for (ScanPath path : paths()) {
      INFO("path " << name(path) << ", " << b.size() << " bytes");
      CHECK(oomlens::analyzer::detail::count_newlines(b, path) == want);
    }
  }
}

TEST_CASE("scan agrees with the reference on random buffers and literal sets", "[scan]") {
  std::mt19937 rng(20240501);
  const auto pick = [&](std::string_view from) { return from[rng() % from.size()]; };
  // A small alphabet makes matches and near misses frequent; the bytes >= 0x80
  // equal letters of it in their low 7 bits.
  const std::string_view lit_alphabet = "abcAB_-";
  const std::string buf_alphabet = std::string("aAbBcC_-\n{\x7f ") + "\xe1\xc2\xe3";
  for (int round = 0; round < 400; ++round) {
    std::vector<std::string> lits(1 + rng() % 24);
    for (std::string& lit : lits) {
      lit.resize(5 + rng() % 8);
      for (char& c : lit) c = pick(lit_alphabet);
    }
    const LiteralScanner s(lits);
    std::string buf(rng() % 1500, ' ');
    for (char& c : buf) c = pick(buf_alphabet);
    // Plant some literals in random case, some of them cut off at the end.
    for (int k = rng() % 10; k > 0 && !buf.empty(); --k) {
      const std::string& lit = lits[rng() % lits.size()];
      const std::size_t at = rng() % buf.size();
      for (std::size_t j = 0; j < lit.size() && at + j < buf.size(); ++j) {
        const char c = lit[j];
        buf[at + j] = (c >= 'a' && c <= 'z' && rng() % 2) ? static_cast<char>(c - 32) : c;
      }
    }
    INFO("round " << round << ", " << lits.size() << " literals");
    check_all_paths(s, buf);
  }
}
