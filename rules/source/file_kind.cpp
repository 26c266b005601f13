#include "rules/source/file_kind.hpp"

#include <cctype>
#include <string>

namespace oomlens::rules {
namespace {

std::string_view first_line(std::string_view text) {
  auto nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// The interpreter a shebang names: `#!/bin/bash -e` -> bash,
// `#!/usr/bin/env -S python3 -u` -> python3.
std::string_view interpreter(std::string_view line) {
  if (!line.starts_with("#!")) return {};
  line.remove_prefix(2);
  auto next_word = [&line]() {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    auto end = line.find_first_of(" \t");
    std::string_view w = line.substr(0, end);
    line.remove_prefix(w.size());
    return w;
  };
  std::string_view program = next_word();
  auto slash = program.find_last_of('/');
  if (slash != std::string_view::npos) program.remove_prefix(slash + 1);
  if (program == "env") {
    program = next_word();
    while (program.starts_with("-")) program = next_word();  // env -S, env -i
  }
  return program;
}

bool shell_name(std::string_view p) { return p == "sh" || p == "bash" || p == "dash" || p == "zsh" || p == "ksh"; }

// The first line that is neither blank nor a comment looks like YAML: `---`,
// or `key:` / `key: value` with a plain key (no Python statement ends so).
bool looks_like_yaml(std::string_view text) {
  std::size_t i = 0;
  for (int seen = 0; i < text.size() && seen < 64; ++seen) {
    auto nl = text.find('\n', i);
    std::string_view line = text.substr(i, nl == std::string_view::npos ? std::string_view::npos : nl - i);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    i = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.empty() || line.front() == '#') continue;
    if (line == "---") return true;
    std::size_t k = 0;
    while (k < line.size() && (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_' || line[k] == '-'))
      ++k;
    return k > 0 && k < line.size() && line[k] == ':' && (k + 1 == line.size() || line[k + 1] == ' ');
  }
  return false;
}

// #SBATCH lines before the first command: a batch script without a shebang.
bool sbatch_header(std::string_view text) {
  std::size_t i = 0;
  for (int seen = 0; i < text.size() && seen < 64; ++seen) {
    auto nl = text.find('\n', i);
    std::string_view line = text.substr(i, nl == std::string_view::npos ? std::string_view::npos : nl - i);
    i = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.starts_with("#SBATCH")) return true;
    if (!line.empty() && line.front() != '#' && line != "\r") return false;
  }
  return false;
}

}  // namespace

LintFileKind lint_file_kind_by_name(std::string_view path) {
  if (auto config = config_file_kind(path)) return {LintKind::config, config};
  if (path.ends_with(".py") || path.ends_with(".pyw")) return {LintKind::python, std::nullopt};
  if (path.ends_with(".ipynb")) return {LintKind::notebook, std::nullopt};
  return {};
}

LintFileKind lint_file_kind(std::string_view path, std::string_view head) {
  auto by_name = lint_file_kind_by_name(path);
  if (by_name.kind != LintKind::other) return by_name;
  std::string_view program = interpreter(first_line(head));
  if (shell_name(program) || sbatch_header(head)) return {LintKind::config, ConfigFileKind::shell};
  if (program.starts_with("python")) return {LintKind::python, std::nullopt};
  if (looks_like_yaml(head)) return {LintKind::config, ConfigFileKind::yaml};
  return {};
}

}  // namespace oomlens::rules
