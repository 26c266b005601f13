// The production anchors' policies: which forms of the OOM literals reach the
// GPU OOM parsers at all.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>

#include "analyzer/log/parse/parser.hpp"

using namespace oomlens::analyzer;

namespace {

// The reach the "out of memory" literal gives a line holding it.
Reach reach_of_out_of_memory(std::string_view line) {
  const auto& literals = parse::anchor_literals();
  const auto at = std::find(literals.begin(), literals.end(), "out of memory") - literals.begin();
  const AnchorPolicy& policy = parse::anchor_policies()[static_cast<std::size_t>(at)];
  REQUIRE(policy.refine != nullptr);
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return policy.refine(line, lower.find("out of memory"));
}

}  // namespace

TEST_CASE("the kernel's OOM killer never reaches the GPU OOM parsers", "[parse][anchors]") {
  for (std::string_view line :
       {"[12345.678] Out of memory: Killed process 4242 (python) total-vm:98765432kB, anon-rss:61234567kB",
        "[12345.678] Memory cgroup out of memory: Killed process 4242 (pt_data_worker) total-vm:1kB",
        "Out of memory: Kill process 4242 (python) score 999 or sacrifice child"}) {
    const Reach reach = reach_of_out_of_memory(line);
    CHECK_FALSE(reach.may_state_oom);
    CHECK_FALSE(reach.deep_lookback);
  }
}

TEST_CASE("GPU out-of-memory statements keep the GPU OOM parsers", "[parse][anchors]") {
  for (std::string_view line :
       {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79 GiB",
        "W bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.0GiB with "
        "freed_by_count=0. The caller indicates that this is not a failure",
        "RuntimeError: CUDA error: out of memory", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory "
        "while trying to allocate 1.00GiB."}) {
    CHECK(reach_of_out_of_memory(line).may_state_oom);
  }
}
