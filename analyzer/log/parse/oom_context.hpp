// Judging a line that says memory ran out, when no parser knows its exact
// words: is it a GPU runtime speaking (not the host, not prose), is it an
// error (not advice, not a note of a retry that worked), and did the run go
// on after it? Shared by the generic parser, the survived-OOM parser and the
// families whose messages can be non-fatal (stream_executor, NCCL WARN).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/log/event.hpp"
#include "analyzer/log/line.hpp"

namespace oomlens::analyzer::parse {

// -- what the line says ------------------------------------------------------

// Where the line states that memory ran out: "out of memory" in any spelling
// (OutOfMemory, out_of_memory, out-of-memory), cudaErrorMemoryAllocation,
// "not enough GPU memory", a library's *_ALLOC_FAILED, Gaudi's "PT_DEVMEM
// Allocation failed", or "failed to allocate" with device-memory words.
std::optional<std::size_t> oom_statement(std::string_view text);

// Words of a GPU runtime, library, vendor or device (CUDA, cudaMalloc, cuMem*,
// GPU, HIP, ROCm, NCCL, VRAM, MLU/NPU/GCU/MUSA/HPU/XPU/TPU, PT_DEVMEM, ...).
bool has_gpu_context(std::string_view text);

// The memory is the host's: host/CPU/RAM/pinned/page-locked/swap/shared
// memory, the kernel's OOM killer, cgroups, CPU allocators.
bool is_host_memory(std::string_view text);

// Something went wrong: an exception name, error/fail/fatal/abort words, a
// status code ("error 2", "(code 2)").
bool has_error_context(std::string_view text);

// Advice or a description rather than a report: "if you see ...", "to avoid
// running out of memory", "may cause", "e.g.", help text.
bool is_advice(std::string_view text);

// The program says it handled the OOM and went on: "recovered", "retrying
// with", "skipping batch", "falling back to", "halving the batch".
bool is_survival_note(std::string_view text);

// Source code as a traceback or a log prints it ("raise ...", "except
// torch.OutOfMemoryError:", a frame line), not a message.
bool is_code(std::string_view text);

// The statement at `pos` is not one: inside a Markdown code span ("`CUDA out
// of memory. ...`" in a README or a table of messages), negated ("not an
// out-of-memory error"), or a line of oomlens's own report ("error[OOM105] GPU
// out of memory without figures: ...").
bool is_mention(std::string_view text, std::size_t pos);

// The exception type on the line: right before `pos` ("RuntimeError: CUDA
// ..."), else a leading "pkg.SomeError:" with other words before the phrase.
// `end` receives where the text after "Name: " starts. Empty when none.
std::string exception_on(std::string_view text, std::size_t pos, std::size_t* end = nullptr);

// -- what it names -----------------------------------------------------------

// The device a line's words name: vendor words first (MLU, NPU, GCU, MUSA,
// HPU/PT_DEVMEM/Gaudi, XPU, TPU), then HIP/ROCm, then CUDA/GPU/NVIDIA/NCCL.
Device device_from_words(std::string_view text);

// A device index stated as "GPU 1", "GPU:1", "device 1", "device:GPU:1",
// "cuda:1", "on device 1", "ordinal 1", "[1] NCCL".
std::optional<int> device_index(std::string_view text);

// The framework the line or its exception names; unknown when none does.
Framework framework_from_words(std::string_view text, std::string_view exception);

// Sizes a sentence states, by the role the words around them give:
// requested ("tried to allocate X", "failed to allocate X (N bytes)",
// "allocating N bytes", "requested X", "calloc N bytes", "reserve X"),
// free ("X free", "free: X", "of which X is free", "X available"), total
// ("total X", "X total", "capacity X"). Sizes need a unit ("bytes", "B",
// "GiB", "3.00G"); commas in "1,073,741,824 bytes" are read. Fields already
// set are kept.
void read_stated_sizes(std::string_view text, MemoryNumbers& numbers);

// -- what follows ------------------------------------------------------------

enum class Fate {
  fatal,     // an error, a traceback, an abort or a nonzero exit follows first
  survived,  // ordinary training output (steps, losses, progress) or a fallback note follows first
  neutral,   // only other chatter follows, as far as the region reaches
  nothing,   // no line of the same rank follows, and the input ends with the region
};

// What the same rank printed after region.lines[at], line by line, up to
// `max_lines` lines of the region; lines for which `same_kind` is true (more
// of the same note) are passed over.
Fate fate_after(const Region& region, std::size_t at, std::size_t max_lines,
                const std::function<bool(std::string_view)>& same_kind = {});

}  // namespace oomlens::analyzer::parse
