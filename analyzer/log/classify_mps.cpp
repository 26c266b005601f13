// The MPS judgement. PyTorch's MPS allocator (aten/src/ATen/mps/MPSAllocator.mm)
// prints three figures, none of them CUDA's:
//
//   MPS allocated      m_total_allocated_memory: the Metal heaps PyTorch holds,
//                      cached buffers included (the counterpart of reserved)
//   other allocations  device.currentAllocatedSize minus that: the rest of the
//                      Metal driver's allocations in this process (other
//                      frameworks' buffers, MPSGraph caches)
//   max allowed        the high watermark, PYTORCH_MPS_HIGH_WATERMARK_RATIO x
//                      the device's recommendedMaxWorkingSetSize (default 1.7)
//
// The allocator raises when MPS allocated + other + request would cross the
// watermark, or when Metal cannot create a heap at all (the system is out of
// memory). There is no free figure and no device total. Cached buffers were
// released before the message, so the heaps are mostly live tensors.
//
// The default watermark is 1.7 x the recommended working set, which macOS
// puts at 2/3 or 3/4 of the Mac's memory: 9.07 GB on an 8 GB Mac, 18.13 GB on
// 16 GB. Crossing it means the job wants more than the machine has - capacity.
// A watermark that is not 1.7 (nor the maximum 2.0) times such a working set
// was lowered by the user: crossing it is a limit.
#include <array>
#include <cmath>
#include <fmt/format.h>

#include "analyzer/log/classify.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::detail {
namespace {

using u64 = std::uint64_t;

std::string sz(u64 b) { return format_size(b); }

enum class Watermark { default_ratio, maximum_ratio, changed };

struct CapReading {
  Watermark kind = Watermark::changed;
  int mac_gib = 0;  // the memory of the Mac the cap fits, for default/maximum
};

// Which Mac's default (1.7) or maximum (2.0) watermark the cap is, if any.
CapReading read_cap(u64 cap) {
  static constexpr std::array<int, 13> kMacGiB = {8, 16, 18, 24, 32, 36, 48, 64, 96, 128, 192, 256, 512};
  static constexpr std::array<double, 2> kWorkingSetShare = {2.0 / 3.0, 3.0 / 4.0};
  constexpr double kTolerance = 0.015;  // MPS prints sizes as floats with two decimals
  const double gib = static_cast<double>(cap) / static_cast<double>(u64{1} << 30);
  for (auto [ratio, kind] : {std::pair{1.7, Watermark::default_ratio}, std::pair{2.0, Watermark::maximum_ratio}})
    for (int mac : kMacGiB)
      for (double share : kWorkingSetShare)
        if (std::fabs(gib - ratio * share * mac) <= kTolerance * gib) return {kind, mac};
  return {};
}

}  // namespace

Verdict classify_mps(const OomEvent& e, const ClassifyThresholds& t) {
  const auto& n = e.numbers;
  Verdict v;
  if (!n.requested || !n.reserved) {
    v.cls = OomClass::unquantified;
    v.reason = "no-numbers";
    v.notes.push_back("The MPS message is incomplete: it lacks the request or the MPS allocated figure.");
    return v;
  }
  const u64 pool = *n.reserved, other = n.non_pytorch.value_or(0), req = *n.requested;
  const u64 in_process = pool + other;

  // Outside PyTorch's heaps, but in this process: the counterpart of CUDA's
  // external holder, with the same floor.
  const u64 floor = std::max(t.external_min_bytes, n.limit ? static_cast<u64>(t.significant_share *
                                                                                static_cast<double>(*n.limit))
                                                            : t.external_min_bytes);
  const bool other_dominates = other >= floor && other >= req && other > pool;

  if (n.limit) {
    const u64 cap = *n.limit;
    const bool crosses = in_process + req > cap + rounding_slack(cap);
    const CapReading reading = read_cap(cap);
    const std::string sum = fmt::format("MPS allocated {} + other allocations {} + requested {} = {} {} the {} "
                                        "high-watermark cap",
                                        sz(pool), sz(other), sz(req), sz(in_process + req), crosses ? ">" : "≤", sz(cap));
    if (crosses && reading.kind == Watermark::changed) {
      v.cls = OomClass::limit;
      v.arithmetic.push_back(sum);
      v.arithmetic.push_back(fmt::format(
          "{} is neither the default (1.7 ×) nor the maximum (2.0 ×) watermark of a Mac's recommended working set: "
          "PYTORCH_MPS_HIGH_WATERMARK_RATIO was changed",
          sz(cap)));
      return v;
    }
    v.arithmetic.push_back(sum);
    if (reading.kind != Watermark::changed)
      v.arithmetic.push_back(fmt::format(
          "{} is the {} watermark ({} × the recommended working set) of a {} GB Mac: {}", sz(cap),
          reading.kind == Watermark::default_ratio ? "default" : "maximum",
          reading.kind == Watermark::default_ratio ? "1.7" : "2.0", reading.mac_gib,
          crosses ? "the job needs more than the machine's memory" : "the cap was not what stopped it"));
    if (!crosses)
      v.notes.push_back("The watermark was not crossed: Metal could not create another heap, so the system itself "
                        "had no memory to give (other applications, or swap exhausted).");
  } else {
    v.arithmetic.push_back(fmt::format("MPS allocated {} + other allocations {} = {} in this process; no cap is set "
                                       "(PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0), so Metal itself refused {} more",
                                       sz(pool), sz(other), sz(in_process), sz(req)));
  }
  if (other_dominates) {
    v.cls = OomClass::external;
    v.arithmetic.push_back(fmt::format("other allocations {} > MPS allocated {}, and ≥ max(1 GiB, 10% of the cap) = {}: "
                                       "Metal memory outside PyTorch's heaps holds the most",
                                       sz(other), sz(pool), sz(floor)));
    v.secondary.push_back({OomClass::capacity, pool, "held by PyTorch's MPS heaps"});
  } else {
    v.cls = OomClass::capacity;
    v.arithmetic.push_back(fmt::format("PyTorch's MPS heaps hold {} of the {} in this process; their cached buffers "
                                       "were released before the error, so this is live data",
                                       sz(pool), sz(in_process)));
    if (other >= req)
      v.secondary.push_back({OomClass::external, other, "in other allocations on the device, outside PyTorch's MPS heap"});
  }
  return v;
}

}  // namespace oomlens::analyzer::detail
