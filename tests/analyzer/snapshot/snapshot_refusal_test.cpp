// Files that are not snapshots, or are hostile: each refused with a message
// that says why and where, none crashing, none running anything.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "analyzer/snapshot/model.hpp"
#include "tests/analyzer/snapshot/pickle_bytes.hpp"

using namespace oomlens::analyzer::snapshot;
using Catch::Matchers::Contains;
using oomlens::analyzer::snapshot::testing::PickleBytes;
using oomlens::analyzer::snapshot::testing::read_fixture;

namespace {

SnapshotError refused(std::string_view bytes) {
  auto snapshot = parse_snapshot(bytes);
  if (snapshot) FAIL("the file was accepted");
  return snapshot.error();
}

SnapshotError refused_fixture(const std::string& name) { return refused(read_fixture(name)); }

// {'segments': [<segment>]} with the segment's dict body (keys and values) given.
PickleBytes one_segment(const PickleBytes& body) {
  PickleBytes p;
  p.proto(4).op(Op::EMPTY_DICT).str("segments").op(Op::EMPTY_LIST).op(Op::EMPTY_DICT).mark().raw(body.bytes());
  return p.op(Op::SETITEMS).op(Op::APPEND).op(Op::SETITEM).stop();
}

}  // namespace

TEST_CASE("hostile fixture: GLOBAL os.system + REDUCE", "[snapshot][hostile]") {
  SnapshotError error = refused_fixture("hostile_global_os_system_p2.pickle");
  CHECK(error.offset == 2u);
  CHECK_THAT(error.message, Contains("refused opcode GLOBAL (0x63) at byte 2: it imports a Python object by name"));
}

TEST_CASE("hostile fixture: STACK_GLOBAL (protocol 4)", "[snapshot][hostile]") {
  SnapshotError error = refused_fixture("hostile_stack_global_p4.pickle");
  CHECK(error.offset == 25u);  // PROTO, FRAME, 'os', MEMOIZE, 'system', MEMOIZE, then STACK_GLOBAL
  CHECK_THAT(error.message, Contains("refused opcode STACK_GLOBAL (0x93) at byte 25"));
}

TEST_CASE("hostile fixture: a call buried inside a real snapshot is found where it is", "[snapshot][hostile]") {
  std::string bytes = read_fixture("hostile_reduce_in_snapshot_p2.pickle");
  std::size_t at = bytes.find("cos\nsystem\n");
  REQUIRE(at != std::string::npos);
  REQUIRE(at > 1000);  // the reader got far into plain data first
  SnapshotError error = refused(bytes);
  CHECK(error.offset == at);
  CHECK_THAT(error.message, Contains("refused opcode GLOBAL (0x63) at byte " + std::to_string(at)));
}

TEST_CASE("hostile fixture: 100000 nested lists stop at depth 512", "[snapshot][hostile]") {
  SnapshotError error = refused_fixture("hostile_deep_nesting_p2.pickle");
  CHECK(error.offset == 2u + 100000u + 511u);
  CHECK_THAT(error.message, Contains("APPEND (0x61) at byte 100513: containers nested more than 512 deep (limit)"));
}

TEST_CASE("hostile fixture: BINUNICODE8 declaring 2^60 bytes", "[snapshot][hostile]") {
  SnapshotError error = refused_fixture("hostile_huge_binunicode8_p4.pickle");
  CHECK(error.offset == 2u);
  CHECK(error.message == "BINUNICODE8 (0x8d) at byte 2: it declares 1152921504606846976 bytes but only 3 remain: "
                         "truncated or hostile");
}

TEST_CASE("hostile fixture: a memo index near 2^32", "[snapshot][hostile]") {
  SnapshotError error = refused_fixture("hostile_huge_memo_index_p2.pickle");
  CHECK(error.offset == 8u);
  CHECK(error.message == "LONG_BINGET (0x6a) at byte 8: memo index 4294967295 was never stored");
}

TEST_CASE("truncated and empty files", "[snapshot][truncated]") {
  SnapshotError truncated = refused_fixture("truncated_fragmentation_p4.pickle");
  CHECK_THAT(truncated.message, Contains("truncated"));
  REQUIRE(truncated.offset);
  CHECK(*truncated.offset <= read_fixture("truncated_fragmentation_p4.pickle").size());

  // Every prefix of a real snapshot is refused cleanly (none crashes, none is accepted).
  std::string whole = read_fixture("legacy_113_p4.pickle");
  for (std::size_t n = 0; n < whole.size(); ++n) {
    auto snapshot = parse_snapshot(std::string_view(whole).substr(0, n));
    CHECK_FALSE(snapshot);
  }
  CHECK(refused_fixture("empty.pickle").message == "empty input: not a pickle");
}

TEST_CASE("every hostile_* fixture is refused", "[snapshot][hostile]") {
  std::size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(OOMLENS_SOURCE_DIR "/fixtures/snapshots")) {
    std::string name = entry.path().filename().string();
    if (name.rfind("hostile_", 0) != 0) continue;
    INFO(name);
    ++seen;
    CHECK_FALSE(parse_snapshot(read_fixture(name)));
  }
  CHECK(seen >= 6);
}

TEST_CASE("a pickle that is not a snapshot", "[snapshot]") {
  CHECK(refused(PickleBytes().proto(4).integer(5).stop()).message ==
        "not a memory snapshot: the pickle holds a int, expected a dict (PyTorch 2.x) or a list of segments (1.13)");
  CHECK(refused(PickleBytes().proto(4).op(Op::EMPTY_DICT).stop()).message ==
        "not a memory snapshot: the top-level dict has no 'segments' key");
  CHECK_FALSE(refused(PickleBytes().proto(4).integer(5).stop()).offset);
}

TEST_CASE("wrong types are named by their key path", "[snapshot]") {
  // segments[0].total_size is a str.
  CHECK(refused(one_segment(PickleBytes().str("address").integer(4096).str("total_size").str("big").str("blocks").op(Op::EMPTY_LIST)))
            .message == "segments[0].total_size: expected an int, found str");
  // segments[0].blocks[1].size is negative.
  PickleBytes blocks;
  blocks.str("address").integer(0).str("total_size").integer(1024).str("blocks").op(Op::EMPTY_LIST).mark();
  blocks.op(Op::EMPTY_DICT).str("size").integer(512).op(Op::SETITEM);
  blocks.op(Op::EMPTY_DICT).str("size").integer(-512).op(Op::SETITEM);
  blocks.op(Op::APPENDS);
  CHECK(refused(one_segment(blocks)).message == "segments[0].blocks[1].size: expected a non-negative int, found -512");
  // A missing key that no version lacks.
  CHECK(refused(one_segment(PickleBytes().str("address").integer(0).str("blocks").op(Op::EMPTY_LIST))).message ==
        "segments[0]: missing key 'total_size'");
  // A frame's line is a str.
  PickleBytes frames;
  frames.str("address").integer(0).str("total_size").integer(0).str("blocks").op(Op::EMPTY_LIST);
  frames.str("frames").op(Op::EMPTY_LIST).op(Op::EMPTY_DICT).str("line").str("12").op(Op::SETITEM).op(Op::APPEND);
  CHECK(refused(one_segment(frames)).message == "segments[0].frames[0].line: expected an int, found str");
  // segment_pool_id must be a pair.
  CHECK(refused(one_segment(PickleBytes().str("address").integer(0).str("total_size").integer(0).str("blocks")
                                .op(Op::EMPTY_LIST).str("segment_pool_id").integer(0).op(Op::TUPLE1)))
            .message == "segments[0].segment_pool_id: expected a pair of ints, found a tuple of 1 items");
  // device_traces entries.
  PickleBytes trace;
  trace.proto(4).op(Op::EMPTY_DICT).mark().str("segments").op(Op::EMPTY_LIST).str("device_traces").op(Op::EMPTY_LIST);
  trace.op(Op::EMPTY_LIST).op(Op::EMPTY_DICT).str("action").integer(3).op(Op::SETITEM).op(Op::APPEND).op(Op::APPEND);
  trace.op(Op::SETITEMS).stop();
  CHECK(refused(trace).message == "device_traces[0][0].action: expected a str, found int");
}

TEST_CASE("a minimal snapshot: missing optional keys take their defaults", "[snapshot]") {
  auto snapshot = parse_snapshot(one_segment(PickleBytes().str("address").integer(4096).str("total_size").integer(1024)
                                                 .str("blocks").op(Op::EMPTY_LIST)
                                                 .op(Op::EMPTY_DICT).mark().str("size").integer(512).str("state").str("active_awaiting_free").op(Op::SETITEMS).op(Op::APPEND)
                                                 .op(Op::EMPTY_DICT).mark().str("size").integer(512).str("state").str("mystery").op(Op::SETITEMS).op(Op::APPEND)));
  REQUIRE(snapshot);
  const Segment& segment = snapshot->segments.at(0);
  CHECK(segment.device == 0);
  CHECK(segment.segment_type == SegmentType::unknown);
  CHECK_FALSE(segment.requested_size);
  CHECK(segment.frames);
  CHECK(segment.frames->empty());
  CHECK(segment.blocks[0].state == BlockState::active_pending_free);  // the documented alias
  CHECK(segment.blocks[1].state == BlockState::unknown);
  CHECK(segment.blocks[1].address == 4096 + 512);
  CHECK(segment.allocated_size == 0);   // computed: no active_allocated block
  CHECK(segment.active_size == 512);    // computed: the pending-free block
  CHECK(snapshot->device_traces.empty());
  CHECK_FALSE(snapshot->settings.present);
}

TEST_CASE("max_split_size written as an unsigned SIZE_MAX still means unlimited", "[snapshot]") {
  PickleBytes p;
  p.proto(4).op(Op::EMPTY_DICT).mark().str("segments").op(Op::EMPTY_LIST).str("allocator_settings").op(Op::EMPTY_DICT);
  p.str("max_split_size").op(Op::LONG1).u8(9).le(UINT64_MAX, 8).u8(0).op(Op::SETITEM);
  p.op(Op::SETITEMS).stop();
  auto snapshot = parse_snapshot(p);
  REQUIRE(snapshot);
  CHECK(snapshot->settings.max_split_size == -1);
}

TEST_CASE("one block list shared by a thousand segments is refused, not expanded", "[snapshot][hostile]") {
  // A decompression bomb: 100 blocks, referenced through the memo by 1000
  // segments, would make 100000 blocks from a file of a few kilobytes.
  PickleBytes p;
  p.proto(4).op(Op::EMPTY_DICT).str("segments").op(Op::EMPTY_LIST).mark();
  p.op(Op::EMPTY_DICT).mark().str("address").integer(0).str("total_size").integer(0).str("blocks");
  p.op(Op::EMPTY_LIST).memoize().mark();
  for (int i = 0; i < 100; ++i) p.op(Op::EMPTY_DICT).str("size").integer(0).op(Op::SETITEM);
  p.op(Op::APPENDS).op(Op::SETITEMS);
  for (int i = 1; i < 1000; ++i)
    p.op(Op::EMPTY_DICT).mark().str("address").integer(0).str("total_size").integer(0).str("blocks").binget(0).op(Op::SETITEMS);
  p.op(Op::APPENDS).op(Op::SETITEM).stop();
  SnapshotError error = refused(p);
  CHECK_THAT(error.message, Contains("the same data is referenced over and over"));
  CHECK_THAT(error.message, Contains("segments["));
}
