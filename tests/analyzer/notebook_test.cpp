#include <catch2/catch.hpp>

#include "analyzer/notebook.hpp"

using namespace oomlens::analyzer::notebook;

TEST_CASE("notebook: cells, their sources as string or list, where they sit in the file", "[notebook]") {
  std::string_view t =
      "{\"cells\": [\n"
      " {\"cell_type\": \"markdown\", \"source\": [\"# title\"]},\n"
      " {\"cell_type\": \"code\", \"source\": [\"import torch\\n\", \"x = 1\"], \"outputs\": []},\n"
      " {\"cell_type\": \"code\", \"source\": \"y = 2\\n\"}\n"
      "], \"nbformat\": 4}";
  auto nb = parse(t);
  REQUIRE(nb.valid);
  REQUIRE(nb.cells.size() == 3);
  CHECK_FALSE(nb.cells[0].code);
  CHECK(nb.cells[1].code);
  CHECK(nb.cells[1].text == "import torch\nx = 1");
  CHECK(nb.cells[1].source_is_list);
  CHECK(nb.cells[1].list_separator == ", ");
  CHECK(t.substr(nb.cells[1].source_begin, nb.cells[1].source_end - nb.cells[1].source_begin) ==
        "[\"import torch\\n\", \"x = 1\"]");
  CHECK(nb.cells[2].text == "y = 2\n");
  CHECK_FALSE(nb.cells[2].source_is_list);

  auto s = code_script(nb);
  CHECK(s.text == "import torch\nx = 1\ny = 2\n");
  REQUIRE(s.spans.size() == 2);
  CHECK(s.spans[0].cell == 1);
  CHECK(s.spans[0].first_line == 1);
  CHECK(s.spans[1].cell == 2);
  CHECK(s.spans[1].first_line == 3);
  CHECK(s.span_at(0)->cell == 1);
  CHECK(s.span_at(s.text.find("y = 2"))->cell == 2);
}

TEST_CASE("notebook: IPython lines blanked in place, lines and offsets kept", "[notebook]") {
  std::string_view t =
      "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"!pip install x\\n  %time f()\\nimport os\\n\"},"
      " {\"cell_type\": \"code\", \"source\": \"%%bash\\nls\\n\"},"
      " {\"cell_type\": \"code\", \"source\": \"a = 100 % 7\\n\"}]}";
  auto s = code_script(parse(t));
  CHECK(s.text == std::string(14, ' ') + "\n" + std::string(11, ' ') + "\nimport os\n" + std::string(6, ' ') +
                      "\n  \na = 100 % 7\n");
}

TEST_CASE("notebook: what is not a notebook", "[notebook]") {
  CHECK_FALSE(parse("").valid);
  CHECK_FALSE(parse("[]").valid);
  CHECK_FALSE(parse("{\"cells\": {}}").valid);
  CHECK_FALSE(parse("{\"cells\": [").valid);
  CHECK(parse("{\"cells\": []}").valid);
  CHECK(code_script(parse("{\"cells\": [{\"cell_type\": \"code\"}, 7]}")).text == "\n");  // no source: an empty cell
  std::string deep(100000, '[');
  CHECK_FALSE(parse(deep).valid);
}
