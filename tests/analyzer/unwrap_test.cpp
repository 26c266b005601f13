// Hard-wrapped terminal output joined back into the lines the program printed,
// through the whole analyzer: a wrap at 80, 100 or 120 columns anywhere in a
// message gives the same diagnosis as the unwrapped message.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "analyzer/log/analyzer.hpp"
#include "analyzer/log/unwrap.hpp"

using namespace oomlens::analyzer;

namespace {

// `fold -w width`: cut every line into pieces of `width` bytes.
std::string fold(const std::string& text, std::size_t width) {
  std::string out, line;
  auto flush = [&] {
    for (std::size_t i = 0; i < line.size(); i += width) out += line.substr(i, width) + "\n";
    if (line.empty()) out += "\n";
    line.clear();
  };
  for (char c : text) {
    if (c == '\n') flush();
    else line.push_back(c);
  }
  if (!line.empty()) flush();
  return out;
}

const std::string kTraceback =
    "Traceback (most recent call last):\n"
    "  File \"/home/ana/detr/train.py\", line 212, in <module>\n"
    "    main()\n"
    "  File \"/home/ana/venv/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1739, in "
    "_wrapped_call_impl\n"
    "    return self._call_impl(*args, **kwargs)\n"
    "  File \"/home/ana/detr/models/backbone.py\", line 88, in forward\n"
    "    x = self.body(x)\n";

struct Expect {
  const char* message;
  OomClass cls;
  std::uint64_t requested;
};

const Expect kMessages[] = {
    {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.30 GiB. GPU 0 has a total capacity of 23.65 GiB "
     "of which 21.30 MiB is free. Including non-PyTorch memory, this process has 23.62 GiB memory in use. Of the "
     "allocated memory 21.30 GiB is allocated by PyTorch, and 1.71 GiB is reserved by PyTorch but unallocated. If "
     "reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
     "fragmentation.  See documentation for Memory Management  "
     "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
     OomClass::capacity, 2469606195},
    {"RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 10.75 GiB total capacity; 6.21 GiB "
     "already allocated; 130.44 MiB free; 9.72 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
     "memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
     "PYTORCH_CUDA_ALLOC_CONF",
     OomClass::fragmentation, 512ull << 20},
    {"RuntimeError: MPS backend out of memory (MPS allocated: 17.35 GB, other allocations: 1.12 GB, max allowed: 18.13 "
     "GB). Tried to allocate 1.50 GB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit "
     "for memory allocations (may cause system failure).",
     OomClass::capacity, 1610612736},
};

}  // namespace

TEST_CASE("a message wrapped at any common width reads as the unwrapped one") {
  for (const Expect& x : kMessages) {
    const std::string log = "epoch 1 step 10 loss 0.25\n" + kTraceback + x.message + "\nTraining aborted.\n";
    const Analysis whole = analyze_text(log);
    REQUIRE(whole.incidents.size() == 1);
    CHECK(whole.incidents[0].verdict.cls == x.cls);
    REQUIRE(whole.incidents[0].primary.numbers.requested);
    CHECK(*whole.incidents[0].primary.numbers.requested / (1 << 20) == x.requested / (1 << 20));
    for (std::size_t width : {80u, 100u, 120u}) {
      INFO(x.message << "\nwrapped at " << width);
      const Analysis wrapped = analyze_text(fold(log, width));
      REQUIRE(wrapped.incidents.size() == 1);
      const auto& inc = wrapped.incidents[0];
      CHECK(inc.verdict.cls == x.cls);
      CHECK(inc.primary.numbers.total == whole.incidents[0].primary.numbers.total);
      CHECK(inc.primary.numbers.requested == whole.incidents[0].primary.numbers.requested);
      CHECK(inc.primary.numbers.allocated == whole.incidents[0].primary.numbers.allocated);
      CHECK(inc.primary.numbers.reserved == whole.incidents[0].primary.numbers.reserved);
      REQUIRE(inc.location);
      CHECK(inc.location->file == "/home/ana/detr/models/backbone.py");
      CHECK(inc.primary.end_line > inc.primary.line);
    }
  }
}

TEST_CASE("two lines that happen to be equally long are not a wrap") {
  Region r;
  const std::string a(117, 'a'), b(117, 'b');
  r.lines = {Line{1, 0, a, std::nullopt, std::nullopt, 117, 117},
             Line{2, 121, "next line", std::nullopt, std::nullopt, 9, 9},
             Line{3, 131, b, std::nullopt, std::nullopt, 117, 117},
             Line{4, 252, "last", std::nullopt, std::nullopt, 4, 4}};
  r.anchors = {1};
  join_hard_wraps(r);
  CHECK(r.lines.size() == 4);
}

TEST_CASE("a traceback frame that happens to be as wide as a terminal keeps its source line apart") {
  Region r;
  const std::string frame = "  File \"/tmp/x/" + std::string(63, 'k') + ".py\", line 12, in call";
  REQUIRE(frame.size() == 100);
  r.lines = {Line{1, 0, frame, std::nullopt, std::nullopt, 100, 100},
             Line{2, 101, "    buf = empty_strided_cuda((4, 4096), (4096, 1), torch.float32)", std::nullopt, std::nullopt,
                  64, 64},
             Line{3, 170, std::string(100, 'z'), std::nullopt, std::nullopt, 100, 100},
             Line{4, 271, "RuntimeError: CUDA error: out of memory", std::nullopt, std::nullopt, 39, 39}};
  r.anchors = {3};
  join_hard_wraps(r);
  CHECK(r.lines.size() == 4);
}

TEST_CASE("a wrap stops at a line that starts a record of its own, and anchors follow the join") {
  Region r;
  const std::string w(80, 'x');
  r.lines = {Line{1, 0, w, 3, std::nullopt, 80, 80},
             Line{2, 81, w, std::nullopt, std::nullopt, 80, 80},
             Line{3, 162, "tail of it", std::nullopt, std::nullopt, 10, 10},
             Line{4, 173, "Traceback (most recent call last):", std::nullopt, std::nullopt, 34, 34},
             Line{5, 210, w, 1, std::nullopt, 80, 80},
             Line{6, 291, "RuntimeError: boom", std::nullopt, std::nullopt, 18, 18}};
  r.anchors = {2, 5};
  r.anchor_literals = {1, 2};
  join_hard_wraps(r);
  REQUIRE(r.lines.size() == 4);
  CHECK(r.lines[0].number == 1);
  CHECK(r.lines[0].last_number() == 3);
  CHECK(r.lines[0].rank == 3);
  CHECK(r.lines[0].text == w + w + "tail of it");
  CHECK(r.lines[1].text.starts_with("Traceback"));
  CHECK(r.lines[3].text == "RuntimeError: boom");
  CHECK(r.anchors == std::vector<std::size_t>{0, 3});
  CHECK(r.anchor_literals == std::vector<std::uint64_t>{1, 2});
}

TEST_CASE("a message written over a progress bar's redraw is never the rest of an equally long line above") {
  // Three OOM messages of one length read like lines a terminal wrapped at
  // that width; the fourth starts with '\r' (a progress bar redrawn, the
  // message printed after it with no newline between) and is a message of
  // its own, on its own line.
  std::string log;
  for (const char* gpu : {"GPU 1", "GPU 2", "GPU 3"})
    log += std::string("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 466.00 MiB. ") + gpu +
           " has a total capacity of 79.15 GiB of which 233.00 MiB is free. Including non-PyTorch memory, this "
           "process has 78.90 GiB memory in use. Of the allocated memory 78.23 GiB is allocated by PyTorch, and "
           "92.16 MiB is reserved by PyTorch but unallocated.\n";
  log += "\r 98%|#########9| 55694/56276 [4:24:32<02:45,  3.64it/s]torch.OutOfMemoryError: CUDA out of memory. Tried "
         "to allocate 980.00 MiB. GPU 5 has a total capacity of 79.15 GiB of which 174.08 MiB is free. Including "
         "non-PyTorch memory, this process has 78.95 GiB memory in use. Of the allocated memory 77.95 GiB is "
         "allocated by PyTorch, and 368.64 MiB is reserved by PyTorch but unallocated.\n";
  const Analysis a = analyze_text(log);
  std::vector<std::uint64_t> lines;
  for (const auto& inc : a.incidents) {
    lines.push_back(inc.primary.line);
    for (const auto& e : inc.echoes) lines.push_back(e.line);
  }
  std::sort(lines.begin(), lines.end());
  CHECK(lines == std::vector<std::uint64_t>{1, 2, 3, 4});
}
