// A failure the program catches and survives, again and again (a retry or
// skip loop), against the echoes of one failure: the incident's note tells
// the two apart.
#include <catch2/catch.hpp>

#include <string>

#include "analyzer/log/analyzer.hpp"

using namespace oomlens::analyzer;

namespace {

// A caught Era-H OOM under the traceback of the same call, as a training loop
// that skips the batch prints it.
std::string caught_oom(const std::string& prefix, const char* request, int gpu = 0, const std::string& time = {}) {
  std::string s;
  if (time.empty()) {
    s += prefix + "Traceback (most recent call last):\n";
    s += prefix + "  File \"/home/user/project/train.py\", line 212, in train_step\n";
    s += prefix + "    loss = model(batch).loss\n";
  } else {
    s += prefix + time + " ERROR step failed\n";
  }
  s += prefix + std::string("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ") + request +
       ". GPU " + std::to_string(gpu) + " has a total capacity of 79.15 GiB of which 1.10 GiB is free. Of the allocated memory 70.00 GiB is "
       "allocated by PyTorch, and 6.00 GiB is reserved by PyTorch but unallocated. If reserved but unallocated "
       "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
       "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n";
  s += prefix + "skipping batch after OOM\n";
  return s;
}

std::string steps(const std::string& prefix, int from, int count) {
  std::string s;
  for (int i = from; i < from + count; ++i) s += prefix + "step " + std::to_string(i) + " loss 2.31\n";
  return s;
}

Incident only(const Analysis& a) {
  REQUIRE(a.incidents.size() == 1);
  return a.incidents[0];
}

std::string echo_note(const Incident& inc) {
  for (const auto& n : inc.notes)
    if (n.starts_with("The same failure is reported")) return n;
  FAIL("no echo note");
  return {};
}

}  // namespace

TEST_CASE("a failure caught and repeated through the run is named a recurring one", "[incident][recurring]") {
  // 48 failures of the same call with their own figures, 500 steps apart:
  // 24,000 lines of a run that went on after each, on one GPU.
  std::string log;
  for (int k = 0; k < 48; ++k) log += steps("", k * 500, 500) + caught_oom("", k % 2 ? "2.00 GiB" : "3.00 GiB");
  const Incident inc = only(analyze_text(log));
  REQUIRE(inc.echoes.size() == 47);
  const std::string note = echo_note(inc);
  CHECK(note.find("It recurs through the run: the process ran out of memory 48 times, from line " +
                  std::to_string(inc.primary.line) + " to line " + std::to_string(inc.echoes.back().line) + ",") !=
        std::string::npos);
  CHECK(note.find("other ranks, chained exceptions") == std::string::npos);
}

TEST_CASE("a rank that keeps failing is named in the recurring note", "[incident][recurring]") {
  // The same message again each time, 5,000 steps apart.
  std::string log;
  for (int k = 0; k < 5; ++k) log += steps("[rank3]:", k * 5000, 5000) + caught_oom("[rank3]:", "2.00 GiB");
  const Incident inc = only(analyze_text(log));
  CHECK(echo_note(inc).find("rank 3 ran out of memory 5 times") != std::string::npos);
}

TEST_CASE("echoes of one failure close together stay echoes", "[incident][recurring]") {
  // Five messages within a few dozen lines (the exception, a chained
  // re-raise, a logger's copy...): one failure printed several times.
  std::string log = steps("", 0, 400);
  for (int k = 0; k < 5; ++k) log += caught_oom("", "2.00 GiB") + steps("", 400 + k, 1);
  const Incident inc = only(analyze_text(log));
  CHECK(inc.echoes.size() == 4);
  CHECK(echo_note(inc).find("other ranks, chained exceptions") != std::string::npos);
  CHECK(echo_note(inc).find("recurs") == std::string::npos);
}

TEST_CASE("four repeats are not yet a recurring run", "[incident][recurring]") {
  std::string log;
  for (int k = 0; k < 4; ++k) log += steps("", k * 7000, 7000) + caught_oom("", "2.00 GiB");
  const Incident inc = only(analyze_text(log));
  CHECK(inc.echoes.size() == 3);
  CHECK(echo_note(inc).find("recurs") == std::string::npos);
}

TEST_CASE("times decide when every message has one", "[incident][recurring]") {
  // Five failures 600 steps apart, but ten minutes apart too: the run went on.
  std::string log;
  for (int k = 0; k < 5; ++k)
    log += steps("", k * 600, 600) + caught_oom("", "2.00 GiB", 0, "2026-03-01 12:" + std::to_string(10 + 10 * k) + ":00,000");
  const Incident inc = only(analyze_text(log));
  CHECK(inc.echoes.size() == 4);
  CHECK(echo_note(inc).find("the process ran out of memory 5 times") != std::string::npos);

  // The same lines within one minute: one failure, printed again.
  std::string burst;
  for (int k = 0; k < 5; ++k)
    burst += steps("", k * 6000, 6000) + caught_oom("", "2.00 GiB", 0, "2026-03-01 12:10:" + std::to_string(10 + k) + ",000");
  CHECK(echo_note(only(analyze_text(burst))).find("recurs") == std::string::npos);
}

TEST_CASE("messages naming two GPUs are two processes, not one that recurs", "[incident][recurring]") {
  // Ranks without prefixes, each failing under the same call: no single
  // process repeats, however long the stretch.
  std::string log;
  for (int k = 0; k < 48; ++k) log += steps("", k * 500, 500) + caught_oom("", "2.00 GiB", k % 2);
  const Incident inc = only(analyze_text(log));
  CHECK(inc.echoes.size() == 47);
  CHECK(echo_note(inc).find("recurs") == std::string::npos);
}
