#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "analyzer/python/script.hpp"
#include "rules/source/lint.hpp"
#include "tests/rules/fixture_files.hpp"

using namespace oomlens::rules;
using oomlens::testing::read_fixture;
using oomlens::analyzer::python::parse_script;

namespace {

std::vector<SourceDiagnostic> lint(std::string_view src) { return lint_script(parse_script(src)); }

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
                           "empty_cache_periodic", "empty_cache_not_in_loop", "empty_cache_body_left_empty"})
    check_fixture_pair(stem);
}

TEST_CASE("OOM301: a call in a for loop is a warning with a safe fix at its position") {
  auto d = lint(read_fixture("empty_cache_in_loop.py"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].diagnosis.code == "OOM301");
  CHECK(d[0].diagnosis.name == "empty-cache-in-loop");
  CHECK(d[0].diagnosis.severity == Severity::warning);
  CHECK(d[0].start.line == 11);
  CHECK(d[0].start.column == 5);
  CHECK(d[0].diagnosis.message.find("`for` loop at line 7") != std::string::npos);
  CHECK(d[0].diagnosis.explanation.find("retries") != std::string::npos);
  REQUIRE(d[0].fix_safety);
  CHECK(*d[0].fix_safety == FixSafety::safe);
  REQUIRE(d[0].edits.size() == 1);
  CHECK(d[0].edits[0].replacement.empty());
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
  CHECK(d[0].start.line == 5);
  CHECK(d[0].diagnosis.message.find("through `cleanup()` at line 11") != std::string::npos);
  CHECK(d[0].fix_safety);
}

TEST_CASE("OOM301: a periodic flush is a hint without a fix") {
  auto d = lint(read_fixture("empty_cache_periodic.py"));
  REQUIRE(d.size() == 1);
  CHECK(d[0].diagnosis.severity == Severity::hint);
  CHECK_FALSE(d[0].fix_safety);
  CHECK(d[0].edits.empty());
  auto not_step = lint("import torch\nfor i in x:\n    if not i % 10:\n        torch.cuda.empty_cache()\n");
  REQUIRE(not_step.size() == 1);
  CHECK(not_step[0].diagnosis.severity == Severity::hint);
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
  CHECK_FALSE(d[0].fix_safety);
}

TEST_CASE("OOM301: a file with syntax errors gets no edits") {
  auto d = lint("import torch\nfor x in y:\n    torch.cuda.empty_cache()\n    def (:\n");
  for (const auto& x : d) CHECK(x.edits.empty());
}

TEST_CASE("lint: unified diff of a fix") {
  std::string src = "import torch\nfor x in y:\n    a()\n    torch.cuda.empty_cache()\n";
  auto diff = unified_diff("t.py", src, fix_edits(lint(src)));
  CHECK(diff == "--- t.py\n+++ t.py\n@@ -1,4 +1,3 @@\n import torch\n for x in y:\n     a()\n-    torch.cuda.empty_cache()\n");
  CHECK(unified_diff("t.py", "x = 1\n", {}).empty());
}
