// From the numbers of one OOM event in a log to a judgement: which of the
// five classes it is (analyzer/verdict.hpp), and the arithmetic that proves it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/log/event.hpp"
#include "analyzer/verdict.hpp"

namespace oomlens::analyzer {

// Settles which "Process N has X" line (if any) is this process, moving it to
// numbers.self_process and filling process_in_use/non_pytorch from it.
void identify_self_process(MemoryNumbers& numbers, const ClassifyThresholds& t = {});

// Judges one event. Calls identify_self_process first, so `event` may change.
Verdict classify(OomEvent& event, const ClassifyThresholds& t = {});

namespace detail {
// The MPS judgement (classify_mps.cpp): pool, outside allocations, cap.
Verdict classify_mps(const OomEvent& event, const ClassifyThresholds& t);
}  // namespace detail

}  // namespace oomlens::analyzer
