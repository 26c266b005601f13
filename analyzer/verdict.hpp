// The vocabulary every analyzer judges an OOM in: the five classes, the
// thresholds that separate them, and a verdict with the arithmetic behind
// it. The log analyzer (log/classify.hpp) and the snapshot reader
// (snapshot/analysis.hpp) both fill a Verdict; the rules render it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomlens::analyzer {

enum class OomClass { fragmentation, capacity, external, limit, unquantified };
const char* to_string(OomClass c);

// The thresholds the judgement uses. The rule pages (rules/docs/OOM101.md ...
// OOM105.md) quote them; tests/rules/rule_docs_test.cpp reads these defaults
// and fails when a page states another figure.
struct ClassifyThresholds {
  // A cause other than live tensors counts only when the memory it holds
  // could have served the request AND is at least this share of the device:
  // "reserved >> allocated", not a few percent beside a full device.
  double significant_share = 0.10;
  // Without a device total: share of reserved memory instead.
  double significant_share_of_reserved = 0.25;
  // Memory outside PyTorch's allocator (other processes, this process's
  // CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers) makes the class
  // "external" only above max(this, significant_share of the device) AND
  // when it holds more than the live tensors: a few hundred MiB of context
  // on a small card is this process's own overhead, not another holder.
  std::uint64_t external_min_bytes = std::uint64_t{1} << 30;
  // A cap "is reached" when reserved sits within this share of it.
  double at_cap_share = 0.02;
  // A "Process N has X" line is this process itself (PID namespaces hide our
  // own PID from NVML) when X exceeds reserved by no more than this much
  // non-PyTorch memory...
  std::uint64_t self_overhead_max_bytes = std::uint64_t{4} << 30;
  // ...or this share of the device, whichever is larger.
  double self_overhead_max_share = 0.10;
};

// One cause that could explain the failure, with the memory its removal would
// make available to the failed request.
struct Cause {
  OomClass cls = OomClass::capacity;
  std::uint64_t bytes = 0;
  std::string what;  // "reserved but unallocated", "held by process 4242", ...
};

struct Verdict {
  OomClass cls = OomClass::unquantified;
  // Why the class is what it is when the numbers cannot settle it, as a
  // stable token (JSON "reason"): "no-numbers", "library-allocation",
  // "truncated", "size-overflow", "numbers-contradict", "no-request", "uvm".
  // Empty when the arithmetic decided.
  std::string reason;
  // Other causes that also apply, most memory first; named beside the verdict.
  std::vector<Cause> secondary;
  // Lines of arithmetic that prove the verdict, with the message's own numbers.
  std::vector<std::string> arithmetic;
  // Things the user should know that are not the verdict (odd numbers, hints).
  std::vector<std::string> notes;
  // Memory not accounted for by anything the message names: driver/ECC
  // reservations, processes NVML cannot see.
  std::optional<std::uint64_t> unaccounted;
};

// How far apart two printed sizes may be and still be equal: PyTorch prints
// two decimals of the largest unit, so each figure is off by up to half a
// hundredth of that unit.
std::uint64_t rounding_slack(std::uint64_t printed_bytes);

}  // namespace oomlens::analyzer
