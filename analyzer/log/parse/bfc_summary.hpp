// The "Stats:" block of TSL's BFC allocator: the allocator's AllocatorStats,
// logged when it runs out of memory. TensorFlow prints it at the end of its
// BFC dump; JAX/XLA after RESOURCE_EXHAUSTED.
//
//   Stats:
//   Limit:                     10737418240
//   InUse:                     10522669056
//   MaxInUse:                  10522669056
//   NumAllocs:                        4242
//   MaxAllocSize:               1610612736
//   Reserved:                            0
//   PeakReserved:                        0
//   LargestFreeBlock:            214748160
//
//   ****************************************xxxxxxx      (the occupancy render)
//
// Each line goes through LOG, so the caller strips the log prefix first
// (strip_log_prefix) and decides where the block ends.
#pragma once

#include <string_view>

#include "analyzer/log/event.hpp"

namespace oomlens::analyzer::parse {

// The "Stats:" line that opens the block.
bool is_bfc_stats_header(std::string_view text);

// A "Key: N" line of the block; the keys that are memory numbers (Limit,
// InUse, LargestFreeBlock) are stored in `numbers`. False for any other line.
bool read_bfc_stat(std::string_view text, MemoryNumbers& numbers);

// The row of '*', 'x' and '_' that renders the allocator's occupancy.
bool is_bfc_occupancy_render(std::string_view text);

}  // namespace oomlens::analyzer::parse
