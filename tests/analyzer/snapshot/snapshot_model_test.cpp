// The snapshot model on the generated fixtures (fixtures/snapshots/generate.py
// --summary prints the numbers asserted here). Every scenario is read from
// its protocol 2, 4 and 5 pickles and must give the same model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

#include "analyzer/snapshot/model.hpp"
#include "tests/analyzer/snapshot/pickle_bytes.hpp"

using namespace oomlens::analyzer::snapshot;
using oomlens::analyzer::snapshot::testing::PickleBytes;
using oomlens::analyzer::snapshot::testing::read_fixture;

namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;
constexpr std::uint64_t kBaseAddress = 0x7F2A00000000;  // generate.py BASE_ADDRESS
constexpr std::uint64_t kSideStream = 0x55812C3E9A40;   // generate.py SIDE_STREAM

Snapshot load(const std::string& name) {
  std::string bytes = read_fixture(name);
  REQUIRE_FALSE(bytes.empty());
  auto snapshot = parse_snapshot(std::as_bytes(std::span(bytes.data(), bytes.size())));
  if (!snapshot) FAIL(name << ": " << snapshot.error().message);
  return std::move(snapshot).value();
}

struct Totals {
  std::size_t segments = 0, blocks = 0;
  std::uint64_t reserved = 0, allocated = 0, inactive = 0, largest_inactive = 0;
};

Totals totals(const Snapshot& snapshot) {
  Totals t;
  for (const Segment& segment : snapshot.segments) {
    ++t.segments;
    t.reserved += segment.total_size;
    t.allocated += segment.allocated_size;
    std::uint64_t from_blocks = 0;
    for (const Block& block : segment.blocks) {
      ++t.blocks;
      from_blocks += block.size;
      if (block.state == BlockState::inactive) {
        t.inactive += block.size;
        t.largest_inactive = std::max(t.largest_inactive, block.size);
      }
    }
    CHECK(from_blocks == segment.total_size);  // blocks tile their segment
  }
  return t;
}

const TraceEntry* last_oom(const Snapshot& snapshot) {
  const TraceEntry* found = nullptr;
  for (const auto& trace : snapshot.device_traces)
    for (const TraceEntry& entry : trace)
      if (entry.action == TraceAction::oom) found = &entry;
  return found;
}

void check_defaults_26(const AllocatorSettings& settings) {
  CHECK(settings.present);
  CHECK(settings.alloc_conf == "");
  CHECK(settings.max_split_size == -1);  // unlimited
  CHECK(settings.garbage_collection_threshold == 0.0);
  CHECK(settings.expandable_segments == false);
  CHECK(settings.pinned_num_register_threads == 1);
  CHECK(settings.release_lock_on_cudamalloc == false);
  CHECK(settings.pinned_use_cuda_host_register == false);
  REQUIRE(settings.roundup_power2_divisions.size() == 16);
  CHECK(settings.roundup_power2_divisions.front() == std::pair<std::string, std::int64_t>{"1", 0});
  CHECK(settings.roundup_power2_divisions.back().first == "32768");
  CHECK_FALSE(settings.per_process_memory_fraction);
  CHECK(settings.other.empty());
}

}  // namespace

TEST_CASE("fragmentation: 18 GiB cached free, no free block near the 4 GiB request", "[snapshot][fixtures]") {
  std::string protocol = GENERATE("p2", "p4", "p5");
  Snapshot snapshot = load("fragmentation_" + protocol + ".pickle");
  CHECK_FALSE(snapshot.legacy);
  Totals t = totals(snapshot);
  CHECK(t.segments == 27);
  CHECK(t.blocks == 108);
  CHECK(t.reserved == 77380714496u);
  CHECK(t.allocated == 58015761408u);
  CHECK(t.inactive == 19364953088u);
  CHECK(t.largest_inactive == 512 * kMiB);

  const Segment& first = snapshot.segments.front();
  CHECK(first.device == 0);
  CHECK(first.address == kBaseAddress);
  CHECK(first.total_size == 3 * kGiB);
  CHECK(first.allocated_size == 2304 * kMiB);
  CHECK(first.active_size == 2304 * kMiB);
  CHECK(first.requested_size == 2304 * kMiB - 512);
  CHECK(first.segment_type == SegmentType::large);
  CHECK(first.pool_id == std::pair<std::int64_t, std::int64_t>{0, 0});
  CHECK_FALSE(first.is_expandable);
  CHECK(first.frames->size() == 4);  // this segment's cudaMalloc had context
  REQUIRE(first.blocks.size() == 4);
  CHECK(first.blocks[1].address == kBaseAddress + 1280 * kMiB);
  CHECK(first.blocks[1].state == BlockState::inactive);
  CHECK(first.blocks[1].requested_size == 0u);
  CHECK(first.blocks[0].requested_size == 1280 * kMiB - 512);
  CHECK(snapshot.segments[5].stream == kSideStream);
  CHECK(snapshot.segments[1].frames->empty());
  CHECK(snapshot.segments[24].segment_type == SegmentType::small);
  CHECK(snapshot.segments[24].total_size == 2 * kMiB);
  CHECK(snapshot.segments[26].pool_id == std::pair<std::int64_t, std::int64_t>{0, 1});

  REQUIRE(snapshot.device_traces.size() == 1);
  const auto& trace = snapshot.device_traces[0];
  CHECK(trace.size() == 686);
  CHECK(trace.front().action == TraceAction::segment_alloc);
  CHECK(trace.front().addr == kBaseAddress);
  CHECK(trace.front().time_us > (std::int64_t{1} << 50));
  const TraceEntry* oom = last_oom(snapshot);
  REQUIRE(oom);
  CHECK(oom == &trace.back());
  CHECK(oom->size == 4 * kGiB);
  CHECK(oom->device_free == 1536 * kMiB);
  CHECK(oom->addr == 0);
  CHECK(oom->frames->front().filename.size() == 280);  // BINUNICODE: past SHORT_BINUNICODE's 255
  check_defaults_26(snapshot.settings);
  CHECK(snapshot.external_annotations.empty());
}

TEST_CASE("frame lists stay shared, as in the pickle", "[snapshot][fixtures]") {
  Snapshot snapshot = load("fragmentation_p4.pickle");
  const Block& activation = snapshot.segments[0].blocks[0];
  const Block& same_stack = snapshot.segments[7].blocks[0];
  CHECK(activation.frames.get() == same_stack.frames.get());
  CHECK(snapshot.segments[0].blocks[2].frames.get() != activation.frames.get());
  // The trace entry that allocated the block refers to the same list.
  bool found = false;
  for (const TraceEntry& entry : snapshot.device_traces[0])
    if (entry.action == TraceAction::alloc && entry.addr == activation.address) found = entry.frames.get() == activation.frames.get();
  CHECK(found);
  // Empty frame lists are one object too.
  CHECK(snapshot.segments[1].frames.get() == snapshot.segments[2].frames.get());

  REQUIRE(activation.frames->size() == 6);
  CHECK(activation.frames->front() == Frame{"/home/user/llm/model.py", 88, "forward"});
  const Block& gradient_free = snapshot.segments[0].blocks[3];
  CHECK(gradient_free.frames->at(0).name ==
        "at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>)");  // a C++ frame
  CHECK(gradient_free.frames->at(2).filename == "/home/josé/projets/entraînement_modèle.py");
}

TEST_CASE("PyTorch's C++ pickler (protocol 2, BINPUT after bodies, 8-byte LONG1) gives the same model",
          "[snapshot][fixtures]") {
  Snapshot python = load("fragmentation_p4.pickle");
  Snapshot cpp = load("fragmentation_torch_jit_p2.pickle");
  REQUIRE(cpp.segments.size() == python.segments.size());
  for (std::size_t i = 0; i < cpp.segments.size(); ++i) {
    const Segment& a = cpp.segments[i];
    const Segment& b = python.segments[i];
    CHECK(a.address == b.address);
    CHECK(a.total_size == b.total_size);
    CHECK(a.stream == b.stream);
    CHECK(a.pool_id == b.pool_id);
    REQUIRE(a.blocks.size() == b.blocks.size());
    for (std::size_t j = 0; j < a.blocks.size(); ++j) {
      CHECK(a.blocks[j].address == b.blocks[j].address);
      CHECK(a.blocks[j].size == b.blocks[j].size);
      CHECK(a.blocks[j].state == b.blocks[j].state);
      CHECK(*a.blocks[j].frames == *b.blocks[j].frames);
    }
  }
  REQUIRE(cpp.device_traces[0].size() == python.device_traces[0].size());
  for (std::size_t i = 0; i < cpp.device_traces[0].size(); ++i) {
    const TraceEntry& a = cpp.device_traces[0][i];
    const TraceEntry& b = python.device_traces[0][i];
    CHECK((a.action == b.action && a.addr == b.addr && a.size == b.size && a.time_us == b.time_us &&
           a.device_free == b.device_free && *a.frames == *b.frames));
  }
  CHECK(cpp.segments[0].blocks[0].frames.get() == cpp.segments[7].blocks[0].frames.get());
}

TEST_CASE("capacity: everything live, 20 MiB cached, device_free below the request", "[snapshot][fixtures]") {
  std::string protocol = GENERATE("p2", "p4", "p5");
  Snapshot snapshot = load("capacity_" + protocol + ".pickle");
  Totals t = totals(snapshot);
  CHECK(t.segments == 39);
  CHECK(t.blocks == 44);
  CHECK(t.reserved == 81606475776u);
  CHECK(t.allocated == 81583481344u);
  CHECK(t.inactive == 22994432u);
  CHECK(t.largest_inactive == 20 * kMiB);
  CHECK(snapshot.device_traces[0].size() == 387);
  const TraceEntry* oom = last_oom(snapshot);
  REQUIRE(oom);
  CHECK(oom->size == 2 * kGiB);
  CHECK(oom->device_free == 412 * kMiB);
}

TEST_CASE("external: 8 GiB reserved and live, 1 GiB free on the device", "[snapshot][fixtures]") {
  std::string protocol = GENERATE("p2", "p4", "p5");
  Snapshot snapshot = load("external_" + protocol + ".pickle");
  Totals t = totals(snapshot);
  CHECK(t.segments == 5);
  CHECK(t.blocks == 9);
  CHECK(t.reserved == 8592031744u);
  CHECK(t.allocated == 8590008832u);
  CHECK(t.largest_inactive == 2021376u);
  CHECK(snapshot.device_traces[0].size() == 316);
  const TraceEntry* oom = last_oom(snapshot);
  REQUIRE(oom);
  CHECK(oom->size == 4 * kGiB);
  CHECK(oom->device_free == 1 * kGiB);
}

TEST_CASE("limit (2.6): the cap is not in the settings; device_free exceeds the request", "[snapshot][fixtures]") {
  std::string protocol = GENERATE("p2", "p4", "p5");
  Snapshot snapshot = load("limit_" + protocol + ".pickle");
  Totals t = totals(snapshot);
  CHECK(t.segments == 3);
  CHECK(t.blocks == 3);
  CHECK(t.reserved == 7680 * kMiB);
  CHECK(t.inactive == 0);
  CHECK(snapshot.device_traces[0].size() == 307);
  const TraceEntry* oom = last_oom(snapshot);
  REQUIRE(oom);
  CHECK(oom->size == 2 * kGiB);
  CHECK(oom->device_free == 71 * kGiB);
  check_defaults_26(snapshot.settings);
}

TEST_CASE("limit_conf (newer PyTorch): unknown keys ignored, fraction read from the settings string",
          "[snapshot][fixtures]") {
  std::string protocol = GENERATE("p2", "p4", "p5");
  Snapshot snapshot = load("limit_conf_" + protocol + ".pickle");
  Totals t = totals(snapshot);
  CHECK(t.segments == 1);
  CHECK(t.blocks == 3);
  CHECK(t.reserved == 18 * kGiB);
  CHECK(t.allocated == 17 * kGiB + 512 * kMiB);
  CHECK(snapshot.segments[0].is_expandable);
  const auto& trace = snapshot.device_traces[0];
  CHECK(trace.size() == 157);
  CHECK(trace.front().action == TraceAction::segment_map);
  const TraceEntry* oom = last_oom(snapshot);
  REQUIRE(oom);
  CHECK(oom->device_free == 60 * kGiB);
  const AllocatorSettings& settings = snapshot.settings;
  CHECK(settings.alloc_conf == "expandable_segments:True,per_process_memory_fraction:0.25");
  CHECK(settings.per_process_memory_fraction == 0.25);
  CHECK(settings.expandable_segments == true);
  REQUIRE(settings.other.size() == 1);
  CHECK(settings.other[0] == std::pair<std::string, std::string>{"graph_capture_record_stream_reuse", "False"});
  REQUIRE(snapshot.external_annotations.size() == 2);
  CHECK(snapshot.external_annotations[0].name == "train_step");
  CHECK(snapshot.external_annotations[0].stage == "START");
  CHECK(snapshot.external_annotations[1].stage == "END");
  CHECK(snapshot.external_annotations[1].time_us > snapshot.external_annotations[0].time_us);
}

TEST_CASE("no_oom: two devices, a pending-free block, a trace past pickle's 1000-item batches",
          "[snapshot][fixtures]") {
  std::string protocol = GENERATE("p2", "p4", "p5");
  Snapshot snapshot = load("no_oom_" + protocol + ".pickle");
  Totals t = totals(snapshot);
  CHECK(t.segments == 10);
  CHECK(t.blocks == 24);
  CHECK(t.reserved == 2277507072u);
  CHECK(t.allocated == 1736590336u);
  CHECK(t.inactive == 272481280u);
  CHECK(last_oom(snapshot) == nullptr);
  REQUIRE(snapshot.device_traces.size() == 2);
  CHECK(snapshot.device_traces[0].size() == 1219);
  CHECK(snapshot.device_traces[1].size() == 49);
  CHECK(snapshot.device_traces[0].back().action == TraceAction::snapshot);
  CHECK(std::count_if(snapshot.segments.begin(), snapshot.segments.end(),
                      [](const Segment& s) { return s.device == 1; }) == 5);
  const Segment& first = snapshot.segments[0];
  CHECK(first.blocks[2].state == BlockState::active_pending_free);
  CHECK(first.active_size == first.allocated_size + 128 * kMiB);
  CHECK(snapshot.settings.max_split_size == std::int64_t(256 * kMiB));
  CHECK(snapshot.settings.garbage_collection_threshold == 0.8);
  CHECK(snapshot.settings.alloc_conf == "max_split_size_mb:256,garbage_collection_threshold:0.8");
}

TEST_CASE("a summary read keeps the oom entries and each trace's length, nothing else of the trace",
          "[snapshot][fixtures]") {
  std::string name = GENERATE("no_oom_p4.pickle", "fragmentation_p2.pickle", "fragmentation_torch_jit_p2.pickle");
  Snapshot full = load(name);
  std::string bytes = read_fixture(name);
  ReadOptions options;
  options.keep_full_trace = false;
  auto summary = parse_snapshot(std::string_view(bytes), options);
  REQUIRE(summary);
  REQUIRE(summary->trace_lengths.size() == full.device_traces.size());
  REQUIRE(summary->device_traces.size() == full.device_traces.size());
  for (std::size_t d = 0; d < full.device_traces.size(); ++d) {
    CHECK(summary->trace_lengths[d] == full.device_traces[d].size());
    std::vector<const TraceEntry*> ooms;
    for (const TraceEntry& e : full.device_traces[d])
      if (e.action == TraceAction::oom) ooms.push_back(&e);
    REQUIRE(summary->device_traces[d].size() == ooms.size());
    for (std::size_t i = 0; i < ooms.size(); ++i) {
      const TraceEntry& kept = summary->device_traces[d][i];
      CHECK(kept.size == ooms[i]->size);
      CHECK(kept.device_free == ooms[i]->device_free);
      CHECK(kept.time_us == ooms[i]->time_us);
      CHECK(*kept.frames == *ooms[i]->frames);
    }
  }
  CHECK(summary->segments.size() == full.segments.size());
  CHECK(totals(*summary).allocated == totals(full).allocated);
}

TEST_CASE("a summary read still checks the entries it drops", "[snapshot][hostile]") {
  // One trace entry whose size is a string: refused whether kept or not.
  PickleBytes p;
  p.proto(4).op(Op::EMPTY_DICT).mark().str("segments").op(Op::EMPTY_LIST).str("device_traces").op(Op::EMPTY_LIST);
  p.op(Op::EMPTY_LIST).op(Op::EMPTY_DICT).mark().str("action").str("alloc").str("size").str("big").op(Op::SETITEMS);
  p.op(Op::APPEND).op(Op::APPEND).op(Op::SETITEMS).stop();
  ReadOptions options;
  options.keep_full_trace = false;
  auto snapshot = parse_snapshot(std::string_view(p), options);
  REQUIRE_FALSE(snapshot);
  CHECK(snapshot.error().message == "device_traces[0][0].size: expected an int, found str");
}

TEST_CASE("legacy 1.13: a bare list; block addresses accumulated; history gives size and frames",
          "[snapshot][fixtures]") {
  std::string protocol = GENERATE("p2", "p4", "p5");
  Snapshot snapshot = load("legacy_113_" + protocol + ".pickle");
  CHECK(snapshot.legacy);
  CHECK(snapshot.device_traces.empty());
  CHECK_FALSE(snapshot.settings.present);
  Totals t = totals(snapshot);
  CHECK(t.segments == 3);
  CHECK(t.blocks == 6);
  CHECK(t.reserved == 1654652928u);
  CHECK(t.allocated == 1094713344u);
  const Segment& second = snapshot.segments[1];
  CHECK(second.address == kBaseAddress + 1536 * kMiB + 32 * kMiB);
  CHECK_FALSE(second.requested_size);
  CHECK(second.pool_id == std::pair<std::int64_t, std::int64_t>{0, 0});
  REQUIRE(second.blocks.size() == 3);
  CHECK(second.blocks[1].address == second.address + 20 * kMiB);
  CHECK(second.blocks[2].address == second.address + 22 * kMiB);
  CHECK(second.blocks[0].requested_size == 19 * kMiB);  // history[0].real_size
  CHECK(second.blocks[0].frames->front().name == "forward");
  CHECK(second.blocks[1].state == BlockState::active_pending_free);
  CHECK_FALSE(second.blocks[1].requested_size);  // no history: unknown
  CHECK(second.blocks[1].frames->empty());
  CHECK(snapshot.segments[2].segment_type == SegmentType::small);
}
