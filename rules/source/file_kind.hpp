// What kind of file `oomlens lint` is looking at, from its name and, where the
// name does not say, its first line (a shebang) and first lines (YAML, a
// SLURM header). A file of no kind oomlens reads is never parsed as Python:
// the front end says so instead.
#pragma once

#include <optional>
#include <string_view>

#include "rules/source/config_lint.hpp"

namespace oomlens::rules {

enum class LintKind {
  python,    // a script: *.py, *.pyw, or a python shebang
  config,    // a file that sets the allocator variables (config_file_kind)
  notebook,  // *.ipynb
  other,     // none of these: not read
};

struct LintFileKind {
  LintKind kind = LintKind::other;
  std::optional<ConfigFileKind> config;  // with LintKind::config
};

// By name only (a directory walk, which reads no file to decide).
LintFileKind lint_file_kind_by_name(std::string_view path);

// By name, then by content: a shebang naming a shell (sh, bash, dash, zsh,
// ksh) or python; `#SBATCH` lines in the header (shell); a first line that is
// `---` or a `key:` mapping (YAML). `head` is the file's beginning (any
// length; only the first lines are looked at).
LintFileKind lint_file_kind(std::string_view path, std::string_view head);

// The kinds `oomlens lint` reads, for the note on a file of another kind.
inline constexpr std::string_view kReadableKinds =
    "Python scripts (.py), notebooks (.ipynb), shell and SLURM scripts (.sh, .bash, .sbatch, .slurm, or a shell "
    "shebang), .env files, .vscode/launch.json, Dockerfiles and Kubernetes/Compose YAML (.yaml, .yml)";

}  // namespace oomlens::rules
