// Two runs compared by the user's frames, and a job's ranks summarized
// (fixtures/snapshots/generate.py: compare_before, compare_after, rank).
#include <catch2/catch.hpp>

#include "analyzer/snapshot/compare.hpp"
#include "analyzer/snapshot/ranks.hpp"
#include "tests/analyzer/snapshot/snapshot_fixture.hpp"

using namespace oomlens::analyzer::snapshot;
using oomlens::analyzer::OomClass;
using oomlens::analyzer::snapshot::testing::snapshot_fixture;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

Analysis all_sites(const std::string& name) {
  AnalysisOptions options;
  options.top_sites = static_cast<std::size_t>(-1);
  return analyze(snapshot_fixture(name), options);
}

}  // namespace

TEST_CASE("compare: two runs by user frames", "[snapshot][compare]") {
  Comparison c = compare_runs(all_sites("compare_before_p4.pickle"), all_sites("compare_after_p4.pickle"), 10);
  CHECK(c.a.reserved == 24 * kGiB + 20 * kGiB);
  CHECK(c.b.reserved == 24 * kGiB + 10 * kGiB);
  CHECK(c.a.peak_from_trace);
  CHECK(c.a.peak_allocated > c.b.peak_allocated);
  REQUIRE(c.a.oom);
  CHECK_FALSE(c.b.oom);
  CHECK(c.sites_total == 4);  // weights, optimizer, activations, attention (new in B)
  REQUIRE(c.shrank.size() == 1);
  CHECK(c.shrank[0].change() == -12 * static_cast<std::int64_t>(kGiB));
  CHECK(c.shrank[0].site.folded.lead.front().line == 88);
  CHECK(c.shrank[0].count_a == 3);
  REQUIRE(c.grew.size() == 1);
  CHECK(c.grew[0].bytes_a == 0);
  CHECK(c.grew[0].bytes_b == 2 * kGiB);
  CHECK(c.grew[0].site.folded.lead.front().line == 64);
  // Unchanged sites are in neither list, but in the top.
  REQUIRE(c.top.size() == 4);
  CHECK(c.top[0].bytes_a == 18 * kGiB);
  CHECK(c.top[1].bytes_a == c.top[1].bytes_b);
  // Each run keeps the curve of its peak device, without the blocks of its moments.
  REQUIRE(c.a.peak_timeline);
  REQUIRE(c.b.peak_timeline);
  CHECK(c.a.peak_timeline->peak_allocated.allocated == c.a.peak_allocated);
  CHECK_FALSE(c.a.peak_timeline->curve.empty());
  CHECK(c.a.peak_timeline->peak_allocated.top_sites.empty());
  CHECK(c.a.peak_timeline->at_oom);
  CHECK_FALSE(c.b.peak_timeline->at_oom);
  SECTION("the top cut keeps the largest") {
    Comparison one = compare_runs(all_sites("compare_before_p4.pickle"), all_sites("compare_after_p4.pickle"), 1);
    REQUIRE(one.top.size() == 1);
    CHECK(one.sites_total == 4);
  }
}

TEST_CASE("ranks: the highest peak and the imbalance", "[snapshot][ranks]") {
  std::vector<RankRun> runs;
  for (int r : {3, 1, 0, 2})
    runs.push_back({r, "rank" + std::to_string(r), run_figures(all_sites("job_ranks/rank" + std::to_string(r) + ".pickle"))});
  JobSummary job = summarize_job(runs);
  REQUIRE(job.ranks.size() == 4);
  CHECK(job.ranks[0].rank == 0);
  CHECK(job.ranks[job.highest].rank == 2);
  CHECK(job.ranks[job.highest].figures.oom == OomClass::capacity);
  CHECK(job.peak_max - job.peak_min == 8 * kGiB);  // one more 6 GiB activation and a 2 GiB buffer
  CHECK(job.imbalance == Approx(static_cast<double>(job.peak_max) / static_cast<double>(job.peak_mean)));
  CHECK(job.imbalance > 1.0);
  CHECK(summarize_job({}).imbalance == 0.0);
}

TEST_CASE("ranks: the rank a name gives", "[snapshot][ranks]") {
  CHECK(rank_from_name("rank3.pickle") == 3);
  CHECK(rank_from_name("snapshot_rank_12.pickle.gz") == 12);
  CHECK(rank_from_name("7") == 7);
  CHECK(rank_from_name("node1_rank05.pkl") == 5);
  CHECK(rank_from_name("snapshot.pickle5") == -1);
  CHECK(rank_from_name("final.pickle") == -1);
}
