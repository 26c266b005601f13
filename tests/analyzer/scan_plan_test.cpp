// The fingerprint plan decides how often the scan leaves its SIMD loop for
// the exact check. These tests hold the production anchors to a candidate
// budget on the chatter training jobs print most: a plan that lets ordinary
// words through costs a region of work per false candidate on every line.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/scan.hpp"
#include "analyzer/log/scan_planner.hpp"

using oomlens::analyzer::LiteralScanner;
namespace scan_plan = oomlens::analyzer::scan_plan;
using oomlens::analyzer::detail::path_supported;
using oomlens::analyzer::detail::ScanPath;

namespace {

// About 1 MiB of what a healthy multi-rank job prints: tqdm bars redrawn with
// `\r` (loss, lr, it/s), trainer metric dicts, DeepSpeed's memory report,
// NCCL set-up lines and a handled traceback. No anchor literal appears in it,
// so every candidate the filter passes is a false one.
std::string ordinary_chatter() {
  std::string text;
  for (int i = 0; text.size() < (1u << 20); ++i) {
    const double loss = 2.5 / (1 + i % 97), lr = 3e-4 * (1 + i % 7);
    text += fmt::format("\r{:3d}%|####      | {}/1000 [01:{:02d}<02:{:02d},  7.{}it/s, loss={:.4f}, lr={:.1e}]",
                        i % 100, i % 1000, i % 60, (i * 7) % 60, i % 10, loss, lr);
    if (i % 8 != 0) continue;
    text += fmt::format(
        "\n[rank{}]:{{'loss': {:.4f}, 'grad_norm': {:.3f}, 'learning_rate': {:.2e}, 'epoch': {:.2f}}}\n", i % 8,
        loss, 1.0 + (i % 13) / 10.0, lr, (i % 300) / 100.0);
    text += fmt::format(
        "[2026-03-01 12:00:{:02d},{:03d}] [INFO] [utils.py:781:see_memory_usage] MA {:.2f} GB         Max_MA "
        "{:.2f} GB         CA {:.2f} GB         Max_CA {} GB\n",
        i % 60, i % 1000, 12.0 + (i % 9) / 10.0, 13.1, 14.0, 15);
    text += fmt::format("node{}:{}:{} [{}] NCCL INFO Channel {:02d}/02 : 0 1 2 3 4 5 6 7 via P2P/CUMEM/read\n",
                        i % 4, 4000 + i % 100, 4300 + i % 50, i % 8, i % 32);
    if (i % 64 == 0)
      text += "Traceback (most recent call last):\n  File \"/home/user/proj/train.py\", line 212, in <module>\n"
              "    main()\nKeyError: 'input_ids'\n";
  }
  return text;
}

double candidates_per_mib(const LiteralScanner& scanner, const std::string& text, ScanPath path) {
  return static_cast<double>(scanner.candidates(text, path)) * static_cast<double>(1u << 20) /
         static_cast<double>(text.size());
}

}  // namespace

TEST_CASE("the AVX2 plan keeps ordinary training chatter out of the exact check", "[scan]") {
  if (!path_supported(ScanPath::avx2)) return;
  const std::string text = ordinary_chatter();
  const LiteralScanner scanner(oomlens::analyzer::parse::anchor_literals(), ScanPath::avx2);
  // The nibble tables accept every mix of a bucket's nibbles; planned as if
  // they were exact, "loss=" passed as "oom_s" about 4,000 times a MiB.
  CHECK(candidates_per_mib(scanner, text, ScanPath::avx2) < 300);
  // The exact classes never pass more than the nibble tables do.
  CHECK(scanner.candidates(text, ScanPath::scalar) <= scanner.candidates(text, ScanPath::avx2));
}

TEST_CASE("the exact plan keeps ordinary training chatter out of the exact check", "[scan]") {
  const std::string text = ordinary_chatter();
  const LiteralScanner scanner(oomlens::analyzer::parse::anchor_literals(), ScanPath::scalar);
  CHECK(candidates_per_mib(scanner, text, ScanPath::scalar) < 300);
  if (path_supported(ScanPath::avx512))
    CHECK(scanner.candidates(text, ScanPath::avx512) == scanner.candidates(text, ScanPath::scalar));
}

TEST_CASE("candidates counts every true hit", "[scan]") {
  const LiteralScanner scanner({"out of memory", "killed"}, ScanPath::scalar);
  const std::string text = std::string(100, 'x') + "CUDA out of memory. " + std::string(200, 'y') + "Killed\n";
  for (ScanPath path : {ScanPath::scalar, ScanPath::avx2, ScanPath::avx512})
    CHECK(scanner.candidates(text, path) >= 2);
}

// The anchors' plans are made at build time. A table left from other anchors
// or an older planner would still find every hit, only slower, so nothing
// else would notice it going stale.
TEST_CASE("the plan baked at build time is what the planner makes of the anchor literals", "[scan]") {
  const std::vector<std::string>& anchors = oomlens::analyzer::parse::anchor_literals();
  std::vector<std::string> folded;
  for (const std::string& lit : anchors) folded.push_back(scan_plan::fold_literal(lit));
  for (bool nibble_filter : {true, false}) {
    INFO((nibble_filter ? "nibble filter" : "exact classes"));
    const scan_plan::BakedPlan baked = scan_plan::baked_anchor_plan(nibble_filter);
    CHECK(std::vector<std::string>(baked.literals.begin(), baked.literals.end()) == anchors);
    const std::vector<scan_plan::FingerprintChoice> planned = scan_plan::plan_fingerprints(folded, nibble_filter);
    REQUIRE(baked.plan.size() == planned.size());
    for (std::size_t i = 0; i < planned.size(); ++i) {
      INFO("literal " << anchors[i]);
      CHECK(baked.plan[i].offset == planned[i].offset);
      CHECK(baked.plan[i].bucket == planned[i].bucket);
    }
  }
}

TEST_CASE("only a scanner of exactly the anchor literals takes the baked plan", "[scan]") {
  const std::vector<std::string>& anchors = oomlens::analyzer::parse::anchor_literals();
  for (ScanPath path : {ScanPath::best, ScanPath::scalar, ScanPath::avx2, ScanPath::avx512})
    CHECK(LiteralScanner(anchors, path).plan_was_baked());
  CHECK(LiteralScanner(anchors).plan_was_baked());
  // Any other list is planned when its scanner is built: others, fewer,
  // more, the same in another order or in other case.
  CHECK_FALSE(LiteralScanner({"out of memory", "killed"}).plan_was_baked());
  CHECK_FALSE(LiteralScanner({}).plan_was_baked());
  std::vector<std::string> fewer(anchors.begin(), anchors.end() - 1);
  CHECK_FALSE(LiteralScanner(fewer).plan_was_baked());
  std::vector<std::string> more = anchors;
  more.emplace_back("never printed");
  CHECK_FALSE(LiteralScanner(more).plan_was_baked());
  std::vector<std::string> swapped = anchors;
  std::swap(swapped.front(), swapped.back());
  CHECK_FALSE(LiteralScanner(swapped).plan_was_baked());
  std::vector<std::string> upper = anchors;
  upper.front()[0] = static_cast<char>(upper.front()[0] - 32);
  CHECK_FALSE(LiteralScanner(upper).plan_was_baked());
}
