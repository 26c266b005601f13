// The generic GPU-OOM parser and the survived-OOM parser: wordings of an
// out-of-memory error no specific parser knows, and the look-alikes they must
// leave alone. Every line is written here from the general forms of CUDA,
// library and framework errors and invented program output; none is a
// copy of a public log.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "analyzer/log/parse/oom_context.hpp"
#include "analyzer/log/parse/parser.hpp"

using namespace oomlens::analyzer;
using namespace oomlens::analyzer::parse;

namespace {

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;
constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

Region region_of(const std::vector<std::string>& texts, std::optional<int> rank = std::nullopt) {
  Region region;
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Line line;
    line.number = i + 1;
    line.offset = offset;
    line.text = texts[i];
    line.rank = rank;
    offset += texts[i].size() + 1;
    region.lines.push_back(line);
    region.anchors.push_back(i);
  }
  return region;
}

struct Positive {
  std::string line;
  Device device = Device::cuda;
  std::optional<std::uint64_t> requested = std::nullopt;
  std::optional<std::uint64_t> free = std::nullopt;
  std::optional<std::uint64_t> total = std::nullopt;
  std::optional<int> gpu = std::nullopt;
  std::string exception = {};
};

// One wording per row: the line alone (nothing follows it: the end of the log).
const std::vector<Positive> kPositives = {
    {"cudaMalloc returned error 2: out of memory"},
    {"[CUDA] out of memory (code 2) in spmm_forward at kernels/spmm.cu:88"},
    {"GPUassert: out of memory kernels/nbody.cu 142"},
    {"RuntimeError: CUDA out of memory while profiling the peak memory with max_num_batched_tokens=16384. Lower "
     "`--max-num-batched-tokens` or raise `--gpu-memory-utilization`.",
     Device::cuda, std::nullopt, std::nullopt, std::nullopt, std::nullopt, "RuntimeError"},
    {"torch.OutOfMemoryError: CUDA out of memory during CUDA graph capture warm-up (batch sizes 1..256). Reduce "
     "`--max-graph-batch` or set `--enforce-eager`.",
     Device::cuda, std::nullopt, std::nullopt, std::nullopt, std::nullopt, "torch.OutOfMemoryError"},
    {"cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 4,294,967,296 bytes (allocated so far: "
     "19,327,352,832 bytes).",
     Device::cuda, 4 * GiB, std::nullopt, std::nullopt, std::nullopt, "cupy.cuda.memory.OutOfMemoryError"},
    {"llm_load_tensors: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory", Device::cuda, 8 * GiB,
     std::nullopt, std::nullopt, 0},
    {"RuntimeError: MLU out of memory.", Device::mlu, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
     "RuntimeError"},
    {"RuntimeError: NPU out of memory (rtMalloc returned 207001, requested 2.00 GiB)", Device::npu, 2 * GiB},
    {"FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed (requested 4.00 GiB, 1.25 GiB free, 94.62 GiB total)",
     Device::hpu, 4 * GiB, 1280 * MiB, std::nullopt},
    {"RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED", Device::cuda, std::nullopt, std::nullopt, std::nullopt,
     std::nullopt, "RuntimeError"},
    {"E0312 10:22:41.123456 1234 worker.cc:88] CUDA error: out of memory (cudaErrorMemoryAllocation) in "
     "allocate_workspace"},
    {"HIP out of memory: hipMalloc failed for 2147483648 bytes on device 1", Device::hip, std::nullopt, std::nullopt,
     std::nullopt, 1},
    {"Error: CUDA_ERROR_OUT_OF_MEMORY: out of memory"},
    {"RuntimeError: GCU out of memory.", Device::gcu},
    {"torch.OutOfMemoryError: MUSA out of memory.", Device::musa},
    {"ERROR: out of video memory while loading the checkpoint on the GPU (3.50 GiB free)", Device::cuda, std::nullopt,
     3584 * MiB},
    {"RuntimeError: XPU out of memory.", Device::xpu},
    {"cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory"},
    {"ValueError: Not enough GPU memory to hold the KV cache: 2.10 GiB free. Raise `--gpu-memory-fraction`.",
     Device::cuda, std::nullopt, static_cast<std::uint64_t>(2.10 * GiB + 0.5)},
    {"jax.errors.JaxRuntimeError: INTERNAL: Failed to allocate 1073741824 bytes on device 0: "
     "CUDA_ERROR_OUT_OF_MEMORY",
     Device::cuda, GiB, std::nullopt, std::nullopt, 0, "jax.errors.JaxRuntimeError"},
    {"Exception: CUDA out of memory on GPU 2 while building the index", Device::cuda, std::nullopt, std::nullopt,
     std::nullopt, 2, "Exception"},
    {"RuntimeError: Failed to allocate 536870912 bytes of device memory: out of memory", Device::unknown, 512 * MiB},
    {"F0704 08:15:02.000000 4242 gpu_buffer.cc:57] Check failed: cudaMalloc(&ptr, bytes) == cudaSuccess (2 vs. 0) "
     "out of memory"},
    {"Caught signal 6 (Aborted) after CUDA error 2 (out of memory) in cublasLtMatmul"},
    {"ERROR engine.py:412] CUDA out of memory occurred when initializing the KV cache with 0.95 of GPU memory"},
    {"ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 2.000000GB memory on GPU 0, available "
     "memory is only 512.000000MB.",
     Device::cuda, 2 * GiB, 512 * MiB, std::nullopt, 0, "ResourceExhaustedError"},
    {"MXNetError: [10:00:00] src/storage/pooled_storage_manager.h:157: cudaMalloc retry failed: out of memory"},
    {"RuntimeError: CUDA error: out of memory"},
    {"hipErrorOutOfMemory: hipMalloc(&buf, 1073741824) failed", Device::hip},
    {"[ERROR] ROCm runtime: out of memory on device 3 (requested 768.00 MiB)", Device::hip, 768 * MiB, std::nullopt,
     std::nullopt, 3},
    {"terminate called after throwing an instance of 'std::runtime_error'  what():  CUDA error: out of memory"},
    {"Run failed with exception: torch.cuda.OutOfMemoryError: CUDA out of memory."},
    {"RuntimeError: CUSOLVER_STATUS_ALLOC_FAILED when calling `cusolverDnCreate(handle)`"},
};

// Lines the generic parser must leave alone: prose, advice, host memory, code,
// look-alikes, retries that worked.
const std::vector<std::string> kNegatives = {
    "to avoid running out of memory we use gradient checkpointing",
    "Tip: if you hit CUDA out of memory errors, lower --micro-batch",
    "GPU memory usage 45% (36.0 GiB / 80.0 GiB)",
    "Out of memory: Killed process 4242 (python) total-vm:41234567kB, anon-rss:31234567kB",
    "ggml_cuda_host_malloc: failed to allocate 512.00 MiB of pinned memory: out of memory",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "RuntimeError: [enforce fail at alloc_cpu.cpp:114] DefaultCPUAllocator: not enough memory: you tried to allocate "
    "34359738368 bytes",
    "    except torch.cuda.OutOfMemoryError:",
    "    raise RuntimeError(\"CUDA out of memory while profiling\")",
    "WARNING: step 1200: CUDA out of memory on micro-batch 4, retrying with half the batch",
    "OOM-retry: recovered from CUDA out of memory at step 900",
    "  --oom-retries N     retry a step N times when a CUDA out of memory error occurs",
    "the kernel may run out of GPU memory on small cards",
    "java.lang.OutOfMemoryError: Java heap space",
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    "MemoryError: out of memory",
    "Host out of memory while staging the batch to the GPU",
    "cudaHostAlloc failed: out of memory",
    "Search for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/"
    "group__CUDART__TYPES.html for more information.",
    "num_ooms=0 cuda_oom_count=0",
    "out_of_memory_threshold: 0.95  # fraction of GPU memory",
    "Memory cgroup out of memory: Killed process 123 (python)",
    "XLA_PYTHON_CLIENT_PREALLOCATE=false avoids CUDA out of memory at startup",
    "INFO: GPU 0: 80.0 GiB total, 79.2 GiB free",
    "The TPU ran out of memory last week; see the postmortem doc",
    "How to fix CUDA out of memory errors: https://pytorch.org/docs/stable/notes/cuda.html",
    "print(f\"CUDA out of memory: {e}\")",
    "# CUDA out of memory is raised when the batch does not fit",
    "Triton Error [CUDA]: out of resource: shared memory, Required: 262144, Hardware limit: 232448",
    "torch.cuda.OutOfMemoryError is now torch.OutOfMemoryError (alias kept)",
    "Epoch 3: 100%|##########| 500/500 [02:11<00:00, 3.80it/s, loss=0.412, oom_skipped=0]",
    "nvidia-smi: GPU 0 memory 80.0 GiB, out of which 79.5 GiB used",
    "docs: a CUDA out of memory error means the batch did not fit; see FAQ",
    "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed. out of memory?",
    "CUDA OOMs: 0 | cudaMalloc retries: 0",
    "| 1.13 - 2.3 | `torch.cuda.OutOfMemoryError: CUDA out of memory. ...` (subclass of `RuntimeError`) |",
    "A `try:` / `except torch.cuda.OutOfMemoryError:` that calls empty_cache() hides the failure",
    "| OOM205 | not-an-out-of-memory-error | illegal memory access, device-side assert: bugs, not memory |",
    "This CUDA error is not an out of memory error: the kernel failed to launch",
    "train.log:31: error[OOM101] GPU out of memory from fragmentation: tried to allocate 8.00 GiB on GPU 0",
    "    GPU out of memory without figures: a CUDA call failed with out of memory",
};

}  // namespace

TEST_CASE("generic_oom: wordings of a GPU OOM become generic events", "[parse][generic]") {
  for (const auto& p : kPositives) {
    INFO(p.line);
    Region r = region_of({p.line});
    Parsed out;
    REQUIRE(parse_generic_oom(r, 0, out) == std::optional<std::size_t>(0));
    REQUIRE(out.ooms.size() == 1);
    CHECK(out.findings.empty());
    const OomEvent& ev = out.ooms[0];
    CHECK(ev.family == OomFamily::generic);
    CHECK(ev.device == p.device);
    CHECK(ev.line == 1);
    CHECK(ev.end_line == 1);
    CHECK_FALSE(ev.message.empty());
    if (p.requested) CHECK(ev.numbers.requested == p.requested);
    if (p.free) CHECK(ev.numbers.free == p.free);
    if (p.total) CHECK(ev.numbers.total == p.total);
    if (p.gpu) CHECK(ev.gpu == p.gpu);
    if (!p.exception.empty()) CHECK(ev.exception == p.exception);
    CHECK_FALSE(ev.numbers.allocated);  // "allocated so far" and the like have no clear role
    CHECK_FALSE(ev.numbers.reserved);
  }
  CHECK(kPositives.size() >= 30);
}

TEST_CASE("generic_oom: prose, advice, host memory, code and look-alikes are not claimed", "[parse][generic]") {
  for (const auto& text : kNegatives) {
    INFO(text);
    Region r = region_of({text});
    Parsed out;
    CHECK_FALSE(parse_generic_oom(r, 0, out));
    CHECK(out.ooms.empty());
    CHECK(out.findings.empty());
  }
  CHECK(kNegatives.size() >= 30);
}

TEST_CASE("generic_oom: fields of one message", "[parse][generic]") {
  // Alone and behind a glog/TSL prefix, which the fields are read after.
  for (const std::string prefix : {"", "E0301 12:00:00.123456 4242 kv_cache.cc:88] "}) {
    INFO("prefix '" << prefix << "'");
    Region r = region_of({"  File \"/srv/engine/worker.py\", line 212, in determine_num_blocks",
                          "    free, total = torch.cuda.mem_get_info()",
                          prefix + "RuntimeError: CUDA out of memory while sizing the KV cache on GPU 1: 1.50 GiB "
                                   "free of 23.99 GiB total. Raise `--gpu-memory-utilization` or lower "
                                   "`--max-model-len`."});
    Parsed out;
    REQUIRE(parse_generic_oom(r, 2, out) == std::optional<std::size_t>(2));
    REQUIRE(out.ooms.size() == 1);
    const OomEvent& ev = out.ooms[0];
    CHECK(ev.exception == "RuntimeError");
    CHECK(ev.message.rfind("CUDA out of memory while sizing the KV cache", 0) == 0);
    CHECK(ev.gpu == 1);
    CHECK(ev.numbers.free == 1536 * MiB);
    CHECK(ev.numbers.total == static_cast<std::uint64_t>(23.99 * GiB + 0.5));
    CHECK_FALSE(ev.numbers.requested);
    CHECK(ev.framework == Framework::unknown);  // only the line's own words count, not the traceback's
    CHECK(ev.device == Device::cuda);
  }
}

TEST_CASE("generic_oom: a log line decides by what follows", "[parse][generic][fate]") {
  const std::string oom = "[spmm] cudaMalloc returned error 2: out of memory (requested 1.50 GiB)";
  SECTION("a traceback follows: fatal") {
    Region r = region_of({oom, "Traceback (most recent call last):", "  File \"train.py\", line 3, in <module>",
                          "RuntimeError: spmm forward failed"});
    Parsed out;
    REQUIRE(parse_generic_oom(r, 0, out));
    REQUIRE(out.ooms.size() == 1);
    CHECK(out.ooms[0].numbers.requested == 1536 * MiB);
  }
  SECTION("an abort follows: fatal") {
    Region r = region_of({oom, "terminate called after throwing an instance of 'std::runtime_error'",
                          "Aborted (core dumped)"});
    Parsed out;
    REQUIRE(parse_generic_oom(r, 0, out));
    CHECK(out.ooms.size() == 1);
  }
  SECTION("training goes on: pressure, not an OOM") {
    Region r = region_of({oom, "[spmm] using the dense fallback kernel for this batch",
                          "step 1201 | loss 2.3104 | 41.2 samples/s"});
    Parsed out;
    REQUIRE(parse_generic_oom(r, 0, out));
    CHECK(out.ooms.empty());
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].kind == FindingKind::allocator_pressure);
    CHECK(out.findings[0].bytes == 1536 * MiB);
  }
  SECTION("another rank's progress does not count") {
    Region r = region_of({oom, "step 1201 | loss 2.3104", "Traceback (most recent call last):"});
    r.lines[0].rank = 3;
    r.lines[1].rank = 0;
    r.lines[2].rank = 3;
    Parsed out;
    REQUIRE(parse_generic_oom(r, 0, out));
    CHECK(out.ooms.size() == 1);
  }
  SECTION("an exception line is fatal whatever follows") {
    Region r = region_of({"RuntimeError: MLU out of memory.", "step 1201 | loss 2.3104"});
    Parsed out;
    REQUIRE(parse_generic_oom(r, 0, out));
    CHECK(out.ooms.size() == 1);
  }
}

TEST_CASE("survived_oom: a caught OOM the program got past is pressure", "[parse][generic][survived]") {
  const std::vector<std::string> survived = {
      "WARNING: step 1200: CUDA out of memory on micro-batch 4, retrying with half the batch",
      "OOM-retry: recovered from CUDA out of memory at step 900",
      "[W] caught torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.19 GiB of which 1.02 GiB is free. Skipping batch 4411.",
      "NCCL WARN Cuda failure 'out of memory', falling back to the ring algorithm",
      "cudaMalloc failed: out of memory; falling back to the CPU kernel for this layer",
  };
  for (const auto& text : survived) {
    INFO(text);
    Region r = region_of({text});
    Parsed out;
    REQUIRE(parse_survived_oom(r, 0, out) == std::optional<std::size_t>(0));
    CHECK(out.ooms.empty());
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].kind == FindingKind::allocator_pressure);
  }
  Region r = region_of({survived[2]});
  Parsed out;
  parse_survived_oom(r, 0, out);
  REQUIRE(out.findings.size() == 1);
  CHECK(out.findings[0].bytes == 2 * GiB);

  const std::vector<std::string> not_survived = {
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
      "79.19 GiB of which 1.02 GiB is free.",
      "  --retry-on-oom   if a CUDA out of memory error occurs, retrying with half the batch",
      "ggml_cuda_host_malloc: failed to allocate 512.00 MiB of pinned memory: out of memory, falling back",
      "skipping 3 corrupt samples",
      "recovered 12 checkpoints from the GPU node",
  };
  for (const auto& text : not_survived) {
    INFO(text);
    Region r2 = region_of({text});
    Parsed none;
    CHECK_FALSE(parse_survived_oom(r2, 0, none));
    CHECK(none.findings.empty());
  }
}

TEST_CASE("survived_oom: every wording of going on, in any case", "[parse][generic][survived]") {
  // One phrase per branch of the survival pattern (and of the words that
  // stand in for it when a line has none of them).
  const std::vector<std::string> phrases = {
      "Recovered",      "recovering now",   "will RECOVER FROM it", "retrying",       "Will retry",
      "retry with bs 8", "retrying after 5s", "retry 2/5",          "SKIPPING batch", "batch skipped",
      "Falling back to fp32", "fell back to the CPU", "fall back to the CPU", "fallback to the CPU",
      "trying again",   "Halving the batch", "reducing the micro-batch", "reducing batch size",
      "continuing",     "the step will be retried", "caught and handled"};
  for (const auto& phrase : phrases) {
    const std::string text = "step 7: CUDA out of memory; " + phrase;
    INFO(text);
    Region r = region_of({text});
    Parsed out;
    CHECK(parse_survived_oom(r, 0, out) == std::optional<std::size_t>(0));
  }
}

TEST_CASE("oom_context: sizes by role", "[parse][generic]") {
  MemoryNumbers n;
  read_stated_sizes("failed to allocate 3.00G (3221225472 bytes) from device", n);
  CHECK(n.requested == 3221225472u);
  MemoryNumbers m;
  read_stated_sizes("Failed to CUDA calloc 33554432 bytes", m);
  CHECK(m.requested == 33554432u);
  MemoryNumbers k;
  read_stated_sizes("error 2 at line 88, code 2: 2 GPUs busy", k);
  CHECK_FALSE(k.requested);
  CHECK_FALSE(k.free);
  CHECK_FALSE(k.total);
  MemoryNumbers t;
  read_stated_sizes("capacity: 15.75 GiB, free: 0 bytes", t);
  CHECK(t.total == static_cast<std::uint64_t>(15.75 * GiB));
  CHECK(t.free == 0u);
}

TEST_CASE("oom_context: device words and indexes", "[parse][generic]") {
  CHECK(device_from_words("MODULE:PT_DEVMEM Allocation failed") == Device::hpu);
  CHECK(device_from_words("HIP out of memory on the GPU") == Device::hip);
  CHECK(device_from_words("NPU out of memory, GPU fallback disabled") == Device::npu);
  CHECK(device_from_words("cudaMalloc failed") == Device::cuda);
  CHECK(device_from_words("out of memory") == Device::unknown);
  CHECK(device_index("on device 3") == 3);
  CHECK(device_index("/device:GPU:1") == 1);
  CHECK(device_index("cuda:2 ran out") == 2);
  CHECK_FALSE(device_index("CUDA 12.1 out of memory"));
  CHECK_FALSE(device_index("GPU memory"));
}
