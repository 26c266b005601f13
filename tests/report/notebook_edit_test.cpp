#include <catch2/catch.hpp>

#include "analyzer/notebook.hpp"
#include "report/notebook_edit.hpp"

using namespace oomlens;

namespace {

// The notebook after replacing the script's bytes [b, e) with `with`.
std::string edited(std::string_view file, std::size_t b, std::size_t e, std::string with) {
  auto nb = analyzer::notebook::parse(file);
  auto script = analyzer::notebook::code_script(nb);
  return report::apply_notebook_edits(file, nb, script, {{b, e, std::move(with)}});
}

}  // namespace

TEST_CASE("notebook edits: only the edited cell's source is rewritten, in its own layout", "[notebook]") {
  std::string file =
      "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"outputs\": [{\"text\": \"x = 1\\n\"}],\n"
      "   \"source\": [\n    \"x = 1\\n\",\n    \"y = 2\"\n   ]\n  },\n"
      "  {\"cell_type\": \"code\", \"source\": \"z = \\\"3\\\"\\n\"}\n ]\n}\n";
  // "x = 1\n" removed from the first cell.
  CHECK(edited(file, 0, 6, "") ==
        "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"outputs\": [{\"text\": \"x = 1\\n\"}],\n"
        "   \"source\": [\n    \"y = 2\"\n   ]\n  },\n"
        "  {\"cell_type\": \"code\", \"source\": \"z = \\\"3\\\"\\n\"}\n ]\n}\n");
  // A line added to the first cell keeps the list's separator.
  CHECK(edited(file, 0, 0, "import os\n").find("[\n    \"import os\\n\",\n    \"x = 1\\n\",\n    \"y = 2\"\n   ]") !=
        std::string::npos);
  // The second cell is one string: it stays one, escaped.
  std::size_t z = std::string("x = 1\ny = 2\n").size();
  CHECK(edited(file, z, z, "# \"q\"\n").find("\"source\": \"# \\\"q\\\"\\nz = \\\"3\\\"\\n\"") != std::string::npos);
}

TEST_CASE("notebook edits: an edit across cells or over a blanked IPython line is left out", "[notebook]") {
  std::string file = "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"!ls\\na = 1\\n\"},"
                     " {\"cell_type\": \"code\", \"source\": \"b = 2\\n\"}]}";
  CHECK(edited(file, 0, 4, "") == file);   // the `!ls` line
  CHECK(edited(file, 4, 16, "") == file);  // from the first cell into the second
  CHECK(edited(file, 4, 10, "") ==
        "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"!ls\\n\"}, {\"cell_type\": \"code\", \"source\": \"b = 2\\n\"}]}");
}

TEST_CASE("notebook messages: script lines told as cell lines", "[notebook]") {
  auto nb = analyzer::notebook::parse(
      "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"a\\nb\\n\"}, {\"cell_type\": \"markdown\", \"source\": \"\"},"
      " {\"cell_type\": \"code\", \"source\": \"c\\n\"}]}");
  auto script = analyzer::notebook::code_script(nb);
  CHECK(report::cell_lines_in_message("at line 3 through `f()` at line 2", script) ==
        "at cell 3, line 1 through `f()` at cell 1, line 2");
  CHECK(report::cell_lines_in_message("no line here, line x", script) == "no line here, line x");
}
