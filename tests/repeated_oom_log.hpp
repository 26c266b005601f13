// A log of `count` PyTorch OOM messages, one after each "step N" line, each
// asking for a different size: enough messages to pass a small
// AnalyzerOptions::max_events, in the tests of what each output says then.
#pragma once

#include <string>

namespace oomlens::testing {

inline std::string repeated_oom_log(int count) {
  std::string log;
  for (int i = 0; i < count; ++i)
    log += "step " + std::to_string(i) + "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate " +
           std::to_string(1 + i) + ".00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 10.00 MiB is free. "
           "Of the allocated memory 70.00 GiB is allocated by PyTorch, and 2.00 GiB is reserved by PyTorch but "
           "unallocated.\n";
  return log;
}

}  // namespace oomlens::testing
