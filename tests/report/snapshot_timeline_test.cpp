// The chart's x axis: seconds from the trace's first entry when its times
// rise, entry counts otherwise; and several runs on one axis.
#include <catch2/catch.hpp>

#include "report/snapshot_timeline.hpp"

using namespace oomlens::analyzer::snapshot;
using namespace oomlens::report;

namespace {

constexpr std::int64_t kStart = 1'722'470'400'000'000;

// 40 entries over 10 s in 4 points; the allocated peak after entry 20 (at
// 5 s), the oom entry the 31st (at 7.5 s).
DeviceTimeline timeline(bool timed) {
  DeviceTimeline t;
  t.entries = 40;
  t.entries_per_point = 10;
  t.timed = timed;
  for (int i = 1; i <= 4; ++i) t.curve.push_back({std::uint64_t(i) << 30, 5ULL << 30, kStart + i * 2'500'000});
  t.start.time_us = kStart;
  t.peak_allocated.entries = 20;
  t.peak_allocated.time_us = kStart + 5'000'000;
  t.peak_allocated.allocated = 4ULL << 30;
  t.peak_reserved = t.peak_allocated;
  t.peak_reserved.reserved = 5ULL << 30;
  TraceMoment oom;
  oom.entries = 30;
  oom.time_us = kStart + 7'500'000;
  t.at_oom = oom;
  return t;
}

}  // namespace

TEST_CASE("chart axis: seconds from the first entry, ticks labelled", "[snapshot][report]") {
  const DeviceTimeline t = timeline(true);
  const TraceAxis axis = trace_axis(t);
  CHECK(axis.seconds);
  CHECK(axis.extent == Approx(10.0));
  CHECK(moment_at(t, t.peak_allocated, axis) == Approx(5.0));
  CHECK(oom_at(t, axis) == Approx(7.5));
  CHECK(moment_label(t, t.peak_allocated) == "after entry 20, +5.000 s");
  const std::string svg = timeline_svg(t);
  for (const char* tick : {">0 s</text>", ">2.5 s</text>", ">5 s</text>", ">7.5 s</text>", ">10 s</text>"})
    CHECK(svg.find(tick) != std::string::npos);
  CHECK(svg.find("seconds from the first trace entry") != std::string::npos);
  // The peak's marker at 5 s of 10: the middle of the 640 px from x = 70.
  CHECK(svg.find("<line class=\"tl-peak\" x1=\"390.0\"") != std::string::npos);
  CHECK(svg.find("<line class=\"tl-oom\" x1=\"550.0\"") != std::string::npos);
}

TEST_CASE("chart axis: entry counts without usable times, and it says so", "[snapshot][report]") {
  const DeviceTimeline t = timeline(false);
  const TraceAxis axis = trace_axis(t);
  CHECK_FALSE(axis.seconds);
  CHECK(axis.extent == Approx(40.0));
  CHECK(moment_at(t, t.peak_allocated, axis) == Approx(20.0));
  CHECK(oom_at(t, axis) == Approx(31.0));
  CHECK(moment_label(t, t.peak_allocated) == "after entry 20");
  const std::string svg = timeline_svg(t);
  CHECK(svg.find("trace entries (no times recorded)") != std::string::npos);
  CHECK(svg.find(" s</text>") == std::string::npos);
  CHECK(svg.find(">20</text>") != std::string::npos);
}

TEST_CASE("runs on one axis: seconds only when every run is timed", "[snapshot][report]") {
  const DeviceTimeline timed = timeline(true), untimed = timeline(false);
  DeviceTimeline longer = timeline(true);
  longer.curve.back().time_us = kStart + 20'000'000;
  CHECK(shared_axis({&timed, &longer}).seconds);
  CHECK(shared_axis({&timed, &longer}).extent == Approx(20.0));
  CHECK_FALSE(shared_axis({&timed, &untimed}).seconds);
  const std::string svg = runs_svg({{&timed, "A", "run-a"}, {&longer, "B", "run-b"}}, {});
  CHECK(svg.find("<path class=\"run run-a\"") != std::string::npos);
  CHECK(svg.find("<path class=\"run run-b\"") != std::string::npos);
  // A's peak at 5 s on B's 20 s axis: a quarter of the way.
  CHECK(svg.find("<circle class=\"run-a\" cx=\"230.0\"") != std::string::npos);
  CHECK(svg.find(">A peak 4.00 GiB</text>") != std::string::npos);
}
