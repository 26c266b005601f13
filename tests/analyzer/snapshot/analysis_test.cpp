// The snapshot analysis on the generated fixtures: per-device figures, the
// verdict on the trace's oom entry, and the top allocation sites
// (fixtures/snapshots/generate.py --summary has the numbers these rely on).
// Every scenario is read from its protocol 2, 4 and 5 pickles.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "analyzer/snapshot/analysis.hpp"
#include "tests/analyzer/snapshot/pickle_bytes.hpp"

using namespace oomlens::analyzer::snapshot;
using oomlens::analyzer::OomClass;
using oomlens::analyzer::snapshot::testing::read_fixture;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024, kGiB = 1024 * kMiB;

Analysis analyze_fixture(const std::string& name, const AnalysisOptions& options = {}) {
  std::string bytes = read_fixture(name);
  REQUIRE_FALSE(bytes.empty());
  auto snapshot = parse_snapshot(std::string_view(bytes));
  if (!snapshot) FAIL(name << ": " << snapshot.error().message);
  return analyze(*snapshot, options);
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("snapshot analysis: fragmentation", "[snapshot][analysis]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    Analysis a = analyze_fixture(std::string("fragmentation_") + p + ".pickle");
    REQUIRE(a.devices.size() == 1);
    const DeviceSummary& d = a.devices[0];
    CHECK(d.device == 0);
    CHECK(d.reserved == 77380714496u);
    CHECK(d.allocated == 58015761408u);
    CHECK(d.active == 58015761408u);
    CHECK(d.inactive == 19364953088u);
    CHECK(d.inactive_split == 19364953088u);
    CHECK(d.largest_free_block == 512 * kMiB);
    CHECK(d.segments == 27);
    CHECK(d.blocks == 108);
    CHECK(d.fragmentation == Approx(19364953088.0 / 77380714496.0));
    REQUIRE(d.pools.size() == 3);
    CHECK(d.pools[0].pool == "large");
    CHECK(d.pools[0].largest_free_block == 512 * kMiB);
    CHECK(d.pools[0].segments == 24);
    CHECK(d.pools[1].pool == "small");
    CHECK(d.pools[1].largest_free_block == 2021376);
    CHECK(d.pools[2].pool == "private (0, 1)");
    CHECK(d.pools[2].largest_free_block == 32 * kMiB);

    REQUIRE(a.oom);
    CHECK(a.oom->device == 0);
    CHECK(a.oom->requested == 4 * kGiB);
    CHECK(a.oom->device_free_known);
    CHECK(a.oom->device_free == 1610612736u);
    CHECK(a.oom->largest_free_block == 512 * kMiB);
    CHECK(a.oom->cached_free == 19364953088u);
    CHECK(a.oom->oom_events == 1);
    CHECK(a.oom->verdict.cls == OomClass::fragmentation);
    CHECK(mentions(a.oom->verdict.arithmetic, "largest free block 512.00 MiB < requested 4.00 GiB"));
    CHECK(mentions(a.oom->verdict.arithmetic, "cached free 18.04 GiB (inactive blocks) ≥ requested 4.00 GiB"));
    CHECK(mentions(a.oom->verdict.notes, "dumped"));

    REQUIRE(a.top_sites.size() == 4);
    CHECK(a.sites_total == 4);
    CHECK(a.top_sites[0].bytes == 32212254720u);
    CHECK(a.top_sites[0].count == 24);
    REQUIRE(a.top_sites[0].frames);
    REQUIRE(a.top_sites[0].frames->size() == 6);
    CHECK((*a.top_sites[0].frames)[0].name == "forward");
    CHECK(a.top_sites[1].bytes == 25769803776u);
    CHECK(a.top_sites[1].count == 24);
    CHECK(a.top_sites[3].bytes == 148480);
    CHECK(a.top_sites[3].count == 6);
  }
}

TEST_CASE("snapshot analysis: the TorchScript pickler's fragmentation file gives the same answer", "[snapshot][analysis]") {
  Analysis a = analyze_fixture("fragmentation_torch_jit_p2.pickle");
  REQUIRE(a.oom);
  CHECK(a.oom->verdict.cls == OomClass::fragmentation);
  CHECK(a.oom->cached_free == 19364953088u);
  REQUIRE(a.top_sites.size() == 4);
  CHECK(a.top_sites[0].bytes == 32212254720u);
  CHECK(a.top_sites[0].count == 24);
}

TEST_CASE("snapshot analysis: capacity", "[snapshot][analysis]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    Analysis a = analyze_fixture(std::string("capacity_") + p + ".pickle");
    REQUIRE(a.devices.size() == 1);
    const DeviceSummary& d = a.devices[0];
    CHECK(d.reserved == 81606475776u);
    CHECK(d.allocated == 81583481344u);
    CHECK(d.inactive == 22994432u);
    CHECK(d.segments == 39);
    CHECK(d.blocks == 44);
    CHECK(d.largest_free_block == 20 * kMiB);
    REQUIRE(a.oom);
    CHECK(a.oom->requested == 2 * kGiB);
    CHECK(a.oom->device_free == 432013312u);
    CHECK(a.oom->largest_free_block == 20 * kMiB);
    CHECK(a.oom->cached_free == 22994432u);
    CHECK(a.oom->verdict.cls == OomClass::capacity);
    CHECK(mentions(a.oom->verdict.arithmetic, "free 412.00 MiB + cached free 21.93 MiB = 433.93 MiB < requested 2.00 GiB"));
    REQUIRE(a.top_sites.size() == 4);
    CHECK(a.top_sites[0].bytes == 40802189312u);
    CHECK(a.top_sites[0].count == 19);
  }
}

TEST_CASE("snapshot analysis: external", "[snapshot][analysis]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    Analysis a = analyze_fixture(std::string("external_") + p + ".pickle");
    REQUIRE(a.devices.size() == 1);
    CHECK(a.devices[0].reserved == 8592031744u);
    CHECK(a.devices[0].allocated == 8590008832u);
    CHECK(a.devices[0].segments == 5);
    CHECK(a.devices[0].blocks == 9);
    REQUIRE(a.oom);
    CHECK(a.oom->requested == 4 * kGiB);
    CHECK(a.oom->device_free == 1 * kGiB);
    CHECK(a.oom->largest_free_block == 0);  // the only free bytes are in the small pool
    CHECK(a.oom->cached_free == 2022912u);
    CHECK(a.oom->verdict.cls == OomClass::external);
    CHECK(mentions(a.oom->verdict.notes, "estimate"));
    REQUIRE(a.top_sites.size() == 2);
    CHECK(a.top_sites[0].bytes == 8 * kGiB);
  }
}

TEST_CASE("snapshot analysis: a device total settles external and capacity", "[snapshot][analysis]") {
  AnalysisOptions with_total;
  with_total.device_total = 80 * kGiB;
  Analysis external = analyze_fixture("external_p4.pickle", with_total);
  REQUIRE(external.oom);
  CHECK(external.oom->verdict.cls == OomClass::external);
  CHECK(mentions(external.oom->verdict.arithmetic, "device 80.00 GiB − free 1024.00 MiB − reserved 8.00 GiB = 71.00 GiB"));
  CHECK_FALSE(mentions(external.oom->verdict.notes, "estimate"));
  Analysis capacity = analyze_fixture("capacity_p4.pickle", with_total);
  REQUIRE(capacity.oom);
  CHECK(capacity.oom->verdict.cls == OomClass::capacity);
}

TEST_CASE("snapshot analysis: limit", "[snapshot][analysis]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    Analysis a = analyze_fixture(std::string("limit_") + p + ".pickle");
    REQUIRE(a.devices.size() == 1);
    CHECK(a.devices[0].reserved == 8053063680u);
    CHECK(a.devices[0].allocated == 8053063680u);
    CHECK(a.devices[0].inactive == 0);
    CHECK(a.devices[0].segments == 3);
    CHECK(a.devices[0].blocks == 3);
    CHECK(a.devices[0].fragmentation == 0.0);
    REQUIRE(a.oom);
    CHECK(a.oom->requested == 2 * kGiB);
    CHECK(a.oom->device_free == 76235669504u);
    CHECK(a.oom->largest_free_block == 0);
    CHECK(a.oom->verdict.cls == OomClass::limit);
    CHECK(mentions(a.oom->verdict.arithmetic, "the device still had 71.00 GiB free ≥ requested 2.00 GiB"));
    CHECK(mentions(a.oom->verdict.notes, "set_per_process_memory_fraction() leaves no key"));
  }
}

TEST_CASE("snapshot analysis: limit from a newer PyTorch's settings", "[snapshot][analysis]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    Analysis a = analyze_fixture(std::string("limit_conf_") + p + ".pickle");
    REQUIRE(a.devices.size() == 1);
    CHECK(a.devices[0].reserved == 19327352832u);
    CHECK(a.devices[0].allocated == 18790481920u);
    CHECK(a.devices[0].segments == 1);
    CHECK(a.devices[0].blocks == 3);
    REQUIRE(a.oom);
    CHECK(a.oom->requested == 4 * kGiB);
    CHECK(a.oom->device_free == 60 * kGiB);
    CHECK(a.oom->largest_free_block == 512 * kMiB);
    CHECK(a.oom->verdict.cls == OomClass::limit);
    CHECK(mentions(a.oom->verdict.arithmetic, "per_process_memory_fraction 0.25"));
    CHECK(mentions(a.oom->verdict.arithmetic, "allows at least 19.50 GiB"));
  }
}

TEST_CASE("snapshot analysis: a healthy two-GPU snapshot has no oom", "[snapshot][analysis]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    Analysis a = analyze_fixture(std::string("no_oom_") + p + ".pickle");
    CHECK_FALSE(a.oom);
    REQUIRE(a.devices.size() == 2);
    for (const DeviceSummary& d : a.devices) {
      CHECK(d.reserved == 1138753536u);
      CHECK(d.allocated == 868295168u);
      CHECK(d.active == 1002512896u);  // a pending-free block is active, not allocated
      CHECK(d.inactive == 136240640u);
      CHECK(d.segments == 5);
      CHECK(d.blocks == 12);
    }
    CHECK(a.devices[1].device == 1);
    REQUIRE(a.top_sites.size() == 4);
    CHECK(a.top_sites[0].bytes == 1 * kGiB);
    CHECK(a.top_sites[0].count == 2);
  }
}

TEST_CASE("snapshot analysis: PyTorch 1.13 segments; a wholly free segment is not split", "[snapshot][analysis]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    Analysis a = analyze_fixture(std::string("legacy_113_") + p + ".pickle");
    CHECK_FALSE(a.oom);
    REQUIRE(a.devices.size() == 1);
    CHECK(a.devices[0].reserved == 1654652928u);
    CHECK(a.devices[0].allocated == 1094713344u);
    CHECK(a.devices[0].inactive == 557842432u);
    CHECK(a.devices[0].inactive_split == 555745280u);
    CHECK(a.devices[0].largest_free_block == 512 * kMiB);
  }
}

TEST_CASE("snapshot analysis: top N cuts the sites, most bytes first", "[snapshot][analysis]") {
  AnalysisOptions top2;
  top2.top_sites = 2;
  Analysis a = analyze_fixture("capacity_p4.pickle", top2);
  REQUIRE(a.top_sites.size() == 2);
  CHECK(a.sites_total == 4);
  CHECK(a.top_sites[0].bytes >= a.top_sites[1].bytes);
}

TEST_CASE("snapshot analysis: a summary read (oom entries only) gives the same analysis", "[snapshot][analysis]") {
  std::string name = GENERATE("fragmentation_p4", "capacity_p2", "external_p5", "limit_p4", "limit_conf_p4", "no_oom_p4",
                              "legacy_113_p4", "fragmentation_torch_jit_p2");
  std::string bytes = read_fixture(name + ".pickle");
  auto full = parse_snapshot(std::string_view(bytes));
  ReadOptions options;
  options.keep_full_trace = false;
  auto summary = parse_snapshot(std::string_view(bytes), options);
  REQUIRE(full);
  REQUIRE(summary);
  Analysis a = analyze(*full), b = analyze(*summary);
  REQUIRE(a.devices.size() == b.devices.size());
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    CHECK(a.devices[i].device == b.devices[i].device);
    CHECK(a.devices[i].reserved == b.devices[i].reserved);
    CHECK(a.devices[i].inactive_split == b.devices[i].inactive_split);
  }
  REQUIRE(a.oom.has_value() == b.oom.has_value());
  if (a.oom) {
    CHECK(a.oom->verdict.cls == b.oom->verdict.cls);
    CHECK(a.oom->verdict.arithmetic == b.oom->verdict.arithmetic);
    CHECK(a.oom->requested == b.oom->requested);
    CHECK(a.oom->oom_events == b.oom->oom_events);
    CHECK(*a.oom->frames == *b.oom->frames);
  }
  REQUIRE(a.top_sites.size() == b.top_sites.size());
  for (std::size_t i = 0; i < a.top_sites.size(); ++i) CHECK(a.top_sites[i].bytes == b.top_sites[i].bytes);
}

TEST_CASE("snapshot analysis: synthetic cases", "[snapshot][analysis]") {
  auto frames = std::make_shared<const std::vector<Frame>>(std::vector<Frame>{{"a.py", 3, "f"}});
  auto same = std::make_shared<const std::vector<Frame>>(std::vector<Frame>{{"a.py", 3, "f"}});
  Snapshot s;
  Segment seg;
  seg.total_size = 100 * kMiB;
  seg.segment_type = SegmentType::large;
  seg.blocks.push_back({0, 40 * kMiB, 40 * kMiB, BlockState::active_allocated, frames});
  seg.blocks.push_back({0, 20 * kMiB, std::nullopt, BlockState::inactive, frames});
  seg.blocks.push_back({0, 40 * kMiB, 40 * kMiB, BlockState::active_allocated, same});
  s.segments.push_back(seg);
  s.device_traces.resize(1);

  SECTION("frame lists with equal content are one site") {
    Analysis a = analyze(s);
    REQUIRE(a.top_sites.size() == 1);
    CHECK(a.top_sites[0].bytes == 80 * kMiB);
    CHECK(a.top_sites[0].count == 2);
    CHECK(a.devices[0].inactive_split == 20 * kMiB);
  }
  SECTION("an oom without device_free is unquantified") {
    TraceEntry e;
    e.action = TraceAction::oom;
    e.size = 30 * kMiB;
    s.device_traces[0].push_back(e);
    Analysis a = analyze(s);
    REQUIRE(a.oom);
    CHECK(a.oom->verdict.cls == OomClass::unquantified);
  }
  SECTION("a free block large enough at dump time is unquantified, not a guess") {
    TraceEntry e;
    e.action = TraceAction::oom;
    e.size = 10 * kMiB;
    e.device_free = 0;
    s.device_traces[0].push_back(e);
    Analysis a = analyze(s);
    REQUIRE(a.oom);
    CHECK(a.oom->verdict.cls == OomClass::unquantified);
  }
  SECTION("an empty snapshot") {
    Analysis a = analyze(Snapshot{});
    CHECK(a.devices.empty());
    CHECK_FALSE(a.oom);
    CHECK(a.top_sites.empty());
  }
}
