// libFuzzer target: any bytes as a memory snapshot whose traces are replayed,
// read as the front ends read it (every entry kept as a compact event). The
// replay must never crash, hang or run out of memory on what the reader
// accepted, however the trace and the segments disagree.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyzer/snapshot/model.hpp"
#include "analyzer/snapshot/replay.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace snap = oomlens::analyzer::snapshot;
  snap::ReadOptions read;
  read.keep_full_trace = false;
  read.keep_trace_events = true;
  auto snapshot = snap::parse_snapshot(std::string_view(reinterpret_cast<const char*>(data), size), read);
  if (!snapshot) return 0;
  // Few curve points, so that points span several entries even in small traces.
  snap::ReplayOptions options;
  options.curve_points = 3;
  auto timelines = snap::replay_traces(*snapshot, options);
  (void)timelines;
  return 0;
}
