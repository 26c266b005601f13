// The trace entries a snapshot's reader takes while the pickle is read
// (TraceSink) never enter the value tree; the model must not change for it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/snapshot/model.hpp"
#include "analyzer/snapshot/pickle.hpp"
#include "tests/analyzer/snapshot/pickle_bytes.hpp"

using namespace oomlens::analyzer::snapshot;
using oomlens::analyzer::snapshot::testing::PickleBytes;
using oomlens::analyzer::snapshot::testing::read_fixture;

namespace {

// The model read from a whole tree, with no sink: every entry a value first.
Snapshot from_whole_tree(const std::string& bytes, bool keep_full_trace, bool keep_trace_events) {
  auto tree = read_pickle(std::string_view(bytes));
  REQUIRE(tree);
  auto snapshot = snapshot_from_values(*tree, keep_full_trace, keep_trace_events);
  REQUIRE(snapshot);
  return std::move(*snapshot);
}

void same_entries(const TraceEntry& a, const TraceEntry& b) {
  CHECK(a.action == b.action);
  CHECK(a.addr == b.addr);
  CHECK(a.size == b.size);
  CHECK(a.stream == b.stream);
  CHECK(a.time_us == b.time_us);
  CHECK(a.device_free == b.device_free);
  CHECK(*a.frames == *b.frames);
}

// Counts what it is given and takes it all.
class CountingSink : public TraceSink {
 public:
  bool take(const ValueTree&, ValueRef, std::size_t device, std::span<const ValueRef> items, std::size_t) override {
    if (taken.size() <= device) taken.resize(device + 1);
    taken[device] += items.size();
    return true;
  }
  bool holds_from(std::uint32_t) const override { return false; }
  std::vector<std::size_t> taken;
};

}  // namespace

TEST_CASE("traces taken while reading give the model the whole tree gives", "[snapshot][fixtures]") {
  std::string name = GENERATE("fragmentation_p2.pickle", "fragmentation_p4.pickle", "fragmentation_p5.pickle",
                              "fragmentation_torch_jit_p2.pickle", "cpp_stacks_p4.pickle", "ring_overflow_p4.pickle",
                              "no_oom_p4.pickle", "script_lines_p4.pickle", "job_ranks/rank1.pickle");
  const bool keep_full_trace = GENERATE(true, false);
  CAPTURE(name, keep_full_trace);
  std::string bytes = read_fixture(name);
  Snapshot whole = from_whole_tree(bytes, keep_full_trace, true);
  ReadOptions options;
  options.keep_full_trace = keep_full_trace;
  options.keep_trace_events = true;
  auto streamed = parse_snapshot(std::string_view(bytes), options);
  REQUIRE(streamed);
  CHECK(streamed->trace_lengths == whole.trace_lengths);
  REQUIRE(streamed->device_traces.size() == whole.device_traces.size());
  for (std::size_t d = 0; d < whole.device_traces.size(); ++d) {
    REQUIRE(streamed->device_traces[d].size() == whole.device_traces[d].size());
    for (std::size_t i = 0; i < whole.device_traces[d].size(); ++i)
      same_entries(streamed->device_traces[d][i], whole.device_traces[d][i]);
  }
  REQUIRE(streamed->trace_events.size() == whole.trace_events.size());
  REQUIRE(streamed->trace_stacks.size() == whole.trace_stacks.size());
  for (std::size_t s = 0; s < whole.trace_stacks.size(); ++s) CHECK(*streamed->trace_stacks[s] == *whole.trace_stacks[s]);
  for (std::size_t d = 0; d < whole.trace_events.size(); ++d) {
    REQUIRE(streamed->trace_events[d].size() == whole.trace_events[d].size());
    for (std::size_t i = 0; i < whole.trace_events[d].size(); ++i) {
      const TraceEvent &a = streamed->trace_events[d][i], &b = whole.trace_events[d][i];
      CHECK((a.addr == b.addr && a.size == b.size && a.time_us == b.time_us && a.stack == b.stack && a.action == b.action));
    }
  }
  CHECK(streamed->segments.size() == whole.segments.size());
}

TEST_CASE("a snapshot's trace entries go to the sink", "[snapshot][fixtures]") {
  std::string bytes = read_fixture("fragmentation_p4.pickle");
  Snapshot model = from_whole_tree(bytes, true, false);
  CountingSink sink;
  auto rest = read_pickle(std::string_view(bytes), {}, {}, &sink);
  REQUIRE(rest);
  REQUIRE(sink.taken.size() == model.device_traces.size());
  for (std::size_t d = 0; d < model.device_traces.size(); ++d) CHECK(sink.taken[d] == model.device_traces[d].size());
  auto traces = rest->find(rest->root(), "device_traces");
  REQUIRE(traces);
  for (ValueRef trace : rest->children(*traces)) CHECK(rest->size(trace) == 0);
}

TEST_CASE("the values a batch of taken entries was made of are dropped, unless it memoized anything new",
          "[snapshot]") {
  // Three APPENDS of 1000, 1000 and 500 entries {"action": "alloc", "addr": big, "size": n}, each dict
  // memoized, as Python writes a trace; the keys and the action are memoized in the first entry.
  PickleBytes p;
  p.proto(4).op(Op::EMPTY_DICT).mark().str("segments").op(Op::EMPTY_LIST).str("device_traces").op(Op::EMPTY_LIST);
  p.op(Op::EMPTY_LIST);
  int entry = 0;
  for (int batch : {1000, 1000, 500}) {
    p.mark();
    for (int i = 0; i < batch; ++i, ++entry) {
      p.op(Op::EMPTY_DICT).memoize().mark();
      const std::int64_t addr = std::int64_t{1} << 40 | entry * 512, size = 512 + entry;
      if (entry == 0) {
        p.str("action").memoize().str("alloc").memoize().str("addr").memoize().integer(addr);
        p.str("size").memoize().integer(size);
      } else {
        p.binget(1).binget(2).binget(3).integer(addr).binget(4).integer(size);
      }
      p.op(Op::SETITEMS);
    }
    p.op(Op::APPENDS);
  }
  p.op(Op::APPEND).op(Op::SETITEMS).stop();
  auto whole = read_pickle(std::string_view(p));
  REQUIRE(whole);
  CountingSink sink;
  auto rest = read_pickle(std::string_view(p), {}, {}, &sink);
  REQUIRE(rest);
  CHECK(sink.taken == std::vector<std::size_t>{2500});
  // The first batch stays (it memoized the keys); each of the 1500 others was a dict and two ints.
  CHECK(whole->value_count() - rest->value_count() == 3 * 1500);
  auto model = parse_snapshot(std::string_view(p));
  REQUIRE(model);
  REQUIRE(model->device_traces[0].size() == 2500);
  CHECK(model->device_traces[0][2499].addr == (std::uint64_t{1} << 40 | 2499 * 512));
  CHECK(model->device_traces[0][2499].size == 512 + 2499);
}

TEST_CASE("only a list under the top-level dict's device_traces is taken as a trace", "[snapshot]") {
  // {"segments": [], "other": [[{...}]]}: the same shape under another key.
  PickleBytes p;
  p.proto(4).op(Op::EMPTY_DICT).mark().str("segments").op(Op::EMPTY_LIST).str("other").op(Op::EMPTY_LIST);
  p.op(Op::EMPTY_LIST).op(Op::EMPTY_DICT).mark().str("action").str("alloc").str("size").integer(512).op(Op::SETITEMS);
  p.op(Op::APPEND).op(Op::APPEND).op(Op::SETITEMS).stop();
  CountingSink sink;
  auto tree = read_pickle(std::string_view(p), {}, {}, &sink);
  REQUIRE(tree);
  CHECK(sink.taken.empty());
  auto other = tree->find(tree->root(), "other");
  REQUIRE(other);
  CHECK(tree->size(*tree->children(*other).begin()) == 1);
}

TEST_CASE("a memo reference to a trace entry once read is refused with a reason", "[snapshot][hostile]") {
  // {"segments": [], "device_traces": [[e0, e1]], "again": memo[0]}, the entries memoized as Python does.
  PickleBytes p;
  p.proto(4).op(Op::EMPTY_DICT).mark().str("segments").op(Op::EMPTY_LIST).str("device_traces").op(Op::EMPTY_LIST);
  p.op(Op::EMPTY_LIST).mark();
  for (int i = 0; i < 2; ++i)
    p.op(Op::EMPTY_DICT).memoize().mark().str("action").str("alloc").str("size").integer(512).op(Op::SETITEMS);
  p.op(Op::APPENDS).op(Op::APPEND).str("again").binget(0).op(Op::SETITEMS).stop();
  auto snapshot = parse_snapshot(std::string_view(p));
  REQUIRE_FALSE(snapshot);
  CHECK(snapshot.error().message ==
        "BINGET (0x68) at byte " + std::to_string(std::string_view(p).size() - 4) +
            ": memo index 0 names a trace entry, which this reader does not keep once read; "
            "a snapshot never refers to one twice");
  // Read as a plain pickle (no sink), the same bytes are fine.
  CHECK(read_pickle(std::string_view(p)));
}
