// The trace replayed: peaks in the middle of the trace, the state at an oom
// event, blocks older than the trace and a trace cut by its ring buffer
// (fixtures/snapshots/generate.py: cpp_stacks, ring_overflow).
#include <catch2/catch.hpp>

#include "analyzer/snapshot/analysis.hpp"
#include "tests/analyzer/snapshot/snapshot_fixture.hpp"

using namespace oomlens::analyzer::snapshot;
using oomlens::analyzer::snapshot::testing::snapshot_fixture;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20, kGiB = kMiB << 10;

Snapshot read(const std::string& name) { return snapshot_fixture(name); }

FrameList stack(std::string file, std::int64_t line) {
  return std::make_shared<const std::vector<Frame>>(std::vector<Frame>{{std::move(file), line, "f"}});
}

TraceEntry entry(TraceAction action, std::uint64_t addr, std::uint64_t size, FrameList frames = nullptr) {
  TraceEntry e;
  e.action = action;
  e.addr = addr;
  e.size = size;
  e.frames = frames ? frames : std::make_shared<const std::vector<Frame>>();
  return e;
}

}  // namespace

TEST_CASE("replay: the peak in the middle of the trace and the state at the oom", "[snapshot][replay]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    auto timelines = replay_traces(read(std::string("cpp_stacks_") + p + ".pickle"));
    REQUIRE(timelines.size() == 1);
    const DeviceTimeline& t = timelines[0];
    CHECK(t.entries == 77);
    CHECK_FALSE(t.overflow_suspected);
    // One block alive at dump time and one freed during the trace predate it.
    CHECK(t.before_trace_bytes == 2 * kGiB);
    CHECK(t.before_trace_blocks == 2);
    CHECK(t.unaccounted_bytes == 0);
    CHECK(t.start.allocated == 2 * kGiB);
    CHECK(t.start.reserved == 2 * kGiB);
    // The three 4 GiB activations are alive together after entry 10, then freed.
    CHECK(t.peak_allocated.entries == 10);
    CHECK(t.peak_allocated.allocated == 24 * kGiB);
    CHECK(t.peak_allocated.reserved == 26 * kGiB);
    REQUIRE(t.peak_allocated.top_sites.size() == 5);
    CHECK(t.peak_allocated.top_sites[0].bytes == 12 * kGiB);
    CHECK(t.peak_allocated.top_sites[0].folded.lead.front().line == 88);
    REQUIRE(t.peak_allocated.largest.size() == 5);
    CHECK(t.peak_allocated.largest[0].size == 6 * kGiB);
    CHECK(t.peak_allocated.largest[1].size == 4 * kGiB);
    CHECK(t.peak_reserved.reserved == 26 * kGiB);
    REQUIRE(t.at_oom);
    CHECK(t.at_oom->entries == 76);
    CHECK(t.at_oom->allocated == 12 * kGiB);
    CHECK(t.at_oom->live_blocks == 5);
    // The curve ends where the dump-time segments are, and peaks at the peak.
    REQUIRE_FALSE(t.curve.empty());
    CHECK(t.curve.back().allocated == 12 * kGiB);
    std::uint64_t most = 0;
    for (const auto& point : t.curve) most = std::max(most, point.allocated);
    CHECK(most == 24 * kGiB);
  }
}

TEST_CASE("replay: a trace cut by its ring buffer", "[snapshot][replay]") {
  Snapshot s = read("ring_overflow_p4.pickle");
  auto timelines = replay_traces(s);
  REQUIRE(timelines.size() == 1);
  const DeviceTimeline& t = timelines[0];
  CHECK(t.entries == 1000);
  CHECK(t.overflow_suspected);
  CHECK(t.unaccounted_bytes == 0);
  // 4 GiB + 2 GiB allocated before the oldest entry kept, and 512 MiB before recording.
  CHECK(t.before_trace_bytes == 6 * kGiB + 512 * kMiB);
  CHECK(t.before_trace_blocks == 3);
  Analysis a = analyze(s);
  bool cause = false;
  for (const auto& site : a.top_sites)
    if (site.frames->empty()) cause = site.missing == MissingStack::ring_overflow;
  CHECK(cause);
  CHECK(looks_like_ring_limit(1000));
  CHECK(looks_like_ring_limit(4096));
  CHECK_FALSE(looks_like_ring_limit(999));
  CHECK_FALSE(looks_like_ring_limit(1219));
}

TEST_CASE("replay: synthetic traces", "[snapshot][replay]") {
  Snapshot s;
  Segment seg;
  seg.address = 1 << 20;
  seg.total_size = 100 * kMiB;
  auto a = stack("/u/a.py", 1), b = stack("/u/b.py", 2);
  seg.blocks.push_back({seg.address, 30 * kMiB, 30 * kMiB, BlockState::active_allocated, a});
  seg.blocks.push_back({seg.address + 30 * kMiB, 70 * kMiB, std::nullopt, BlockState::inactive, nullptr});
  s.segments.push_back(seg);
  s.device_traces.resize(1);
  auto& trace = s.device_traces[0];
  trace.push_back(entry(TraceAction::segment_alloc, seg.address, 100 * kMiB));
  trace.push_back(entry(TraceAction::alloc, seg.address, 30 * kMiB, a));
  trace.push_back(entry(TraceAction::alloc, seg.address + 30 * kMiB, 50 * kMiB, b));
  trace.push_back(entry(TraceAction::free_requested, seg.address + 30 * kMiB, 50 * kMiB, b));
  trace.push_back(entry(TraceAction::free_completed, seg.address + 30 * kMiB, 50 * kMiB, b));

  SECTION("a trace that starts with the process") {
    auto t = replay_traces(s).at(0);
    CHECK(t.before_trace_bytes == 0);
    CHECK(t.unaccounted_bytes == 0);
    CHECK(t.start.allocated == 0);
    CHECK(t.start.reserved == 0);
    CHECK(t.peak_allocated.entries == 3);
    CHECK(t.peak_allocated.allocated == 80 * kMiB);
    CHECK(t.peak_reserved.entries == 1);
    CHECK_FALSE(t.at_oom);
    REQUIRE(t.peak_allocated.largest.size() == 2);
    CHECK(t.peak_allocated.largest[0].frames == b);
  }
  SECTION("a trace whose end disagrees with the segments says by how much") {
    trace.erase(trace.begin() + 1);  // the first block's alloc entry lost in the middle
    trace.insert(trace.begin() + 1, entry(TraceAction::alloc, seg.address, 20 * kMiB, a));
    auto t = replay_traces(s).at(0);
    CHECK(t.unaccounted_bytes == static_cast<std::int64_t>(10 * kMiB));
  }
  SECTION("a trace read as a summary is not replayed") {
    s.trace_lengths = {trace.size() + 10};
    CHECK(replay_traces(s).empty());
  }
  SECTION("an oom event: the state just before it") {
    TraceEntry oom = entry(TraceAction::oom, 0, 90 * kMiB);
    oom.device_free = 0;
    trace.insert(trace.begin() + 3, oom);
    auto t = replay_traces(s).at(0);
    REQUIRE(t.at_oom);
    CHECK(t.at_oom->entries == 3);
    CHECK(t.at_oom->allocated == 80 * kMiB);
  }
}

TEST_CASE("replay: compact trace events replay as the whole trace does", "[snapshot][replay]") {
  std::string name = GENERATE("cpp_stacks_p4", "ring_overflow_p2", "no_oom_p5", "fragmentation_torch_jit_p2");
  INFO(name);
  std::string bytes = oomlens::analyzer::snapshot::testing::read_fixture(name + ".pickle");
  ReadOptions compact_options;
  compact_options.keep_full_trace = false;
  compact_options.keep_trace_events = true;
  auto compact = parse_snapshot(std::string_view(bytes), compact_options);
  REQUIRE(compact);
  const Snapshot full = snapshot_fixture(name + ".pickle");
  REQUIRE(compact->trace_events.size() == full.device_traces.size());
  for (std::size_t d = 0; d < full.device_traces.size(); ++d) CHECK(compact->trace_events[d].size() == full.device_traces[d].size());
  const auto a = replay_traces(full), b = replay_traces(*compact);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].entries == b[i].entries);
    CHECK(a[i].before_trace_bytes == b[i].before_trace_bytes);
    CHECK(a[i].unaccounted_bytes == b[i].unaccounted_bytes);
    CHECK(a[i].peak_allocated.entries == b[i].peak_allocated.entries);
    CHECK(a[i].peak_allocated.allocated == b[i].peak_allocated.allocated);
    CHECK(a[i].peak_reserved.reserved == b[i].peak_reserved.reserved);
    CHECK(a[i].at_oom.has_value() == b[i].at_oom.has_value());
    REQUIRE(a[i].peak_allocated.top_sites.size() == b[i].peak_allocated.top_sites.size());
    for (std::size_t s = 0; s < a[i].peak_allocated.top_sites.size(); ++s) {
      CHECK(a[i].peak_allocated.top_sites[s].bytes == b[i].peak_allocated.top_sites[s].bytes);
      CHECK(a[i].peak_allocated.top_sites[s].folded == b[i].peak_allocated.top_sites[s].folded);
    }
    CHECK(a[i].curve.size() == b[i].curve.size());
  }
  // The analysis names the same causes for blocks without a stack.
  const Analysis x = analyze(full), y = analyze(*compact);
  REQUIRE(x.top_sites.size() == y.top_sites.size());
  for (std::size_t s = 0; s < x.top_sites.size(); ++s) CHECK(x.top_sites[s].missing == y.top_sites[s].missing);
}

TEST_CASE("replay: sizes near 2^64 wrap, never overflow", "[snapshot][replay]") {
  Snapshot s;
  s.device_traces.resize(1);
  const std::uint64_t huge = ~std::uint64_t{0} - 5;
  for (int i = 0; i < 4; ++i) {
    s.device_traces[0].push_back(entry(TraceAction::segment_alloc, 1u << 20, huge));
    s.device_traces[0].push_back(entry(TraceAction::alloc, static_cast<std::uint64_t>(i) << 30, huge));
  }
  s.device_traces[0].push_back(entry(TraceAction::free_requested, 99, huge));
  auto timelines = replay_traces(s);
  REQUIRE(timelines.size() == 1);
  CHECK(timelines[0].entries == 9);
  CHECK(timelines[0].before_trace_blocks == 1);
}

TEST_CASE("replay: the curve carries times only when the trace's times rise", "[snapshot][replay]") {
  auto traced = [](std::vector<std::int64_t> times) {
    Snapshot s;
    s.device_traces.resize(1);
    for (std::size_t i = 0; i < times.size(); ++i) {
      TraceEntry e = entry(i % 2 ? TraceAction::free_requested : TraceAction::alloc, 4096, kMiB);
      e.time_us = times[i];
      s.device_traces[0].push_back(e);
    }
    return replay_traces(s).at(0);
  };
  const std::int64_t t0 = 1'722'470'400'000'000;
  auto timed = traced({t0, t0 + 500'000, t0 + 2'500'000, t0 + 10'000'000});
  CHECK(timed.timed);
  REQUIRE(timed.curve.size() == 4);
  CHECK(timed.curve.back().time_us == t0 + 10'000'000);
  CHECK(timed.curve[1].time_us == t0 + 500'000);
  CHECK_FALSE(traced({0, 0, 0, 0}).timed);                             // no times recorded
  CHECK_FALSE(traced({t0, t0 + 5, t0 + 3, t0 + 9}).timed);             // a time that goes back
  CHECK_FALSE(traced({t0, t0, t0, t0}).timed);                         // no span to draw
}
