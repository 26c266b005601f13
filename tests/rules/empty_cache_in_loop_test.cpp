#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "analyzer/python/script.hpp"
#include "rules/source/lint.hpp"
#include "tests/rules/fixture_files.hpp"
#include "tests/rules/automatic_fix.hpp"

using namespace oomlens::rules;
using oomlens::testing::read_fixture;
using oomlens::analyzer::python::parse_script;

namespace {

std::vector<Diagnosis> lint(std::string_view src) { return lint_script(parse_script(src)); }

std::string fixed(std::string_view src) { return apply_edits(src, fix_edits(lint(src))); }

void check_fixture_pair(const std::string& stem) {
  INFO(stem);
  std::string before = read_fixture(stem + ".py");
  std::string after = read_fixture(stem + ".fixed.py");
  std::string once = fixed(before);
  CHECK(once == after);
  CHECK(fixed(once) == once);  // idempotent
}

}  // namespace

TEST_CASE("OOM301: every fixture's fix gives its .fixed.py byte for byte, and twice changes nothing") {
  for (const char* stem : {"empty_cache_in_loop", "empty_cache_import_variants", "empty_cache_through_function",
                           "empty_cache_periodic", "empty_cache_not_in_loop", "empty_cache_body_left_empty",
                           "empty_cache_spellings", "empty_cache_after_training_sweep",
                           "empty_cache_after_training_folds", "empty_cache_after_training_epoch"})
    check_fixture_pair(stem);
}

TEST_CASE("OOM301: a call in a for loop is a warning with a safe fix at its position") {
  auto d = lint(read_fixture("empty_cache_in_loop.py"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "OOM301");
  CHECK(d[0].name == "empty-cache-in-loop");
  CHECK(d[0].severity == Severity::warning);
  CHECK(d[0].location.source->start.line == 11);
  CHECK(d[0].location.source->start.column == 5);
  CHECK(d[0].message.find("`for` loop at line 7") != std::string::npos);
  CHECK(d[0].explanation.find("retries") != std::string::npos);
  REQUIRE(fix_safety_of(d[0]));
  CHECK(*fix_safety_of(d[0]) == FixSafety::safe);
  REQUIRE(edits_of(d[0]).size() == 1);
  CHECK(edits_of(d[0])[0].replacement.empty());
}

TEST_CASE("OOM301: every import form resolves; a local empty_cache does not") {
  CHECK(lint(read_fixture("empty_cache_import_variants.py")).size() == 5);
  CHECK(lint(read_fixture("empty_cache_not_in_loop.py")).empty());
  CHECK(lint("def empty_cache(): pass\nfor i in x:\n    empty_cache()\n").empty());
  CHECK(lint("import torch\ntorch.cuda.empty_cache()\n").empty());
}

TEST_CASE("OOM301: through a function of the same file called from the loop") {
  auto d = lint(read_fixture("empty_cache_through_function.py"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].location.source->start.line == 5);
  CHECK(d[0].message.find("through `cleanup()` at line 11") != std::string::npos);
  CHECK(fix_safety_of(d[0]));
}

TEST_CASE("OOM301: a periodic flush is a hint without a fix") {
  auto d = lint(read_fixture("empty_cache_periodic.py"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].severity == Severity::hint);
  CHECK_FALSE(fix_safety_of(d[0]));
  CHECK(edits_of(d[0]).empty());
  auto not_step = lint("import torch\nfor i in x:\n    if not i % 10:\n        torch.cuda.empty_cache()\n");
  REQUIRE(not_step.size() == 1);
  CHECK(not_step[0].severity == Severity::hint);
}

TEST_CASE("OOM301: fixes keep the block valid") {
  // The body left empty gets `pass` at the same indentation (tabs, CRLF kept).
  CHECK(fixed("import torch\r\nfor x in y:\r\n\ttorch.cuda.empty_cache()\r\n") ==
        "import torch\r\nfor x in y:\r\n\tpass\r\n");
  // Two calls filling a body: one `pass`, the other line removed.
  CHECK(fixed("import torch\nwhile a:\n  torch.cuda.empty_cache()\n  torch.cuda.empty_cache()\nz()\n") ==
        "import torch\nwhile a:\n  pass\nz()\n");
  // On the header's line.
  CHECK(fixed("import torch\nfor x in y: torch.cuda.empty_cache()\n") == "import torch\nfor x in y: pass\n");
  // Between statements on one line.
  CHECK(fixed("import torch\nfor x in y:\n    a(); torch.cuda.empty_cache(); b()\n") ==
        "import torch\nfor x in y:\n    a(); b()\n");
  // No final newline.
  CHECK(fixed("import torch\nfor x in y:\n    a()\n    torch.cuda.empty_cache()") == "import torch\nfor x in y:\n    a()\n");
  // Part of a larger expression: diagnosed, no automatic fix.
  auto d = lint("import torch\nfor x in y:\n    r = torch.cuda.empty_cache()\n");
  REQUIRE(d.size() == 1);
  CHECK_FALSE(fix_safety_of(d[0]));
}

TEST_CASE("OOM301: a file with syntax errors gets no edits") {
  auto d = lint("import torch\nfor x in y:\n    torch.cuda.empty_cache()\n    def (:\n");
  for (const auto& x : d) CHECK(edits_of(x).empty());
}

TEST_CASE("lint: unified diff of a fix") {
  std::string src = "import torch\nfor x in y:\n    a()\n    torch.cuda.empty_cache()\n";
  auto diff = unified_diff("t.py", src, fix_edits(lint(src)));
  CHECK(diff == "--- t.py\n+++ t.py\n@@ -1,4 +1,3 @@\n import torch\n for x in y:\n     a()\n-    torch.cuda.empty_cache()\n");
  CHECK(unified_diff("t.py", "x = 1\n", {}).empty());
}

namespace {

// The OOM301 messages of `prelude` followed by a loop whose body is `call`.
std::vector<std::string> messages_in_loop(std::string_view prelude, std::string_view call) {
  std::string src = std::string(prelude) + "\nfor step in range(3):\n    " + std::string(call) + "\n";
  std::vector<std::string> out;
  for (const auto& d : lint(src))
    if (d.code == "OOM301") out.push_back(d.message);
  return out;
}

}  // namespace

TEST_CASE("OOM301: every spelling of a cache flush resolves to its qualified name") {
  struct Spelling {
    const char* prelude;
    const char* call;
    const char* function;  // what the message names; "" when not a flush
  };
  const Spelling spellings[] = {
      {"import torch", "torch.cuda.empty_cache()", "torch.cuda.empty_cache"},
      {"import torch", "torch.cuda.memory.empty_cache()", "torch.cuda.empty_cache"},
      {"import torch.cuda.memory", "torch.cuda.memory.empty_cache()", "torch.cuda.empty_cache"},
      {"from torch.cuda import memory as m", "m.empty_cache()", "torch.cuda.empty_cache"},
      {"from torch.cuda.memory import empty_cache as flush", "flush()", "torch.cuda.empty_cache"},
      {"import torch", "torch.mps.empty_cache()", "torch.mps.empty_cache"},
      {"from torch import mps", "mps.empty_cache()", "torch.mps.empty_cache"},
      {"import torch", "torch.xpu.empty_cache()", "torch.xpu.empty_cache"},
      {"import torch", "getattr(torch, 'cuda').empty_cache()", "torch.cuda.empty_cache"},
      {"import torch\ndevice = 'xpu'", "getattr(torch, device).empty_cache()", "torch.xpu.empty_cache"},
      {"import torch\ndev = 'mps'\nmodule = getattr(torch, dev)", "module.empty_cache()", "torch.mps.empty_cache"},
      {"import torch\nbackend = torch.cuda.memory", "backend.empty_cache()", "torch.cuda.empty_cache"},
      // Not flushes, or not known to be:
      {"import torch", "torch.cuda.memory._private()", ""},
      {"import torch\nimport os\ndevice = os.environ['DEV']", "getattr(torch, device).empty_cache()", ""},
      {"import torch\ndevice = 'cuda'\ndevice = 'not an attribute!'", "getattr(torch, device).empty_cache()", ""},
      {"import torch\ndef getattr(a, b): return a", "getattr(torch, 'cuda').empty_cache()", ""},
      {"import torch", "getattr(torch, 'cuda', None).memory_allocated()", ""},
  };
  for (const auto& sp : spellings) {
    INFO(sp.prelude << " / " << sp.call);
    auto got = messages_in_loop(sp.prelude, sp.call);
    if (*sp.function == '\0') {
      CHECK(got.empty());
      continue;
    }
    REQUIRE(got.size() == 1);
    std::string want = std::string("`").append(sp.function).append("()` runs on every iteration of the `for` loop");
    CHECK(got[0].rfind(want, 0) == 0);
  }
}

TEST_CASE("OOM301: a flush after the training loop of its own function is a phase boundary") {
  // The sweep calls train() per generation: train()'s teardown is not flagged,
  // the flush inside its batch loop is.
  auto sweep = lint(read_fixture("empty_cache_after_training_sweep.py"));
  REQUIRE(sweep.size() == 1);
  CHECK(sweep[0].location.source->start.line == 18);
  // Through a helper called after the loop (a fold's teardown): not flagged;
  // a helper without a training loop of its own is.
  auto folds = lint(read_fixture("empty_cache_after_training_folds.py"));
  REQUIRE(folds.size() == 1);
  CHECK(folds[0].location.source->start.line == 24);
  auto epochs = lint(read_fixture("empty_cache_after_training_epoch.py"));
  REQUIRE(epochs.size() == 1);
  CHECK(epochs[0].message.find("through `validate()`") != std::string::npos);
  // A loop that does not train before the flush is no phase: still flagged.
  CHECK(lint("import torch\n"
             "def evaluate(batches):\n"
             "    for b in batches:\n"
             "        b.cuda()\n"
             "    torch.cuda.empty_cache()\n"
             "for epoch in range(3):\n"
             "    evaluate([])\n")
            .size() == 1);
  // The training loop after the flush does not count: the flush runs before it.
  CHECK(lint("import torch\n"
             "def train(opt, loss):\n"
             "    torch.cuda.empty_cache()\n"
             "    for b in range(3):\n"
             "        loss.backward()\n"
             "        opt.step()\n"
             "for run in range(3):\n"
             "    train(None, None)\n")
            .size() == 1);
}
