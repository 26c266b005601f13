// OOM304 snapshot-never-dumped. Fixtures fixtures/scripts/snapshot_*.py: as for
// OOM301, NAME.fixed.py is what `oomlens lint --fix` gives (safe fixes only,
// so OOM304's unsafe fix leaves the file alone); NAME.unsafe-fixed.py, where
// present, is the result with unsafe fixes applied.
#include <catch2/catch.hpp>

#include "analyzer/python/script.hpp"
#include "rules/source/lint.hpp"
#include "tests/rules/snapshot_fixture_util.hpp"
#include "tests/rules/automatic_fix.hpp"

using namespace oomlens::rules;
using oomlens::analyzer::python::parse_script;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(OOMLENS_SOURCE_DIR) / "fixtures/scripts";

std::vector<Diagnosis> oom304(std::string_view src) {
  std::vector<Diagnosis> out;
  for (auto& d : lint_script(parse_script(src)))
    if (d.code == "OOM304") out.push_back(std::move(d));
  return out;
}

std::string fixed(std::string_view src, bool unsafe) {
  return apply_edits(src, fix_edits(lint_script(parse_script(src)), unsafe));
}

}  // namespace

TEST_CASE("OOM304: fixtures give their .fixed.py (safe) and .unsafe-fixed.py byte for byte; twice changes nothing",
          "[snapshot_never_dumped]") {
  for (const char* stem : {"snapshot_never_dumped", "snapshot_never_dumped_no_loop", "snapshot_dumped_by_observer",
                           "snapshot_recording_off"}) {
    INFO(stem);
    std::string before = snapshot_test::read_file(kDir / (std::string(stem) + ".py"));
    CHECK(fixed(before, false) == snapshot_test::read_file(kDir / (std::string(stem) + ".fixed.py")));
  }
  for (const char* stem : {"snapshot_never_dumped", "snapshot_never_dumped_no_loop"}) {
    INFO(stem);
    fs::path expected = kDir / (std::string(stem) + ".unsafe-fixed.py");
    std::string once = fixed(snapshot_test::read_file(kDir / (std::string(stem) + ".py")), true);
    CHECK(once != snapshot_test::read_file(kDir / (std::string(stem) + ".py")));
    CHECK(once == snapshot_test::golden(expected, once));
    CHECK(fixed(once, true) == once);
    CHECK(oom304(once).empty());
    CHECK(snapshot_test::py_compiles(expected));
  }
}

TEST_CASE("OOM304: a recording with no dump is a warning on the record call with an unsafe fix",
          "[snapshot_never_dumped]") {
  auto d = oom304(snapshot_test::read_file(kDir / "snapshot_never_dumped.py"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].name == "snapshot-never-dumped");
  CHECK(d[0].severity == Severity::warning);
  CHECK(d[0].location.source->start.line == 4);
  CHECK(d[0].location.source->start.column == 1);
  CHECK(d[0].message.find("_dump_snapshot") != std::string::npos);
  REQUIRE(fix_safety_of(d[0]));
  CHECK(*fix_safety_of(d[0]) == FixSafety::unsafe);
  REQUIRE(d[0].fixes.size() == 1);
  CHECK(d[0].fixes[0].detail.find("training loop at line 8") != std::string::npos);
  CHECK(d[0].verify == "oomlens snapshot oom_snapshot.pickle");
  auto ranked = oom304("import torch, os\nr = os.environ['RANK']\ntorch.cuda.memory._record_memory_history()\n");
  REQUIRE(ranked.size() == 1);
  CHECK(ranked[0].verify == "oomlens snapshot oom_snapshot_rank0.pickle");
  auto no_loop = oom304(snapshot_test::read_file(kDir / "snapshot_never_dumped_no_loop.py"));
  REQUIRE(no_loop.size() == 1);
  CHECK(no_loop[0].location.source->start.line == 7);
  CHECK(no_loop[0].fixes[0].detail.find("atexit") != std::string::npos);
}

TEST_CASE("OOM304: what counts as saving, and what is not a recording", "[snapshot_never_dumped]") {
  CHECK(oom304(snapshot_test::read_file(kDir / "snapshot_dumped_by_observer.py")).empty());
  CHECK(oom304(snapshot_test::read_file(kDir / "snapshot_recording_off.py")).empty());
  // _snapshot() pickled by the script itself.
  CHECK(oom304("import torch, pickle\ntorch.cuda.memory._record_memory_history()\n"
               "pickle.dump(torch.cuda.memory._snapshot(), open('s.pickle', 'wb'))\n")
            .empty());
  // Passed, not called: atexit.register(torch.cuda.memory._dump_snapshot, ...).
  CHECK(oom304("import atexit, torch\ntorch.cuda.memory._record_memory_history()\n"
               "atexit.register(torch.cuda.memory._dump_snapshot, 's.pickle')\n")
            .empty());
  // A local function named like the dump is not the dump.
  CHECK(oom304("import torch\ndef _dump_snapshot(f): pass\ntorch.cuda.memory._record_memory_history()\n"
               "_dump_snapshot('x')\n")
            .size() == 1);
  // Every recording is reported; only the first carries the fix (two would dump twice).
  auto two = oom304("import torch\ntorch.cuda.memory._record_memory_history()\n"
                    "torch.cuda.memory._record_memory_history(enabled='all')\n");
  REQUIRE(two.size() == 2);
  CHECK(fix_safety_of(two[0]));
  CHECK_FALSE(fix_safety_of(two[1]));
}

TEST_CASE("OOM304: no automatic fix where the dump cannot be placed exactly", "[snapshot_never_dumped]") {
  // On the line of a compound statement's header, or sharing its line.
  auto header = oom304("import torch\nif debug: torch.cuda.memory._record_memory_history()\n");
  REQUIRE(header.size() == 1);
  CHECK_FALSE(fix_safety_of(header[0]));
  CHECK(header[0].fixes[0].safety == FixSafety::display_only);
  auto shared = oom304("import torch\ntorch.cuda.memory._record_memory_history(); x = 1\n");
  REQUIRE(shared.size() == 1);
  CHECK_FALSE(fix_safety_of(shared[0]));
  auto broken = oom304("import torch\ntorch.cuda.memory._record_memory_history()\ndef (:\n");
  REQUIRE(broken.size() == 1);
  CHECK(edits_of(broken[0]).empty());
}

TEST_CASE("OOM304: the atexit dump runs after an uncaught OOM", "[snapshot_never_dumped]") {
  std::string script = "import torch\n\ntorch.cuda.memory._record_memory_history(max_entries=10)\n"
                       "torch.Loss().backward()\n";
  std::string out = fixed(script, true);
  REQUIRE(out != script);
  auto dir = snapshot_test::scratch_dir("oom304-run");
  auto run = snapshot_test::run_with_stub_torch(dir, out);
  INFO(out);
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find("OutOfMemoryError") != std::string::npos);
  CHECK(fs::exists(dir / "oom_snapshot.pickle"));
  fs::remove_all(dir);
}
