#include "analyzer/snapshot/user_frames.hpp"

#include <initializer_list>

#include "analyzer/library_files.hpp"

namespace oomlens::analyzer::snapshot {
namespace {

bool ends_with_any(std::string_view text, std::initializer_list<std::string_view> ends) {
  for (auto end : ends)
    if (text.ends_with(end)) return true;
  return false;
}

// C++ frames from the unwinder name a C/C++/CUDA source, a shared object, or
// nothing ("??" when the binary has no symbols for the address).
bool is_native(const Frame& f) {
  std::string_view file = f.filename;
  if (file.empty() || file == "??" || file.starts_with("<unknown")) return true;
  if (ends_with_any(file, {".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh", ".S"})) return true;
  if (file.find(".so") != std::string_view::npos && !file.ends_with(".py")) return true;
  return !file.ends_with(".py") && f.name.find("::") != std::string::npos;
}

}  // namespace

FrameOrigin frame_origin(const Frame& frame) {
  if (is_native(frame)) return FrameOrigin::native;
  return is_library_file(frame.filename) ? FrameOrigin::framework : FrameOrigin::user;
}

FoldedStack fold_stack(const std::vector<Frame>& frames) {
  FoldedStack folded;
  std::vector<const Frame*> python;
  for (const Frame& f : frames) {
    switch (frame_origin(f)) {
      case FrameOrigin::user: folded.lead.push_back(f); break;
      case FrameOrigin::framework: python.push_back(&f); break;
      case FrameOrigin::native: ++folded.folded_native; break;
    }
  }
  folded.in_user_code = !folded.lead.empty();
  if (folded.in_user_code) {
    folded.folded_framework = python.size();
  } else {
    for (const Frame* f : python) folded.lead.push_back(*f);
  }
  return folded;
}

std::string_view describe(MissingStack cause) {
  switch (cause) {
    case MissingStack::none: return "";
    case MissingStack::before_recording:
      return "allocated before _record_memory_history() started (the snapshot holds no trace to show when)";
    case MissingStack::before_trace:
      return "allocated before the trace begins; recording started after it";
    case MissingStack::ring_overflow:
      return "allocated before the trace begins; the trace looks cut by its max_entries ring buffer, which "
             "dropped the oldest entries";
    case MissingStack::no_stacks_recorded:
      return "the snapshot holds no stack at all; history was recorded with context=None";
    case MissingStack::no_python_stack:
      return "allocated from a thread with no Python stack, such as autograd's backward pass "
             "(stacks=\"all\" records its C++ frames)";
    case MissingStack::legacy_no_history:
      return "PyTorch 1.13 keeps a block's stack in its history, and this block has none";
  }
  return "";
}

std::string_view key_of(MissingStack cause) {
  switch (cause) {
    case MissingStack::none: return "none";
    case MissingStack::before_recording: return "before_recording";
    case MissingStack::before_trace: return "before_trace";
    case MissingStack::ring_overflow: return "ring_overflow";
    case MissingStack::no_stacks_recorded: return "no_stacks_recorded";
    case MissingStack::no_python_stack: return "no_python_stack";
    case MissingStack::legacy_no_history: return "legacy_no_history";
  }
  return "none";
}

bool any_frames(const Snapshot& snapshot) {
  for (const Segment& segment : snapshot.segments)
    for (const Block& block : segment.blocks)
      if (block.frames && !block.frames->empty()) return true;
  for (const auto& trace : snapshot.device_traces)
    for (const TraceEntry& entry : trace)
      if (entry.frames && !entry.frames->empty()) return true;
  for (const FrameList& frames : snapshot.trace_stacks)
    if (frames && !frames->empty()) return true;
  return false;
}

MissingStack missing_stack_cause(const StackRecording& r, bool allocated_in_trace) {
  if (r.legacy) return MissingStack::legacy_no_history;
  if (!r.any_frames) return MissingStack::no_stacks_recorded;
  if (!r.trace_recorded) return MissingStack::before_recording;
  if (!allocated_in_trace) return r.overflow_suspected ? MissingStack::ring_overflow : MissingStack::before_trace;
  return MissingStack::no_python_stack;
}

}  // namespace oomlens::analyzer::snapshot
