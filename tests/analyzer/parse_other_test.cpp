// Parsers for everything that is not PyTorch's caching allocator: CUDA
// libraries, XLA, TensorFlow, pressure warnings, look-alikes, collateral
// failures and allocator settings. Messages are written from the format
// strings of the libraries and frameworks that print them; numbers are chosen
// so that the expected bytes can be checked exactly.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

using namespace oomlens::analyzer;
using namespace oomlens::analyzer::parse;

namespace {

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;
constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

// Lines numbered from `first_number`, every line an anchor (parsers must not
// care), all printed by `rank`.
Region region_of(const std::vector<std::string>& texts, std::optional<int> rank = std::nullopt,
                 std::uint64_t first_number = 1) {
  Region region;
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Line line;
    line.number = first_number + i;
    line.offset = offset;
    line.text = texts[i];
    line.rank = rank;
    offset += texts[i].size() + 1;
    region.lines.push_back(line);
    region.anchors.push_back(i);
  }
  return region;
}

// Messages of PyTorch's own allocators (caching, cudaMallocAsync, MPS): other
// parsers' business.
const std::vector<std::string> kPytorchAllocatorMessages = {
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.25 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 78.14 GiB memory in "
    "use. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 7.50 GiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
    "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.80 GiB "
    "already allocated; 3.56 MiB free; 9.95 GiB reserved in total by PyTorch) If reserved memory is >> "
    "allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory "
    "Management and PYTORCH_CUDA_ALLOC_CONF",
    "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 512.00 MiB. GPU 1 has a total capacity of "
    "63.98 GiB of which 0 bytes is free. Of the allocated memory 60.00 GiB is allocated by PyTorch, and 1.00 GiB "
    "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
    "Allocation on device 0 would exceed allowed memory. (out of memory)",
    "RuntimeError: MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 1.00 GB, max allowed: "
    "18.13 GB). Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable "
    "upper limit for memory allocations (may cause system failure).",
};

// Prose that merely contains an anchor literal.
const std::vector<std::string> kProse = {
    "epoch 3 step 1200 loss 2.31 GPU memory usage 30%",
    "Saving memory snapshot to /tmp/snap.pickle",
    "signal handler installed for SIGUSR1",
    "watchdog timer started",
    "Killed 3 zombie workers",
    "the job was killed by the user",
    "flushing the kv cache flush queue",
    "exitcode tracking enabled",
};

const std::vector<Parser> kOtherParsers = {parse_survived_oom,     parse_cuda_library,    parse_xla,
                                           parse_tensorflow,       parse_memory_summary,  parse_allocator_notes,
                                           parse_pressure_warning, parse_lookalike,       parse_generic_oom,
                                           parse_collateral,       parse_allocator_setting};

const std::string kC10Search =
    "Search for `cudaErrorMemoryAllocation' in "
    "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.";
const std::string kC10Async =
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
    "be incorrect.";
const std::string kC10Blocking = "For debugging consider passing CUDA_LAUNCH_BLOCKING=1";
const std::string kC10Dsa = "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.";

bool no_numbers(const MemoryNumbers& n) {
  return !n.requested && !n.total && !n.free && !n.allocated && !n.reserved && !n.reserved_unallocated &&
         !n.private_pools && !n.process_in_use && !n.non_pytorch && !n.limit && !n.largest_free_block &&
         n.other_processes.empty() && !n.self_process;
}

// The one OOM event `parser` reads from region.lines[at], with the index of the
// message's last line, `last`; it finds nothing else.
OomEvent only_oom_at(Parser parser, const Region& region, std::size_t at, std::size_t last) {
  Parsed out;
  REQUIRE(parser(region, at, out) == last);
  REQUIRE(out.ooms.size() == 1);
  REQUIRE(out.findings.empty());
  return out.ooms[0];
}

// The one finding `parser` reads from region.lines[at], as only_oom_at.
LogFinding only_finding_at(Parser parser, const Region& region, std::size_t at, std::size_t last) {
  Parsed out;
  REQUIRE(parser(region, at, out) == last);
  REQUIRE(out.findings.size() == 1);
  REQUIRE(out.ooms.empty());
  return out.findings[0];
}

// The same for a region of one line.
OomEvent only_oom(Parser parser, const std::string& line) { return only_oom_at(parser, region_of({line}), 0, 0); }
LogFinding only_finding(Parser parser, const std::string& line) {
  return only_finding_at(parser, region_of({line}), 0, 0);
}

// `parser` does not claim region.lines[at] and appends nothing.
void check_not_claimed(Parser parser, const Region& region, std::size_t at) {
  Parsed out;
  CHECK_FALSE(parser(region, at, out));
  CHECK(out.ooms.empty());
  CHECK(out.findings.empty());
}

// What every parser here must leave alone: PyTorch allocator messages and
// prose, followed by `extra`.
std::vector<std::string> not_ours(std::initializer_list<std::string> extra = {}) {
  std::vector<std::string> texts = kPytorchAllocatorMessages;
  texts.insert(texts.end(), kProse.begin(), kProse.end());
  texts.insert(texts.end(), extra);
  return texts;
}

// `parser` claims none of `texts`, each an anchor line of one region.
void check_none_claimed(Parser parser, const std::vector<std::string>& texts) {
  Region r = region_of(texts);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO(texts[i]);
    check_not_claimed(parser, r, i);
  }
}

}  // namespace

// ---------------------------------------------------------------------------
TEST_CASE("cuda_library: CUDA error: out of memory with the C10 suffix", "[parse][cuda_library]") {
  Region r = region_of({"torch.AcceleratorError: CUDA error: out of memory", kC10Search, kC10Async, kC10Blocking,
                        kC10Dsa, "", "next record"},
                       2, 40);
  const OomEvent ev = only_oom_at(parse_cuda_library, r, 0, 4);
  CHECK(ev.family == OomFamily::cuda_runtime);
  CHECK(ev.device == Device::cuda);
  CHECK(ev.framework == Framework::pytorch);
  CHECK(ev.exception == "torch.AcceleratorError");
  CHECK(ev.message == "CUDA error: out of memory");
  CHECK(ev.line == 40);
  CHECK(ev.end_line == 44);
  CHECK(ev.offset == 0);
  CHECK(ev.rank == 2);
  CHECK(no_numbers(ev.numbers));
  CHECK(ev.traceback.empty());
}

TEST_CASE("cuda_library: 1.13 suffix, driver error, HIP and THC forms", "[parse][cuda_library]") {
  SECTION("RuntimeError with the 1.13 suffix (period, no DSA line)") {
    Region r = region_of({"RuntimeError: CUDA error: out of memory", kC10Async,
                          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.", "Traceback (most recent call last):"});
    const OomEvent ev = only_oom_at(parse_cuda_library, r, 0, 2);
    CHECK(ev.exception == "RuntimeError");
    CHECK(ev.framework == Framework::pytorch);
  }
  SECTION("driver error") {
    const OomEvent ev = only_oom(parse_cuda_library, "RuntimeError: CUDA driver error: out of memory");
    CHECK(ev.family == OomFamily::cuda_runtime);
    CHECK(ev.framework == Framework::pytorch);
  }
  SECTION("HIP, with the hipified suffix") {
    Region r = region_of({"RuntimeError: HIP error: out of memory",
                          "HIP kernel errors might be asynchronously reported at some other API call, so the "
                          "stacktrace below might be incorrect.",
                          "For debugging consider passing AMD_SERIALIZE_KERNEL=3",
                          "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions."});
    const OomEvent ev = only_oom_at(parse_cuda_library, r, 0, 3);
    CHECK(ev.device == Device::hip);
    CHECK(ev.framework == Framework::pytorch);
    CHECK(ev.message == "HIP error: out of memory");
  }
  SECTION("legacy THC") {
    const OomEvent ev = only_oom(
        parse_cuda_library,
        "RuntimeError: cuda runtime error (2) : out of memory at /build/aten/src/THC/generic/THCStorage.cu:58");
    CHECK(ev.family == OomFamily::cuda_runtime);
    CHECK(ev.framework == Framework::pytorch);
    CHECK(ev.exception == "RuntimeError");
    CHECK(ev.message.rfind("cuda runtime error (2) : out of memory at", 0) == 0);
  }
  SECTION("a driver code printed by another library") {
    const OomEvent ev = only_oom(
        parse_cuda_library,
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory");
    CHECK(ev.family == OomFamily::cuda_runtime);
    CHECK(ev.framework == Framework::unknown);
    CHECK(ev.exception == "cupy_backends.cuda.api.runtime.CUDARuntimeError");
  }
}

TEST_CASE("cuda_library: cuBLAS and cuDNN", "[parse][cuda_library]") {
  SECTION("cuBLAS handle creation") {
    const OomEvent ev = only_oom(
        parse_cuda_library,
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`");
    CHECK(ev.family == OomFamily::cublas);
    CHECK(ev.framework == Framework::pytorch);
    CHECK(ev.exception == "RuntimeError");
    CHECK(ev.message.rfind("CUDA error: CUBLAS_STATUS_ALLOC_FAILED", 0) == 0);
  }
  SECTION("cuDNN status") {
    const OomEvent ev = only_oom(parse_cuda_library, "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED");
    CHECK(ev.family == OomFamily::cudnn);
    CHECK(ev.framework == Framework::pytorch);
  }
  SECTION("cuDNN workspace") {
    const OomEvent ev = only_oom(parse_cuda_library, "torch.OutOfMemoryError: Not enough memory for workspace!");
    CHECK(ev.family == OomFamily::cudnn);
    CHECK(ev.exception == "torch.OutOfMemoryError");
    CHECK(ev.framework == Framework::pytorch);
  }
  SECTION("TensorFlow's cuDNN handle") {
    const OomEvent ev = only_oom(
        parse_cuda_library,
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:361] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED");
    CHECK(ev.family == OomFamily::cudnn);
    CHECK(ev.framework == Framework::tensorflow);
  }
}

TEST_CASE("cuda_library: NCCL unhandled cuda error needs OOM evidence", "[parse][cuda_library][nccl]") {
  const std::string nccl_error =
      "torch.distributed.DistBackendError: NCCL error in: /src/torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
      "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5";
  SECTION("Last error says out of memory") {
    Region r = region_of({nccl_error, "ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:",
                          "Cuda failure 'out of memory'", "Traceback (most recent call last):"});
    const OomEvent ev = only_oom_at(parse_cuda_library, r, 0, 3);
    CHECK(ev.family == OomFamily::nccl);
    CHECK(ev.device == Device::cuda);
    CHECK(ev.framework == Framework::pytorch);
    CHECK(ev.exception == "torch.distributed.DistBackendError");
    CHECK(ev.message.rfind("NCCL error in: ", 0) == 0);
    CHECK(ev.end_line == 4);
  }
  SECTION("newer NCCL: Cuda failure with the code") {
    Region r = region_of({nccl_error, "ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:",
                          "Cuda failure 2 'out of memory'"});
    only_oom_at(parse_cuda_library, r, 0, 3);
  }
  SECTION("another CUDA failure is not an OOM") {
    Region r = region_of({nccl_error, "ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:",
                          "Cuda failure 'invalid device ordinal'"});
    check_not_claimed(parse_cuda_library, r, 0);
  }
  SECTION("old NCCL, no Last error, no evidence") {
    Region r = region_of({"RuntimeError: NCCL error in: /src/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled "
                          "cuda error, NCCL version 2.7.8",
                          "ncclUnhandledCudaError: Call to CUDA function failed."});
    check_not_claimed(parse_cuda_library, r, 0);
  }
  SECTION("an NCCL WARN just before is evidence; the WARN alone is an nccl OOM too") {
    Region r = region_of({"gpu-node-7:2211:2300 [3] transport/p2p.cc:412 NCCL WARN Cuda failure 'out of memory'",
                          "gpu-node-7:2211:2300 [3] NCCL INFO init.cc:1234 -> 1", nccl_error});
    const OomEvent error = only_oom_at(parse_cuda_library, r, 2, 2);
    CHECK(error.family == OomFamily::nccl);
    CHECK(error.gpu == 3);
    CHECK(error.line == 3);

    const OomEvent warn = only_oom_at(parse_cuda_library, r, 0, 0);
    CHECK(warn.family == OomFamily::nccl);
    CHECK(warn.gpu == 3);
    CHECK(warn.framework == Framework::unknown);
    CHECK(warn.message.rfind("NCCL WARN", 0) == 0);
  }
}

TEST_CASE("cuda_library: stream_executor's failed allocation is pressure, not an OOM", "[parse][cuda_library]") {
  Region r = region_of({"E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 3.52G "
                        "(3779571712 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
                        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:1540] failed to alloc 2147483648 "
                        "bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory"});
  Parsed out;
  CHECK(parse_cuda_library(r, 0, out) == 0u);
  CHECK(parse_cuda_library(r, 1, out) == 1u);
  CHECK(out.ooms.empty());
  REQUIRE(out.findings.size() == 2);
  CHECK(out.findings[0].kind == FindingKind::allocator_pressure);
  CHECK(out.findings[0].bytes == 3779571712u);
  CHECK(out.findings[0].line == 1);
  CHECK(out.findings[1].kind == FindingKind::cpu_alloc_failure);
  CHECK(out.findings[1].bytes == 2147483648u);
}

TEST_CASE("cuda_library: what it leaves alone", "[parse][cuda_library]") {
  check_none_claimed(parse_cuda_library,
                     not_ours({"RuntimeError: CUDA error: an illegal memory access was encountered",
                               kC10Search,  // the suffix line names cudaErrorMemoryAllocation
                               kC10Dsa}));
}

TEST_CASE("cuda_library: interleaved ranks", "[parse][cuda_library]") {
  Region r = region_of({"RuntimeError: CUDA error: out of memory", "other rank's progress bar", kC10Async, kC10Blocking});
  r.lines[0].rank = 0;
  r.lines[1].rank = 1;
  r.lines[2].rank = 0;
  r.lines[3].rank = 0;
  SECTION("a non-anchor line of another rank is read past") {
    r.anchors = {0};
    only_oom_at(parse_cuda_library, r, 0, 3);
  }
  SECTION("an anchor of another rank stops the message, so its parser still sees it") {
    r.lines[1].text = "RuntimeError: CUDA error: out of memory";
    r.anchors = {0, 1};
    only_oom_at(parse_cuda_library, r, 0, 0);
  }
}

// ---------------------------------------------------------------------------
TEST_CASE("xla: RESOURCE_EXHAUSTED with a BufferAssignment report", "[parse][xla]") {
  Region r = region_of({
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
      "25769803776 bytes.",
      "BufferAssignment OOM Debugging.",
      "BufferAssignment stats:",
      "             parameter allocation:    8.00GiB",
      "              constant allocation:         0B",
      "        maybe_live_out allocation:    8.00GiB",
      "     preallocated temp allocation:   24.00GiB",
      "                 total allocation:   40.00GiB",
      "              total fragmentation:         0B (0.00%)",
      "Peak buffers:",
      "\tBuffer 1:",
      "\t\tSize: 24.00GiB",
      "\t\tOperator: op_name=\"jit(step)/dot_general\" source_file=\"/work/model.py\" source_line=88",
      "\t\tXLA Label: fusion",
      "\t\tShape: f32[65536,98304]",
      "\t\t==========================",
      "",
      "\tBuffer 2:",
      "\t\tSize: 8.00GiB",
      "\t\tEntry Parameter Subshape: f32[32768,65536]",
      "\t\t==========================",
      "",
      "",
      "",
      "step 12 loss 1.02",
  });
  const OomEvent ev = only_oom_at(parse_xla, r, 0, 20);
  CHECK(ev.family == OomFamily::xla);
  CHECK(ev.framework == Framework::jax);
  CHECK(ev.device == Device::unknown);  // JAX on GPU names no device
  CHECK(ev.exception == "jaxlib.xla_extension.XlaRuntimeError");
  CHECK(ev.numbers.requested == 25769803776u);
  CHECK(ev.message.rfind("RESOURCE_EXHAUSTED: Out of memory while trying to allocate", 0) == 0);
  CHECK(ev.end_line == 21);
}

TEST_CASE("xla: message forms", "[parse][xla]") {
  SECTION("human-readable size, jax.errors.JaxRuntimeError") {
    const OomEvent ev = only_oom(
        parse_xla,
        "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 16.00GiB.");
    CHECK(ev.numbers.requested == 16 * GiB);
    CHECK(ev.exception == "jax.errors.JaxRuntimeError");
  }
  SECTION("old status style") {
    const OomEvent ev = only_oom(
        parse_xla,
        "RuntimeError: Resource exhausted: Out of memory while trying to allocate 1073741824 bytes.");
    CHECK(ev.numbers.requested == GiB);
    CHECK(ev.exception == "RuntimeError");
    CHECK(ev.message.rfind("Resource exhausted:", 0) == 0);
  }
  SECTION("request on a device ordinal: the exact byte figure") {
    const OomEvent ev = only_oom(parse_xla,
                                 "jaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for "
                                 "176.00MiB (184549376B) on device ordinal 1");
    CHECK(ev.numbers.requested == 184549376u);
    CHECK(ev.gpu == 1);
    CHECK(ev.exception == "jaxlib._jax.XlaRuntimeError");
  }
  SECTION("TensorFlow compiling with XLA") {
    const OomEvent ev = only_oom(
        parse_xla,
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Out of memory while "
        "trying to allocate 4294967296 bytes.");
    CHECK(ev.family == OomFamily::xla);
    CHECK(ev.framework == Framework::tensorflow);
    CHECK(ev.numbers.requested == 4 * GiB);
  }
  SECTION("a GPU client's log line says cuda") {
    const OomEvent ev = only_oom(
        parse_xla,
        "E external/xla/xla/pjrt/gpu/se_gpu_pjrt_client.cc:1200] Execution of replica 0 failed: "
        "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2048 bytes.");
    CHECK(ev.device == Device::cuda);
    CHECK(ev.exception.empty());
    CHECK(ev.numbers.requested == 2048u);
  }
}

TEST_CASE("xla: BFC Stats block after the message", "[parse][xla]") {
  Region r = region_of({
      "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1610612736 bytes.",
      "I external/xla/xla/tsl/framework/bfc_allocator.cc:1112] Stats: ",
      "Limit:                      8589934592",
      "InUse:                      8321499136",
      "MaxInUse:                   8321499136",
      "NumAllocs:                        1234",
      "MaxAllocSize:               1610612736",
      "Reserved:                            0",
      "PeakReserved:                        0",
      "LargestFreeBlock:            268435456",
      "",
      "W external/xla/xla/tsl/framework/bfc_allocator.cc:512] ********************************xxxxxxxx",
      "Traceback (most recent call last):",
  });
  const MemoryNumbers n = only_oom_at(parse_xla, r, 0, 11).numbers;
  CHECK(n.requested == 1610612736u);
  CHECK(n.total == 8589934592u);
  CHECK(n.allocated == 8321499136u);
  CHECK(n.largest_free_block == 268435456u);
  CHECK_FALSE(n.free);
}

TEST_CASE("xla: TPU compile-time OOM, wrapped over three lines", "[parse][xla][tpu]") {
  Region r = region_of({
      "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error.",
      "Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm.",
      "Exceeded hbm capacity by 17.34G.",
      "",
      "Total hbm usage >= 49.86G:",
      "    reserved        530.00M",
      "    program          49.34G",
      "    arguments            0B",
      "",
      "step done",
  });
  const OomEvent ev = only_oom_at(parse_xla, r, 0, 7);
  CHECK(ev.device == Device::tpu);
  CHECK(ev.framework == Framework::jax);
  CHECK(ev.numbers.total == 32 * GiB);
  CHECK(ev.numbers.requested == parse_size("49.34G"));
  CHECK(ev.message.find("Used 49.34G of 32.00G hbm") != std::string::npos);
}

TEST_CASE("xla: other RESOURCE_EXHAUSTED memory failures are numberless XLA OOMs", "[parse][xla][tpu]") {
  const OomEvent ev = only_oom(parse_xla,
                               "RESOURCE_EXHAUSTED: TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, "
                               "exceeding available bytes: 95.74G");
  CHECK(ev.device == Device::tpu);
  CHECK(no_numbers(ev.numbers));
  CHECK(ev.message.rfind("RESOURCE_EXHAUSTED:", 0) == 0);
}

TEST_CASE("xla: host memory and what it leaves alone", "[parse][xla]") {
  SECTION("out of host memory is a CPU allocation failure") {
    const LogFinding f = only_finding(
        parse_xla,
        "RESOURCE_EXHAUSTED: Out of host memory while trying to allocate 68719476736 bytes. Please "
        "set the environment variable XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB to allocate larger host "
        "memory than the default 64 GB.");
    CHECK(f.kind == FindingKind::cpu_alloc_failure);
    CHECK(f.bytes == 64 * GiB);
  }
  SECTION("negatives") {
    check_none_claimed(parse_xla,
                       not_ours({"Resource exhausted: OOM when allocating tensor with shape[8,4096] and type half on "
                                 "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
                                 "grpc: RESOURCE_EXHAUSTED: Received message larger than max (5000000 vs. 4194304)",
                                 // numbers come on the next line, alone
                                 "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error."}));
  }
}

// ---------------------------------------------------------------------------
TEST_CASE("tensorflow: OOM when allocating tensor", "[parse][tensorflow]") {
  Region r = region_of({
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
      "shape[64,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc",
      "\t [[{{node model/conv2d_3/Conv2D}}]]",
      "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom "
      "to RunOptions for current allocation info.",
      "",
      "Epoch 2/10",
  });
  const OomEvent ev = only_oom_at(parse_tensorflow, r, 0, 2);
  CHECK(ev.family == OomFamily::tensorflow);
  CHECK(ev.framework == Framework::tensorflow);
  CHECK(ev.device == Device::cuda);
  CHECK(ev.gpu == 1);
  CHECK(ev.exception == "tensorflow.python.framework.errors_impl.ResourceExhaustedError");
  CHECK(ev.numbers.requested == 64u * 256 * 56 * 56 * 4);  // from the shape and dtype
  CHECK(ev.message.rfind("OOM when allocating tensor with shape[64,256,56,56]", 0) == 0);
  CHECK(ev.end_line == 3);
}

TEST_CASE("tensorflow: OOM when allocating variants", "[parse][tensorflow]") {
  SECTION("root error list: status prefix, no exception on the line") {
    const OomEvent ev = only_oom(
        parse_tensorflow,
        "  (0) Resource exhausted: OOM when allocating tensor with shape[8,4096] and type half on "
        "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc");
    CHECK(ev.exception.empty());
    CHECK(ev.message.rfind("Resource exhausted: OOM when allocating", 0) == 0);
    CHECK(ev.numbers.requested == 8u * 4096 * 2);
    CHECK(ev.gpu == 0);
  }
  SECTION("an unknown dtype or dimension leaves the size empty") {
    Region r = region_of({"ResourceExhaustedError: OOM when allocating tensor with shape[?,128] and type float on "
                          "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
                          "ResourceExhaustedError: OOM when allocating tensor with shape[4,128] and type variant on "
                          "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
                          "ResourceExhaustedError: OOM when allocating tensor with shape[99999999999,99999999999,"
                          "99999999999] and type double on /job:localhost/replica:0/task:0/device:GPU:0 by allocator "
                          "GPU_0_bfc"});
    for (std::size_t i = 0; i < 3; ++i) CHECK_FALSE(only_oom_at(parse_tensorflow, r, i, i).numbers.requested);
  }
  SECTION("a tensor on the CPU is host memory") {
    const LogFinding f = only_finding(
        parse_tensorflow,
        "ResourceExhaustedError: OOM when allocating tensor with shape[100000,100000] and type "
        "float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu");
    CHECK(f.kind == FindingKind::cpu_alloc_failure);
    CHECK(f.bytes == 40000000000u);
  }
}

TEST_CASE("tensorflow: BFC warning with its allocation summary", "[parse][tensorflow][bfc]") {
  Region r = region_of({
      "W tensorflow/core/common_runtime/bfc_allocator.cc:457] Allocator (GPU_0_bfc) ran out of memory trying to "
      "allocate 1.50GiB (rounded to 1610612736)requested by op dense/MatMul",
      "If the cause is memory fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' "
      "will improve the situation. ",
      "Current allocation summary follows.",
      "Current allocation summary follows.",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:1004] BFCAllocator dump for GPU_0_bfc",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:1011] Bin (256): \tTotal Chunks: 12, Chunks in use: 12. "
      "3.0KiB allocated for chunks. 3.0KiB in use in bin. 1.1KiB client-requested in use in bin.",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:1058] InUse at 7f2a4c000000 of size 1280 next 1",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:1058] Free  at 7f2a4c000500 of size 256 next 2",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:1070] 12 Chunks of size 256 totalling 3.0KiB",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:1074] Sum Total of in-use chunks: 9.80GiB",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:1076] total_region_allocated_bytes_: 10737418240 "
      "memory_limit_: 10737418240 available bytes: 0 curr_region_allocation_bytes_: 21474836480",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:1082] Stats: ",
      "Limit:                     10737418240",
      "InUse:                     10522669056",
      "MaxInUse:                  10522669056",
      "NumAllocs:                        4242",
      "MaxAllocSize:               1610612736",
      "Reserved:                            0",
      "PeakReserved:                        0",
      "LargestFreeBlock:            214748160",
      "",
      "W tensorflow/core/common_runtime/bfc_allocator.cc:467] ****************************************xxxxxxx",
      "W tensorflow/core/framework/op_kernel.cc:1780] OP_REQUIRES failed at matmul_op_impl.h:681 : "
      "RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[32768,12288] and type float on "
      "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
  });
  const OomEvent warn = only_oom_at(parse_tensorflow, r, 0, 21);
  CHECK(warn.family == OomFamily::tensorflow);
  CHECK(warn.framework == Framework::tensorflow);
  CHECK(warn.device == Device::cuda);
  CHECK(warn.gpu == 0);
  CHECK(warn.numbers.requested == 1610612736u);
  CHECK(warn.numbers.total == 10737418240u);
  CHECK(warn.numbers.allocated == 10522669056u);
  CHECK(warn.numbers.largest_free_block == 214748160u);
  CHECK(warn.message.rfind("Allocator (GPU_0_bfc) ran out of memory", 0) == 0);
  CHECK(warn.end_line == 22);

  // The op's error after the dump is the same failure: its own event, merged later.
  const OomEvent op = only_oom_at(parse_tensorflow, r, 22, 22);
  CHECK(op.numbers.requested == 32768u * 12288 * 4);
  CHECK(op.exception.empty());
}

TEST_CASE("tensorflow: BFC wordings and variants", "[parse][tensorflow][bfc]") {
  SECTION("new wording, from JAX's copy of the allocator") {
    Region r = region_of({"W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_2_bfc) ran out of "
                          "memory trying to allocate 2.00GiB (rounded to 2147483648) from the front end requested by "
                          "op ",
                          "If this is caused by memory fragmentation, the environment variable "
                          "'TF_GPU_ALLOCATOR=cuda_malloc_async' may improve the situation.",
                          "Current allocation summary follows.", "next"});
    const OomEvent ev = only_oom_at(parse_tensorflow, r, 0, 2);
    CHECK(ev.family == OomFamily::tensorflow);
    CHECK(ev.framework == Framework::jax);
    CHECK(ev.gpu == 2);
    CHECK(ev.numbers.requested == 2 * GiB);
  }
  SECTION("TF 2.16's local_xla path is TensorFlow") {
    const OomEvent ev = only_oom(
        parse_tensorflow,
        "W external/local_xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran "
        "out of memory trying to allocate 512.0KiB (rounded to 524288) from the back end requested "
        "by op Add");
    CHECK(ev.framework == Framework::tensorflow);
    CHECK(ev.numbers.requested == 524288u);
  }
  SECTION("not a failure: pressure") {
    const LogFinding f = only_finding(
        parse_tensorflow,
        "W tensorflow/core/common_runtime/bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out of "
        "memory trying to allocate 2.10GiB with freed_by_count=0. The caller indicates that this "
        "is not a failure, but may mean that there could be performance gains if more memory "
        "were available.");
    CHECK(f.kind == FindingKind::allocator_pressure);
    CHECK(f.bytes == parse_size("2.10GiB"));
  }
  SECTION("a pinned host allocator is host memory") {
    const LogFinding f = only_finding(
        parse_tensorflow,
        "Allocator (gpu_host_bfc) ran out of memory trying to allocate 64.0KiB (rounded to "
        "65536)requested by op IteratorGetNext");
    CHECK(f.kind == FindingKind::cpu_alloc_failure);
    CHECK(f.bytes == 65536u);
  }
  SECTION("negatives") {
    check_none_claimed(parse_tensorflow,
                       not_ours({"RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1024 bytes."}));
  }
}

// ---------------------------------------------------------------------------
TEST_CASE("pressure_warning: DeepSpeed cache flushes and TF garbage collection", "[parse][pressure]") {
  Region r = region_of({
      "[WARNING] [stage3.py:2070:step] 3 pytorch allocator cache flushes since last step. this happens when there "
      "is high memory pressure and is detrimental to performance. if this is happening frequently consider "
      "adjusting settings to reduce memory consumption.",
      "I tensorflow/core/common_runtime/bfc_allocator.cc:343] Garbage collection: deallocate free memory regions "
      "(i.e., allocations) so that we can re-allocate a larger region to avoid OOM due to memory fragmentation. "
      "If you see this message frequently, you are running near the threshold of the available device memory.",
  });
  r.lines[0].rank = 0;
  Parsed out;
  CHECK(parse_pressure_warning(r, 0, out) == 0u);
  CHECK(parse_pressure_warning(r, 1, out) == 1u);
  CHECK(out.ooms.empty());
  REQUIRE(out.findings.size() == 2);
  CHECK(out.findings[0].kind == FindingKind::allocator_pressure);
  CHECK(out.findings[0].detail.rfind("3 allocator cache flush", 0) == 0);
  CHECK_FALSE(out.findings[0].bytes);
  CHECK(out.findings[0].rank == 0);
  CHECK(out.findings[1].kind == FindingKind::allocator_pressure);
  CHECK(out.findings[1].line == 2);

  check_none_claimed(parse_pressure_warning, not_ours());
}

// ---------------------------------------------------------------------------
TEST_CASE("lookalike: host OOM kills", "[parse][lookalike]") {
  Region r = region_of({
      "Out of memory: Killed process 31337 (python3) total-vm:98765432kB, anon-rss:61234567kB, file-rss:0kB, "
      "shmem-rss:0kB, UID:1000 pgtables:123456kB oom_score_adj:0",
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=job,mems_allowed=0-1,oom_memcg=/slurm/job_77,"
      "task_memcg=/slurm/job_77/step_0,task=python,pid=4242,uid=1000",
      "    Reason:       OOMKilled",
      "Killed",
      "./train.sh: line 9: 52341 Killed                  python train.py --bs 64",
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=77.0. Some of your processes may have been killed "
      "by the cgroup out-of-memory handler.",
      "python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
  });
  for (std::size_t i = 0; i < r.lines.size(); ++i) {
    INFO(r.lines[i].text);
    CHECK(only_finding_at(parse_lookalike, r, i, i).kind == FindingKind::host_oom_kill);
  }
  const LogFinding kernel = only_finding_at(parse_lookalike, r, 0, 0);
  CHECK(kernel.bytes == 61234567ull * 1024);
  CHECK(kernel.detail.find("31337 (python3)") != std::string::npos);
  CHECK(only_finding_at(parse_lookalike, r, 1, 1).detail.find("4242 (python)") != std::string::npos);
}

TEST_CASE("lookalike: the kernel's kill lines name the victim wherever their fields sit", "[parse][lookalike]") {
  // What the leftmost match of the kernel's forms says, field by field.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"oom-kill:constraint=CONSTRAINT_NONE,task=python3,pid=77,uid=0", "pid 77 (python3)"},
      // "task_memcg=" and "mytask=" are not the task field; "ppid=" is not the pid.
      {"oom-kill:task_memcg=/a,mytask=x,task=w-1,ppid=9,pid=12", "pid 12 (w-1)"},
      // A pid field without digits is skipped for the next one.
      {"oom-kill:task=a,pid=,pid=5", "pid 5 (a)"},
      {"oom-kill:task=,pid=5", "pid 5 ()"},
      // The name runs to the first comma or blank.
      {"oom-kill:task=a b,pid=5", "pid 5 (a)"},
      // A pid only inside the name's own run of bytes: found by giving the name back.
      {"oom-kill:task=x;pid=5", "pid 5 (x;)"},
      // No task, or no pid: the kernel's OOM killer ran, victim unnamed.
      {"oom-kill:constraint=CONSTRAINT_MEMCG,pid=5", "the kernel's OOM killer ran"},
      {"oom-kill:task=python", "the kernel's OOM killer ran"},
      // Another form further left is the match: no victim from it.
      {"python invoked oom-killer: oom-kill:task=python,pid=5", "the kernel's OOM killer ran"},
      // The forms without "oom-kill:" name no victim.
      {"python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0", "the kernel's OOM killer ran"},
      {"slurmstepd: error: Detected 2 oom-kill event(s) in StepId=77.0.", "the kernel's OOM killer ran"},
      {"[12.5] oom_kill_process+0x10e/0x150", "the kernel's OOM killer ran"},
      {"[1.2] Out of memory: Killed process 31337 (python3) total-vm:1kB", "pid 31337 (python3)"},
      {"Memory cgroup out of memory: Kill process 8 (w) score 9 or sacrifice child", "pid 8 (w)"},
      // The first kernel form that completes, not the first that starts.
      {"out of memory: Kill x; Out of memory: Killed process 9 (b)", "pid 9 (b)"},
  };
  for (const auto& [text, says] : cases) {
    INFO(text);
    const Region r = region_of({text});
    const LogFinding f = only_finding_at(parse_lookalike, r, 0, 0);
    CHECK(f.kind == FindingKind::host_oom_kill);
    CHECK(f.detail.find(says) != std::string::npos);
  }
}

TEST_CASE("lookalike: DataLoader, CPU allocation, not-memory errors", "[parse][lookalike]") {
  SECTION("DataLoader workers") {
    Region r = region_of({"RuntimeError: DataLoader worker (pid 7781) is killed by signal: Killed.",
                          "RuntimeError: DataLoader worker (pid(s) 7781, 7782) exited unexpectedly",
                          "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
                          "shared memory (shm)."});
    for (std::size_t i = 0; i < 3; ++i)
      CHECK(only_finding_at(parse_lookalike, r, i, i).kind == FindingKind::dataloader_killed);
    CHECK(only_finding_at(parse_lookalike, r, 0, 0).detail == "DataLoader worker pid 7781 killed by signal: Killed");
  }
  SECTION("the message after an earlier mention of its first words on the line") {
    // Each pattern is tried at every place its first words are, not only the first.
    Region r = region_of({"warning: DataLoader worker (pid unknown) lost; RuntimeError: DataLoader worker (pid 7790) is "
                          "killed by signal: Killed.",
                          "note: DataLoader worker (pid(s) none); RuntimeError: DataLoader worker (pid(s) 7791) exited "
                          "unexpectedly",
                          "[1.2] Out of memory: Killed process 4242 (python) anon-rss: x, anon-rss:2048kB, file-rss:0kB"});
    CHECK(only_finding_at(parse_lookalike, r, 0, 0).detail == "DataLoader worker pid 7790 killed by signal: Killed");
    CHECK(only_finding_at(parse_lookalike, r, 1, 1).detail == "DataLoader worker(s) pid 7791 exited unexpectedly");
    CHECK(only_finding_at(parse_lookalike, r, 2, 2).bytes == 2048 * 1024);
  }
  SECTION("host allocations") {
    Region r = region_of({
        "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you tried "
        "to allocate 34359738368 bytes.",
        "RuntimeError: [enforce fail at CPUAllocator.cpp:68] . DefaultCPUAllocator: can't allocate memory: you tried "
        "to allocate 1048576 bytes. Error code 12 (Cannot allocate memory)",
        "terminate called after throwing an instance of 'std::bad_alloc'",
        "MemoryError",
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB for an array with shape (1000000, "
        "1000) and data type float64",
        "OSError: [Errno 12] Cannot allocate memory",
        "RuntimeError: DefaultCPUAllocator: not enough memory: you tried to allocate "
        "99999999999999999999999999 bytes.",
    });
    std::vector<std::optional<std::uint64_t>> bytes = {
        32 * GiB, MiB, std::nullopt, std::nullopt, parse_size("7.45 GiB"), std::nullopt, std::nullopt};
    for (std::size_t i = 0; i < r.lines.size(); ++i) {
      INFO(r.lines[i].text);
      const LogFinding f = only_finding_at(parse_lookalike, r, i, i);
      CHECK(f.kind == FindingKind::cpu_alloc_failure);
      CHECK(f.bytes == bytes[i]);
    }
  }
  SECTION("illegal memory access, device-side assert, misaligned address consume the C10 suffix") {
    for (const char* what : {"an illegal memory access was encountered", "device-side assert triggered",
                             "misaligned address"}) {
      Region r = region_of({std::string("RuntimeError: CUDA error: ") + what, kC10Search, kC10Async, kC10Blocking,
                            kC10Dsa, "next"});
      INFO(what);
      CHECK(only_finding_at(parse_lookalike, r, 0, 4).kind == FindingKind::not_memory_error);
    }
  }
  SECTION("ROCm memory access fault") {
    Region r = region_of({"Memory access fault by GPU node-2 (Agent handle: 0x55d5) on address 0x7f00. Reason: Page "
                          "not present or supervisor privilege."});
    CHECK(only_finding_at(parse_lookalike, r, 0, 0).kind == FindingKind::not_memory_error);
  }
}

TEST_CASE("lookalike: what it leaves alone", "[parse][lookalike]") {
  check_none_claimed(parse_lookalike,
                     not_ours({kC10Dsa,  // "device-side assertions" is not an assert
                               "RuntimeError: CUDA error: out of memory",
                               "torch.cuda.OutOfMemoryError: CUDA out of memory.",
                               "Out of memory. Tried to allocate 2.00 GiB."}));
}

// ---------------------------------------------------------------------------
TEST_CASE("collateral: NCCL watchdog timeout", "[parse][collateral]") {
  const std::string text =
      "[E1012 03:14:15.926535 ProcessGroupNCCL.cpp:616] [PG 0 Rank 5] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=8812, OpType=ALLREDUCE, NumelIn=2048, NumelOut=2048, Timeout(ms)=600000) ran for "
      "600042 milliseconds before timing out.";
  SECTION("rank from the text") {
    const LogFinding f = only_finding(parse_collateral, text);
    CHECK(f.kind == FindingKind::collateral);
    CHECK(f.rank == 5);
    CHECK(f.detail == "NCCL watchdog timeout: op=ALLREDUCE seq=8812 timeout_ms=600000 ran_ms=600042");
  }
  SECTION("the launcher's rank prefix wins") {
    CHECK(only_finding_at(parse_collateral, region_of({text}, 2), 0, 0).rank == 2);
  }
}

TEST_CASE("collateral: torchrun's ChildFailedError summary", "[parse][collateral]") {
  SECTION("root cause killed by SIGKILL") {
    Region r = region_of({
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "[1]:",
        "  time      : 2025-02-03_10:11:12",
        "  host      : node-a",
        "  rank      : 1 (local_rank: 1)",
        "  exitcode  : -15 (pid: 9002)",
        "  error_file: <N/A>",
        "  traceback : Signal 15 (SIGTERM) received by PID 9002",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2025-02-03_10:11:10",
        "  host      : node-a",
        "  rank      : 3 (local_rank: 3)",
        "  exitcode  : -9 (pid: 9001)",
        "  error_file: <N/A>",
        "  traceback : Signal 9 (SIGKILL) received by PID 9001",
        "============================================================",
        "$ ",
    });
    const LogFinding f = only_finding_at(parse_collateral, r, 0, 21);
    CHECK(f.kind == FindingKind::collateral);
    CHECK(f.detail == "ChildFailedError root cause: rank=3 exitcode=-9 signal=SIGKILL");
    CHECK(f.rank == 3);
  }
  SECTION("an embedded traceback is left to the other parsers") {
    Region r = region_of({
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2025-02-03_10:11:10",
        "  host      : node-a",
        "  rank      : 0 (local_rank: 0)",
        "  exitcode  : 1 (pid: 9001)",
        "  error_file: /tmp/torchelastic_x/error.json",
        "  traceback : Traceback (most recent call last):",
        "    File \"/work/train.py\", line 88, in step",
        "      loss = model(batch)",
        "  torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        "",
        "============================================================",
    });
    CHECK(only_finding_at(parse_collateral, r, 0, 14).detail == "ChildFailedError root cause: rank=0 exitcode=1");
  }
  SECTION("the source line of the raise is not the error") {
    check_not_claimed(parse_collateral, region_of({"    raise ChildFailedError("}), 0);
  }
}

TEST_CASE("collateral: launcher signals", "[parse][collateral]") {
  Region r = region_of({
      "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4243 closing signal SIGTERM",
      "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 2 (pid: 4244) of "
      "binary: /usr/bin/python3",
      "subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGKILL: 9>.",
      "torch.distributed.elastic.multiprocessing.api.SignalException: Process 4240 got signal: 15",
  });
  std::vector<std::string> details = {
      "launcher stopping workers: pid=4243 signal=SIGTERM",
      "worker failed: local_rank=2 exitcode=-9 signal=SIGKILL",
      "a process died: signal=SIGKILL",
      "launcher got a signal: pid=4240 signal=SIGTERM",
  };
  for (std::size_t i = 0; i < r.lines.size(); ++i) {
    INFO(r.lines[i].text);
    const LogFinding f = only_finding_at(parse_collateral, r, i, i);
    CHECK(f.kind == FindingKind::collateral);
    CHECK(f.detail == details[i]);
    CHECK_FALSE(f.rank);  // local_rank is not the global rank
  }

  check_none_claimed(parse_collateral,
                     not_ours({"  exitcode  : -9 (pid: 9001)"}));  // a summary field alone says nothing
}

// ---------------------------------------------------------------------------
TEST_CASE("allocator_setting: settings as logs show them", "[parse][setting]") {
  struct Case {
    std::string text;
    std::vector<std::string> details;
  };
  std::vector<Case> cases = {
      {"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}},
      {"PYTORCH_CUDA_ALLOC_CONF='max_split_size_mb:128,garbage_collection_threshold:0.6'",
       {"PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,garbage_collection_threshold:0.6"}},
      {"environ({'HOME': '/root', 'PYTORCH_ALLOC_CONF': 'expandable_segments:True', "
       "'XLA_PYTHON_CLIENT_MEM_FRACTION': '.95'})",
       {"PYTORCH_ALLOC_CONF=expandable_segments:True", "XLA_PYTHON_CLIENT_MEM_FRACTION=.95"}},
      {"    os.environ[\"PYTORCH_HIP_ALLOC_CONF\"] = \"expandable_segments:True\"",
       {"PYTORCH_HIP_ALLOC_CONF=expandable_segments:True"}},
      {"XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_ALLOCATOR=platform python train.py",
       {"XLA_PYTHON_CLIENT_PREALLOCATE=false", "XLA_PYTHON_CLIENT_ALLOCATOR=platform"}},
      {"TF_GPU_ALLOCATOR=cuda_malloc_async", {"TF_GPU_ALLOCATOR=cuda_malloc_async"}},
      {"TF_FORCE_GPU_ALLOW_GROWTH: true", {"TF_FORCE_GPU_ALLOW_GROWTH=true"}},
      {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:true",  // PyTorch wants True; kept as printed
       {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:true"}},
      {"PYTORCH_NO_CUDA_MEMORY_CACHING=1", {"PYTORCH_NO_CUDA_MEMORY_CACHING=1"}},
  };
  for (const Case& c : cases) {
    Region r = region_of({c.text}, 1);
    Parsed out;
    INFO(c.text);
    CHECK(parse_allocator_setting(r, 0, out) == 0u);
    REQUIRE(out.findings.size() == c.details.size());
    for (std::size_t k = 0; k < c.details.size(); ++k) {
      CHECK(out.findings[k].kind == FindingKind::allocator_setting);
      CHECK(out.findings[k].detail == c.details[k]);
      CHECK(out.findings[k].rank == 1);
    }
  }
}

TEST_CASE("allocator_setting: Kubernetes env and the deprecation warning", "[parse][setting]") {
  SECTION("name/value pair") {
    Region r = region_of({"        - name: PYTORCH_CUDA_ALLOC_CONF", "          value: \"expandable_segments:True\""});
    const LogFinding f = only_finding_at(parse_allocator_setting, r, 0, 1);
    CHECK(f.detail == "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  }
  SECTION("deprecated name") {
    const LogFinding f = only_finding(
        parse_allocator_setting,
        "[W1023 09:12:44.000000000 AllocatorConfig.cpp:28] Warning: PYTORCH_CUDA_ALLOC_CONF is "
        "deprecated, use PYTORCH_ALLOC_CONF instead (function operator())");
    CHECK(f.kind == FindingKind::allocator_setting);
    CHECK(f.detail.rfind("deprecated: PYTORCH_CUDA_ALLOC_CONF is set", 0) == 0);
  }
}

TEST_CASE("allocator_setting: hints and references are not settings", "[parse][setting]") {
  check_none_claimed(parse_allocator_setting,
                     not_ours({
                         "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation",
                         "If the cause is memory fragmentation maybe the environment variable "
                         "'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. ",
                         "echo $PYTORCH_CUDA_ALLOC_CONF",
                         "conf=${PYTORCH_CUDA_ALLOC_CONF:-unset}",
                         "Set PYTORCH_CUDA_ALLOC_CONF before the first CUDA call",
                     }));
}

// ---------------------------------------------------------------------------
TEST_CASE("all other parsers: hostile text never crashes and claims nothing odd", "[parse][hostile]") {
  std::string megabyte;
  while (megabyte.size() < (1u << 20)) megabyte += "memory xhausted killed signal watchdog \x01\x7f\xff\xfe ";
  std::string invalid_utf8 = "CUDA error: out of memory \xc3\x28\xa0\xa1 \xf0\x28\x8c\xbc";
  std::vector<std::string> texts = {
      megabyte,
      megabyte + "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 12 bytes.",
      invalid_utf8,
      std::string("Killed\0process", 14),
      "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 999999999999999999999999999999 bytes.",
      "RESOURCE_EXHAUSTED: Failed to allocate request for 1B (99999999999999999999999B) on device ordinal "
      "99999999999999",
      "Allocator (GPU_99999999999999_bfc) ran out of memory trying to allocate 1.0KiB (rounded to "
      "99999999999999999999999)requested by op x",
      "Out of memory: Killed process 1 (x) anon-rss:99999999999999999999kB",
      "[PG 0 Rank 99999999999999] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)",
      "failed (exitcode: -99999999999999999999) local_rank: 0",
      std::string(1, '\0'),
      "",
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
      "unhandled cuda error",
      "|            CUDA OOMs: 99999999999999999999999 |        cudaMalloc retries: 1 |",
      "[_use_uvm] FAILED to allocate 99999999999999999999999 bytes via UVM",
      "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 9,999,999,999,999,999,999,999 bytes",
      "Failed to CUDA calloc 99999999999999999999999 bytes",
      "RESOURCE_EXHAUSTED: Attempting to reserve 99999999999999999999G at the bottom of memory. That was not possible.",
      std::string(2000, 'x') + " CUDA out of memory " + std::string(2000, ','),
  };
  Region r = region_of(texts);
  for (Parser parser : kOtherParsers) {
    for (std::size_t i = 0; i < texts.size(); ++i) {
      Parsed out;
      auto last = parser(r, i, out);
      if (last) CHECK(*last >= i);
      if (last) CHECK(*last < r.lines.size());
      for (const auto& f : out.findings) CHECK(f.text.size() <= 4096 + 4);
      for (const auto& ev : out.ooms) CHECK(ev.message.size() <= 4096 + 4);
    }
    Parsed out;
    CHECK_FALSE(parser(r, r.lines.size(), out));  // out of range
  }
  CHECK_FALSE(only_oom_at(parse_xla, r, 4, 4).numbers.requested);  // overflow: unknown, never wrapped
  const OomEvent big = only_oom_at(parse_xla, r, 1, 1);
  CHECK(big.numbers.requested == 12u);
  CHECK(big.message.size() <= 4096 + 4);
}
