#include <catch2/catch.hpp>

#include <string>

#include "analyzer/log/analyzer.hpp"

using namespace oomlens::analyzer;

TEST_CASE("a memory-chatty log is read quickly and still yields its OOMs and look-alikes") {
  std::string log;
  for (int i = 0; i < 2000; ++i)
    log += "[rank0]:step " + std::to_string(i) + " | max memory allocated: 61.20 GB | memory reserved: 70.01 GB\n";
  log += "[rank0]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
         "79.15 GiB of which 1.00 GiB is free. Of the allocated memory 40.00 GiB is allocated by PyTorch, and 30.00 GiB "
         "is reserved by PyTorch but unallocated.\n";
  log += "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.00 GiB for an array\n";
  log += "MemoryError\n";
  for (int i = 0; i < 100; ++i) log += "eval memory usage 45%\n";
  auto a = analyze_text(log);
  REQUIRE(a.incidents.size() == 1);
  CHECK(a.incidents[0].primary.line == 2001);
  CHECK(a.incidents[0].verdict.cls == OomClass::fragmentation);
  CHECK(a.findings.size() >= 1);
  for (const auto& f : a.findings) CHECK(f.kind == FindingKind::cpu_alloc_failure);
}

TEST_CASE("every message family still reaches its parser through the memory gate") {
  const char* lines[] = {
      "RuntimeError: CUDA error: out of memory",
      "RuntimeError: CUDA driver error: out of memory",
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6291456 bytes.",
      "RuntimeError: MPS backend out of memory (MPS allocated: 17.35 GB, other allocations: 1.12 GB, max allowed: "
      "18.13 GB). Tried to allocate 1.50 GB on private pool.",
      "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)",
      "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:66",
  };
  for (const char* line : lines) {
    INFO(line);
    auto a = analyze_text(std::string(line) + "\n");
    CHECK(a.incidents.size() == 1);
  }
}
