#include <catch2/catch.hpp>

#include <string>

#include "analyzer/python/script.hpp"
#include "tests/analyzer/python/helpers.hpp"

using namespace oomlens::analyzer::python;
using oomlens::analyzer::python::testing::find;
using oomlens::analyzer::python::testing::find_call;

TEST_CASE("python script: the compiled-in grammar is one the runtime accepts") {
  CHECK(grammar_abi_version() == 14);
  CHECK(grammar_abi_version() >= runtime_min_abi_version());
  CHECK(grammar_abi_version() <= runtime_max_abi_version());
}

TEST_CASE("python script: an empty file") {
  for (const char* source : {"", "\n", "# only a comment\n", "   \n\n"}) {
    Script s = parse_script(source);
    CHECK_FALSE(s.has_errors());
    CHECK(s.root().is("module"));
    CHECK(s.module_statements().empty());
    CHECK(s.calls().empty());
    CHECK(s.imports().empty());
    CHECK(s.execution_order().empty());
    CHECK_FALSE(s.first_import_of("torch"));
  }
  Script empty = parse_script("");
  CHECK(empty.point(0) == Point{1, 1, 1});
  CHECK(empty.insertion_point().byte == 0);
}

TEST_CASE("python script: calls carry byte ranges and 1-based line/column") {
  Script s = parse_script("import torch\nfor i in x:\n    torch.cuda.empty_cache()\n");
  auto calls = s.calls_to("torch.cuda.empty_cache");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].range == ByteRange{29, 53});
  CHECK(s.text(calls[0].range) == "torch.cuda.empty_cache()");
  CHECK(calls[0].start == Point{3, 5, 5});
  CHECK(s.text(calls[0].callee) == "torch.cuda.empty_cache");
}

TEST_CASE("python script: non-ASCII source, byte and character columns") {
  // "é" is 2 bytes, "数据" 6 bytes, the emoji 4 bytes (2 UTF-16 units).
  std::string source =
      "import torch\n"
      "données = \"数据\"; torch.cuda.empty_cache()\n"
      "s = '😀'; torch.cuda.empty_cache()\n"
      "def entraîner():\n"
      "    for é in range(3):\n"
      "        torch.cuda.empty_cache()\n";
  Script s = parse_script(source);
  CHECK_FALSE(s.has_errors());
  auto calls = s.calls_to("torch.cuda.empty_cache");
  REQUIRE(calls.size() == 3);
  CHECK(calls[0].start.line == 2);
  CHECK(calls[0].start.column == 17);       // d o n n é e s _ = _ " 数 据 " ; _ → 16 characters before
  CHECK(calls[0].start.byte_column == 22);  // 5 more bytes: é (+1), 数据 (+4)
  CHECK(s.text(calls[0].range) == "torch.cuda.empty_cache()");
  CHECK(calls[1].start.column == 10);
  CHECK(calls[1].start.byte_column == 13);
  CHECK(s.enclosing_function(calls[2].node)->name == "entraîner");
  CHECK(s.enclosing_loop(calls[2].node));
  // Identifiers that are not ASCII resolve as any other.
  Script alias = parse_script("import torch.cuda as gpu_é\ngpu_é.empty_cache()\n");
  CHECK(alias.calls_to("torch.cuda.empty_cache").size() == 1);
}

TEST_CASE("python script: syntax errors are reported and the rest is still read") {
  Script s = parse_script(
      "import torch\n"
      "def broken(:\n"
      "    pass\n"
      "for i in range(3):\n"
      "    torch.cuda.empty_cache()\n");
  CHECK(s.has_errors());
  REQUIRE_FALSE(s.syntax_errors().empty());
  CHECK(s.syntax_errors()[0].start.line == 2);
  CHECK_FALSE(s.syntax_errors()[0].message.empty());
  auto calls = s.calls_to("torch.cuda.empty_cache");
  REQUIRE(calls.size() == 1);
  CHECK(s.enclosing_loop(calls[0].node));
}

TEST_CASE("python script: a missing token is named") {
  Script s = parse_script("print((1, 2)\nx = 1\n");
  REQUIRE(s.has_errors());
  bool named = false;
  for (const auto& e : s.syntax_errors()) named |= e.message.find("missing") != std::string::npos ||
                                                   e.message.find("invalid syntax") != std::string::npos;
  CHECK(named);
}

TEST_CASE("python script: unbalanced and binary garbage do not crash") {
  std::string garbage = "def (((((\n\x01\x02\xff\xfe'''\n" + std::string(200, '(') + "\n\tfor in while:\n";
  Script s = parse_script(garbage);
  CHECK(s.has_errors());
  (void)s.execution_order();
  (void)s.insertion_point();
  for (const Call& call : s.calls()) {
    (void)s.loops_reaching(call.node);
    (void)s.guards(call.node);
  }
  // Deep nesting stays within limits.
  std::string deep = "x = " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  Script nested = parse_script(deep);
  CHECK(nested.module_statements().size() == 1);
}

TEST_CASE("python script: a Script can be moved and keeps its nodes valid") {
  Script a = parse_script("import torch\ntorch.cuda.empty_cache()\n");
  Script b = std::move(a);
  REQUIRE(b.calls().size() == 1);
  CHECK(b.text(b.calls()[0].node) == "torch.cuda.empty_cache()");
  CHECK(b.qualified_name(b.calls()[0].callee) == "torch.cuda.empty_cache");
  // Short sources live inside std::string itself: text() must not point into the moved-from one.
  Script c = parse_script("f()");
  Script d = std::move(c);
  CHECK(d.text(d.calls()[0].node) == "f()");
}

TEST_CASE("python script: node_at finds the smallest named node") {
  Script s = parse_script("import torch\ntorch.cuda.empty_cache()\n");
  Node n = s.node_at({13, 18});
  CHECK(n.is("identifier"));
  CHECK(s.text(n) == "torch");
  CHECK(find(s, "torch.cuda", "attribute").parent().is("attribute"));
  CHECK(find_call(s, "torch.cuda").node.parent().is("expression_statement"));
}

TEST_CASE("python script: tabs and CRLF line endings") {
  Script s = parse_script("import torch\r\nfor i in x:\r\n\tif i:\r\n\t\ttorch.cuda.empty_cache()\r\n");
  CHECK_FALSE(s.has_errors());
  auto calls = s.calls_to("torch.cuda.empty_cache");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].start == Point{4, 3, 3});  // a tab is one column
  CHECK(s.enclosing_loop(calls[0].node));
  CHECK(s.guards(calls[0].node).size() == 1);
  CHECK(s.line_ending() == "\r\n");
  // Statement ranges stop before the line ending.
  CHECK(s.text(s.module_statements()[0]) == "import torch");
}
