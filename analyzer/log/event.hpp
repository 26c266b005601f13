// What the parsers recognise in a log: GPU out-of-memory events and the other
// facts around them (warnings, look-alikes, collateral failures, settings).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomlens::analyzer {

// Vendor builds of PyTorch print the allocator message with their own device
// word ("MLU out of memory", "NPU out of memory", "GCU ..."); Gaudi is HPU.
enum class Device { cuda, hip, mps, xpu, tpu, mlu, npu, gcu, hpu, musa, unknown };
enum class Framework { pytorch, jax, tensorflow, unknown };

struct OtherProcess {
  std::uint64_t pid = 0;
  std::uint64_t bytes = 0;
};

// Numbers a message states, in bytes. A field the message does not give stays
// empty: never 0 for "unknown".
struct MemoryNumbers {
  std::optional<std::uint64_t> requested;             // "Tried to allocate" (segment-sized for PyTorch)
  std::optional<std::uint64_t> total;                 // device capacity
  std::optional<std::uint64_t> free;                  // device free at OOM time (all processes)
  std::optional<std::uint64_t> allocated;             // allocated by PyTorch (live tensors)
  std::optional<std::uint64_t> reserved;              // reserved by the caching allocator
  std::optional<std::uint64_t> reserved_unallocated;  // reserved - allocated
  std::optional<std::uint64_t> private_pools;         // cached in CUDA-graph/MemPool private pools
  std::optional<std::uint64_t> process_in_use;        // this process, incl. non-PyTorch memory
  std::optional<std::uint64_t> non_pytorch;           // process_in_use - reserved
  std::optional<std::uint64_t> limit;                 // user cap: fraction/"allowed", async limit, watermark
  std::optional<std::uint64_t> largest_free_block;    // BFC/XLA summaries
  std::vector<OtherProcess> other_processes;          // "Process N has X memory in use", self excluded
  // A "Process N has X" line the classifier judged to be this process itself
  // (containers: NVML reports host PIDs).
  std::optional<OtherProcess> self_process;
};

// Which message family produced an event; names the parser.
enum class OomFamily {
  pytorch_allocator,  // "(CUDA|HIP|XPU) out of memory. Tried to allocate ..."
  cuda_malloc_async,  // "Allocation on device N would exceed allowed memory. (out of memory)"
  mps,                // "MPS backend out of memory (...)"
  cuda_runtime,       // "CUDA error: out of memory", driver error, THC "cuda runtime error (2)"
  cublas,             // CUBLAS_STATUS_ALLOC_FAILED
  cudnn,              // CUDNN_STATUS_ALLOC_FAILED, "Not enough memory for workspace!"
  nccl,               // NCCL "unhandled cuda error" / "Cuda failure 'out of memory'"
  xla,                // RESOURCE_EXHAUSTED: Out of memory while trying to allocate ...
  tensorflow,         // OOM when allocating tensor ... / BFC "ran out of memory"
  memory_summary,     // torch.cuda.memory_summary() with "CUDA OOMs: N" > 0
  generic,            // a GPU runtime's out-of-memory statement in words no specific parser knows
};

struct Frame {
  std::string file;
  std::uint64_t line = 0;
  std::string function;
};

struct OomEvent {
  OomFamily family = OomFamily::pytorch_allocator;
  // Which input the event was read from, when one job's log is several files
  // (an index into the caller's list of inputs; 0 for a single input).
  std::uint32_t file = 0;
  Device device = Device::unknown;
  Framework framework = Framework::unknown;
  std::uint64_t line = 0;      // 1-based '\n' line of the message's first line
  std::uint64_t end_line = 0;  // last line the message spans (wrapped/multi-line)
  std::uint64_t offset = 0;    // byte offset of that first line
  std::optional<int> rank;
  std::optional<std::int64_t> time_ms;
  std::optional<int> gpu;            // device index named in the message
  std::string exception;             // e.g. "torch.OutOfMemoryError", "RuntimeError"
  std::string message;               // the message text, joined across wrapped lines
  MemoryNumbers numbers;
  bool expandable_hint = false;      // the message recommends expandable_segments
  bool truncated = false;            // cut short (PyTorch 2.3 device-index bug, log wrapper)
  bool placeholder_limit = false;    // a printed limit was SIZE_MAX-like: no limit set
  std::vector<Frame> traceback;      // outermost first, as Python prints them
};

// Other things worth telling the user, that are not GPU OOMs themselves.
enum class FindingKind {
  allocator_pressure,   // warnings before an OOM: DeepSpeed cache flushes, TF BFC "not a failure", retries
  host_oom_kill,        // the kernel's OOM killer, "Killed", exit -9 / SIGKILL of the whole job
  dataloader_killed,    // DataLoader worker killed by a signal
  cpu_alloc_failure,    // DefaultCPUAllocator / host allocation failures
  not_memory_error,     // illegal memory access, device-side assert: look like OOM, are not
  collateral,           // NCCL watchdog timeout, ChildFailedError, SIGTERM of other ranks
  allocator_setting,    // PYTORCH_CUDA_ALLOC_CONF (etc.) as the log shows it
};

struct LogFinding {
  FindingKind kind = FindingKind::allocator_pressure;
  std::uint32_t file = 0;  // as OomEvent::file
  std::uint64_t line = 0;
  std::uint64_t offset = 0;
  std::optional<int> rank;
  std::optional<std::int64_t> time_ms;
  std::string text;     // the line (cleaned), capped
  std::string detail;   // parser's note: what it is, the setting's value, the signal...
  std::optional<std::uint64_t> bytes;  // a size the line states, when there is one
  // Repeats of the same finding (same kind and cause, between the same two
  // OOMs) are one finding: how many, where the last one is, and the lines of
  // the first few after this one (analyzer/log/finding_groups.hpp).
  std::uint64_t count = 1;
  std::uint64_t last_line = 0;  // 0: this is the only one
  std::vector<std::uint64_t> more_lines;
};

const char* to_string(Device d);
const char* to_string(Framework f);
const char* to_string(OomFamily f);
const char* to_string(FindingKind k);

}  // namespace oomlens::analyzer
