// Which frames of a recorded stack are the user's own code. A snapshot
// recorded with stacks="all" puts the allocator's C++ frames first
// (torch::unwind::unwind(), CapturedTraceback::gather, the caching
// allocator's malloc, ...) and the framework's Python frames next: the line
// the user can change comes after dozens of them. Every stack oomlens shows
// leads with that line and folds the rest.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "analyzer/snapshot/model.hpp"

namespace oomlens::analyzer::snapshot {

enum class FrameOrigin : std::uint8_t {
  user,       // a Python file of the user's own
  framework,  // Python of the runtime, torch or another installed package
  native,     // C, C++ or CUDA (stacks="all"), or an unsymbolized address
};

FrameOrigin frame_origin(const Frame& frame);

// A stack as it is shown: the frames to lead with, and how many were folded.
struct FoldedStack {
  // The user's frames, innermost first. Without any: the framework's Python
  // frames; without those (a C++-only stack): empty.
  std::vector<Frame> lead;
  bool in_user_code = false;  // lead holds the user's frames
  std::size_t folded_native = 0;
  std::size_t folded_framework = 0;  // framework frames not in lead
  friend bool operator==(const FoldedStack&, const FoldedStack&) = default;
};

FoldedStack fold_stack(const std::vector<Frame>& frames);

// Why a block (or a failed call) shows no stack: the known causes, told apart
// by what else the snapshot recorded.
enum class MissingStack : std::uint8_t {
  none,                // it has frames
  before_recording,    // no trace: allocated before _record_memory_history, or recording was off
  before_trace,        // the trace does not hold its allocation: recording started after it
  ring_overflow,       // likewise, and the trace looks cut by its max_entries ring buffer
  no_stacks_recorded,  // no frame anywhere in the snapshot: context=None
  no_python_stack,     // allocated from a thread without a Python stack (autograd's backward pass)
  legacy_no_history,   // PyTorch 1.13 keeps a stack only in a block's history, and this one has none
};

// One line for people, and a stable key for JSON.
std::string_view describe(MissingStack cause);
std::string_view key_of(MissingStack cause);

// What the snapshot as a whole recorded, which decides the cause for a block
// without frames.
struct StackRecording {
  bool legacy = false;
  bool any_frames = false;          // some block or trace entry has frames
  bool trace_recorded = false;      // the device has a trace (read whole)
  bool overflow_suspected = false;  // the trace looks cut by its ring buffer
};

bool any_frames(const Snapshot& snapshot);
MissingStack missing_stack_cause(const StackRecording& recording, bool allocated_in_trace);

}  // namespace oomlens::analyzer::snapshot
