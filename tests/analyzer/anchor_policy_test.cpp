// The production anchors' policies: which forms of the OOM literals reach the
// GPU OOM parsers at all.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>

#include "analyzer/log/parse/parser.hpp"

using namespace oomlens::analyzer;

namespace {

const AnchorPolicy& policy_of(std::string_view literal) {
  const auto& literals = parse::anchor_literals();
  const auto at = std::find(literals.begin(), literals.end(), literal) - literals.begin();
  REQUIRE(static_cast<std::size_t>(at) < literals.size());
  return parse::anchor_policies()[static_cast<std::size_t>(at)];
}

std::size_t find_folded(std::string_view line, std::string_view literal) {
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::size_t at = lower.find(literal);
  REQUIRE(at != std::string::npos);
  return at;
}

// The reach `literal` gives a line holding it.
Reach reach_of(std::string_view literal, std::string_view line) {
  const AnchorPolicy& policy = policy_of(literal);
  REQUIRE(policy.refine != nullptr);
  return policy.refine(line, find_folded(line, literal));
}

Reach reach_of_out_of_memory(std::string_view line) { return reach_of("out of memory", line); }

// Whether the gate of `literal` keeps a hit on the line.
bool kept(std::string_view literal, std::string_view line) {
  const AnchorPolicy& policy = policy_of(literal);
  return policy.gate == nullptr || policy.gate(line, find_folded(line, literal));
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

TEST_CASE("PyTorch's CPU allocator failure is read as host memory, without a traceback walk", "[parse][anchors]") {
  const Reach cpu = reach_of("tried to allocate",
                             "RuntimeError: [enforce fail at alloc_cpu.cpp:83] data. DefaultCPUAllocator: can't allocate "
                             "memory: you tried to allocate 4194304000 bytes. Error code 12 (Cannot allocate memory)");
  CHECK_FALSE(cpu.may_state_oom);
  CHECK_FALSE(cpu.deep_lookback);
  const Reach gpu = reach_of("tried to allocate",
                             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                             "capacity of 79.15 GiB of which 1.2 GiB is free.");
  CHECK(gpu.may_state_oom);
  CHECK(gpu.deep_lookback);
}

TEST_CASE("a DataLoader failure's source line in a traceback is no hit", "[parse][anchors]") {
  CHECK_FALSE(kept("exited unexpectedly",
                   "    raise RuntimeError(f\"DataLoader worker (pid(s) {pids_str}) exited unexpectedly\") from e"));
  CHECK(kept("exited unexpectedly", "RuntimeError: DataLoader worker (pid(s) 4242, 4243) exited unexpectedly"));
  CHECK(kept("exited unexpectedly", "[rank3]: RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly"));
}
