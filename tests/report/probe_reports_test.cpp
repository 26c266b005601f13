#include <catch2/catch.hpp>

#include <filesystem>

#include "report/probe_reports.hpp"
#include "tests/temp_tree.hpp"

using oomlens::report::parse_probe_report;

TEST_CASE("probe report: the fields verify reads", "[verify]") {
  auto p = parse_probe_report(R"({"probe": 1, "pid": 42, "rank": 3, "reason": "oom", "torch_version": "2.6.0",
    "cuda_initialized": true, "seconds": 12.5,
    "env_at_cuda_init": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    "devices": [{"index": 0, "name": "H100", "total_memory": 85899345920, "peak_reserved": 1000,
                 "peak_allocated": 900, "num_alloc_retries": 2, "num_ooms": 1}],
    "ooms": [{"device": 0, "requested": 4096, "seconds": 12.4}],
    "allocator": {"backend": "native", "settings": {"expandable_segments": true, "max_split_size": -1,
                  "roundup_power2_divisions": {"1": 0}}, "expandable_segments_seen": true},
    "snapshot": "/tmp/x.pickle"})");
  CHECK(p.pid == 42);
  CHECK(p.rank == 3);
  CHECK(p.cuda_initialized);
  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].peak_reserved == 1000);
  CHECK(p.devices[0].num_alloc_retries == 2);
  REQUIRE(p.ooms.size() == 1);
  CHECK(p.ooms[0].requested == 4096);
  CHECK(p.allocator.settings.at("expandable_segments") == "true");
  CHECK(p.allocator.settings.at("max_split_size") == "-1");
  CHECK_FALSE(p.allocator.settings.contains("roundup_power2_divisions"));  // nested values are not compared
  CHECK(p.allocator.expandable_segments_seen == true);
  CHECK(p.env_at_cuda_init->at("PYTORCH_CUDA_ALLOC_CONF") == "expandable_segments:True");
  CHECK(p.snapshot == "/tmp/x.pickle");
}

TEST_CASE("probe report: a process that never used CUDA has no devices", "[verify]") {
  auto p = parse_probe_report(R"({"probe": 1, "pid": 7, "rank": null, "cuda_initialized": false,
    "env_at_cuda_init": null})");
  CHECK_FALSE(p.rank);
  CHECK_FALSE(p.cuda_initialized);
  CHECK(p.devices.empty());
  CHECK_FALSE(p.env_at_cuda_init);
}

TEST_CASE("probe report: malformed input is an error, never a crash", "[verify]") {
  CHECK_THROWS(parse_probe_report("{"));
  CHECK_THROWS(parse_probe_report(R"({"probe": 2})"));
  CHECK_THROWS(parse_probe_report(R"([1, 2])"));
  CHECK_THROWS(parse_probe_report(R"({"probe": 1, "pid": "x"})"));
  CHECK_THROWS(parse_probe_report(R"({"probe": 1, "devices": [{"peak_reserved": "lots"}]})"));
  // Floats where integers belong, too large for any integer: refused, not converted.
  CHECK_THROWS_WITH(parse_probe_report(R"({"probe": 1, "pid": 1e300})"), "pid: expected an integer, found 1e+300");
  CHECK_THROWS(parse_probe_report(R"({"probe": 1e300})"));
  CHECK_THROWS(parse_probe_report(R"({"probe": 1, "devices": [{"peak_reserved": -1e300}]})"));
}

TEST_CASE("probe reports: one that cannot be read is named with the reason, the others are read", "[verify]") {
  oomlens::testing::TempTree tree;
  tree.file("probe-a-1.json", R"({"probe": 1, "pid": 1, "rank": null, "cuda_initialized": false, "env_at_cuda_init": null})");
  std::filesystem::create_directory(tree.root / "probe-a-2.json");  // a directory, not a report
  tree.file("probe-b-3.json", "not this run's");
  const auto reports = oomlens::report::read_probe_reports(tree.root.string(), "a");
  REQUIRE(reports.processes.size() == 1);
  CHECK(reports.processes[0].pid == 1);
  REQUIRE(reports.unreadable.size() == 1);
  CHECK(reports.unreadable[0] == tree.path("probe-a-2.json") + ": is a directory");
}
