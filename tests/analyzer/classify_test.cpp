#include <catch2/catch.hpp>

#include <cctype>

#include "analyzer/log/classify.hpp"

using namespace oomlens::analyzer;

namespace {

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;
constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

// A current-format PyTorch CUDA OOM on an 80 GiB device.
OomEvent allocator_oom(std::uint64_t requested, std::uint64_t free, std::uint64_t allocated, std::uint64_t unallocated) {
  OomEvent e;
  e.family = OomFamily::pytorch_allocator;
  e.device = Device::cuda;
  e.framework = Framework::pytorch;
  e.numbers.requested = requested;
  e.numbers.total = 80 * GiB;
  e.numbers.free = free;
  e.numbers.allocated = allocated;
  e.numbers.reserved_unallocated = unallocated;
  e.numbers.reserved = allocated + unallocated;
  // NVML's view of this process: its reservation plus a CUDA context.
  e.numbers.process_in_use = allocated + unallocated + 512 * MiB;
  e.numbers.non_pytorch = 512 * MiB;
  return e;
}

}  // namespace

TEST_CASE("fragmentation needs the cached gap to cover the request and be a substantial share") {
  SECTION("30 GiB cached, 8 GiB request: fragmentation") {
    auto e = allocator_oom(8 * GiB, 1 * GiB, 48 * GiB, 30 * GiB);
    auto v = classify(e);
    CHECK(v.cls == OomClass::fragmentation);
    REQUIRE(!v.arithmetic.empty());
    CHECK(v.arithmetic[0].find("30.00 GiB cached but unallocated") != std::string::npos);
  }
  SECTION("exactly at the 10% boundary counts") {
    auto e = allocator_oom(2 * GiB, 1 * GiB, 60 * GiB, 8 * GiB);
    CHECK(classify(e).cls == OomClass::fragmentation);
  }
  SECTION("just under 10% of the device is capacity, with fragmentation as a secondary note") {
    auto e = allocator_oom(2 * GiB, 1 * GiB, 70 * GiB, 8 * GiB - 64 * MiB);
    auto v = classify(e);
    CHECK(v.cls == OomClass::capacity);
    REQUIRE(!v.secondary.empty());
    CHECK(v.secondary[0].cls == OomClass::fragmentation);
    bool noted = false;
    for (const auto& n : v.notes) noted = noted || n.find("fragmentation is secondary") != std::string::npos;
    CHECK(noted);
  }
  SECTION("a large gap smaller than the request is not fragmentation") {
    auto e = allocator_oom(20 * GiB, 1 * GiB, 50 * GiB, 16 * GiB);
    CHECK(classify(e).cls == OomClass::capacity);
  }
}

TEST_CASE("the cause whose removal frees the most memory wins, the other is named") {
  auto e = allocator_oom(4 * GiB, 512 * MiB, 30 * GiB, 12 * GiB);
  e.numbers.other_processes.push_back({4242, 36 * GiB});
  e.numbers.process_in_use = 43 * GiB;
  e.numbers.non_pytorch = 1 * GiB;
  auto v = classify(e);
  CHECK(v.cls == OomClass::external);
  REQUIRE(!v.secondary.empty());
  CHECK(v.secondary[0].cls == OomClass::fragmentation);
  CHECK(v.secondary[0].bytes == 12 * GiB);

  auto f = allocator_oom(4 * GiB, 512 * MiB, 20 * GiB, 40 * GiB);
  f.numbers.other_processes.push_back({4242, 18 * GiB});
  f.numbers.process_in_use = 61 * GiB;
  auto w = classify(f);
  CHECK(w.cls == OomClass::fragmentation);
  REQUIRE(!w.secondary.empty());
  CHECK(w.secondary[0].cls == OomClass::external);
}

TEST_CASE("a Process line that matches our own reservation is this process (containers)") {
  auto e = allocator_oom(2 * GiB, 300 * MiB, 70 * GiB, 1 * GiB);
  e.numbers.process_in_use.reset();  // no "Including non-PyTorch memory" line
  e.numbers.non_pytorch.reset();
  e.numbers.other_processes.push_back({1234, 71 * GiB + 600 * MiB});
  auto v = classify(e);
  CHECK(v.cls == OomClass::capacity);
  REQUIRE(e.numbers.self_process);
  CHECK(e.numbers.self_process->pid == 1234);
  CHECK(e.numbers.other_processes.empty());
  CHECK(e.numbers.non_pytorch == 600 * MiB);

  auto f = allocator_oom(2 * GiB, 300 * MiB, 20 * GiB, 1 * GiB);
  f.numbers.process_in_use.reset();
  f.numbers.non_pytorch.reset();
  f.numbers.other_processes.push_back({99, 50 * GiB});  // far above what we reserved: someone else
  classify(f);
  CHECK(!f.numbers.self_process);
  CHECK(f.numbers.other_processes.size() == 1);
}

TEST_CASE("non-PyTorch memory inside the process counts as external") {
  auto e = allocator_oom(2 * GiB, 200 * MiB, 17 * GiB, 1 * GiB);
  e.numbers.process_in_use = 30 * GiB;  // 18 GiB reserved + 12 GiB of NCCL buffers
  e.numbers.non_pytorch = 12 * GiB;
  e.numbers.other_processes.push_back({77, 49 * GiB});
  auto v = classify(e);
  CHECK(v.cls == OomClass::external);
}

TEST_CASE("a cap crossed while the device had room is a limit; with a full device it is not") {
  auto e = allocator_oom(4 * GiB, 40 * GiB, 36 * GiB, 1 * GiB);
  e.numbers.limit = 40 * GiB;
  auto v = classify(e);
  CHECK(v.cls == OomClass::limit);
  bool room = false;
  for (const auto& a : v.arithmetic) room = room || a.find("still had 40.00 GiB free") != std::string::npos;
  CHECK(room);

  auto f = allocator_oom(4 * GiB, 1 * GiB, 36 * GiB, 1 * GiB);
  f.numbers.limit = 40 * GiB;
  auto w = classify(f);
  CHECK(w.cls != OomClass::limit);
  for (const auto& a : w.arithmetic) CHECK(a.find("still had") == std::string::npos);
}

TEST_CASE("messages without figures are unquantified, with the reason") {
  OomEvent e;
  e.family = OomFamily::cublas;
  CHECK(classify(e).cls == OomClass::unquantified);

  OomEvent t;
  t.family = OomFamily::pytorch_allocator;
  t.numbers.requested = 2 * GiB;
  t.truncated = true;
  auto v = classify(t);
  CHECK(v.cls == OomClass::unquantified);
  REQUIRE(!v.notes.empty());
  CHECK(v.notes[0].find("2.3") != std::string::npos);
}

TEST_CASE("allocated above the device total is explained, not turned into nonsense") {
  OomEvent e = allocator_oom(1 * GiB, 0, 11 * GiB + 512 * MiB, 256 * MiB);
  e.numbers.total = 8 * GiB;
  auto v = classify(e);
  CHECK(v.cls == OomClass::capacity);
  bool explained = false;
  for (const auto& n : v.notes) explained = explained || n.find("WSL") != std::string::npos;
  CHECK(explained);
  for (const auto& a : v.arithmetic)
    for (std::size_t i = 0; i + 1 < a.size(); ++i) CHECK(!(a[i] == '-' && std::isdigit(static_cast<unsigned char>(a[i + 1]))));
}

TEST_CASE("without process lines, memory used beyond our reservation is external") {
  OomEvent e = allocator_oom(2 * GiB, 500 * MiB, 20 * GiB, 1 * GiB);
  e.device = Device::hip;
  e.numbers.process_in_use.reset();
  e.numbers.non_pytorch.reset();
  auto v = classify(e);  // 80 - 0.5 - 21 = 58.5 GiB used by someone else
  CHECK(v.cls == OomClass::external);
}
