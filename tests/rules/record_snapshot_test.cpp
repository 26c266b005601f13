// The fix "Record a memory snapshot": fixtures under
// fixtures/scripts/record_snapshot_action/ (NAME.py and the expected
// NAME.fixed.py), byte-exact edits, idempotence, compilable output, and the
// edited code run against a stand-in torch to see the snapshot written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "analyzer/python/script.hpp"
#include "rules/source/lint.hpp"
#include "rules/source/record_snapshot.hpp"
#include "tests/rules/snapshot_fixture_util.hpp"

using namespace oomlens::rules;
using oomlens::analyzer::python::parse_script;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(OOMLENS_SOURCE_DIR) / "fixtures/scripts/record_snapshot_action";

std::optional<Fix> action(std::string_view src, std::optional<std::uint32_t> line = {}) {
  return record_snapshot_action(parse_script(src), line);
}

std::optional<std::string> recorded(std::string_view src, std::optional<std::uint32_t> line = {}) {
  auto a = action(src, line);
  if (!a) return std::nullopt;
  return apply_edits(src, a->edits);
}

// Where `line` of `src` is after the action's edits: the traceback's line in
// the edited file, to ask again about the same code.
std::optional<std::uint32_t> shifted(std::string_view src, std::optional<std::uint32_t> line) {
  if (!line) return line;
  auto a = action(src, line);
  REQUIRE(a);
  std::size_t begin = 0;
  for (std::uint32_t l = 1; l < *line; ++l) begin = src.find('\n', begin) + 1;
  std::uint32_t added = 0;
  for (const auto& e : a->edits)
    if (e.begin < begin) added += static_cast<std::uint32_t>(std::count(e.replacement.begin(), e.replacement.end(), '\n'));
  return *line + added;
}

// Fixture -> the traceback line the action is asked about (none: find the loop).
const std::map<std::string, std::optional<std::uint32_t>> kCases = {
    {"basic", {}},          {"tabs", {}},           {"two_spaces", {}},      {"crlf", {}},
    {"nested_function", {}}, {"torch_alias", {}},   {"distributed", {}},     {"distributed_without_os", {}},
    {"future_docstring", {}}, {"async_for", {}},    {"decorators", {}},      {"non_ascii", {}},
    {"no_final_newline", {}}, {"traceback_line", 12},
};
// Fixtures that must get no action (and so have no .fixed.py).
const std::set<std::string> kNoAction = {"already_recording"};

}  // namespace

TEST_CASE("record snapshot: every fixture gives its .fixed.py byte for byte, which compiles; twice changes nothing",
          "[record_snapshot]") {
  for (const auto& [stem, line] : kCases) {
    INFO(stem);
    std::string before = snapshot_test::read_file(kDir / (stem + ".py"));
    auto once = recorded(before, line);
    REQUIRE(once);
    CHECK(*once == snapshot_test::golden(kDir / (stem + ".fixed.py"), *once));
    CHECK_FALSE(action(*once, shifted(before, line)));  // idempotent: it records already
    CHECK(snapshot_test::py_compiles(kDir / (stem + ".fixed.py")));
  }
  for (const auto& stem : kNoAction) {
    INFO(stem);
    CHECK_FALSE(action(snapshot_test::read_file(kDir / (stem + ".py"))));
  }
}

TEST_CASE("record snapshot: every fixture file is one of the cases above", "[record_snapshot]") {
  for (const auto& entry : fs::directory_iterator(kDir)) {
    std::string name = entry.path().filename().string();
    INFO(name);
    std::string stem = name.substr(0, name.find('.'));
    CHECK((kCases.count(stem) || kNoAction.count(stem)));
    if (name.ends_with(".fixed.py")) CHECK(kCases.count(stem));
  }
}

TEST_CASE("record snapshot: title, safety and edit shape", "[record_snapshot]") {
  auto a = action(snapshot_test::read_file(kDir / "basic.py"));
  REQUIRE(a);
  CHECK(a->title == "Record a memory snapshot around the training loop at line 8");
  CHECK(a->safety == FixSafety::unsafe);
  for (std::size_t i = 1; i < a->edits.size(); ++i) CHECK(a->edits[i - 1].end <= a->edits[i].begin);
  // The epoch loop, not the batch loop inside it; without a traceback line
  // the training loop, not the evaluation loop.
  auto t = action(snapshot_test::read_file(kDir / "traceback_line.py"));
  REQUIRE(t);
  CHECK(t->title.ends_with("at line 6"));
  auto at_line = action(snapshot_test::read_file(kDir / "traceback_line.py"), 12);
  REQUIRE(at_line);
  CHECK(at_line->title.ends_with("at line 11"));
  // A traceback line outside every loop falls back to the training loop.
  auto outside = action(snapshot_test::read_file(kDir / "traceback_line.py"), 3);
  REQUIRE(outside);
  CHECK(outside->title.ends_with("at line 6"));
}

TEST_CASE("record snapshot: no action without a loop, with syntax errors, or when already recording",
          "[record_snapshot]") {
  CHECK_FALSE(action("import torch\nmodel = torch.nn.Linear(8, 8)\nmodel(torch.randn(1, 8)).sum().backward()\n"));
  CHECK_FALSE(action("import torch\nfor x in y:\n    print(x)\n"));  // a loop that does not train
  CHECK_FALSE(action("import torch\nfor x in y:\n    x.backward()\n    def (:\n"));
  CHECK_FALSE(action(""));
  // Recording through an alias and from a function called before the loop.
  CHECK_FALSE(action("from torch.cuda import memory as m\nimport torch\ndef setup():\n    m._record_memory_history()\n"
                     "setup()\nfor x in y:\n    x.backward()\n"));
  // Turning recording off is not recording: the action is offered.
  CHECK(action("import torch\ntorch.cuda.memory._record_memory_history(enabled=None)\nfor x in y:\n    x.backward()\n"));
  CHECK(action("import torch\ntorch.cuda.memory._record_memory_history(False)\nfor x in y:\n    x.backward()\n"));
  // A recording after the loop does not record the loop.
  CHECK(action("import torch\nfor x in y:\n    x.backward()\ntorch.cuda.memory._record_memory_history()\n"));
}

TEST_CASE("record snapshot: the training calls that find the loop", "[record_snapshot]") {
  auto title_of = [](std::string_view src) { return action(src).value_or(Fix{}).title; };
  CHECK(title_of("import torch\nfor a in b:\n    pass\nfor x in y:\n    scaler.scale(loss).backward()\n")
            .ends_with("line 4"));
  CHECK(title_of("import torch\nfor x in y:\n    self.optimizer.step(closure)\n").ends_with("line 2"));
  CHECK(title_of("import torch\nwhile True:\n    torch.autograd.backward(loss)\n").ends_with("line 2"));
  CHECK(title_of("import torch\nfor x in y:\n    scheduler.step()\n").empty());  // not an optimizer
  // Through a function of the file: the loop that calls it.
  CHECK(title_of("import torch\ndef epoch():\n    for b in d:\n        b.backward()\nfor e in range(3):\n    epoch()\n")
            .ends_with("line 5"));
}

TEST_CASE("record snapshot: a multi-line string in the loop keeps its text", "[record_snapshot]") {
  std::string src = "import torch\nfor x in y:\n    x.backward()\n    s = \"\"\"a\n  b\n\"\"\"\n    t = 'c\\\n  d'\n";
  auto out = recorded(src);
  REQUIRE(out);
  CHECK(out->find("        s = \"\"\"a\n  b\n\"\"\"\n        t = 'c\\\n  d'\n") != std::string::npos);
}

TEST_CASE("record snapshot: the edited script dumps a snapshot on OOM and re-raises", "[record_snapshot]") {
  std::string script =
      "import torch\n\nfor step in range(3):\n    loss = torch.Loss()\n    loss.backward()\nprint('unreachable')\n";
  auto out = recorded(script);
  REQUIRE(out);
  auto dir = snapshot_test::scratch_dir("record-run");
  auto run = snapshot_test::run_with_stub_torch(dir, *out);
  INFO(run.output);
  CHECK(run.status != 0);  // the OOM still ends the script
  CHECK(run.output.find("OutOfMemoryError") != std::string::npos);
  CHECK(run.output.find("unreachable") == std::string::npos);
  CHECK(fs::exists(dir / "oom_snapshot.pickle"));
  fs::remove_all(dir);
}

TEST_CASE("record snapshot: a distributed script writes one file per rank", "[record_snapshot]") {
  std::string script = "import torch\nimport os\nrank = int(os.environ['LOCAL_RANK'])\nfor step in range(3):\n"
                       "    torch.Loss().backward()\n";
  auto out = recorded(script);
  REQUIRE(out);
  CHECK(out->find("f\"oom_snapshot_rank{os.environ.get('RANK', '0')}.pickle\"") != std::string::npos);
  auto dir = snapshot_test::scratch_dir("record-rank");
  auto run = snapshot_test::run_with_stub_torch(dir, *out, "RANK=3 LOCAL_RANK=1 ");
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(fs::exists(dir / "oom_snapshot_rank3.pickle"));
  fs::remove_all(dir);
}

TEST_CASE("record snapshot: odd layouts still give code that compiles, and only once", "[record_snapshot]") {
  const char* sources[] = {
      "import torch\nfor x in y: x.backward()\n",                                   // body on the header's line
      "\xEF\xBB\xBFimport torch\nfor x in y:\n    x.backward()\n",                  // byte-order mark
      "import torch\nfor x in y:\n    x.backward()\n# about z\nz()\n",              // comment after the loop
      "import torch\nif a:\n    for x in y:\n        x.backward()\nelse:\n    pass\n",  // the loop ends a branch
      "import torch\nfor x, y in zip(a,\n                b):\n    x.backward()\n",   // header over two lines
      "import torch\nfor x in y:\n    x.backward(\n)\n    z = [i\nfor i in x]\n",     // continuation at column 0
      "import torch\ndef f():\n\tfor x in y: x.backward()\n",                       // tabs, no body line to copy
      "import torch\r\nfor x in y:\r\n    x.backward()",                             // CRLF, no final newline
  };
  auto dir = snapshot_test::scratch_dir("record-layouts");
  int n = 0;
  for (const char* src : sources) {
    INFO(src);
    auto out = recorded(src);
    REQUIRE(out);
    INFO(*out);
    CHECK_FALSE(action(*out));
    auto file = dir / ("case" + std::to_string(n++) + ".py");
    snapshot_test::write_file(file, *out);
    CHECK(snapshot_test::py_compiles(file));
  }
  // The byte-order mark stays first; the tab-indented file stays tab-indented.
  CHECK(recorded(sources[1])->starts_with("\xEF\xBB\xBFimport torch\n# oomlens:"));
  CHECK(recorded(sources[6])->find("\ttry:\n\t\tfor x in y: x.backward()\n\texcept") != std::string::npos);
  fs::remove_all(dir);
}
