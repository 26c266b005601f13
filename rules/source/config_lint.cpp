#include "rules/source/config_lint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "analyzer/config/env_assignments.hpp"

namespace oomlens::rules {

namespace cfg = analyzer::config;
using analyzer::python::Point;

namespace {

// Line starts of a file, for the points diagnostics print.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(static_cast<std::uint32_t>(i + 1));
  }
  Point point(std::uint32_t byte) const {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), byte);
    std::uint32_t line = static_cast<std::uint32_t>(it - starts_.begin());
    std::uint32_t start = starts_[line - 1];
    // Counting resumes from the previous point on the same line: many
    // diagnostics on one long line (a huge value) stay linear.
    std::uint32_t from = start, column = 1;
    if (last_line_ == line && last_byte_ <= byte) from = last_byte_, column = last_column_;
    for (std::uint32_t i = from; i < byte && i < text_.size(); ++i)
      if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++column;  // count code points
    last_line_ = line, last_byte_ = byte, last_column_ = column;
    return {line, column, byte - start + 1};
  }

 private:
  std::string_view text_;
  std::vector<std::uint32_t> starts_;
  mutable std::uint32_t last_line_ = 0, last_byte_ = 0, last_column_ = 1;
};

std::string_view file_name(std::string_view path) {
  auto slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool ends_with_lower(std::string_view name, std::string_view suffix) {
  if (name.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(name[name.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

// A shell script's assignments: its commands', then a SLURM header's.
std::vector<cfg::EnvAssignment> shell_and_sbatch_assignments(std::string_view text) {
  auto out = cfg::shell_assignments(text);
  auto header = cfg::sbatch_export_assignments(text);
  out.insert(out.end(), std::make_move_iterator(header.begin()), std::make_move_iterator(header.end()));
  return out;
}

std::vector<cfg::EnvAssignment> config_assignments(ConfigFileKind kind, std::string_view text) {
  switch (kind) {
    case ConfigFileKind::shell: return shell_and_sbatch_assignments(text);
    case ConfigFileKind::dotenv: return cfg::dotenv_assignments(text);
    case ConfigFileKind::launch_json: return cfg::launch_json_assignments(text);
    case ConfigFileKind::dockerfile: return cfg::dockerfile_env_assignments(text);
    case ConfigFileKind::yaml: return cfg::yaml_env_assignments(text);
  }
  return {};
}

}  // namespace

std::optional<ConfigFileKind> config_file_kind(std::string_view path) {
  std::string_view name = file_name(path);
  if (name.ends_with(".sh") || name.ends_with(".bash") || name.ends_with(".sbatch") || name.ends_with(".slurm"))
    return ConfigFileKind::shell;
  if (name == "Dockerfile" || name.starts_with("Dockerfile.") || name == "Containerfile" ||
      name.starts_with("Containerfile.") || ends_with_lower(name, ".dockerfile"))
    return ConfigFileKind::dockerfile;
  if (name.ends_with(".yaml") || name.ends_with(".yml")) return ConfigFileKind::yaml;
  if (name.ends_with(".env")) return ConfigFileKind::dotenv;  // .env, train.env
  // DeepSpeed's multi-node launcher exports every NAME=VALUE line of
  // .deepspeed_env (in the working directory or the home directory, or the
  // file DS_ENV_FILE names) to each node; the launcher reads no other settings file.
  if (name == ".deepspeed_env") return ConfigFileKind::dotenv;
  if (name == "launch.json" && name.size() < path.size()) {
    std::string_view dir = path.substr(0, path.size() - name.size() - 1);
    if (file_name(dir) == ".vscode") return ConfigFileKind::launch_json;
  }
  return std::nullopt;
}

std::vector<Diagnosis> lint_config_file(ConfigFileKind kind, std::string_view text) {
  std::vector<Diagnosis> out;
  LineIndex lines(text);
  auto point = [&lines](std::uint32_t b) { return lines.point(b); };
  for (const auto& a : config_assignments(kind, text))
    if (a.constant && analyzer::is_alloc_conf_variable(a.name)) {
      analyzer::AllocConfContext context;
      if (a.windows_only) context.platform = analyzer::ConfPlatform::windows;
      source::check_alloc_conf_value(a.name, a.value, point, true, context, out);
    }
  sort_in_source_order(out);
  return out;
}

}  // namespace oomlens::rules

// --- "Set the allocator configuration" for configuration files

namespace oomlens::rules {
namespace {

constexpr std::string_view kVariable = "PYTORCH_CUDA_ALLOC_CONF";

std::string_view eol_of(std::string_view text) {
  auto nl = text.find('\n');
  return nl != std::string_view::npos && nl > 0 && text[nl - 1] == '\r' ? "\r\n" : "\n";
}

// Characters that mean the same in any quoting context (shell, JSON, .env).
bool plain(std::string_view s) {
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("_:,.-").find(c) == std::string_view::npos)
      return false;
  return true;
}

// The smallest edit of the literal's source turning its value into `next`,
// when the changed characters come from plain source text.
std::optional<TextEdit> literal_edit(const analyzer::python::StringLiteral& lit, std::string_view next) {
  std::string_view old = lit.value;
  if (old.empty()) return std::nullopt;
  std::size_t p = 0;
  while (p < old.size() && p < next.size() && old[p] == next[p]) ++p;
  std::size_t s = 0;
  while (s < old.size() - p && s < next.size() - p && old[old.size() - 1 - s] == next[next.size() - 1 - s]) ++s;
  std::size_t b = p, e = old.size() - s;
  std::string_view insert = next.substr(p, next.size() - s - p);
  if (!plain(insert)) return std::nullopt;
  const analyzer::python::StringLiteral::Piece* prev = nullptr;
  for (const auto& piece : lit.pieces) {
    std::size_t pb = piece.value_begin, pe = pb + piece.value_size;
    bool touches = pb < e ? pe > b : (pb == b && b == e);
    bool splits = !piece.verbatim && ((pb < b && b < pe) || (pb < e && e < pe));
    if (splits) return std::nullopt;  // never cut an escape in two
    if (!touches) continue;
    if (prev && prev->source.end != piece.source.begin) return std::nullopt;
    prev = &piece;
  }
  auto r = lit.source_range(b, e);
  return TextEdit{r.begin, r.end, std::string(insert)};
}

std::string shell_quoted(std::string_view v) {
  if (plain(v)) return std::string(v);
  return fmt::format("'{}'", v);
}

std::string_view basename(std::string_view w) {
  auto slash = w.find_last_of('/');
  return slash == std::string_view::npos ? w : w.substr(slash + 1);
}

bool launcher(std::string_view word) {
  auto b = basename(word);
  return b.starts_with("python") || b == "torchrun" || b == "accelerate" || b == "deepspeed";
}

bool launches(const analyzer::config::ShellCommand& c) {
  if (launcher(c.program)) return true;
  auto p = basename(c.program);
  if (p != "env" && p != "nohup" && p != "exec" && p != "srun" && p != "time") return false;
  for (const auto& w : c.words)
    if (!w.empty() && w[0] != '-' && w.find('=') == std::string::npos) return launcher(w);
  return false;
}

std::size_t line_begin(std::string_view t, std::size_t at) {
  while (at > 0 && t[at - 1] != '\n') --at;
  return at;
}

std::string_view indentation(std::string_view t, std::size_t at) {
  std::size_t b = line_begin(t, at), e = b;
  while (e < t.size() && (t[e] == ' ' || t[e] == '\t')) ++e;
  return t.substr(b, e - b);
}

// Merges into one assignment: true when it is covered (already or by the edit).
bool merge_into(std::string_view t, const analyzer::config::EnvAssignment& a, std::string_view option,
                ConfigFileKind kind, std::vector<TextEdit>& edits) {
  std::string next = analyzer::merge_alloc_conf(a.value.value, option);
  if (next == a.value.value) return true;
  if (auto e = literal_edit(a.value, next)) {
    edits.push_back(*e);
    return true;
  }
  // Rewrite the whole value, in the quotes it had (JSON strings always have them).
  auto r = a.value.range;
  char quote = r.end > r.begin ? t[r.begin] : '\0';
  if (kind == ConfigFileKind::launch_json) quote = '"';
  // YAML and Dockerfile quoting differ from the shell's: only the edit above.
  if (kind == ConfigFileKind::yaml || kind == ConfigFileKind::dockerfile) return false;
  if (next.find_first_of("\"'\\$`") != std::string::npos) return false;
  std::string text = quote == '"' || quote == '\'' ? fmt::format("{}{}{}", quote, next, quote) : shell_quoted(next);
  edits.push_back({r.begin, r.end, text});
  return true;
}

std::optional<Fix> finish(std::vector<TextEdit> edits, std::string_view option) {
  if (edits.empty()) return std::nullopt;
  std::sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) { return a.begin < b.begin; });
  return edit_fix(fmt::format("Set the allocator configuration: {}", option), FixSafety::unsafe, std::move(edits));
}

std::optional<Fix> in_shell(std::string_view t, std::string_view option) {
  auto commands = analyzer::config::shell_commands(t);
  const analyzer::config::ShellCommand* first = nullptr;
  std::vector<std::size_t> launch_begins;
  for (const auto& c : commands)
    if (launches(c)) {
      if (!first) first = &c;
      launch_begins.push_back(c.begin);
    }
  if (!first) return std::nullopt;
  std::vector<TextEdit> edits;
  bool covered = false, blocked = false;
  for (const auto& a : shell_and_sbatch_assignments(t)) {
    if (!analyzer::is_alloc_conf_variable(a.name)) continue;
    bool prefix = a.form == analyzer::config::AssignmentForm::command_prefix ||
                  a.form == analyzer::config::AssignmentForm::env_command;
    bool on_launch = prefix && std::find(launch_begins.begin(), launch_begins.end(), a.statement_begin) != launch_begins.end();
    bool before = !prefix && a.statement_begin < first->begin;
    if (!on_launch && !before) continue;
    bool covers_first = before || a.statement_begin == first->begin;
    if (!a.constant || !merge_into(t, a, option, ConfigFileKind::shell, edits)) {
      blocked = blocked || covers_first;
      continue;
    }
    covered = covered || covers_first;
  }
  if (!covered && !blocked) {
    std::size_t at = first->line_begin;
    edits.push_back({at, at,
                     fmt::format("{}export {}={}{}", indentation(t, at), kVariable, shell_quoted(option),
                                 eol_of(t))});
  }
  return finish(std::move(edits), option);
}

// Merges into every constant assignment; true when one covers the option.
bool merge_all(std::string_view t, const std::vector<analyzer::config::EnvAssignment>& assignments,
               std::string_view option, ConfigFileKind kind, std::vector<TextEdit>& edits, bool& blocked) {
  bool covered = false;
  for (const auto& a : assignments) {
    if (!analyzer::is_alloc_conf_variable(a.name)) continue;
    if (a.constant && merge_into(t, a, option, kind, edits)) covered = true;
    else blocked = true;
  }
  return covered;
}

// `line` added at the end of the file, after a line end of its own if the
// last line has none, in the file's line-end style.
TextEdit append_line(std::string_view t, std::string_view line) {
  std::string_view before = !t.empty() && t.back() != '\n' ? eol_of(t) : "";
  return {t.size(), t.size(), fmt::format("{}{}{}", before, line, eol_of(t))};
}

std::optional<Fix> in_dotenv(std::string_view t, std::string_view option) {
  std::vector<TextEdit> edits;
  bool blocked = false;
  bool covered = merge_all(t, analyzer::config::dotenv_assignments(t), option, ConfigFileKind::dotenv, edits, blocked);
  if (!covered && !blocked) edits.push_back(append_line(t, fmt::format("{}={}", kVariable, option)));
  return finish(std::move(edits), option);
}

std::optional<Fix> in_dockerfile(std::string_view t, std::string_view option) {
  std::vector<TextEdit> edits;
  bool blocked = false;
  if (merge_all(t, analyzer::config::dockerfile_env_assignments(t), option, ConfigFileKind::dockerfile, edits,
                blocked) ||
      blocked)
    return finish(std::move(edits), option);
  // Before the first CMD/ENTRYPOINT of the last stage: the image that runs.
  std::optional<std::size_t> at;
  for (const auto& i : analyzer::config::dockerfile_instructions(t)) {
    if (i.keyword == "FROM") at.reset();
    else if (!at && (i.keyword == "CMD" || i.keyword == "ENTRYPOINT")) at = i.line_begin;
  }
  std::string line = fmt::format("ENV {}={}", kVariable, option);
  edits.push_back(at ? TextEdit{*at, *at, fmt::format("{}{}", line, eol_of(t))} : append_line(t, line));
  return finish(std::move(edits), option);
}

std::optional<Fix> in_yaml(std::string_view t, std::string_view option) {
  std::vector<TextEdit> edits;
  bool blocked = false;
  merge_all(t, analyzer::config::yaml_env_assignments(t), option, ConfigFileKind::yaml, edits, blocked);
  return finish(std::move(edits), option);
}

std::optional<Fix> in_launch_json(std::string_view t, std::string_view option) {
  auto file = analyzer::config::parse_launch_json(t);
  if (!file.valid || option.find_first_of("\"\\") != std::string_view::npos) return std::nullopt;
  std::vector<TextEdit> edits;
  std::string entry = fmt::format("\"{}\": \"{}\"", kVariable, option);
  std::string_view eol = eol_of(t);
  for (const auto& c : file.configurations) {
    if (c.type != "python" && c.type != "debugpy") continue;
    bool covered = false, blocked = false;
    for (const auto& a : c.env_entries) {
      if (!analyzer::is_alloc_conf_variable(a.name)) continue;
      if (a.constant && merge_into(t, a, option, ConfigFileKind::launch_json, edits)) covered = true;
      else blocked = true;
    }
    if (covered || blocked) continue;
    if (c.env && c.env_first_member) {
      // A new first member, laid out as the current first one is.
      std::size_t at = *c.env_first_member;
      bool own_line = line_begin(t, at) > c.env->first;
      std::string sep = own_line ? fmt::format("{}{}", eol, indentation(t, at)) : std::string(" ");
      edits.push_back({at, at, fmt::format("{},{}", entry, sep)});
    } else if (c.env) {
      edits.push_back({c.env->first + 1, c.env->second - 1, entry});
    } else if (c.first_member) {
      std::size_t at = *c.first_member;
      bool own_line = line_begin(t, at) > c.begin;
      std::string_view ind = indentation(t, at);
      if (own_line) {
        std::string step = ind.size() > indentation(t, c.begin).size()
                               ? std::string(ind.substr(indentation(t, c.begin).size()))
                               : std::string("  ");
        edits.push_back({at, at,
                         fmt::format("\"env\": {{{}{}{}{}{}{}}},{}{}", eol, ind, step, entry, eol, ind, eol, ind)});
      } else {
        edits.push_back({at, at, fmt::format("\"env\": {{{}}}, ", entry)});
      }
    } else {
      edits.push_back({c.begin + 1, c.end - 1, fmt::format("\"env\": {{{}}}", entry)});
    }
  }
  return finish(std::move(edits), option);
}

}  // namespace

std::optional<Fix> set_alloc_conf_in_config(ConfigFileKind kind, std::string_view text,
                                                     std::string_view option) {
  auto colon = option.find(':');
  if (colon == 0 || colon == std::string_view::npos) return std::nullopt;
  switch (kind) {
    case ConfigFileKind::shell: return in_shell(text, option);
    case ConfigFileKind::dotenv: return in_dotenv(text, option);
    case ConfigFileKind::launch_json: return in_launch_json(text, option);
    case ConfigFileKind::dockerfile: return in_dockerfile(text, option);
    case ConfigFileKind::yaml: return in_yaml(text, option);
  }
  return std::nullopt;
}

}  // namespace oomlens::rules
