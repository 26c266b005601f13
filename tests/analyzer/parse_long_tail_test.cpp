// The long tail of message families: legacy THC, NCCL's calloc and fallback,
// stream_executor fatal or survived, the BFC dump without its header, TF's
// eager "failed to allocate memory", TPU's reserve failure, wrapped XLA
// messages, torch.cuda.memory_summary(), the allocator's UVM and INTERNAL
// ASSERT notes, host-memory look-alikes, and the traceback that follows a
// library's own OOM line. Messages follow each library's own wording;
// numbers are invented so that the expected bytes can be checked exactly.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "analyzer/log/analyzer.hpp"
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

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

const std::string kSeNote =
    "2024-09-17 10:13:02.118542: I external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:1539] failed to "
    "allocate 3.00G (3221225472 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory";
const std::string kJaxSeNote =
    "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed to allocate 59.48G (63866896384 bytes) from "
    "device: CUDA_ERROR_OUT_OF_MEMORY: out of memory";

}  // namespace

// -- cuda_library -----------------------------------------------------------
TEST_CASE("cuda_library: legacy THCudaCheck line", "[parse][cuda_library][long_tail]") {
  Parsed out;
  Region r = region_of({"THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of "
                        "memory"});
  REQUIRE(parse_cuda_library(r, 0, out) == std::optional<std::size_t>(0));
  REQUIRE(out.ooms.size() == 1);
  CHECK(out.ooms[0].family == OomFamily::cuda_runtime);
  CHECK(out.ooms[0].framework == Framework::pytorch);
  CHECK(out.ooms[0].device == Device::cuda);
  CHECK(out.ooms[0].message.rfind("THCudaCheck FAIL", 0) == 0);

  Parsed none;
  Region other = region_of({"THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=30 : unknown "
                            "error"});
  CHECK_FALSE(parse_cuda_library(other, 0, none));
}

TEST_CASE("cuda_library: stream_executor fatal or survived", "[parse][cuda_library][long_tail]") {
  SECTION("a traceback follows the notes: the OOM, TensorFlow's") {
    Region r = region_of({kSeNote, kSeNote, "Traceback (most recent call last):",
                          "tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized."});
    Parsed out;
    REQUIRE(parse_cuda_library(r, 0, out) == std::optional<std::size_t>(0));
    REQUIRE(out.ooms.size() == 1);
    CHECK(out.findings.empty());
    CHECK(out.ooms[0].family == OomFamily::tensorflow);
    CHECK(out.ooms[0].framework == Framework::tensorflow);
    CHECK(out.ooms[0].device == Device::cuda);
    CHECK(out.ooms[0].numbers.requested == 3221225472u);
    CHECK(out.ooms[0].message.rfind("failed to allocate 3.00G", 0) == 0);
  }
  SECTION("nothing follows: the end of the log, the OOM; JAX's build is XLA's") {
    Region r = region_of({kJaxSeNote});
    Parsed out;
    REQUIRE(parse_cuda_library(r, 0, out));
    REQUIRE(out.ooms.size() == 1);
    CHECK(out.ooms[0].family == OomFamily::xla);
    CHECK(out.ooms[0].framework == Framework::jax);
  }
  SECTION("training goes on: pressure") {
    Region r = region_of({kJaxSeNote, "I0402 13:40:19.118204 140193 train.py:61] jax 0.4.30, 1 local devices",
                          "I0402 13:41:12.882190 140193 train.py:141] step 100 | loss 0.1472 | 7.41 it/s"});
    Parsed out;
    REQUIRE(parse_cuda_library(r, 0, out));
    CHECK(out.ooms.empty());
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].kind == FindingKind::allocator_pressure);
    CHECK(out.findings[0].bytes == 63866896384u);
  }
  SECTION("the BFC warning that follows is fatal, its not-a-failure variant is not") {
    Region fatal = region_of({kSeNote,
                              "W tensorflow/tsl/framework/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of "
                              "memory trying to allocate 3.00GiB (rounded to 3221225472)requested by op MatMul"});
    Parsed a;
    REQUIRE(parse_cuda_library(fatal, 0, a));
    CHECK(a.ooms.size() == 1);
    Region benign = region_of({kSeNote,
                               "W external/local_tsl/tsl/framework/bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out "
                               "of memory trying to allocate 2.10GiB with freed_by_count=0. The caller indicates that "
                               "this is not a failure, but may mean that there could be performance gains if more "
                               "memory were available.",
                               "938/938 [==============================] - 412s 428ms/step - loss: 0.0212"});
    Parsed b;
    REQUIRE(parse_cuda_library(benign, 0, b));
    CHECK(b.ooms.empty());
    CHECK(b.findings.size() == 1);
  }
}

TEST_CASE("cuda_library: NCCL calloc and fallback", "[parse][cuda_library][nccl][long_tail]") {
  const std::string warn = "gpu-a40-04:31870:32011 [1] include/alloc.h:125 NCCL WARN Cuda failure 'out of memory'";
  const std::string calloc =
      "gpu-a40-04:31870:32011 [1] include/alloc.h:131 NCCL WARN Failed to CUDA calloc 33554432 bytes";
  SECTION("calloc: an nccl event with the request") {
    Region r = region_of({warn, calloc, "gpu-a40-04:31870:32011 [1] NCCL INFO transport/p2p.cc:214 -> 1",
                          "Traceback (most recent call last):"},
                         1);
    Parsed out;
    REQUIRE(parse_cuda_library(r, 1, out) == std::optional<std::size_t>(1));
    REQUIRE(out.ooms.size() == 1);
    CHECK(out.ooms[0].family == OomFamily::nccl);
    CHECK(out.ooms[0].numbers.requested == 32 * MiB);
    CHECK(out.ooms[0].gpu == 1);
    CHECK(out.ooms[0].rank == 1);
    CHECK(out.ooms[0].message.rfind("NCCL WARN Failed to CUDA calloc", 0) == 0);
    Parsed w;
    REQUIRE(parse_cuda_library(r, 0, w));
    CHECK(w.ooms.size() == 1);  // the WARN: fatal, a traceback follows the trace lines
  }
  SECTION("NCCL falls back and the run goes on: pressure") {
    Region r = region_of({warn, "gpu-a40-04:31870:32011 [1] NCCL INFO transport/nvls.cc:342 -> 1",
                          "gpu-a40-04:31870:32011 [1] NCCL INFO NVLS buffer registration failed, falling back to "
                          "the tree and ring algorithms",
                          "step 1/20000 | loss 11.0412"});
    Parsed out;
    REQUIRE(parse_cuda_library(r, 0, out) == std::optional<std::size_t>(0));
    CHECK(out.ooms.empty());
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].kind == FindingKind::allocator_pressure);
  }
  SECTION("a calloc without a failure is no hit") {
    Parsed none;
    Region r = region_of({"NCCL INFO cuda calloc of 4096 bytes for the proxy state"});
    CHECK_FALSE(parse_cuda_library(r, 0, none));
  }
}

// -- tensorflow ---------------------------------------------------------------
TEST_CASE("tensorflow: BFC dump without its header line", "[parse][tensorflow][bfc][long_tail]") {
  const std::string p = "I external/local_tsl/tsl/framework/bfc_allocator.cc:1141] ";
  Region r = region_of({
      "[... earlier lines not shown ...]",
      p + "Bin (268435456): \tTotal Chunks: 26, Chunks in use: 26. 9.00GiB allocated for chunks. 9.00GiB in use in "
          "bin. 9.00GiB client-requested in use in bin.",
      p + "Bin for 1.00GiB was 256.00MiB, Chunk State: ",
      p + "Next region of size 15513485312",
      p + "InUse at 7f3b1a000000 of size 256 next 1",
      p + "Free  at 7f3d8c000000 of size 134217728 next 1544",
      p + "     Summary of in-use Chunks by size: ",
      p + "1521 Chunks of size 256 totalling 380.2KiB",
      p + "Sum Total of in-use chunks: 14.20GiB",
      p + "total_region_allocated_bytes_: 15513485312 memory_limit_: 15513485312 available bytes: 0 "
          "curr_region_allocation_bytes_: 31026970624",
      p + "Stats: ",
      "Limit:                     15513485312",
      "InUse:                     15246684416",
      "MaxInUse:                  15380901888",
      "LargestFreeBlock:            134217728",
      "",
      "Traceback (most recent call last):",
  });
  Parsed out;
  REQUIRE(parse_tensorflow(r, 6, out) == std::optional<std::size_t>(14));
  REQUIRE(out.ooms.size() == 1);
  const OomEvent& ev = out.ooms[0];
  CHECK(ev.family == OomFamily::tensorflow);
  CHECK(ev.framework == Framework::tensorflow);
  CHECK(ev.numbers.total == 15513485312u);
  CHECK(ev.numbers.allocated == 15246684416u);
  CHECK(ev.numbers.largest_free_block == 134217728u);
  CHECK(ev.numbers.requested == GiB);  // "Bin for 1.00GiB"
  CHECK(ev.line == 7);
  CHECK(ev.end_line == 15);

  SECTION("a host allocator's dump is host memory") {
    Region host = region_of({p + "BFCAllocator dump for gpu_host_bfc", p + "Bin for 64.0KiB was 64.0KiB, Chunk State: ",
                             p + "     Summary of in-use Chunks by size: ", p + "Sum Total of in-use chunks: 2.00GiB"});
    Parsed h;
    REQUIRE(parse_tensorflow(host, 2, h));
    CHECK(h.ooms.empty());
    REQUIRE(h.findings.size() == 1);
    CHECK(h.findings[0].kind == FindingKind::cpu_alloc_failure);
  }
  SECTION("the dump after its header is the header's") {
    Region full = region_of({"W tensorflow/tsl/framework/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of "
                             "memory trying to allocate 1.00GiB (rounded to 1073741824)requested by op MatMul",
                             p + "     Summary of in-use Chunks by size: ", p + "Sum Total of in-use chunks: 14.20GiB"});
    Parsed f;
    REQUIRE(parse_tensorflow(full, 0, f) == std::optional<std::size_t>(2));
    CHECK(f.ooms.size() == 1);
  }
}

TEST_CASE("tensorflow: eager 'failed to allocate memory'", "[parse][tensorflow][long_tail]") {
  Region r = region_of({"tensorflow.python.framework.errors_impl.ResourceExhaustedError: {{function_node "
                        "__wrapped__ConcatV2_N_2_device_/job:localhost/replica:0/task:0/device:GPU:1}} failed to "
                        "allocate memory [Op:ConcatV2] name: concat"});
  Parsed out;
  REQUIRE(parse_tensorflow(r, 0, out) == std::optional<std::size_t>(0));
  REQUIRE(out.ooms.size() == 1);
  CHECK(out.ooms[0].exception == "tensorflow.python.framework.errors_impl.ResourceExhaustedError");
  CHECK(out.ooms[0].gpu == 1);
  CHECK(out.ooms[0].device == Device::cuda);
  CHECK(out.ooms[0].message.rfind("{{function_node", 0) == 0);

  Region cpu = region_of({"ResourceExhaustedError: {{function_node __wrapped__Mul_device_/job:localhost/replica:0/"
                          "task:0/device:CPU:0}} failed to allocate memory [Op:Mul]"});
  Parsed host;
  REQUIRE(parse_tensorflow(cpu, 0, host));
  CHECK(host.ooms.empty());
  CHECK(host.findings.size() == 1);
}

// -- xla ----------------------------------------------------------------------
TEST_CASE("xla: TPU reserve failure with its memory lines", "[parse][xla][tpu][long_tail]") {
  Region r = region_of({"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Attempting to reserve 6.20G at "
                        "the bottom of memory. That was not possible. There are 4.10G free, 0B reserved, and 4.10G "
                        "reservable.",
                        "Top-of-Memory reserved: 0B", "Currently allocated: 27.80G", "--------------------"});
  Parsed out;
  REQUIRE(parse_xla(r, 0, out) == std::optional<std::size_t>(2));
  REQUIRE(out.ooms.size() == 1);
  const OomEvent& ev = out.ooms[0];
  CHECK(ev.family == OomFamily::xla);
  CHECK(ev.device == Device::tpu);
  CHECK(ev.framework == Framework::jax);
  CHECK(ev.numbers.requested == static_cast<std::uint64_t>(6.20 * GiB + 0.5));
  CHECK(ev.numbers.free == static_cast<std::uint64_t>(4.10 * GiB + 0.5));
  CHECK(ev.numbers.allocated == static_cast<std::uint64_t>(27.80 * GiB + 0.5));

  SECTION("without the status prefix, wrapped after the first sentence") {
    Region w = region_of({"Attempting to reserve 6.20G at the bottom of memory.",
                          "That was not possible. There are 4.10G free, 0B reserved, and 4.10G reservable."});
    Parsed o;
    REQUIRE(parse_xla(w, 0, o) == std::optional<std::size_t>(1));
    REQUIRE(o.ooms.size() == 1);
    CHECK(o.ooms[0].numbers.free == static_cast<std::uint64_t>(4.10 * GiB + 0.5));
  }
}

TEST_CASE("xla: a message wrapped over two lines", "[parse][xla][long_tail]") {
  SECTION("cut after the phrase") {
    Region r = region_of({"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
                          "allocate",
                          "17179869184 bytes.", "--------------------"});
    Parsed out;
    REQUIRE(parse_xla(r, 0, out) == std::optional<std::size_t>(1));
    REQUIRE(out.ooms.size() == 1);
    CHECK(out.ooms[0].numbers.requested == 16 * GiB);
    CHECK(out.ooms[0].end_line == 2);
  }
  SECTION("cut mid-word and mid-number") {
    Region r = region_of({"XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allo",
                          "cate 171798", "69184 bytes."});
    Parsed out;
    REQUIRE(parse_xla(r, 0, out) == std::optional<std::size_t>(2));
    REQUIRE(out.ooms.size() == 1);
    CHECK(out.ooms[0].numbers.requested == 16 * GiB);
  }
  SECTION("a complete message does not swallow the next line") {
    Region r = region_of({"RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6291456 bytes.",
                          "1234 is a number on the next line"});
    Parsed out;
    REQUIRE(parse_xla(r, 0, out) == std::optional<std::size_t>(0));
    CHECK(out.ooms[0].numbers.requested == 6291456u);
  }
}

// -- memory_summary -----------------------------------------------------------
namespace {

const std::vector<std::string> kSummary26 = {
    "|===========================================================================|",
    "|                  PyTorch CUDA memory summary, device ID 3                 |",
    "|---------------------------------------------------------------------------|",
    "|            CUDA OOMs: 1            |        cudaMalloc retries: 4         |",
    "|===========================================================================|",
    "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |",
    "|---------------------------------------------------------------------------|",
    "| Allocated memory      |  71802 MiB |  76595 MiB |  51210 GiB |  51140 GiB |",
    "|       from large pool |  69648 MiB |  74297 MiB |  49674 GiB |  49606 GiB |",
    "|       from small pool |   2154 MiB |   2297 MiB |   1536 GiB |   1534 GiB |",
    "|---------------------------------------------------------------------------|",
    "| GPU reserved memory   |  77137 MiB |  78868 MiB |  98816 MiB |  21678 MiB |",
    "|       from large pool |  75595 MiB |  77291 MiB |  96839 MiB |  21244 MiB |",
    "|---------------------------------------------------------------------------|",
    "| Non-releasable memory |   4986 MiB |  10168 MiB |  30410 GiB |  30405 GiB |",
    "|===========================================================================|",
};

std::vector<std::string> with(std::vector<std::string> lines, std::initializer_list<std::string> more) {
  lines.insert(lines.end(), more);
  return lines;
}

}  // namespace

TEST_CASE("memory_summary: CUDA OOMs > 0 is an OOM event with the table's figures", "[parse][memory_summary]") {
  Region r = region_of(with(kSummary26, {"2025-06-30 11:09:53 ERROR exiting with status 1"}), 0);
  Parsed out;
  REQUIRE(parse_memory_summary(r, 3, out) == std::optional<std::size_t>(15));
  REQUIRE(out.ooms.size() == 1);
  const OomEvent& ev = out.ooms[0];
  CHECK(ev.family == OomFamily::memory_summary);
  CHECK(ev.framework == Framework::pytorch);
  CHECK(ev.device == Device::cuda);
  CHECK(ev.gpu == 3);
  CHECK(ev.rank == 0);
  CHECK(ev.line == 4);
  CHECK(ev.end_line == 16);
  CHECK(ev.numbers.allocated == 71802 * MiB);
  CHECK(ev.numbers.reserved == 77137 * MiB);
  CHECK(ev.numbers.reserved_unallocated == (77137 - 71802) * MiB);
  CHECK_FALSE(ev.numbers.requested);
  CHECK(ev.message.find("non-releasable 4986 MiB (peak 10168 MiB)") != std::string::npos);
  CHECK(ev.message.find("CUDA OOMs: 1, cudaMalloc retries: 4") != std::string::npos);
}

TEST_CASE("memory_summary: 1.13 units and the other outcomes", "[parse][memory_summary]") {
  SECTION("1.13's MB/GB labels are binary") {
    Region r = region_of({"|            CUDA OOMs: 2            |        cudaMalloc retries: 7         |",
                          "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |",
                          "| Allocated memory      |   13731 MB |   14970 MB |    2210 GB |    2197 GB |",
                          "| GPU reserved memory   |   14929 MB |   15319 MB |   20224 MB |    5294 MB |"});
    Parsed out;
    REQUIRE(parse_memory_summary(r, 0, out) == std::optional<std::size_t>(3));
    REQUIRE(out.ooms.size() == 1);
    CHECK(out.ooms[0].numbers.allocated == 13731 * MiB);
    CHECK(out.ooms[0].numbers.reserved == 14929 * MiB);
  }
  SECTION("no OOM: nothing, whatever the retries") {
    for (const std::string header : {"|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |",
                                     "|            CUDA OOMs: 0            |        cudaMalloc retries: 5         |"}) {
      Region r = region_of({header, "| GPU reserved memory   |  39475 MiB |  40058 MiB |  62668 MiB |  23193 MiB |"});
      Parsed out;
      CHECK_FALSE(parse_memory_summary(r, 0, out));
      CHECK(out.ooms.empty());
      CHECK(out.findings.empty());
    }
  }
  SECTION("OOMs the program got past: pressure with the reserved figure") {
    Region r = region_of({"|            CUDA OOMs: 3            |        cudaMalloc retries: 9         |",
                          "| GPU reserved memory   |  39475 MiB |  40058 MiB |  62668 MiB |  23193 MiB |",
                          "step 9100 | loss 0.8121 | 2.02 s/step"});
    Parsed out;
    REQUIRE(parse_memory_summary(r, 0, out) == std::optional<std::size_t>(1));
    CHECK(out.ooms.empty());
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].kind == FindingKind::allocator_pressure);
    CHECK(out.findings[0].bytes == 39475 * MiB);
  }
  SECTION("OOMs the program got past: training goes on after the summary") {
    Region r = region_of(with(kSummary26, {"step 4200 | loss 1.2207 | 1.61 s/step"}));
    Parsed out;
    REQUIRE(parse_memory_summary(r, 3, out));
    CHECK(out.ooms.empty());
    CHECK(out.findings.size() == 1);
  }
  SECTION("prose naming the header is no summary") {
    Region r = region_of({"the CUDA OOMs: counter in memory_summary() counts OOMs"});
    Parsed out;
    CHECK_FALSE(parse_memory_summary(r, 0, out));
  }
}

TEST_CASE("memory_summary: the scanner keeps a summary with OOMs and drops one without", "[parse][memory_summary]") {
  Analysis with_oom = analyze_text(joined(kSummary26) + "2025-06-30 11:09:53 ERROR exiting with status 1\n");
  REQUIRE(with_oom.incidents.size() == 1);
  CHECK(with_oom.incidents[0].primary.family == OomFamily::memory_summary);
  CHECK(with_oom.incidents[0].primary.line == 4);

  std::vector<std::string> healthy = kSummary26;
  healthy[3] = "|            CUDA OOMs: 0            |        cudaMalloc retries: 4         |";
  Analysis without = analyze_text(joined(healthy));
  CHECK(without.incidents.empty());
  CHECK(without.findings.empty());
}

// -- allocator notes ------------------------------------------------------------
TEST_CASE("allocator_notes: the UVM preamble and INTERNAL ASSERTs", "[parse][allocator_notes]") {
  SECTION("_use_uvm: pressure with the size, detail 'uvm:'") {
    Region r = region_of({"[_use_uvm] FAILED to allocate 8589934592 bytes (8.00 GiB) via UVM. CUDACachingAllocator "
                          "will raise an OOM error as a result. You can ignore free-memory numbers reported by "
                          "PyTorch as they are irrelevant for UVM."});
    Parsed out;
    REQUIRE(parse_allocator_notes(r, 0, out) == std::optional<std::size_t>(0));
    REQUIRE(out.findings.size() == 1);
    CHECK(out.ooms.empty());
    CHECK(out.findings[0].kind == FindingKind::allocator_pressure);
    CHECK(out.findings[0].detail.rfind("uvm:", 0) == 0);
    CHECK(out.findings[0].bytes == 8 * GiB);
  }
  SECTION("INTERNAL ASSERT in the caching allocator: collateral, C++ frames consumed") {
    Region r = region_of({"RuntimeError: !handles_.at(i) INTERNAL ASSERT FAILED at "
                          "\"/pytorch/c10/cuda/CUDACachingAllocator.cpp\":414, please report a bug to PyTorch.",
                          "Exception raised from map_block at /pytorch/c10/cuda/CUDACachingAllocator.cpp:414 (most "
                          "recent call first):",
                          "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f0c in "
                          "libc10.so)",
                          "INFO:     10.4.0.22:41876 - \"POST /v1/images HTTP/1.1\" 500 Internal Server Error"},
                         2);
    Parsed out;
    REQUIRE(parse_allocator_notes(r, 0, out) == std::optional<std::size_t>(2));
    REQUIRE(out.findings.size() == 1);
    const LogFinding& f = out.findings[0];
    CHECK(f.kind == FindingKind::collateral);
    CHECK(f.rank == 2);
    CHECK(f.detail.rfind("allocator assert: !handles_.at(i) failed in CUDACachingAllocator.cpp:414", 0) == 0);
    CHECK(f.detail.find("expandable-segment") != std::string::npos);
  }
  SECTION("other asserts are not the allocator's") {
    Region r = region_of({"RuntimeError: t.is_cuda() INTERNAL ASSERT FAILED at \"/pytorch/aten/src/ATen/native/"
                          "cuda/Indexing.cu\":1232, please report a bug to PyTorch."});
    Parsed out;
    CHECK_FALSE(parse_allocator_notes(r, 0, out));
  }
}

// -- lookalike ------------------------------------------------------------------
TEST_CASE("lookalike: out of pinned/host memory is host memory", "[parse][lookalike][long_tail]") {
  const std::vector<std::string> host = {
      "ggml_cuda_host_malloc: failed to allocate 2048.00 MiB of pinned memory: out of memory",
      "cudaHostAlloc failed: out of memory",
      "worker 17: host out of memory while tokenizing shard 0391 (RSS 61.2 GiB of 62.7 GiB RAM)",
      "RuntimeError: out of memory allocating 4.00 GiB of page-locked host memory",
  };
  for (const auto& text : host) {
    INFO(text);
    Region r = region_of({text});
    Parsed out;
    REQUIRE(parse_lookalike(r, 0, out));
    REQUIRE(out.findings.size() == 1);
    CHECK(out.findings[0].kind == FindingKind::cpu_alloc_failure);
  }
  Region r = region_of({host[0]});
  Parsed out;
  parse_lookalike(r, 0, out);
  CHECK(out.findings[0].bytes == 2 * GiB);
  for (const std::string gpu : {"RuntimeError: CUDA out of memory.",
                                "cudaMalloc failed: out of memory; falling back to the CPU kernel",
                                "the GPU ran out of memory"}) {
    INFO(gpu);
    Region g = region_of({gpu});
    Parsed none;
    CHECK_FALSE(parse_lookalike(g, 0, none));
  }
}

// -- the whole pipeline ---------------------------------------------------------
TEST_CASE("parse_region: a library's OOM line takes the traceback that follows it", "[parse][long_tail]") {
  Analysis a = analyze_text(joined({
      "[dcn_v2] cudaMalloc returned error 2: out of memory (requested 3221225472 bytes, device 0)",
      "Traceback (most recent call last):",
      "  File \"/work/det/train.py\", line 210, in <module>",
      "    main()",
      "  File \"/work/det/ops/dcn_v2.py\", line 71, in forward",
      "    output = _backend.dcn_v2_forward(input, weight)",
      "RuntimeError: dcn_v2_forward failed",
  }));
  REQUIRE(a.incidents.size() == 1);
  const OomEvent& ev = a.incidents[0].primary;
  CHECK(ev.family == OomFamily::generic);
  CHECK(ev.numbers.requested == 3 * GiB);
  CHECK(ev.gpu == 0);
  REQUIRE(ev.traceback.size() == 2);
  CHECK(ev.traceback[1].file == "/work/det/ops/dcn_v2.py");
  REQUIRE(a.incidents[0].location);
  CHECK(a.incidents[0].location->line == 71);
}

TEST_CASE("parse_region: the survived-OOM parser comes before the allocator parser", "[parse][long_tail]") {
  Analysis a = analyze_text(joined({
      "step 1911 | loss 0.4103",
      "WARNING step 1912: caught torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.25 GiB. GPU 0 has a "
      "total capacity of 47.41 GiB of which 1.02 GiB is free. Skipping this batch.",
      "step 1913 | loss 0.4099",
  }));
  CHECK(a.incidents.empty());
  REQUIRE(a.findings.size() == 1);
  CHECK(a.findings[0].kind == FindingKind::allocator_pressure);
  CHECK(a.findings[0].bytes == static_cast<std::uint64_t>(3.25 * GiB));
}

TEST_CASE("parse_region: look-alike logs give no incident", "[parse][long_tail]") {
  const std::vector<std::string> logs = {
      joined({"Tips: if you hit CUDA out of memory errors, lower --micro-batch or enable --grad-ckpt.",
              "To avoid running out of memory on 24 GB cards we use gradient checkpointing by default.",
              "step 50/1500 | loss 1.4411 | GPU memory usage 68% (16.09 GiB / 23.64 GiB)"}),
      joined({"ggml_cuda_host_malloc: failed to allocate 2048.00 MiB of pinned memory: out of memory",
              "using pageable host memory for the graph splits"}),
      joined({"|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |"}),
      joined({"gpu-a40-04:31870:32011 [1] transport/nvls.cc:160 NCCL WARN Cuda failure 'out of memory'",
              "gpu-a40-04:31870:32011 [1] NCCL INFO NVLS buffer registration failed, falling back to ring",
              "step 1/20000 | loss 11.0412 | 2.91 s/step"}),
  };
  for (const auto& log : logs) {
    INFO(log);
    Analysis a = analyze_text(log);
    CHECK(a.incidents.empty());
  }
}
