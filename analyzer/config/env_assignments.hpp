// Environment-variable assignments in the files that launch a training run
// besides the script itself: shell scripts, .env files and VS Code launch
// configurations. Facts only: each value with its quoting removed and every
// value byte mapped back to the source bytes it came from (the same map as a
// Python string literal), so a rule can point at one option of a value.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/python/strings.hpp"

namespace oomlens::analyzer::config {

enum class AssignmentForm {
  plain,           // X=v alone (a shell variable; .env lines are plain too)
  exported,        // export X=v, declare -x X=v, .env `export X=v`
  command_prefix,  // X=v python train.py
  env_command,     // env X=v torchrun ...
  json,            // "X": "v" in a launch.json env object
  dockerfile_env,  // ENV X=v / ENV X v in a Dockerfile
  sbatch_export,   // #SBATCH --export=ALL,X=v in a SLURM batch script
  yaml,            // a Kubernetes `env:` entry or a Compose `environment:` entry
};

struct EnvAssignment {
  std::string name;
  // The value, unquoted; range: the value as written (quotes included);
  // pieces: value byte -> source bytes.
  python::StringLiteral value;
  // False when the value holds an expansion ($X, ${X}, `cmd`): not a constant.
  bool constant = true;
  std::size_t name_begin = 0;       // source byte of the name
  std::size_t statement_begin = 0;  // the start of its command / line / JSON member
  AssignmentForm form = AssignmentForm::plain;
  // launch.json: from a configuration's "windows": {"env": ...} block, which
  // VS Code applies on Windows only.
  bool windows_only = false;
};

// Shell (POSIX sh / bash): assignments before a command or alone, after
// `export`, `declare`/`typeset`/`local`/`readonly` and `env`; comments,
// quoting, backslash escapes, line continuations and here-documents are
// understood. Assignments inside $(...), functions' bodies and control
// structures are found too (they are commands like any other).
std::vector<EnvAssignment> shell_assignments(std::string_view text);

// One command of a shell script that starts a program, for inserting before it.
struct ShellCommand {
  std::size_t begin = 0;  // the first byte of the command's first word (prefix assignments included)
  // The start of its logical line: after the last newline that ends a
  // command (not one inside quotes, after a `\`, or in a here-document).
  std::size_t line_begin = 0;
  std::string program;    // the first word that is not an assignment: "python", "torchrun", "env"
  std::vector<std::string> words;  // the decoded words after the prefix assignments
};
std::vector<ShellCommand> shell_commands(std::string_view text);

// .env files (python-dotenv / docker compose): `X=v`, `export X=v`, `X = v`;
// single quotes literal, double quotes with backslash escapes, `#` comments
// (after whitespace in an unquoted value).
std::vector<EnvAssignment> dotenv_assignments(std::string_view text);

// A VS Code launch.json (JSON with comments and trailing commas): the
// configurations and their `env` objects.
struct LaunchConfiguration {
  std::size_t begin = 0, end = 0;  // the object, braces included
  std::string type;                // "python", "debugpy", ... ("" when absent)
  std::string name;
  std::optional<std::pair<std::size_t, std::size_t>> env;  // the env object, braces included
  // Where the first member's key starts, in the configuration and in its env
  // object (nothing for an empty object): where new members go.
  std::optional<std::size_t> first_member;
  std::optional<std::size_t> env_first_member;
  std::vector<EnvAssignment> env_entries;                  // its string members
  std::vector<EnvAssignment> windows_env_entries;          // those of "windows": {"env": {...}}
};
struct LaunchFile {
  bool valid = false;  // parsed as JSONC with a `configurations` array
  std::vector<LaunchConfiguration> configurations;
};
LaunchFile parse_launch_json(std::string_view text);
// Every env entry of every configuration, the Windows-only ones included.
std::vector<EnvAssignment> launch_json_assignments(std::string_view text);

// SLURM batch scripts: the `#SBATCH --export=...` options of the header
// (the comment lines before the first command, where sbatch reads them).
// `NAME=value` items only; a value holding commas is either quoted or
// continued by the items after it that are not `NAME` / `NAME=...` (sbatch
// itself splits at every comma, so such a value is already a mistake the
// rules see whole). The shell assignments of the body come from
// shell_assignments().
std::vector<EnvAssignment> sbatch_export_assignments(std::string_view text);

// Dockerfiles: `ENV K=V [K2=V2...]` and the legacy `ENV K V` form, with the
// builder's quoting ('...' literal, "..." and unquoted with `\` escapes),
// line continuations, comment lines inside them and the `# escape=` directive.
// $VAR / ${VAR} make a value non-constant.
std::vector<EnvAssignment> dockerfile_env_assignments(std::string_view text);

// One instruction of a Dockerfile: its keyword (upper-cased) and where its
// line starts, for inserting an instruction before it.
struct DockerInstruction {
  std::string keyword;
  std::size_t line_begin = 0;
};
std::vector<DockerInstruction> dockerfile_instructions(std::string_view text);

// YAML files that set a container's environment: Kubernetes `env:` lists
// (`- name: X` / `value: v`) and Compose `environment:` maps (`X: v`) and
// lists (`- X=v`). A line-oriented reader of those block shapes only (no
// YAML library is in the dependency set): flow collections, anchors, block
// scalars and multi-line scalars are not read. Plain, '...' and "..." scalars
// on one line. Linear in the input, no recursion.
std::vector<EnvAssignment> yaml_env_assignments(std::string_view text);

}  // namespace oomlens::analyzer::config
