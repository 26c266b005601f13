#include <catch2/catch.hpp>

#include <array>
#include <random>
#include <string>

#include "analyzer/log/text.hpp"

using namespace oomlens::analyzer;

TEST_CASE("strip_ansi removes colour codes, also inside numbers") {
  CHECK(strip_ansi("\x1b[1;36m2.00\x1b[0m GiB") == "2.00 GiB");
  CHECK(strip_ansi("\x1b[31mtorch.OutOfMemoryError\x1b[0m: CUDA") == "torch.OutOfMemoryError: CUDA");
  CHECK(strip_ansi("a\x1b]0;title\x07" "b") == "ab");
  CHECK(strip_ansi("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b") == "alinkb");
  CHECK(strip_ansi("\x1b[2K\x1b[1Aprogress") == "progress");
  CHECK(strip_ansi("trailing escape \x1b") == "trailing escape ");
  CHECK(strip_ansi("unterminated \x1b[12;") == "unterminated ");
  CHECK(strip_ansi("plain") == "plain");
}

namespace {
// strip_ansi as a byte-at-a-time state machine: the definition the copying
// version must agree with on any input.
std::string strip_ansi_reference(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 1 >= text.size()) break;
    if (text[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
      i = j;
    } else if (text[i + 1] == ']') {
      std::size_t j = i + 2;
      while (j < text.size() && text[j] != '\x07' && !(text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\')) ++j;
      i = (j < text.size() && text[j] == '\x1b') ? j + 1 : j;
    } else {
      i += 1;
    }
  }
  return out;
}
}  // namespace

TEST_CASE("strip_ansi agrees with the byte-at-a-time definition on random escapes") {
  // Escapes, their introducers and terminators, and text, in random order:
  // escapes at either end, back to back, cut short, nested in OSC strings.
  static constexpr std::string_view kAlphabet = "\x1b\x1b\x1b[[]]\x07\\m;1aK ";
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1), length(0, 24);
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (std::size_t n = length(rng); n > 0; --n) text.push_back(kAlphabet[pick(rng)]);
    INFO("input bytes: " << text.size());
    REQUIRE(strip_ansi(text) == strip_ansi_reference(text));
  }
}

TEST_CASE("read_prefix recognises launcher rank prefixes") {
  auto p = read_prefix("[rank3]: torch.OutOfMemoryError: x");
  CHECK(p.rank == 3);
  // The program's text keeps its leading spaces: traceback indentation matters.
  CHECK(std::string("[rank3]: torch.OutOfMemoryError: x").substr(p.length) == " torch.OutOfMemoryError: x");
  auto frame = read_prefix("[default3]:  File \"/x.py\", line 1, in f");
  CHECK(std::string("[default3]:  File \"/x.py\", line 1, in f").substr(frame.length) == "  File \"/x.py\", line 1, in f");
  CHECK(read_prefix("[default12]:hello").rank == 12);
  CHECK(read_prefix("[1,7]<stderr>: Traceback").rank == 7);
  CHECK(read_prefix("[1,7]<stdout>:x").rank == 7);
  CHECK(read_prefix("5: RuntimeError").rank == 5);
  CHECK(!read_prefix("12:00:01 something").rank);
  CHECK(!read_prefix("[rank]: x").rank);
  CHECK(!read_prefix("rank3: x").rank);
  CHECK(read_prefix("plain text").length == 0);
}

TEST_CASE("read_prefix reads timestamps and stacked prefixes") {
  auto p = read_prefix("2026-03-01 12:00:00,123 INFO step");
  REQUIRE(p.time_ms);
  CHECK(*p.time_ms == epoch_ms(2026, 3, 1, 12, 0, 0, 123));
  CHECK(std::string("2026-03-01 12:00:00,123 INFO step").substr(p.length) == "INFO step");

  auto q = read_prefix("[default2]:[rank2]:[2026-03-01T12:00:05.5Z] boom");
  CHECK(q.rank == 2);
  REQUIRE(q.time_ms);
  CHECK(*q.time_ms == epoch_ms(2026, 3, 1, 12, 0, 5, 500));
  CHECK(std::string("[default2]:[rank2]:[2026-03-01T12:00:05.5Z] boom").substr(q.length) == "boom");

  auto r = read_prefix("2026-03-01T12:00:00+02:00 x");
  REQUIRE(r.time_ms);
  CHECK(*r.time_ms == epoch_ms(2026, 3, 1, 10, 0, 0, 0));
  CHECK(!read_prefix("2026-13-01 12:00:00 x").time_ms);
  CHECK(!read_prefix("2026-03-01 25:00:00 x").time_ms);
}

TEST_CASE("epoch_ms matches known instants") {
  CHECK(epoch_ms(1970, 1, 1, 0, 0, 0, 0) == 0);
  CHECK(epoch_ms(2000, 3, 1, 0, 0, 0, 0) == 951868800000);
  CHECK(epoch_ms(2024, 2, 29, 23, 59, 59, 999) == 1709251199999);
}

TEST_CASE("read_prefix: launcher rank prefixes beyond torchrun's", "[text][ranks]") {
  auto text_after = [](std::string_view line) { return std::string(line.substr(read_prefix(line).length)); };
  // Any torchelastic role, horovod's gloo runner, Lightning, MPICH's -prepend-rank.
  CHECK(read_prefix("[trainer3]: Traceback").rank == 3);
  CHECK(read_prefix("[3]<stderr>:RuntimeError: x").rank == 3);
  CHECK(text_after("[3]<stderr>:RuntimeError: x") == "RuntimeError: x");
  CHECK(read_prefix("[rank: 2] Seed set to 42").rank == 2);
  CHECK(text_after("[rank: 2] Seed set to 42") == "Seed set to 42");
  CHECK(read_prefix("[5] torch.OutOfMemoryError: CUDA out of memory.").rank == 5);
  CHECK(text_after("[5] torch.OutOfMemoryError: x") == "torch.OutOfMemoryError: x");
  // srun --label pads labels to the widest task number.
  CHECK(read_prefix(" 3: Traceback (most recent call last):").rank == 3);
  CHECK(text_after(" 3:   File \"/x.py\", line 1") == "  File \"/x.py\", line 1");
  // pdsh puts the host in front of the launcher's prefix.
  CHECK(read_prefix("worker-1: [default3]:boom").rank == 3);
  CHECK(text_after("10.0.0.2: [rank9]: x") == " x");
  // Not prefixes: torchelastic's summary rows, words with colons, a time.
  CHECK(!read_prefix("[0]:").rank);
  CHECK(text_after("[0]:") == "[0]:");
  CHECK(!read_prefix("Epoch: 3 loss 0.1").rank);
  CHECK(!read_prefix("12:00:01 x").rank);
  CHECK(!read_prefix("    12: x").rank);
  CHECK(!read_prefix("[PG 0 Rank 3] Watchdog caught").rank);
}

TEST_CASE("read_prefix: Ray and vLLM worker tags", "[text][ranks]") {
  auto vllm = read_prefix("(VllmWorker rank=2 pid=10233) ERROR 06-17 06:11:34 [multiproc_executor.py:492]   File \"/a.py\"");
  CHECK(vllm.rank == 2);
  CHECK(vllm.pid == 10233u);
  REQUIRE(vllm.time_ms);
  CHECK(is_yearless(*vllm.time_ms));
  CHECK(*vllm.time_ms == epoch_ms(kYearlessYear, 6, 17, 6, 11, 34, 0));
  std::string line = "(VllmWorker rank=2 pid=10233) ERROR 06-17 06:11:34 [multiproc_executor.py:492]   File \"/a.py\"";
  CHECK(line.substr(read_prefix(line).length) == "  File \"/a.py\"");
  // The older logger form without brackets around the source location.
  std::string old = "(VllmWorkerProcess pid=4242) ERROR 02-17 14:48:01 multiproc_executor.py:374] ValueError: x";
  auto p = read_prefix(old);
  CHECK(!p.rank);
  CHECK(p.pid == 4242u);
  CHECK(old.substr(p.length) == "ValueError: x");
  // Ray: a pid tells workers apart, but is no rank.
  auto ray = read_prefix("(RayWorkerWrapper pid=4242, ip=10.0.0.3) torch.OutOfMemoryError: x");
  CHECK(!ray.rank);
  CHECK(ray.pid == 4242u);
  CHECK(std::string("(RayWorkerWrapper pid=4242, ip=10.0.0.3) torch.OutOfMemoryError: x").substr(ray.length) ==
        "torch.OutOfMemoryError: x");
  CHECK(read_prefix("(pid=977) hello").pid == 977u);
  CHECK(read_prefix("(TrainWorker(rank=3) pid=51, ip=10.0.0.4) x").rank == 3);
  // vLLM's parallel names: a tensor-parallel index alone is the rank.
  CHECK(read_prefix("(Worker_TP1 pid=88) INFO 08-04 10:29:28 [x.py:1] y").rank == 1);
  CHECK(read_prefix("(VllmWorker TP3 pid=88) y").rank == 3);
  CHECK(!read_prefix("(Worker_PP1_TP0 pid=88) y").rank);
  CHECK(!read_prefix("(EngineCore_DP0 pid=88) y").rank);
  // Parentheses that are no worker tag.
  CHECK(read_prefix("(venv) alice@host:~$ torchrun x.py").length == 0);
  CHECK(read_prefix("(raylet) something").length == 0);
}

TEST_CASE("read_prefix: DeepSpeed's rank and logger times", "[text][ranks]") {
  std::string ds = "[2026-03-01 12:00:00,250] [INFO] [logging.py:128:log_dist] [Rank 3] step=10";
  auto p = read_prefix(ds);
  CHECK(p.rank == 3);
  REQUIRE(p.time_ms);
  CHECK(*p.time_ms == epoch_ms(2026, 3, 1, 12, 0, 0, 250));
  CHECK(ds.substr(p.length) == "step=10");
  // Without "[Rank N]" the logger's brackets stay: parsers read them.
  std::string warn = "[2026-03-01 12:00:00,250] [WARNING] [stage3.py:2069:step] 2 pytorch allocator cache flushes";
  auto w = read_prefix(warn);
  CHECK(!w.rank);
  CHECK(warn.substr(w.length).starts_with("[WARNING]"));
  // Dates with slashes.
  auto slash = read_prefix("2026/03/01 12:00:07 ERROR x");
  REQUIRE(slash.time_ms);
  CHECK(*slash.time_ms == epoch_ms(2026, 3, 1, 12, 0, 7, 0));
}

TEST_CASE("read_prefix: glog, c10 and NCCL prefixes are read, not removed", "[text][ranks]") {
  std::string glog = "E0612 09:51:19.527000 140231 torch/distributed/elastic/multiprocessing/api.py:833] failed";
  auto g = read_prefix(glog);
  CHECK(g.length == 0);
  REQUIRE(g.time_ms);
  CHECK(*g.time_ms == epoch_ms(kYearlessYear, 6, 12, 9, 51, 19, 527));
  auto c10 = read_prefix("[rank1]:[E612 09:51:17.876512704 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog");
  CHECK(c10.rank == 1);
  REQUIRE(c10.time_ms);
  CHECK(*c10.time_ms == epoch_ms(kYearlessYear, 6, 12, 9, 51, 17, 876));
  std::string nccl = "gpu-node-03:48211:48402 [3] include/alloc.h:103 NCCL WARN Cuda failure 'out of memory'";
  auto n = read_prefix(nccl);
  CHECK(n.length == 0);  // NCCL's parser reads the device from the text
  CHECK(!n.rank);        // a device index is no rank
  CHECK(n.device == 3);
  CHECK(n.pid == 48211u);
  auto stacked = read_prefix("[rank5]:node7:301:388 [1] NCCL INFO x");
  CHECK(stacked.rank == 5);
  CHECK(stacked.device == 1);
}

TEST_CASE("year-less times order among themselves only", "[text][ranks]") {
  std::int64_t dated = epoch_ms(2026, 3, 1, 12, 0, 0, 0);
  std::int64_t yearless = epoch_ms(kYearlessYear, 3, 1, 12, 0, 0, 0);
  CHECK(is_yearless(yearless));
  CHECK(!is_yearless(dated));
  CHECK(same_clock(dated, dated + 5));
  CHECK(!same_clock(dated, yearless));
  CHECK(format_time(epoch_ms(2026, 3, 1, 12, 0, 5, 120)) == "2026-03-01T12:00:05.120");
  CHECK(format_time(epoch_ms(kYearlessYear, 2, 29, 23, 59, 59, 7)) == "--02-29T23:59:59.007");
}

TEST_CASE("A folded line finds its words at any length, in place or not") {
  for (std::size_t length : {0u, 1u, 300u, 319u, 320u, 321u, 4096u}) {
    std::string text(length, 'x');
    if (length >= 11) text.replace(length - 11, 11, "Killed PROC");
    const FoldedText words(text);
    INFO("length " << length);
    CHECK(words.has("") == true);
    CHECK(words.has("killed proc") == (length >= 11));
    CHECK(words.has("killed procx") == false);
    CHECK(words.has_any({"nothing", "d proc"}) == (length >= 11));
    CHECK(words.has(std::string(length, 'x').substr(0, length >= 11 ? length - 11 : length)) == true);
  }
}

TEST_CASE("contains_folded and a folded line agree with folding then finding, wherever the needle's rare byte is") {
  auto reference = [](std::string_view text, std::string_view lower) {
    std::string folded(text);
    for (char& c : folded) c = ascii_lower(c);
    return folded.find(lower) != std::string::npos;
  };
  // Needles whose rarest byte is first, last, in the middle, a letter, a
  // digit, punctuation or absent from every text (z, q); and matches at the
  // text's very start and end.
  const std::array<std::string_view, 10> needles = {
      "killed process", "out of memory", "oom-kill", "_alloc_conf", "zz", "eta", "ab", "x", "e 1", "qa-"};
  CHECK(contains_folded("OOM-KILL", "oom-kill"));
  CHECK(contains_folded("x Killed Process", "killed process"));
  CHECK(contains_folded("Out of memory: x", "out of memory"));
  CHECK(!contains_folded("Out of memor", "out of memory"));
  CHECK(!contains_folded("ut of memory", "out of memory"));
  CHECK(contains_folded("anything", ""));
  std::mt19937 rng(7);
  const std::string_view alphabet = "abekloOQtTzZ -_:1xXmMEA";
  for (int round = 0; round < 20000; ++round) {
    std::string text(rng() % 40, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    std::string_view needle = needles[rng() % needles.size()];
    if (rng() % 3 == 0) {  // plant it, in random case, anywhere (also at either end)
      std::string planted(needle);
      for (char& c : planted)
        if (rng() % 2 && c >= 'a' && c <= 'z') c = static_cast<char>(c - ('a' - 'A'));
      text.insert(text.empty() ? 0 : rng() % (text.size() + 1), planted);
    }
    INFO("text '" << text << "' needle '" << needle << "'");
    REQUIRE(contains_folded(text, needle) == reference(text, needle));
    REQUIRE(FoldedText(text).has(needle) == reference(text, needle));
  }
}
