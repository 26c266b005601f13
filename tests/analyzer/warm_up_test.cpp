// The warm-up log must reach every parser: a family it misses is compiled
// on the critical path of the first real log again.
#include <catch2/catch.hpp>

#include <set>
#include <thread>

#include "analyzer/log/analyzer.hpp"
#include "analyzer/log/warm_up.hpp"

using namespace oomlens::analyzer;

TEST_CASE("The warm-up log meets each OOM family and each kind of finding") {
  LogAnalyzer analyzer;
  analyzer.feed(warm_up_sample());
  const ParsedLog parsed = analyzer.finish_parsed();

  std::set<OomFamily> families;
  for (const auto& e : parsed.events) families.insert(e.family);
  for (OomFamily f : {OomFamily::pytorch_allocator, OomFamily::cuda_runtime, OomFamily::cublas, OomFamily::xla,
                      OomFamily::tensorflow}) {
    INFO("family " << static_cast<int>(f));
    CHECK(families.count(f) == 1);
  }

  std::set<FindingKind> kinds;
  for (const auto& f : parsed.findings) kinds.insert(f.kind);
  for (FindingKind k : {FindingKind::allocator_pressure, FindingKind::host_oom_kill, FindingKind::dataloader_killed,
                        FindingKind::cpu_alloc_failure, FindingKind::not_memory_error, FindingKind::collateral,
                        FindingKind::allocator_setting}) {
    INFO("finding kind " << static_cast<int>(k));
    CHECK(kinds.count(k) == 1);
  }
}

TEST_CASE("Warming up beside an analysis on another thread changes nothing in it") {
  const Analysis alone = analyze_text(warm_up_sample());
  std::thread warming(warm_up);
  const Analysis beside = analyze_text(warm_up_sample());
  warming.join();
  REQUIRE(beside.incidents.size() == alone.incidents.size());
  CHECK(beside.incidents.size() == 3);
  CHECK(beside.findings.size() == alone.findings.size());
  for (std::size_t i = 0; i < alone.incidents.size(); ++i)
    CHECK(beside.incidents[i].primary.line == alone.incidents[i].primary.line);
}
