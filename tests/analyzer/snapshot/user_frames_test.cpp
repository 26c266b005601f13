// Which frames are the user's, how a stack is folded, and sites grouped by
// the user's frames (fixtures/snapshots/generate.py: cpp_stacks).
#include <catch2/catch.hpp>

#include "analyzer/snapshot/analysis.hpp"
#include "analyzer/snapshot/user_frames.hpp"
#include "tests/analyzer/snapshot/snapshot_fixture.hpp"

using namespace oomlens::analyzer::snapshot;
using oomlens::analyzer::snapshot::testing::snapshot_fixture;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

Analysis analyze_fixture(const std::string& name) { return analyze(snapshot_fixture(name)); }

}  // namespace

TEST_CASE("frame origin: user, framework, native", "[snapshot][frames]") {
  CHECK(frame_origin({"/home/user/llm/train.py", 12, "main"}) == FrameOrigin::user);
  CHECK(frame_origin({"/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", 1747, "_call_impl"}) ==
        FrameOrigin::framework);
  CHECK(frame_origin({"<frozen runpy>", 198, "_run_module_as_main"}) == FrameOrigin::framework);
  CHECK(frame_origin({"/pytorch/torch/csrc/profiler/unwind/unwind.cpp", 329, "torch::unwind::unwind()"}) ==
        FrameOrigin::native);
  CHECK(frame_origin({"??", 0, "0x7f3a2c"}) == FrameOrigin::native);
  CHECK(frame_origin({"", 0, "start_thread"}) == FrameOrigin::native);
  CHECK(frame_origin({"/usr/local/cuda/lib64/libcudart.so.12", 0, "cudaMalloc"}) == FrameOrigin::native);
  CHECK(frame_origin({"/usr/local/src/conda/python-3.11.9/Python/ceval.c", 5208, "_PyEval_EvalFrameDefault"}) ==
        FrameOrigin::native);
}

TEST_CASE("fold_stack: the user's frames lead, the rest is counted", "[snapshot][frames]") {
  std::vector<Frame> stack = {{"/pytorch/torch/csrc/profiler/unwind/unwind.cpp", 329, "torch::unwind::unwind()"},
                              {"/pytorch/c10/cuda/CUDACachingAllocator.cpp", 1148, "c10::cuda::malloc"},
                              {"/x/site-packages/torch/nn/modules/linear.py", 125, "forward"},
                              {"/home/u/model.py", 88, "forward"},
                              {"/home/u/train.py", 112, "train_step"}};
  FoldedStack f = fold_stack(stack);
  CHECK(f.in_user_code);
  REQUIRE(f.lead.size() == 2);
  CHECK(f.lead[0].filename == "/home/u/model.py");
  CHECK(f.lead[1].name == "train_step");
  CHECK(f.folded_native == 2);
  CHECK(f.folded_framework == 1);

  SECTION("no user frame: the framework's Python frames lead") {
    stack.resize(3);
    FoldedStack g = fold_stack(stack);
    CHECK_FALSE(g.in_user_code);
    REQUIRE(g.lead.size() == 1);
    CHECK(g.lead[0].name == "forward");
    CHECK(g.folded_framework == 0);
  }
  SECTION("C++ only: nothing leads") {
    stack.resize(2);
    FoldedStack g = fold_stack(stack);
    CHECK_FALSE(g.in_user_code);
    CHECK(g.lead.empty());
    CHECK(g.folded_native == 2);
  }
}

TEST_CASE("sites of a stacks=\"all\" snapshot are grouped by the user's frames", "[snapshot][frames]") {
  for (const char* p : {"p2", "p4", "p5"}) {
    INFO(p);
    Analysis a = analyze_fixture(std::string("cpp_stacks_") + p + ".pickle");
    REQUIRE(a.top_sites.size() == 4);
    CHECK(a.sites_total == 4);
    // Two weight blocks, one through cudaMalloc and one from the cache: one site.
    const SiteFrames& weights = a.top_sites[0];
    CHECK(weights.bytes == 8 * kGiB);
    CHECK(weights.count == 2);
    REQUIRE(weights.folded.in_user_code);
    CHECK(weights.folded.lead.front().filename == "/home/user/llm/model.py");
    CHECK(weights.folded.lead.front().line == 21);
    CHECK(weights.folded.lead.front().name == "build_model");
    // Its kept stack is the larger block's (6 GiB, through cudaMalloc): 8 C++ frames.
    CHECK(weights.folded.folded_native == 8);
    REQUIRE(weights.frames);
    CHECK(weights.frames->front().name == "torch::unwind::unwind()");

    CHECK(a.top_sites[1].bytes == 2 * kGiB);
    CHECK(a.top_sites[1].folded.lead.front().line == 118);
    // The block without a stack is older than the trace; the backward pass's has C++ frames only.
    bool older = false, backward = false;
    for (const auto& s : a.top_sites) {
      if (s.missing == MissingStack::before_trace) older = s.bytes == 1 * kGiB && s.frames->empty();
      if (!s.frames->empty() && !s.folded.in_user_code)
        backward = s.folded.lead.empty() && s.folded.folded_native == 8 && s.bytes == 1 * kGiB;
    }
    CHECK(older);
    CHECK(backward);
    REQUIRE(a.oom);
    CHECK(fold_stack(*a.oom->frames).lead.front().line == 88);
  }
}

TEST_CASE("missing stack causes", "[snapshot][frames]") {
  StackRecording r;
  r.legacy = true;
  CHECK(missing_stack_cause(r, true) == MissingStack::legacy_no_history);
  r = {false, false, true, false};
  CHECK(missing_stack_cause(r, true) == MissingStack::no_stacks_recorded);
  r = {false, true, false, false};
  CHECK(missing_stack_cause(r, false) == MissingStack::before_recording);
  r = {false, true, true, false};
  CHECK(missing_stack_cause(r, false) == MissingStack::before_trace);
  CHECK(missing_stack_cause(r, true) == MissingStack::no_python_stack);
  r.overflow_suspected = true;
  CHECK(missing_stack_cause(r, false) == MissingStack::ring_overflow);
  for (auto m : {MissingStack::before_recording, MissingStack::before_trace, MissingStack::ring_overflow,
                 MissingStack::no_stacks_recorded, MissingStack::no_python_stack, MissingStack::legacy_no_history})
    CHECK_FALSE(describe(m).empty());
}

TEST_CASE("a snapshot without any frame says context=None", "[snapshot][frames]") {
  Snapshot s;
  Segment seg;
  seg.total_size = 8 << 20;
  seg.blocks.push_back({0, 8 << 20, std::nullopt, BlockState::active_allocated,
                        std::make_shared<const std::vector<Frame>>()});
  s.segments.push_back(seg);
  Analysis a = analyze(s);
  REQUIRE(a.top_sites.size() == 1);
  CHECK(a.top_sites[0].missing == MissingStack::no_stacks_recorded);
}
