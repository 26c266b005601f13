#include <catch2/catch.hpp>

#include "analyzer/config/env_assignments.hpp"

using namespace oomlens::analyzer::config;

namespace {

// The source bytes behind value bytes [b, e).
std::string_view source_of(std::string_view text, const EnvAssignment& a, std::size_t b, std::size_t e) {
  auto r = a.value.source_range(b, e);
  return text.substr(r.begin, r.end - r.begin);
}

}  // namespace

TEST_CASE("config shell: export, prefix, env and declare assignments with their quoting removed", "[alloc_conf]") {
  std::string_view t =
      "export A=plain\n"
      "export B=\"dq\\\"x\" C='s q'\n"
      "D=1 E=two python train.py\n"
      "env -u X F=f torchrun --nproc_per_node 2 t.py G=not_an_assignment\n"
      "declare -x H=h\n"
      "I=shell_only\n";
  auto as = shell_assignments(t);
  REQUIRE(as.size() == 8);
  CHECK(as[0].name == "A");
  CHECK(as[0].value.value == "plain");
  CHECK(as[0].form == AssignmentForm::exported);
  CHECK(as[1].value.value == "dq\"x");
  CHECK(source_of(t, as[1], 0, 4) == "dq\\\"x");  // the escape maps to its two source bytes
  CHECK(as[2].value.value == "s q");
  CHECK(source_of(t, as[2], 0, 3) == "s q");
  CHECK(as[3].name == "D");
  CHECK(as[3].form == AssignmentForm::command_prefix);
  CHECK(as[3].statement_begin == t.find("D=1"));
  CHECK(as[4].form == AssignmentForm::command_prefix);
  CHECK(as[5].name == "F");
  CHECK(as[5].form == AssignmentForm::env_command);
  CHECK(as[6].name == "H");
  CHECK(as[6].form == AssignmentForm::exported);
  CHECK(as[7].name == "I");
  CHECK(as[7].form == AssignmentForm::plain);
}

TEST_CASE("config shell: comments, continuations, expansions, here-documents, compound commands", "[alloc_conf]") {
  std::string_view t =
      "# export A=commented\n"
      "echo x # export B=comment\n"
      "export C=\"a,\\\n"
      "b\"\n"
      "export D=\"$HOME/x\" E=${F:-1}\n"
      "python - <<'PY'\n"
      "import os\n"
      "X=inside_heredoc\n"
      "PY\n"
      "if true; then export G=g; fi\n"
      "cd /tmp && H='h' python run.py\n";
  auto as = shell_assignments(t);
  REQUIRE(as.size() == 5);
  CHECK(as[0].name == "C");
  CHECK(as[0].value.value == "a,b");  // the continuation adds nothing
  CHECK(as[0].constant);
  CHECK(as[1].name == "D");
  CHECK_FALSE(as[1].constant);
  CHECK(as[2].name == "E");
  CHECK_FALSE(as[2].constant);
  CHECK(as[3].name == "G");
  CHECK(as[3].form == AssignmentForm::exported);
  CHECK(as[4].name == "H");
  CHECK(as[4].form == AssignmentForm::command_prefix);
  CHECK(as[4].value.value == "h");
}

TEST_CASE("config shell: the commands a script runs", "[alloc_conf]") {
  std::string_view t = "set -e\nX=1 torchrun a.py --x 1\nenv Y=2 python -m train\n";
  auto cs = shell_commands(t);
  REQUIRE(cs.size() == 3);
  CHECK(cs[0].program == "set");
  CHECK(cs[1].program == "torchrun");
  CHECK(cs[1].begin == t.find("X=1"));
  CHECK(cs[1].line_begin == t.find("X=1"));
  CHECK(cs[1].words == std::vector<std::string>{"a.py", "--x", "1"});
  CHECK(cs[2].program == "env");
  CHECK(cs[2].words == std::vector<std::string>{"python", "-m", "train"});
}

TEST_CASE("config dotenv: plain, export, quotes, comments", "[alloc_conf]") {
  std::string_view t =
      "# comment\n"
      "A=plain value  # trailing comment\n"
      "export B='single # not a comment'\n"
      "C = \"dq\\tx\"\n"
      "D=${HOME}/x\n"
      "E=a#b\n"
      "not an assignment\n"
      "F=\r\n";
  auto as = dotenv_assignments(t);
  REQUIRE(as.size() == 6);
  CHECK(as[0].name == "A");
  CHECK(as[0].value.value == "plain value");
  CHECK(as[1].form == AssignmentForm::exported);
  CHECK(as[1].value.value == "single # not a comment");
  CHECK(as[2].name == "C");
  CHECK(as[2].value.value == "dq\tx");
  CHECK(source_of(t, as[2], 2, 3) == "\\t");
  CHECK_FALSE(as[3].constant);
  CHECK(as[4].value.value == "a#b");
  CHECK(as[5].value.value.empty());
}

TEST_CASE("config launch.json: env of each configuration, JSONC comments and trailing commas", "[alloc_conf]") {
  std::string_view t =
      "{\n"
      "  // comment\n"
      "  \"configurations\": [\n"
      "    {\"name\": \"a\", \"type\": \"debugpy\", /* block */ \"env\": {\"X\": \"v\\u0041\\\"\", \"N\": 1,},},\n"
      "    {\"name\": \"b\", \"type\": \"node\"},\n"
      "  ],\n"
      "}\n";
  auto f = parse_launch_json(t);
  REQUIRE(f.valid);
  REQUIRE(f.configurations.size() == 2);
  const auto& a = f.configurations[0];
  CHECK(a.type == "debugpy");
  CHECK(a.name == "a");
  REQUIRE(a.env);
  CHECK(t.substr(a.env->first, a.env->second - a.env->first) == "{\"X\": \"v\\u0041\\\"\", \"N\": 1,}");
  REQUIRE(a.env_entries.size() == 1);
  CHECK(a.env_entries[0].name == "X");
  CHECK(a.env_entries[0].value.value == "vA\"");
  CHECK(source_of(t, a.env_entries[0], 1, 2) == "\\u0041");
  CHECK_FALSE(f.configurations[1].env);
  CHECK_FALSE(parse_launch_json("{\"configurations\": [").valid);
  CHECK_FALSE(parse_launch_json("[]").valid);
  CHECK(launch_json_assignments("not json").empty());
}
