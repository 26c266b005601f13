// The fingerprint plans of the anchor literals, made when oomlens was built:
// planning them at every start cost more than a short scan. The generator
// (cmake/anchor_scan_plan.cpp) runs the same planner on the same literals,
// and is run again whenever either changes.
#include <string_view>

#include "analyzer/log/scan_planner.hpp"

namespace oomlens::analyzer::scan_plan {
namespace {

#include "anchor_scan_plan.inc"

}  // namespace

BakedPlan baked_anchor_plan(bool nibble_filter) {
  return BakedPlan{kAnchorLiterals, nibble_filter ? std::span<const FingerprintChoice>(kNibblePlan)
                                                  : std::span<const FingerprintChoice>(kExactPlan)};
}

}  // namespace oomlens::analyzer::scan_plan
