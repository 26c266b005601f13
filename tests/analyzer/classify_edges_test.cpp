// The judgements real logs need beyond the clear cases: caps, this process's
// own overhead, figures that contradict the failure, MPS, partial messages.
#include <catch2/catch.hpp>

#include <string>

#include "analyzer/log/classify.hpp"

using namespace oomlens::analyzer;

namespace {

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;
constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

OomEvent allocator_oom(std::uint64_t total, std::uint64_t requested, std::uint64_t free, std::uint64_t allocated,
                       std::uint64_t unallocated) {
  OomEvent e;
  e.family = OomFamily::pytorch_allocator;
  e.device = Device::cuda;
  e.framework = Framework::pytorch;
  e.numbers.total = total;
  e.numbers.requested = requested;
  e.numbers.free = free;
  e.numbers.allocated = allocated;
  e.numbers.reserved_unallocated = unallocated;
  e.numbers.reserved = allocated + unallocated;
  return e;
}

void with_overhead(OomEvent& e, std::uint64_t non_pytorch) {
  e.numbers.non_pytorch = non_pytorch;
  e.numbers.process_in_use = *e.numbers.reserved + non_pytorch;
}

bool says(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a cap: binding when the device had the room, or when reserved sits at it") {
  SECTION("request fits the device but not the allowance") {
    auto e = allocator_oom(24 * GiB, 1 * GiB, 12 * GiB, 9 * GiB, 500 * MiB);
    e.numbers.limit = 10 * GiB;
    auto v = classify(e);
    CHECK(v.cls == OomClass::limit);
    CHECK(v.reason.empty());
    CHECK(says(v.arithmetic, "> allowed 10.00 GiB"));
    CHECK(says(v.arithmetic, "set_per_process_memory_fraction(0.42)"));
  }
  SECTION("nothing allocated yet and a tiny allowance: a limit, never 'live tensors hold 0 bytes'") {
    auto e = allocator_oom(16 * GiB, 20 * MiB, 15 * GiB, 0, 0);
    e.numbers.limit = 0;
    auto v = classify(e);
    CHECK(v.cls == OomClass::limit);
  }
  SECTION("reserved at the cap, the device full too: still the cap that stopped it, with a note") {
    auto e = allocator_oom(80 * GiB, 4 * GiB, 512 * MiB, 39 * GiB, 900 * MiB);
    e.numbers.limit = 40 * GiB;
    auto v = classify(e);
    CHECK(v.cls == OomClass::limit);
    CHECK(says(v.notes, "raising the cap alone may not be enough"));
  }
  SECTION("a cap above the device total is no cap") {
    auto e = allocator_oom(24 * GiB, 2 * GiB, 100 * MiB, 22 * GiB, 200 * MiB);
    e.numbers.limit = 30 * GiB;
    CHECK(classify(e).cls == OomClass::capacity);
  }
}

TEST_CASE("this process's own overhead is not an external holder") {
  SECTION("700 MiB of context on a 6 GiB card: capacity, the overhead named") {
    auto e = allocator_oom(6 * GiB, 256 * MiB, 40 * MiB, 5 * GiB, 100 * MiB);
    with_overhead(e, 700 * MiB);
    auto v = classify(e);
    CHECK(v.cls == OomClass::capacity);
    CHECK(says(v.arithmetic, "its own overhead, below max(1 GiB, 10% of the device) = 1024.00 MiB"));
  }
  SECTION("1.3 GiB on a 12 GiB card is above the floor but below the live tensors: capacity") {
    auto e = allocator_oom(12 * GiB, 512 * MiB, 100 * MiB, 10 * GiB, 200 * MiB);
    with_overhead(e, 1300 * MiB);
    auto v = classify(e);
    CHECK(v.cls == OomClass::capacity);
    REQUIRE(!v.secondary.empty());
    CHECK(v.secondary[0].cls == OomClass::external);
  }
  SECTION("another process holding more than the live tensors is external") {
    auto e = allocator_oom(48 * GiB, 2 * GiB, 300 * MiB, 18 * GiB, 400 * MiB);
    with_overhead(e, 600 * MiB);
    e.numbers.other_processes.push_back({4242, 28 * GiB});
    auto v = classify(e);
    CHECK(v.cls == OomClass::external);
    CHECK(says(v.arithmetic, "of which 28.00 GiB held by other processes"));
  }
}

TEST_CASE("figures that say the device had room are not called capacity") {
  auto e = allocator_oom(24 * GiB, 2 * GiB, 5 * GiB, 18 * GiB, 64 * MiB);
  auto v = classify(e);
  CHECK(v.cls == OomClass::unquantified);
  CHECK(v.reason == "numbers-contradict");
  CHECK(says(v.arithmetic, "free on the device 5.00 GiB > requested 2.00 GiB"));
  CHECK(says(v.notes, "WDDM"));
  CHECK(says(v.notes, "mem_get_info"));

  SECTION("equal after rounding is no contradiction") {
    auto f = allocator_oom(24 * GiB, 20 * MiB, 20 * MiB + 4 * 1024, 23 * GiB, 10 * MiB);
    CHECK(classify(f).reason != "numbers-contradict");
  }
  SECTION("with a printed cap it is the cap") {
    auto g = allocator_oom(24 * GiB, 2 * GiB, 5 * GiB, 18 * GiB, 64 * MiB);
    g.numbers.limit = 19 * GiB;
    CHECK(classify(g).cls == OomClass::limit);
  }
}

TEST_CASE("a message without its request is judged on the device's figures") {
  auto e = allocator_oom(4 * GiB, 0, 20 * MiB, 3 * GiB + 100 * MiB, 100 * MiB);
  e.numbers.requested.reset();
  auto v = classify(e);
  CHECK(v.cls == OomClass::capacity);
  CHECK(says(v.notes, "does not give the request"));

  OomEvent cut;
  cut.family = OomFamily::pytorch_allocator;
  cut.numbers.requested = 20 * MiB;
  cut.numbers.total = 4 * GiB;  // the rest was cut off
  auto w = classify(cut);
  CHECK(w.cls == OomClass::unquantified);
  CHECK(w.reason == "no-numbers");
}

TEST_CASE("sizes no device has are a size bug, with its usual causes") {
  OomEvent e;
  e.family = OomFamily::pytorch_allocator;
  e.numbers.requested = std::uint64_t{1} << 60;
  auto v = classify(e);
  CHECK(v.cls == OomClass::unquantified);
  CHECK(v.reason == "size-overflow");
  CHECK(says(v.notes, "desynchronised"));
}

TEST_CASE("MPS: pool, other allocations and the watermark") {
  auto mps = [](std::uint64_t pool, std::uint64_t other, std::optional<std::uint64_t> cap, std::uint64_t req) {
    OomEvent e;
    e.family = OomFamily::mps;
    e.device = Device::mps;
    e.numbers.reserved = pool;
    e.numbers.non_pytorch = other;
    e.numbers.limit = cap;
    e.numbers.requested = req;
    return e;
  };
  SECTION("the default watermark of a 16 GB Mac crossed: capacity") {
    auto e = mps(17 * GiB, 1 * GiB, static_cast<std::uint64_t>(18.13 * GiB), 2 * GiB);
    auto v = classify(e);
    CHECK(v.cls == OomClass::capacity);
    CHECK(says(v.arithmetic, "default watermark"));
    CHECK(says(v.arithmetic, "16 GB Mac"));
  }
  SECTION("a lowered watermark crossed: a limit") {
    auto e = mps(11 * GiB, 512 * MiB, static_cast<std::uint64_t>(12.80 * GiB), 2 * GiB);  // ratio 1.2 on 16 GB
    auto v = classify(e);
    CHECK(v.cls == OomClass::limit);
    CHECK(says(v.arithmetic, "PYTORCH_MPS_HIGH_WATERMARK_RATIO was changed"));
  }
  SECTION("other allocations larger than PyTorch's heaps: external") {
    auto e = mps(3 * GiB, 6 * GiB, static_cast<std::uint64_t>(9.07 * GiB), 720 * MiB);
    auto v = classify(e);
    CHECK(v.cls == OomClass::external);
  }
  SECTION("no watermark: Metal refused, the heaps hold it") {
    auto e = mps(56 * GiB, 1 * GiB, std::nullopt, 8 * GiB);
    CHECK(classify(e).cls == OomClass::capacity);
  }
}

TEST_CASE("rounding_slack follows the unit PyTorch prints") {
  CHECK(rounding_slack(512) == 0);
  CHECK(rounding_slack(20 * MiB) == MiB / 200 + 1);
  CHECK(rounding_slack(3 * GiB) == GiB / 200 + 1);
}
