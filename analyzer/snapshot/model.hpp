// A PyTorch memory snapshot (torch.cuda.memory._snapshot(), the object that
// _dump_snapshot pickles), as typed data, shaped as PyTorch builds it in
// torch/csrc/cuda/Module.cpp. This reads every version from 1.13 (a bare list
// of segments) to the newest (which add keys such as compile_context and
// user_metadata), ignoring keys it does not know and giving defaults to keys a
// version lacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/snapshot/chunked_array.hpp"
#include "analyzer/snapshot/expected.hpp"
#include "analyzer/snapshot/pickle.hpp"
#include "analyzer/snapshot/value_tree.hpp"

namespace oomlens::analyzer::snapshot {

// One stack frame: Python, TorchScript, inductor or (stacks='all') C++.
struct Frame {
  std::string filename;
  std::int64_t line = 0;
  std::string name;
  friend bool operator==(const Frame&, const Frame&) = default;
};

// PyTorch shares one frame list among every block and trace entry with the
// same stack; so do we. Never null (an empty list when there is no context).
using FrameList = std::shared_ptr<const std::vector<Frame>>;

enum class BlockState : std::uint8_t {
  active_allocated,     // handed to a tensor
  active_pending_free,  // freed by the user, awaiting stream events (record_stream)
  inactive,             // free, cached
  unknown,              // a state this reader does not know
};

enum class SegmentType : std::uint8_t { large, small, unknown };

enum class TraceAction : std::uint8_t {
  alloc,
  free_requested,
  free_completed,
  segment_alloc,
  segment_free,
  segment_map,
  segment_unmap,
  snapshot,
  oom,
  unknown,
};

struct Block {
  std::uint64_t address = 0;  // from the file, or the segment start plus the sizes before it
  std::uint64_t size = 0;     // rounded, as the allocator carved it
  // The size the caller asked for; 0 for free blocks. Absent in 1.13 unless
  // the block had a history (then the first entry's real_size, as memory_viz).
  std::optional<std::uint64_t> requested_size;
  BlockState state = BlockState::unknown;
  FrameList frames;
};

struct Segment {
  std::int64_t device = 0;
  std::uint64_t address = 0;
  std::uint64_t total_size = 0;
  std::uint64_t allocated_size = 0;  // computed from the blocks when the file lacks it
  std::uint64_t active_size = 0;     // likewise
  std::optional<std::uint64_t> requested_size;  // absent before 2.x
  std::uint64_t stream = 0;                     // raw cudaStream_t; 0 = default stream
  SegmentType segment_type = SegmentType::unknown;
  // (0, 0) is the default pool; others are CUDA-graph or MemPool pools. Absent
  // (and so (0, 0)) before 2.x.
  std::pair<std::int64_t, std::int64_t> pool_id{0, 0};
  bool is_expandable = false;
  FrameList frames;  // the stack that created the segment
  std::vector<Block> blocks;
};

struct TraceEntry {
  TraceAction action = TraceAction::unknown;
  std::uint64_t addr = 0;  // 0 for oom, which has no address
  // For oom: the rounded request that failed (not the segment-sized
  // alloc_size the exception message prints).
  std::uint64_t size = 0;
  std::uint64_t stream = 0;
  std::int64_t time_us = 0;  // Unix epoch microseconds; 0 when absent
  std::optional<std::uint64_t> device_free;  // oom only: cudaMemGetInfo free bytes
  FrameList frames;                          // empty when context was not recorded
};

// A trace entry as the replay reads it: 32 bytes instead of a TraceEntry's
// 72. The front ends keep every entry of a long trace, and a trace is most of
// a snapshot (bench/README.md, snapshot).
struct TraceEvent {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  std::int64_t time_us = 0;
  std::uint32_t stack = 0;  // index in Snapshot::trace_stacks; 0 is the empty list
  TraceAction action = TraceAction::unknown;
};

// allocator_settings (2.x). Every field is optional: older versions lack the
// dict or some keys.
struct AllocatorSettings {
  bool present = false;
  // The last settings string, under the key PYTORCH_CUDA_ALLOC_CONF whatever
  // variable set it.
  std::optional<std::string> alloc_conf;
  std::optional<bool> expandable_segments;
  std::optional<std::int64_t> max_split_size;  // bytes; -1 = unlimited (SIZE_MAX)
  std::optional<double> garbage_collection_threshold;
  // Interval start in MB as a string ("1", "2", ... "32768") -> divisions.
  std::vector<std::pair<std::string, std::int64_t>> roundup_power2_divisions;
  std::optional<std::int64_t> pinned_num_register_threads;
  std::optional<bool> release_lock_on_cudamalloc;
  std::optional<bool> pinned_use_cuda_host_register;
  // Only from alloc_conf ("per_process_memory_fraction:0.5", newer PyTorch):
  // set_per_process_memory_fraction() leaves no trace in a snapshot.
  std::optional<double> per_process_memory_fraction;
  // Keys this reader does not know, their scalar values as Python prints them.
  std::vector<std::pair<std::string, std::string>> other;
};

// A record_function annotation (external_annotations, newer 2.x).
struct Annotation {
  std::string name;
  std::string stage;  // "START" or "END"
  std::int64_t device = 0;
  std::int64_t time_us = 0;
};

struct Snapshot {
  std::vector<Segment> segments;                       // all devices
  std::vector<std::vector<TraceEntry>> device_traces;  // index = device ordinal
  // Entries of each device's trace in the file, whether kept or not (see
  // ReadOptions::keep_full_trace).
  std::vector<std::size_t> trace_lengths;
  // ReadOptions::keep_trace_events: every entry of each device's trace, and
  // the distinct frame lists they name ([0] is the empty list).
  // In chunks: millions of events, and a vector's doubling would hold two
  // copies of them for a moment.
  std::vector<ChunkedArray<TraceEvent>> trace_events;
  std::vector<FrameList> trace_stacks;
  AllocatorSettings settings;
  std::vector<Annotation> external_annotations;
  bool legacy = false;  // PyTorch 1.13's bare list of segments: no traces, no settings
};

struct SnapshotError {
  std::string message;                // one line; names the key path or the opcode
  std::optional<std::size_t> offset;  // byte offset, when the pickle itself was refused
};

struct ReadOptions {
  PickleLimits limits{};
  ReadProgress progress;  // see read_pickle
  // false: keep only the oom entries of each trace (and trace_lengths), which
  // is all the analysis reads. A long trace is most of a snapshot, and its
  // model costs more than the file (bench/README.md, snapshot). Entries not
  // kept are still read and checked, except their frames.
  bool keep_full_trace = true;
  // Every entry as a compact TraceEvent (Snapshot::trace_events), for the
  // replay; with keep_full_trace false, at a third of the memory.
  bool keep_trace_events = false;
};

// Reads a snapshot file's bytes: the pickle, then the model.
Expected<Snapshot, SnapshotError> parse_snapshot(std::span<const std::byte> bytes, const PickleLimits& limits = {});
Expected<Snapshot, SnapshotError> parse_snapshot(std::string_view bytes, const PickleLimits& limits = {});
Expected<Snapshot, SnapshotError> parse_snapshot(std::string_view bytes, const ReadOptions& options);

// The model from an already-read value tree. Errors name the key path, as in
// "segments[3].blocks[7].size: expected an int, found str".
Expected<Snapshot, SnapshotError> snapshot_from_values(const ValueTree& tree, bool keep_full_trace = true,
                                                      bool keep_trace_events = false);

std::string_view to_string(BlockState state);
std::string_view to_string(SegmentType type);
std::string_view to_string(TraceAction action);

}  // namespace oomlens::analyzer::snapshot
