// The PyTorch message-family parsers: caching allocator (every message era,
// plus the "more than 1EB" request, ROCm's HIP text and XPU), cudaMallocAsync
// and MPS. Messages are written from PyTorch's format strings with made-up
// numbers; expected values are exact bytes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/log/event.hpp"
#include "analyzer/log/line.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

using namespace oomlens::analyzer;
using oomlens::analyzer::parse::Parsed;
using oomlens::analyzer::parse::Parser;

namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

// Lines numbered from 1, all from one rank, the anchor on the first.
Region region_of(const std::vector<std::string>& texts, std::optional<int> rank = std::nullopt) {
  Region region;
  std::uint64_t offset = 0;
  for (const auto& text : texts) {
    region.lines.push_back(Line{region.lines.size() + 1, offset, text, rank, std::nullopt});
    offset += text.size() + 1;
  }
  region.anchors = {0};
  return region;
}

// A message hard-wrapped by a terminal `width` columns wide.
Region wrapped(const std::string& message, std::size_t width) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < message.size(); at += width) lines.push_back(message.substr(at, width));
  return region_of(lines);
}

// The one event `parser` reads from region.lines[at], with the index of the
// message's last line, `last`; it finds nothing else.
OomEvent only_event_at(Parser parser, const Region& region, std::size_t at, std::size_t last) {
  Parsed out;
  REQUIRE(parser(region, at, out) == last);
  REQUIRE(out.ooms.size() == 1);
  REQUIRE(out.findings.empty());
  return out.ooms[0];
}

// Each family's event from the region's first line, its message ending on
// line index `last`.
OomEvent allocator_event(const Region& region, std::size_t last = 0) {
  return only_event_at(parse::parse_pytorch_allocator, region, 0, last);
}
OomEvent allocator_event(const std::string& line) { return allocator_event(region_of({line})); }
OomEvent malloc_async_event(const Region& region, std::size_t last) {
  return only_event_at(parse::parse_cuda_malloc_async, region, 0, last);
}
OomEvent mps_event(const Region& region, std::size_t last) { return only_event_at(parse::parse_mps, region, 0, last); }

// The parsers of this file, for what none of them may claim.
const std::vector<Parser> kPytorchParsers = {parse::parse_pytorch_allocator, parse::parse_cuda_malloc_async,
                                             parse::parse_mps};

const std::string kHintC =
    " If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  "
    "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF";
const std::string kHintD =
    " If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  "
    "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF";
std::string hint_e(const std::string& variable) {
  return " If reserved but unallocated memory is large try setting " + variable +
         "=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
         "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
}

// Era H, with every optional part present: the message the wrap tests cut up.
const std::string kEraH =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of "
    "79.25 GiB of which 30.50 GiB is free. Process 1111 has 10.00 GiB memory in use. Process 2222 has 512.00 MiB "
    "memory in use. Including non-PyTorch memory, this process has 38.00 GiB memory in use. 40.00 GiB allowed; "
    "Of the allocated memory 36.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but "
    "unallocated." +
    hint_e("PYTORCH_CUDA_ALLOC_CONF");

void check_era_h_numbers(const OomEvent& e) {
  const MemoryNumbers& n = e.numbers;
  CHECK(e.gpu == 3);
  CHECK(n.requested == 2 * kGiB);
  CHECK(n.total == std::uint64_t{85094039552});  // 79.25 GiB
  CHECK(n.free == 30 * kGiB + 512 * kMiB);
  CHECK(n.limit == 40 * kGiB);
  CHECK(n.allocated == 36 * kGiB);
  CHECK(n.reserved == 37 * kGiB);
  CHECK(n.reserved_unallocated == 1 * kGiB);
  CHECK_FALSE(n.private_pools);
  CHECK(n.process_in_use == 38 * kGiB);
  CHECK(n.non_pytorch == 1 * kGiB);
  REQUIRE(n.other_processes.size() == 2);
  CHECK(n.other_processes[0].pid == 1111);
  CHECK(n.other_processes[0].bytes == 10 * kGiB);
  CHECK(n.other_processes[1].pid == 2222);
  CHECK(n.other_processes[1].bytes == 512 * kMiB);
  CHECK(e.expandable_hint);
  CHECK_FALSE(e.truncated);
  CHECK_FALSE(e.placeholder_limit);
}

}  // namespace

TEST_CASE("era A: 'cached' is reserved minus allocated", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 6.50 GiB "
      "already allocated; 3.06 MiB free; 1.25 GiB cached)");
  CHECK(e.family == OomFamily::pytorch_allocator);
  CHECK(e.framework == Framework::pytorch);
  CHECK(e.device == Device::cuda);
  CHECK(e.exception == "RuntimeError");
  CHECK(e.message.rfind("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0;", 0) == 0);
  CHECK(e.gpu == 0);
  CHECK(e.numbers.requested == 20 * kMiB);
  CHECK(e.numbers.total == std::uint64_t{8514772664});
  CHECK(e.numbers.allocated == 6 * kGiB + 512 * kMiB);
  CHECK(e.numbers.free == std::uint64_t{3208643});
  CHECK(e.numbers.reserved_unallocated == 1 * kGiB + 256 * kMiB);
  CHECK(e.numbers.reserved == 7 * kGiB + 768 * kMiB);
  CHECK_FALSE(e.numbers.limit);
  CHECK_FALSE(e.numbers.process_in_use);
  CHECK_FALSE(e.expandable_hint);
}

TEST_CASE("era B: 'reserved in total', with and without 'allowed'", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 1; 10.76 GiB total capacity; 9.50 GiB "
      "already allocated; 1.94 MiB free; 9.75 GiB reserved in total by PyTorch)");
  const MemoryNumbers& n = e.numbers;
  CHECK(e.gpu == 1);
  CHECK(n.requested == 2 * kMiB);
  CHECK(n.total == std::uint64_t{11553462026});
  CHECK(n.free == std::uint64_t{2034237});
  CHECK(n.allocated == 9 * kGiB + 512 * kMiB);
  CHECK(n.reserved == 9 * kGiB + 768 * kMiB);
  CHECK(n.reserved_unallocated == 256 * kMiB);
  CHECK_FALSE(n.limit);

  const OomEvent allowed = allocator_event(
      "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 10.76 GiB total capacity; 7.50 GiB "
      "already allocated; 1.94 MiB free; 8.00 GiB allowed; 7.75 GiB reserved in total by PyTorch)");
  CHECK(allowed.numbers.limit == 8 * kGiB);
  CHECK(allowed.numbers.reserved == 7 * kGiB + 768 * kMiB);
  CHECK(allowed.numbers.reserved_unallocated == 256 * kMiB);
}

TEST_CASE("era C: max_split_size_mb hint, torch.cuda.OutOfMemoryError", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB (GPU 0; 14.75 GiB total "
      "capacity; 12.00 GiB already allocated; 100.06 MiB free; 13.50 GiB reserved in total by PyTorch)" +
      kHintC);
  CHECK(e.exception == "torch.cuda.OutOfMemoryError");
  CHECK(e.numbers.requested == 256 * kMiB);
  CHECK(e.numbers.total == 14 * kGiB + 768 * kMiB);
  CHECK(e.numbers.free == std::uint64_t{104920515});
  CHECK(e.numbers.allocated == 12 * kGiB);
  CHECK(e.numbers.reserved == 13 * kGiB + 512 * kMiB);
  CHECK(e.numbers.reserved_unallocated == 1 * kGiB + 512 * kMiB);
  CHECK_FALSE(e.expandable_hint);
}

TEST_CASE("era D: 'capacty' typo and NVML process lines", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacty "
      "of 23.65 GiB of which 512.00 MiB is free. Process 4242 has 3.00 GiB memory in use. Including non-PyTorch "
      "memory, this process has 20.00 GiB memory in use. Of the allocated memory 17.00 GiB is allocated by "
      "PyTorch, and 2.00 GiB is reserved by PyTorch but unallocated." +
      kHintD);
  const MemoryNumbers& n = e.numbers;
  CHECK(e.gpu == 0);
  CHECK(n.requested == 1 * kGiB);
  CHECK(n.total == std::uint64_t{25393994138});
  CHECK(n.free == 512 * kMiB);
  CHECK(n.allocated == 17 * kGiB);
  CHECK(n.reserved == 19 * kGiB);
  CHECK(n.reserved_unallocated == 2 * kGiB);
  CHECK(n.process_in_use == 20 * kGiB);
  CHECK(n.non_pytorch == 1 * kGiB);
  REQUIRE(n.other_processes.size() == 1);
  CHECK(n.other_processes[0].pid == 4242);
  CHECK(n.other_processes[0].bytes == 3 * kGiB);
  CHECK_FALSE(e.expandable_hint);
}

TEST_CASE("era E: expandable_segments hint, self line only", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity "
      "of 79.15 GiB of which 6.75 MiB is free. Including non-PyTorch memory, this process has 79.13 GiB memory in "
      "use. Of the allocated memory 76.50 GiB is allocated by PyTorch, and 1.25 GiB is reserved by PyTorch but "
      "unallocated." +
      hint_e("PYTORCH_CUDA_ALLOC_CONF"));
  const MemoryNumbers& n = e.numbers;
  CHECK(n.total == std::uint64_t{84986665370});
  CHECK(n.free == std::uint64_t{7077888});
  CHECK(n.allocated == 76 * kGiB + 512 * kMiB);
  CHECK(n.reserved == 77 * kGiB + 768 * kMiB);
  CHECK(n.reserved_unallocated == 1 * kGiB + 256 * kMiB);
  CHECK(n.process_in_use == std::uint64_t{84965190533});
  CHECK(n.non_pytorch == std::uint64_t{1481763717});
  CHECK(n.other_processes.empty());
  CHECK(e.expandable_hint);
  CHECK(e.message.find("(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)") !=
        std::string::npos);
}

TEST_CASE("era F: 2.3 truncation after 'GPU '", "[parse][pytorch]") {
  const std::string cut = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 312.00 MiB. GPU ";

  SECTION("device 0's NUL ends the message; the next log line is not part of it") {
    const OomEvent e = allocator_event(region_of({cut, "Epoch 3: loss 0.25"}));
    CHECK(e.truncated);
    CHECK(e.gpu == 0);
    CHECK(e.end_line == 1);
    CHECK(e.numbers.requested == 312 * kMiB);
    CHECK_FALSE(e.numbers.total);
    CHECK_FALSE(e.numbers.free);
    CHECK_FALSE(e.numbers.reserved);
    CHECK(e.message == "CUDA out of memory. Tried to allocate 312.00 MiB. GPU");
  }
  SECTION("ending in a control byte") {
    const OomEvent e = allocator_event(std::string(cut) + "\x01");
    CHECK(e.truncated);
    CHECK(e.gpu == 1);
    CHECK(e.numbers.requested == 312 * kMiB);
  }
  SECTION("device n > 0 prints byte n and the message goes on") {
    const OomEvent e = allocator_event(
        std::string(cut) +
        "\x02 has a total capacity of 79.15 GiB of which 6.75 MiB is free. Of the allocated memory "
        "70.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated." +
        hint_e("PYTORCH_CUDA_ALLOC_CONF"));
    CHECK_FALSE(e.truncated);
    CHECK(e.gpu == 2);
    CHECK(e.numbers.reserved == 71 * kGiB);
  }
}

TEST_CASE("era G: private pools are part of A, not of allocated", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of "
      "39.39 GiB of which 30.00 MiB is free. Including non-PyTorch memory, this process has 39.35 GiB memory in "
      "use. Of the allocated memory 37.50 GiB is allocated by PyTorch, with 46.00 MiB allocated in private pools "
      "(e.g., CUDA Graphs), and 736.00 MiB is reserved by PyTorch but unallocated." +
      hint_e("PYTORCH_CUDA_ALLOC_CONF"));
  const MemoryNumbers& n = e.numbers;
  CHECK(e.exception == "torch.OutOfMemoryError");
  CHECK(n.total == std::uint64_t{42294690447});
  CHECK(n.private_pools == 46 * kMiB);
  CHECK(n.allocated == 37 * kGiB + 512 * kMiB - 46 * kMiB);
  CHECK(n.reserved == 37 * kGiB + 512 * kMiB + 736 * kMiB);
  CHECK(n.reserved_unallocated == 736 * kMiB);
  CHECK(n.non_pytorch == std::uint64_t{1214670438});
}

TEST_CASE("era H: allowed and several processes", "[parse][pytorch]") {
  const OomEvent e = allocator_event(kEraH);
  check_era_h_numbers(e);
  CHECK(e.device == Device::cuda);
  CHECK(e.exception == "torch.OutOfMemoryError");
}

TEST_CASE("era I: PYTORCH_ALLOC_CONF hint; 0 bytes in use means unknown", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
      "93.10 GiB of which 12.00 MiB is free. Including non-PyTorch memory, this process has 0 bytes memory in use. "
      "Of the allocated memory 90.00 GiB is allocated by PyTorch, and 2.00 GiB is reserved by PyTorch but "
      "unallocated." +
      hint_e("PYTORCH_ALLOC_CONF"));
  const MemoryNumbers& n = e.numbers;
  CHECK(n.total == std::uint64_t{99965363814});
  CHECK(n.reserved == 92 * kGiB);
  CHECK_FALSE(n.process_in_use);
  CHECK_FALSE(n.non_pytorch);
  CHECK(n.other_processes.empty());
  CHECK(e.expandable_hint);
}

TEST_CASE("device-generic 'Out of memory.' and the 1EB request", "[parse][pytorch]") {
  const OomEvent generic = allocator_event(
      "Out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 16.00 GiB of which 1.00 GiB is "
      "free. Of the allocated memory 12.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but "
      "unallocated.");
  CHECK(generic.device == Device::unknown);
  CHECK(generic.exception.empty());
  CHECK(generic.numbers.reserved == 13 * kGiB);
  CHECK_FALSE(generic.expandable_hint);

  const OomEvent huge = allocator_event(region_of(
      {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.", "next line"}));
  CHECK(huge.numbers.requested == kPlaceholderSize);
  CHECK_FALSE(huge.numbers.total);
  CHECK_FALSE(huge.truncated);
}

TEST_CASE("process lines: none, one, several", "[parse][pytorch]") {
  const std::string head =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
      "24.00 GiB of which 2.00 MiB is free. ";
  const std::string tail =
      "Of the allocated memory 10.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but "
      "unallocated." +
      hint_e("PYTORCH_CUDA_ALLOC_CONF");

  const OomEvent none = allocator_event(head + tail);
  CHECK(none.numbers.other_processes.empty());
  CHECK_FALSE(none.numbers.process_in_use);

  // Only another process: the job may run in a PID namespace (NVML host PIDs).
  const OomEvent one = allocator_event(head + "Process 77 has 12.50 GiB memory in use. " + tail);
  REQUIRE(one.numbers.other_processes.size() == 1);
  CHECK(one.numbers.other_processes[0].pid == 77);
  CHECK(one.numbers.other_processes[0].bytes == 12 * kGiB + 512 * kMiB);
  CHECK_FALSE(one.numbers.process_in_use);

  const OomEvent several =
      allocator_event(head +
                      "Process 10 has 1.00 GiB memory in use. Process 20 has 2.00 GiB memory in use. Process 30 "
                      "has 512 bytes memory in use. Including non-PyTorch memory, this process has 11.50 GiB "
                      "memory in use. " +
                      tail);
  const MemoryNumbers& n = several.numbers;
  REQUIRE(n.other_processes.size() == 3);
  CHECK(n.other_processes[0].pid == 10);
  CHECK(n.other_processes[1].bytes == 2 * kGiB);
  CHECK(n.other_processes[2].pid == 30);
  CHECK(n.other_processes[2].bytes == 512);
  CHECK(n.process_in_use == 11 * kGiB + 512 * kMiB);
  CHECK(n.non_pytorch == 512 * kMiB);
}

TEST_CASE("an 'allowed' that is a SIZE_MAX placeholder is no limit", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
      "24.00 GiB of which 2.00 MiB is free. 17179869184.00 GiB allowed; Of the allocated memory 10.00 GiB is "
      "allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.");
  CHECK(e.placeholder_limit);
  CHECK_FALSE(e.numbers.limit);
}

TEST_CASE("HIP: hipified prefix, pools and hint; no process lines", "[parse][pytorch]") {
  const OomEvent e = allocator_event(
      "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 63.98 "
      "GiB of which 1.20 GiB is free. Of the allocated memory 60.00 GiB is allocated by PyTorch, with 1.00 GiB "
      "allocated in private pools (e.g., HIP Graphs), and 1.50 GiB is reserved by PyTorch but unallocated." +
      hint_e("PYTORCH_HIP_ALLOC_CONF"));
  CHECK(e.device == Device::hip);
  CHECK(e.message.rfind("HIP out of memory.", 0) == 0);
  CHECK(e.numbers.total == std::uint64_t{68698001900});
  CHECK(e.numbers.free == std::uint64_t{1288490189});
  CHECK(e.numbers.allocated == 59 * kGiB);
  CHECK(e.numbers.private_pools == 1 * kGiB);
  CHECK(e.numbers.reserved == 61 * kGiB + 512 * kMiB);
  CHECK(e.expandable_hint);
}

TEST_CASE("XPU: both variants", "[parse][pytorch]") {
  const OomEvent e = allocator_event(region_of(
      {"torch.OutOfMemoryError: XPU out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of "
       "15.11 GiB. Of the allocated memory 10.00 GiB is allocated by PyTorch, and 2.50 GiB is reserved by PyTorch "
       "but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
       "more output"}));
  CHECK(e.device == Device::xpu);
  CHECK(e.gpu == 0);
  CHECK(e.numbers.requested == 4 * kGiB);
  CHECK(e.numbers.total == std::uint64_t{16224238961});
  CHECK_FALSE(e.numbers.free);
  CHECK(e.numbers.allocated == 10 * kGiB);
  CHECK(e.numbers.reserved == 12 * kGiB + 512 * kMiB);
  CHECK_FALSE(e.expandable_hint);

  const OomEvent with_free = allocator_event(
      "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 1.00 GiB. GPU 1 has a total capacity of 64.00 "
      "GiB of which 512.00 MiB is free. 48.00 GiB allowed; Of the allocated memory 46.00 GiB is allocated by "
      "PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all "
      "unoccupied cached memory.");
  CHECK(with_free.gpu == 1);
  CHECK(with_free.numbers.free == 512 * kMiB);
  CHECK(with_free.numbers.limit == 48 * kGiB);
  CHECK(with_free.numbers.reserved == 47 * kGiB + 512 * kMiB);
}

TEST_CASE("a message wrapped over 3 lines, mid-word and mid-number", "[parse][pytorch]") {
  const std::size_t a = kEraH.find("79.2") + 4;   // "79.2" | "5 GiB"
  const std::size_t b = kEraH.find("allocated memory") + 5;  // "Of the alloc" | "ated memory"
  Region region = region_of(
      {kEraH.substr(0, a), kEraH.substr(a, b - a), kEraH.substr(b), "INFO training resumed"}, 0);
  const OomEvent e = allocator_event(region, 2);
  CHECK(e.line == 1);
  CHECK(e.end_line == 3);
  CHECK(e.rank == 0);
  check_era_h_numbers(e);
  CHECK(e.message == kEraH.substr(kEraH.find("CUDA out of memory")));
}

TEST_CASE("hard wraps at any terminal width give the same numbers", "[parse][pytorch]") {
  // 12 lines at most are joined (about 60 columns for this message).
  for (std::size_t width : {60u, 61u, 67u, 80u, 97u, 100u, 120u, 160u, 211u}) {
    CAPTURE(width);
    Region region = wrapped(kEraH, width);
    std::size_t lines = region.lines.size();
    region.lines.push_back(Line{lines + 1, 0, "Epoch 2/10", std::nullopt, std::nullopt});
    check_era_h_numbers(allocator_event(region, lines - 1));
  }
  // Past 12 lines the rest is left alone; what those lines hold is still read.
  const OomEvent narrow = allocator_event(wrapped(kEraH, 30), 11);
  CHECK(narrow.numbers.requested == 2 * kGiB);
  CHECK(narrow.numbers.free == 30 * kGiB + 512 * kMiB);
  CHECK_FALSE(narrow.numbers.reserved);
  // Era B/C and truncation endings are optional ends: a wrap right there must
  // still take the hint on the next line.
  const std::string era_c =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB (GPU 0; 14.75 GiB total "
      "capacity; 12.00 GiB already allocated; 100.06 MiB free; 13.50 GiB reserved in total by PyTorch)";
  const OomEvent c = allocator_event(region_of({era_c, kHintC, "Epoch 2/10"}), 1);
  CHECK(c.message.find("PYTORCH_CUDA_ALLOC_CONF") != std::string::npos);
  const std::string gpu_cut = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU ";
  const OomEvent f = allocator_event(region_of({gpu_cut, kEraH.substr(kEraH.find("3 has a total")), "Epoch 2/10"}), 1);
  CHECK_FALSE(f.truncated);
  check_era_h_numbers(f);
}

TEST_CASE("a message cut mid-hint does not swallow the next error", "[parse][pytorch]") {
  const std::string cut = kEraH.substr(0, kEraH.find("Memory Management"));
  Region region = region_of({cut, "Epoch 3: loss 0.25", kEraH, "RuntimeError: CUDA error: out of memory"});
  region.anchors = {0, 2};
  // The cut message can't tell a log line from a wrap: it takes line 1 too.
  check_era_h_numbers(allocator_event(region, 1));
  const OomEvent second = only_event_at(parse::parse_pytorch_allocator, region, 2, 2);
  CHECK(second.line == 3);
  check_era_h_numbers(second);
}

TEST_CASE("another rank's line inside a wrapped message is skipped", "[parse][pytorch]") {
  const std::size_t a = kEraH.find("Process 2222");
  const std::size_t b = kEraH.find("Of the allocated");
  Region region;
  region.lines = {
      Line{10, 1000, kEraH.substr(0, a), 0, 1700000000000},
      Line{11, 1200, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU", 1, std::nullopt},
      Line{12, 1300, kEraH.substr(a, b - a), 0, std::nullopt},
      Line{13, 1400, "[W] NCCL watchdog still alive", 1, std::nullopt},
      Line{14, 1500, kEraH.substr(b), 0, std::nullopt},
  };
  region.anchors = {0, 1};
  const OomEvent e = allocator_event(region, 4);
  CHECK(e.line == 10);
  CHECK(e.offset == 1000);
  CHECK(e.end_line == 14);
  CHECK(e.rank == 0);
  CHECK(e.time_ms == 1700000000000);
  check_era_h_numbers(e);
  CHECK(e.message.find("watchdog") == std::string::npos);
}

TEST_CASE("cudaMallocAsync: placeholder limit and a real one", "[parse][pytorch][async]") {
  auto lines = [](const std::string& limit) {
    return std::vector<std::string>{
        "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)",
        "Currently allocated     : 9.50 GiB",
        "Requested               : 1.00 GiB",
        "Device limit            : 10.00 GiB",
        "Free (according to CUDA): 256.00 MiB",
        "PyTorch limit (set by user-supplied memory fraction)",
        "                        : " + limit,
        "Traceback (most recent call last):",
    };
  };
  const OomEvent e = malloc_async_event(region_of(lines("17179869184.00 GiB")), 6);
  CHECK(e.family == OomFamily::cuda_malloc_async);
  CHECK(e.device == Device::cuda);
  CHECK(e.framework == Framework::pytorch);
  CHECK(e.exception == "torch.OutOfMemoryError");
  CHECK(e.gpu == 0);
  CHECK(e.end_line == 7);
  CHECK(e.numbers.requested == 1 * kGiB);
  CHECK(e.numbers.allocated == 9 * kGiB + 512 * kMiB);
  CHECK(e.numbers.reserved == 9 * kGiB + 512 * kMiB);
  CHECK_FALSE(e.numbers.reserved_unallocated);
  CHECK(e.numbers.total == 10 * kGiB);
  CHECK(e.numbers.free == 256 * kMiB);
  CHECK(e.placeholder_limit);
  CHECK_FALSE(e.numbers.limit);
  CHECK(e.message.rfind("Allocation on device 0", 0) == 0);

  const OomEvent real = malloc_async_event(region_of(lines("8.00 GiB")), 6);
  CHECK(real.numbers.limit == 8 * kGiB);
  CHECK_FALSE(real.placeholder_limit);
}

TEST_CASE("cudaMallocAsync: interleaved ranks, HIP, wrapped and truncated headers", "[parse][pytorch][async]") {
  SECTION("other ranks' lines in between are skipped") {
    Region region;
    region.lines = {
        Line{1, 0, "torch.OutOfMemoryError: Allocation on device 5 would exceed allowed memory. (out of memory)", 2,
             std::nullopt},
        Line{2, 100, "Currently allocated     : 70.00 GiB", 2, std::nullopt},
        Line{3, 150, "Currently allocated     : 1.00 GiB", 3, std::nullopt},
        Line{4, 200, "Requested               : 20.00 MiB", 2, std::nullopt},
        Line{5, 250, "Device limit            : 79.15 GiB", 2, std::nullopt},
        Line{6, 300, "Free (according to CUDA): 10.00 MiB", 2, std::nullopt},
        Line{7, 350, "PyTorch limit (set by user-supplied memory fraction)", 2, std::nullopt},
        Line{8, 400, "epoch 1 step 5", 3, std::nullopt},
        Line{9, 450, "                        : 17179869184.00 GiB", 2, std::nullopt},
        Line{10, 500, "done", 2, std::nullopt},
    };
    region.anchors = {0};
    const OomEvent e = malloc_async_event(region, 8);
    CHECK(e.gpu == 5);
    CHECK(e.rank == 2);
    CHECK(e.numbers.allocated == 70 * kGiB);
    CHECK(e.numbers.requested == 20 * kMiB);
    CHECK(e.numbers.total == std::uint64_t{84986665370});
    CHECK(e.placeholder_limit);
  }
  SECTION("HIP build") {
    const OomEvent e = malloc_async_event(
        region_of({"Allocation on device 1 would exceed allowed memory. (out of memory)",
                   "Currently allocated     : 60.00 GiB", "Requested               : 8.00 GiB",
                   "Device limit            : 63.98 GiB", "Free (according to HIP): 2.00 GiB"}),
        4);
    CHECK(e.device == Device::hip);
    CHECK(e.gpu == 1);
    CHECK(e.numbers.free == 2 * kGiB);
    CHECK(e.exception.empty());
  }
  SECTION("header wrapped by the terminal") {
    const OomEvent e = malloc_async_event(
        region_of({"torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out", " of memory)",
                   "Currently allocated     : 1.00 GiB", "Requested               : 2.00 GiB"}),
        3);
    CHECK(e.numbers.requested == 2 * kGiB);
    CHECK_FALSE(e.truncated);
    const OomEvent after_device = malloc_async_event(
        region_of({"torch.OutOfMemoryError: Allocation on device ", "3 would exceed allowed memory. (out of memory)",
                   "Requested               : 2.00 GiB"}),
        2);
    CHECK_FALSE(after_device.truncated);
    CHECK(after_device.gpu == 3);
  }
  SECTION("device 0's NUL cuts the message after 'device '") {
    const OomEvent e = malloc_async_event(
        region_of({"torch.OutOfMemoryError: Allocation on device ", "Requested               : 2.00 GiB"}), 0);
    CHECK(e.truncated);
    CHECK(e.gpu == 0);
    CHECK_FALSE(e.numbers.requested);
  }
}

TEST_CASE("MPS: with and without max allowed", "[parse][pytorch][mps]") {
  const OomEvent e =
      mps_event(region_of({"RuntimeError: MPS backend out of memory (MPS allocated: 18.13 GB, other allocations: "
                           "384.00 KB, max allowed: 18.13 GB). Tried to allocate 64.00 MB on private pool. Use "
                           "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations "
                           "(may cause system failure).",
                           "next"}),
                0);
  CHECK(e.family == OomFamily::mps);
  CHECK(e.device == Device::mps);
  CHECK(e.framework == Framework::pytorch);
  CHECK(e.exception == "RuntimeError");
  CHECK(e.numbers.reserved == std::uint64_t{19466939269});
  CHECK(e.numbers.non_pytorch == 384 * kKiB);
  CHECK(e.numbers.limit == std::uint64_t{19466939269});
  CHECK(e.numbers.requested == 64 * kMiB);
  CHECK(e.message.rfind("MPS backend out of memory (", 0) == 0);

  const OomEvent unlimited = mps_event(region_of({"RuntimeError: MPS backend out of memory (MPS allocated: 9.07 "
                                                 "GB, other allocations: 1.50 GB). Tried to allocate 512.00 MB on "
                                                 "shared pool.",
                                                 "next"}),
                                      0);
  CHECK(unlimited.numbers.reserved == std::uint64_t{9738838344});
  CHECK(unlimited.numbers.non_pytorch == 1 * kGiB + 512 * kMiB);
  CHECK(unlimited.numbers.requested == 512 * kMiB);
  CHECK_FALSE(unlimited.numbers.limit);
  CHECK_FALSE(unlimited.placeholder_limit);

  const OomEvent split = mps_event(region_of({"RuntimeError: MPS backend out of memory (MPS allocated: 1.00 GB, "
                                             "other allocations: 2.00 GB, max allo",
                                             "wed: 3.00 GB). Tried to allocate 4.00 MB on shared pool. Use PYTORCH_",
                                             "MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory "
                                             "allocations (may cause system failure).",
                                             "next"}),
                                  2);
  CHECK(split.numbers.limit == 3 * kGiB);
  CHECK(split.numbers.requested == 4 * kMiB);
}

TEST_CASE("other families and prose are not claimed", "[parse][pytorch][negative]") {
  const std::vector<std::string> not_ours = {
      "We kept hitting CUDA out of memory errors, so we halved the batch size.",
      "RuntimeError: CUDA error: out of memory",
      "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCStorage.cu:66",
      "torch.OutOfMemoryError: Not enough memory for workspace!",
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
      "shape[256,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
      "16.00GiB.",
      "2024-01-01 W external/xla/xla/tsl/framework/bfc_allocator.cc:291] Allocator (GPU_0_bfc) ran out of memory "
      "trying to allocate 1.50GiB with freed_by_count=0.",
      "",
  };
  for (const auto& text : not_ours) {
    CAPTURE(text);
    Region region = region_of({text, "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 8.00 GiB"});
    for (Parser parser : kPytorchParsers) {
      Parsed out;
      CHECK_FALSE(parser(region, 0, out));
      CHECK(out.ooms.empty());
      CHECK(out.findings.empty());
    }
  }
  // Each family's parser leaves the others' messages alone.
  Parsed out;
  CHECK_FALSE(parse::parse_mps(region_of({kEraH}), 0, out));
  CHECK_FALSE(parse::parse_cuda_malloc_async(region_of({kEraH}), 0, out));
  CHECK_FALSE(parse::parse_pytorch_allocator(
      region_of({"RuntimeError: MPS backend out of memory (MPS allocated: 1.00 GB, other allocations: 2.00 GB). "
                 "Tried to allocate 4.00 MB on shared pool."}),
      0, out));
  CHECK_FALSE(parse::parse_pytorch_allocator(
      region_of({"torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)"}), 0,
      out));
  // The anchor must start on the anchor line, not on a later one.
  CHECK_FALSE(parse::parse_pytorch_allocator(region_of({"INFO using CUDA device 0", kEraH}), 0, out));
  CHECK_FALSE(parse::parse_pytorch_allocator(region_of({"x"}), 5, out));
  CHECK(out.ooms.empty());
}

TEST_CASE("hostile text does not crash the parsers", "[parse][pytorch][hostile]") {
  std::string huge;
  while (huge.size() < 1'200'000) huge += "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has ";
  std::string absurd =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 99999999999999999999.99 GiB. GPU "
      "99999999999999999999 has a total capacity of 99999999999999999999.99 GiB of which 1e309 GiB is free. "
      "Process 99999999999999999999999 has 99999999999999999999.99 GiB memory in use. Of the allocated memory "
      "99999999999999999999.99 GiB is allocated by PyTorch, with 99999999999999999999.99 GiB allocated in private "
      "pools (e.g., CUDA Graphs), and 99999999999999999999.99 GiB is reserved by PyTorch but unallocated.";
  static const char kBinary[] = "CUDA out of memory. Tried to allocate \xff\xfe\x00\x01 GiB. GPU \x80";
  std::string binary = std::string(kBinary, sizeof kBinary - 1) + std::string(1000, '\x00') + "\xc3\x28";
  std::vector<Region> regions = {
      region_of({huge}),
      region_of({huge, huge, huge}),
      region_of({absurd}),
      region_of({binary, binary}),
      region_of({"MPS backend out of memory (MPS allocated: 99999999999999999999.99 GB, other allocations: "
                 "99999999999999999999.99 GB, max allowed: 99999999999999999999.99 GB). Tried to allocate \xff"}),
      region_of({"Allocation on device 99999999999999999999999 would exceed allowed memory. (out of memory)",
                 "Currently allocated     : 99999999999999999999.99 GiB", std::string(1 << 20, 'R'),
                 "                        : \x01"}),
  };
  for (const Region& region : regions) {
    for (Parser parser : kPytorchParsers) {
      Parsed out;
      auto last = parser(region, 0, out);
      if (last) CHECK(*last < region.lines.size());
      CHECK(out.ooms.size() <= 1);
      for (const OomEvent& e : out.ooms) CHECK(e.message.size() <= 4096 + 3);
    }
  }
  Parsed out;
  REQUIRE(parse::parse_pytorch_allocator(region_of({absurd}), 0, out));
  const MemoryNumbers& n = out.ooms.at(0).numbers;
  CHECK(n.requested == UINT64_MAX);
  CHECK(n.reserved == UINT64_MAX);
  CHECK_FALSE(out.ooms.at(0).gpu);  // an index that does not fit an int is left out
  CHECK(n.other_processes.empty());  // so is a pid that does not fit 64 bits
}
