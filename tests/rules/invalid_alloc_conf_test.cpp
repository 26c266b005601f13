#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "analyzer/python/script.hpp"
#include "rules/source/config_lint.hpp"
#include "rules/source/lint.hpp"
#include "tests/rules/fixture_files.hpp"
#include "tests/rules/automatic_fix.hpp"

using namespace oomlens::rules;
using oomlens::testing::read_fixture;
using oomlens::analyzer::python::parse_script;

namespace {

// Only OOM303's diagnostics (other rules run on the same scripts).
std::vector<Diagnosis> lint(std::string_view src) {
  std::vector<Diagnosis> out;
  for (auto& d : lint_script(parse_script(src)))
    if (d.code == "OOM303") out.push_back(std::move(d));
  return out;
}

// "line:col: CODE message" lines, as `oomlens lint` prints them.
std::vector<std::string> lines(std::string_view src) {
  std::vector<std::string> out;
  for (const auto& d : lint(src))
    out.push_back(fmt::format("{}:{}: {} {}", d.location.source->start.line, d.location.source->start.column, d.code, d.message));
  return out;
}

std::string covered(std::string_view src, const Diagnosis& d) {
  return std::string(src.substr(d.location.source->range.begin, d.location.source->range.end - d.location.source->range.begin));
}

std::string fixed(std::string_view src, bool unsafe = false) {
  return apply_edits(src, fix_edits(lint_script(parse_script(src)), unsafe));
}

}  // namespace

TEST_CASE("OOM303: every fixture's safe fix gives its .fixed.py byte for byte, and twice changes nothing",
          "[invalid_alloc_conf]") {
  for (const char* stem : {"alloc_conf_invalid", "alloc_conf_invalid_duplicates", "alloc_conf_invalid_imports",
                           "alloc_conf_invalid_none"}) {
    INFO(stem);
    std::string before = read_fixture(std::string(stem) + ".py");
    std::string after = read_fixture(std::string(stem) + ".fixed.py");
    std::string once = fixed(before);
    CHECK(once == after);
    CHECK(fixed(once) == once);
  }
}

TEST_CASE("OOM303: unknown option and out-of-range size, on their exact characters", "[invalid_alloc_conf]") {
  std::string src = read_fixture("alloc_conf_invalid.py");
  CHECK(lines(src) == std::vector<std::string>{
                          "4:42: OOM303 unknown option 'expandable_segment' (did you mean 'expandable_segments'?)",
                          "4:66: OOM303 max_split_size_mb:-1: must be an integer ≥ 20 (MiB)",
                          "5:46: OOM303 expandable_segments:true: must be True or False (case-sensitive)",
                      });
  auto d = lint(src);
  REQUIRE(d.size() == 3);
  CHECK(covered(src, d[0]) == "expandable_segment");
  CHECK(covered(src, d[1]) == "max_split_size_mb:-1");
  CHECK(covered(src, d[2]) == "expandable_segments:true");
  CHECK(d[0].name == "invalid-allocator-config");
  CHECK(d[0].severity == Severity::error);
  // The misspelling: an unsafe fix replacing just the key.
  REQUIRE(fix_safety_of(d[0]));
  CHECK(*fix_safety_of(d[0]) == FixSafety::unsafe);
  REQUIRE(edits_of(d[0]).size() == 1);
  CHECK(edits_of(d[0])[0].replacement == "expandable_segments");
  CHECK(src.substr(edits_of(d[0])[0].begin, edits_of(d[0])[0].end - edits_of(d[0])[0].begin) == "expandable_segment");
  // Out of range: no fix to guess.
  CHECK_FALSE(fix_safety_of(d[1]));
  CHECK(d[1].fixes.empty());
  // With unsafe fixes, the values become valid and the rule goes quiet on them.
  std::string all = fixed(src, true);
  CHECK(all.find("\"expandable_segments:True,max_split_size_mb:-1\"") != std::string::npos);
  CHECK(all.find("\"expandable_segments:True\")") != std::string::npos);
  CHECK(lint(all).size() == 1);
}

TEST_CASE("OOM303: duplicates and units: safe fixes", "[invalid_alloc_conf]") {
  std::string src = read_fixture("alloc_conf_invalid_duplicates.py");
  auto d = lint(src);
  REQUIRE(d.size() == 2);
  CHECK(d[0].severity == Severity::warning);
  CHECK(covered(src, d[0]) == "max_split_size_mb:128");
  CHECK(*fix_safety_of(d[0]) == FixSafety::safe);
  CHECK(covered(src, d[1]) == "max_split_size_mb:256MB");
  CHECK(*fix_safety_of(d[1]) == FixSafety::safe);
  CHECK(d[1].fixes[0].title == "Replace `256MB` with `256`");
}

TEST_CASE("OOM303: every way of setting the variable, names resolved through imports", "[invalid_alloc_conf]") {
  std::string src = read_fixture("alloc_conf_invalid_imports.py");
  CHECK(lines(src) == std::vector<std::string>{
                          "4:65: OOM303 'max_split_size_mb' is ignored under backend:cudaMallocAsync",
                          "5:44: OOM303 expandable_segments:True is ignored on ROCm before PyTorch 2.11 (it logs "
                          "'expandable_segments not supported on this platform')",
                          "6:36: OOM303 garbage_collection_threshold:1.5: must be a number between 0 and 1, exclusive",
                          "7:68: OOM303 roundup_power2_divisions: '300:2': the interval start must be a power of 2 (MiB) or '>'",
                          "9:44: OOM303 max_split_size_mb:10: must be an integer ≥ 20 (MiB)",
                      });
  auto d = lint(src);
  REQUIRE(d.size() == 5);
  // Across an escape: the diagnostic covers the escapes that make the value.
  CHECK(covered(src, d[4]) == "max_split_size_mb:\\x31\\x30");
  CHECK(d[0].severity == Severity::warning);
}

TEST_CASE("OOM303: valid settings and other variables are quiet", "[invalid_alloc_conf]") {
  CHECK(lint(read_fixture("alloc_conf_invalid_none.py")).empty());
  CHECK(lint("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = value\n").empty());  // not a literal
  CHECK(lint("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = f'expandable_segment:{x}'\n").empty());
  CHECK(lint("environ = {}\nenviron['PYTORCH_CUDA_ALLOC_CONF'] = 'bogus:1'\n").empty());  // not os.environ
  CHECK(lint("import os\nos.getenv('PYTORCH_CUDA_ALLOC_CONF', 'bogus:1')\n").empty());      // a read, not a write
}

TEST_CASE("OOM303: more assignment forms", "[invalid_alloc_conf]") {
  CHECK(lines("import os\nos.environ.update(PYTORCH_CUDA_ALLOC_CONF='expandable_segments:yes')\n") ==
        std::vector<std::string>{"2:44: OOM303 expandable_segments:yes: must be True or False"});
  CHECK(lines("from os import environ as E\nE.setdefault('PYTORCH_CUDA_ALLOC_CONF', 'expandable_segments:yes')\n").size() ==
        1);
  CHECK(lines("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = ('expandable_segments:yes')\n").size() == 1);
  // A character beyond ASCII before the option: the column counts code points.
  auto d = lint("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'é:1,expandable_segment:True'\n");
  REQUIRE(d.size() == 2);
  CHECK(d[0].message == "unknown option 'é'");
  CHECK(d[1].location.source->start.column == 46);
  CHECK(d[1].location.source->start.byte_column == 47);
}

TEST_CASE("OOM303: a fix across two concatenated literals is offered as advice, not an edit", "[invalid_alloc_conf]") {
  std::string src = "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_' 'segment:True'\n";
  auto d = lint(src);
  REQUIRE(d.size() == 1);
  CHECK(covered(src, d[0]) == "expandable_' 'segment");
  CHECK(edits_of(d[0]).empty());
  CHECK_FALSE(fix_safety_of(d[0]));
  REQUIRE(d[0].fixes.size() == 1);
  CHECK(d[0].fixes[0].safety == FixSafety::display_only);
}

TEST_CASE("OOM303: a file with syntax errors gets diagnostics, no edits", "[invalid_alloc_conf]") {
  auto d = lint("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segment:True'\ndef (:\n");
  REQUIRE(d.size() == 1);
  CHECK(edits_of(d[0]).empty());
}

TEST_CASE("OOM303: registered, with its doc page", "[invalid_alloc_conf]") {
  auto info = find_rule("invalid-allocator-config");
  REQUIRE(info);
  CHECK(info->code == "OOM303");
  auto doc = rule_doc("OOM303");
  REQUIRE(doc);
  CHECK(doc->find("# OOM303 invalid-allocator-config") != std::string_view::npos);
}

// --- OOM303 on shell scripts, .env files and launch.json (rules/source/config_lint.hpp)

namespace {

std::string read_config(const std::string& name) { return oomlens::testing::read_config_fixture(name); }

std::vector<std::string> config_lines(ConfigFileKind kind, std::string_view text) {
  std::vector<std::string> out;
  for (const auto& d : lint_config_file(kind, text))
    out.push_back(fmt::format("{}:{}: {} {}", d.location.source->start.line, d.location.source->start.column, d.code, d.message));
  return out;
}

}  // namespace

TEST_CASE("OOM303 config: which files are configuration files", "[invalid_alloc_conf]") {
  CHECK(config_file_kind("run/train.sh") == ConfigFileKind::shell);
  CHECK(config_file_kind("launch.bash") == ConfigFileKind::shell);
  CHECK(config_file_kind(".env") == ConfigFileKind::dotenv);
  CHECK(config_file_kind("/p/cluster.env") == ConfigFileKind::dotenv);
  CHECK(config_file_kind("/p/.vscode/launch.json") == ConfigFileKind::launch_json);
  CHECK(config_file_kind(".vscode/launch.json") == ConfigFileKind::launch_json);
  CHECK_FALSE(config_file_kind("launch.json"));
  CHECK_FALSE(config_file_kind("/p/conf/launch.json"));
  CHECK_FALSE(config_file_kind("train.py"));
  CHECK_FALSE(config_file_kind(".env.local"));
}

TEST_CASE("OOM303 config: a shell script", "[invalid_alloc_conf]") {
  std::string t = read_config("train.sh");
  CHECK(config_lines(ConfigFileKind::shell, t) ==
        std::vector<std::string>{
            "5:33: OOM303 expandable_segments:true: must be True or False (case-sensitive)",
            "6:70: OOM303 'garbage_collection_threshold' is ignored under backend:cudaMallocAsync",
            "8:29: OOM303 unknown option 'max_split_size' (did you mean 'max_split_size_mb'?)",
        });
  auto d = lint_config_file(ConfigFileKind::shell, t);
  REQUIRE(d.size() == 3);
  CHECK(covered(t, d[0]) == "expandable_segments:true");
  CHECK(covered(t, d[1]) == "garbage_collection_threshold:0.6");
  // Unsafe fixes only: `--fix` leaves the file alone; with unsafe fixes the values become valid.
  CHECK(fix_edits(d).empty());
  std::string all = apply_edits(t, fix_edits(d, true));
  CHECK(all.find("export PYTORCH_CUDA_ALLOC_CONF=\"expandable_segments:True,max_split_size_mb:512\"") != std::string::npos);
  CHECK(all.find("env PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 python eval.py") != std::string::npos);
  CHECK(lint_config_file(ConfigFileKind::shell, all).size() == 1);  // the ignored option has no fix
}

TEST_CASE("OOM303 config: a .env file", "[invalid_alloc_conf]") {
  std::string t = read_config("cluster.env");
  CHECK(config_lines(ConfigFileKind::dotenv, t) ==
        std::vector<std::string>{
            "3:50: OOM303 max_split_size_mb:19: must be an integer ≥ 20 (MiB)",
            "4:32: OOM303 expandable_segments:True is ignored on ROCm before PyTorch 2.11 (it logs "
            "'expandable_segments not supported on this platform')",
        });
}

TEST_CASE("OOM303 config: launch.json env blocks", "[invalid_alloc_conf]") {
  std::string t = read_config(".vscode/launch.json");
  CHECK(config_lines(ConfigFileKind::launch_json, t) ==
        std::vector<std::string>{
            "11:62: OOM303 unknown option 'roundup_power2_divisons' (did you mean 'roundup_power2_divisions'?)",
        });
  auto d = lint_config_file(ConfigFileKind::launch_json, t);
  REQUIRE(d.size() == 1);
  REQUIRE(edits_of(d[0]).size() == 1);
  CHECK(edits_of(d[0])[0].replacement == "roundup_power2_divisions");
  CHECK(covered(t, d[0]) == "roundup_power2_divisons");
  // Broken JSON: nothing, never a crash.
  CHECK(lint_config_file(ConfigFileKind::launch_json, "{\"configurations\": [{\"env\": {\"PYTORCH_CUDA_ALLOC_CONF\": ").empty());
}

TEST_CASE("OOM303 config: quoting is followed to the exact characters", "[invalid_alloc_conf]") {
  // A fix that would cross a quote boundary is advice only.
  std::string_view t = "export PYTORCH_CUDA_ALLOC_CONF=expandable_'segment':True\n";
  auto d = lint_config_file(ConfigFileKind::shell, t);
  REQUIRE(d.size() == 1);
  CHECK(covered(t, d[0]) == "expandable_'segment");  // the key's characters, up to the closing quote
  CHECK(edits_of(d[0]).empty());
  // An expansion is not a constant: not checked.
  CHECK(lint_config_file(ConfigFileKind::shell, "export PYTORCH_CUDA_ALLOC_CONF=\"$X,bogus:1\"\n").empty());
  // Other variables are not read.
  CHECK(lint_config_file(ConfigFileKind::dotenv, "OTHER=bogus:1\n").empty());
  // Columns count code points, for several diagnostics on one line.
  auto cols = lint_config_file(ConfigFileKind::shell, "export PYTORCH_CUDA_ALLOC_CONF='é:1,ü:2' PYTORCH_ALLOC_CONF='z:1'\n");
  REQUIRE(cols.size() == 3);
  CHECK(cols[0].location.source->start.column == 33);
  CHECK(cols[1].location.source->start.column == 37);
  CHECK(cols[1].location.source->start.byte_column == 38);
  CHECK(cols[2].location.source->start.column == 62);
  CHECK(cols[2].location.source->start.byte_column == 64);
}

// --- "Set the allocator configuration" on configuration files: set_alloc_conf_in_config

namespace {

std::optional<std::string> set_option(ConfigFileKind kind, std::string_view text,
                                      std::string_view option = "expandable_segments:True") {
  auto action = set_alloc_conf_in_config(kind, text, option);
  if (!action) return std::nullopt;
  CHECK(action->safety == FixSafety::unsafe);
  CHECK(action->title == fmt::format("Set the allocator configuration: {}", option));
  return apply_edits(text, action->edits);
}

void check_set_fixture(ConfigFileKind kind, const std::string& name, const std::string& expected) {
  INFO(name);
  std::string before = read_config("set_alloc_conf/" + name);
  auto once = set_option(kind, before);
  REQUIRE(once);
  CHECK(*once == read_config("set_alloc_conf/" + expected));
  CHECK_FALSE(set_option(kind, *once));  // idempotent: nothing left to do
  CHECK(lint_config_file(kind, *once).empty());
}

}  // namespace

TEST_CASE("set allocator config: fixtures give their expected files, and a second time nothing",
          "[invalid_alloc_conf]") {
  check_set_fixture(ConfigFileKind::shell, "train.sh", "train.set.sh");
  check_set_fixture(ConfigFileKind::shell, "train_with_export.sh", "train_with_export.set.sh");
  check_set_fixture(ConfigFileKind::dotenv, "job.env", "job.set.env");
  check_set_fixture(ConfigFileKind::launch_json, "launch.json", "launch.set.json");
}

TEST_CASE("set allocator config: shell scripts", "[invalid_alloc_conf]") {
  // Before the first launching line, CRLF kept.
  CHECK(set_option(ConfigFileKind::shell, "echo start\r\npython train.py\r\n") ==
        "echo start\r\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\r\npython train.py\r\n");
  // A value already holding the option: nothing to do.
  CHECK_FALSE(set_option(ConfigFileKind::shell, "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\npython t.py\n"));
  // A different value of the same key is replaced in place, quoting kept.
  CHECK(set_option(ConfigFileKind::shell, "export PYTORCH_ALLOC_CONF='expandable_segments:False'\ntorchrun t.py\n") ==
        "export PYTORCH_ALLOC_CONF='expandable_segments:True'\ntorchrun t.py\n");
  // Through `env`.
  CHECK(set_option(ConfigFileKind::shell, "env PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:64 deepspeed t.py\n") ==
        "env PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:64,expandable_segments:True deepspeed t.py\n");
  // Nothing launches training: no action.
  CHECK_FALSE(set_option(ConfigFileKind::shell, "echo hello\nls\n"));
  // An expansion cannot be merged: no action rather than a second, conflicting export.
  CHECK_FALSE(set_option(ConfigFileKind::shell, "export PYTORCH_CUDA_ALLOC_CONF=\"$BASE\"\npython t.py\n"));
  // A set after the launch does not reach it: the export goes before it.
  CHECK(set_option(ConfigFileKind::shell, "python t.py\nexport PYTORCH_CUDA_ALLOC_CONF=x:1\n") ==
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\npython t.py\nexport PYTORCH_CUDA_ALLOC_CONF=x:1\n");
  // An option with characters the shell reads is quoted.
  CHECK(set_option(ConfigFileKind::shell, "python t.py\n", "roundup_power2_divisions:[256:1,>:2]") ==
        "export PYTORCH_CUDA_ALLOC_CONF='roundup_power2_divisions:[256:1,>:2]'\npython t.py\n");
  CHECK(set_option(ConfigFileKind::shell, "export PYTORCH_CUDA_ALLOC_CONF=a:1\npython t.py\n",
                   "roundup_power2_divisions:[>:2]") ==
        "export PYTORCH_CUDA_ALLOC_CONF='a:1,roundup_power2_divisions:[>:2]'\npython t.py\n");
  // Not a key:value option.
  CHECK_FALSE(set_alloc_conf_in_config(ConfigFileKind::shell, "python t.py\n", "expandable_segments"));
  // The export goes before the logical line: not after a `\` continuation, not inside a quoted string.
  CHECK(set_option(ConfigFileKind::shell, "echo a \\\n  b; python t.py\n") ==
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\necho a \\\n  b; python t.py\n");
  CHECK(set_option(ConfigFileKind::shell, "echo \"a\nb\"; python t.py\n") ==
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\necho \"a\nb\"; python t.py\n");
}

TEST_CASE("set allocator config: .env and launch.json details", "[invalid_alloc_conf]") {
  CHECK(set_option(ConfigFileKind::dotenv, "A=1") == "A=1\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
  CHECK(set_option(ConfigFileKind::dotenv, "") == "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
  CHECK(set_option(ConfigFileKind::dotenv, "PYTORCH_CUDA_ALLOC_CONF=\"max_split_size_mb:128\" # tuned\n") ==
        "PYTORCH_CUDA_ALLOC_CONF=\"max_split_size_mb:128,expandable_segments:True\" # tuned\n");
  // An empty quoted value is rewritten inside its quotes.
  CHECK(set_option(ConfigFileKind::dotenv, "PYTORCH_ALLOC_CONF=''\n") == "PYTORCH_ALLOC_CONF='expandable_segments:True'\n");
  CHECK(set_option(ConfigFileKind::launch_json, "{\"configurations\": [{\"type\": \"python\", \"env\": {}}]}") ==
        "{\"configurations\": [{\"type\": \"python\", \"env\": {\"PYTORCH_CUDA_ALLOC_CONF\": \"expandable_segments:True\"}}]}");
  CHECK(set_option(ConfigFileKind::launch_json, "{\"configurations\": [{\"type\": \"python\"}]}") ==
        "{\"configurations\": [{\"env\": {\"PYTORCH_CUDA_ALLOC_CONF\": \"expandable_segments:True\"}, \"type\": \"python\"}]}");
  CHECK(set_option(ConfigFileKind::launch_json, "{\"configurations\": [{}]}") == std::nullopt);  // no type: not python
  CHECK_FALSE(set_option(ConfigFileKind::launch_json, "{\"configurations\": [{\"type\": \"python\""));
  CHECK_FALSE(set_option(ConfigFileKind::launch_json,
                         "{\"configurations\": [{\"type\": \"python\", \"env\": {\"PYTORCH_CUDA_ALLOC_CONF\": \"${env:X}\"}}]}"));
}

TEST_CASE("OOM303: env mappings for child processes and runtime settings", "[invalid_alloc_conf]") {
  CHECK(lines("import os, subprocess\nsubprocess.run(cmd, env={**os.environ, 'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segment:True'})\n") ==
        std::vector<std::string>{
            "2:68: OOM303 unknown option 'expandable_segment' (did you mean 'expandable_segments'?)"});
  CHECK(lines("import os\nenv = dict(os.environ, PYTORCH_ALLOC_CONF='max_split_size_mb:8')\n") ==
        std::vector<std::string>{"2:44: OOM303 max_split_size_mb:8: must be an integer ≥ 20 (MiB)"});
  // The runtime entry point runs the same parser.
  CHECK(lines("import torch\ntorch.cuda.memory._set_allocator_settings('expandable_segments:true')\n") ==
        std::vector<std::string>{
            "2:44: OOM303 expandable_segments:true: must be True or False (case-sensitive)"});
  // Each assignment once, whichever way it is written.
  CHECK(lint("import os\nos.environ.update({'PYTORCH_CUDA_ALLOC_CONF': 'bogus:1'})\n").size() == 1);
  CHECK(lint("import os\nos.environ |= {'PYTORCH_CUDA_ALLOC_CONF': 'bogus:1'}\n").size() == 1);
  // Dict displays count only with an allocator variable as the key.
  CHECK(lint("import os\nconfig = {'batch': 'bogus:1'}\n").empty());
}

TEST_CASE("OOM303: expandable segments under a Windows-only condition are reported; elsewhere not",
          "[invalid_alloc_conf]") {
  auto windows = [](const std::string& condition) {
    std::string src = "import os, sys, platform\nif " + condition +
                      ":\n    os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\nimport torch\n";
    return lint(src).size();
  };
  CHECK(windows("sys.platform == 'win32'") == 1);
  CHECK(windows("sys.platform.startswith(\"win\")") == 1);
  CHECK(windows("os.name == \"nt\"") == 1);
  CHECK(windows("platform.system() == 'Windows'") == 1);
  CHECK(windows("sys.platform != 'win32'") == 0);
  CHECK(windows("sys.platform == 'linux'") == 0);
  CHECK(windows("os.name == 'nt' and fast") == 0);  // not known to hold only there
  auto d = lint("import os, sys\nif sys.platform == 'win32':\n    pass\nelse:\n"
                "    os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n");
  CHECK(d.empty());  // the else branch runs everywhere but Windows
  d = lint("import os, sys\nif sys.platform == 'win32':\n    os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].severity == Severity::warning);
  CHECK(d[0].message.find("Windows") != std::string::npos);
}

TEST_CASE("OOM303: a launch configuration's Windows-only env block is judged for Windows", "[invalid_alloc_conf]") {
  const std::string text =
      "{\n  // Train\n  \"configurations\": [{\n    \"type\": \"debugpy\", \"program\": \"train.py\",\n"
      "    \"env\": {\"PYTORCH_CUDA_ALLOC_CONF\": \"expandable_segments:True\"},\n"
      "    \"windows\": {\"env\": {\"PYTORCH_CUDA_ALLOC_CONF\": \"expandable_segments:True\"}},\n  }],\n}\n";
  auto d = lint_config_file(ConfigFileKind::launch_json, text);
  REQUIRE(d.size() == 1);  // the Windows block only: the same value elsewhere is fine
  CHECK(d[0].location.source->start.line == 6);
  CHECK(d[0].message.find("Windows") != std::string::npos);
  // The set-allocator action does not write into the Windows block.
  CHECK_FALSE(set_alloc_conf_in_config(ConfigFileKind::launch_json, text, "expandable_segments:True"));
}
