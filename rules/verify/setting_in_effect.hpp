// Whether an allocator setting was in effect in the processes of a run, from
// what PyTorch read back in each (never from the environment oomlens set:
// the job may change it, start CUDA before it is read, or run on a backend
// or platform that ignores an option).
#pragma once

#include <string>
#include <vector>

#include "rules/verify/measures.hpp"

namespace oomlens::rules::verify {

struct SettingCheck {
  bool in_effect = true;
  // Why not, one line each (the first process that shows it); or, when in
  // effect, what the evidence was weaker than a read-back ("torch 1.13 cannot
  // report its allocator settings; ...").
  std::vector<std::string> reasons;
};

// `variable` and `value` as set for the run (PYTORCH_CUDA_ALLOC_CONF,
// "expandable_segments:True"). Processes that never used CUDA are not asked.
SettingCheck check_setting(const RunMeasure& run, const std::string& variable, const std::string& value);

}  // namespace oomlens::rules::verify
