#include "rules/source/config_lint.hpp"

#include <algorithm>

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
    std::uint32_t column = 1;
    for (std::uint32_t i = start; i < byte && i < text_.size(); ++i)
      if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++column;  // count code points
    return {line, column, byte - start + 1};
  }

 private:
  std::string_view text_;
  std::vector<std::uint32_t> starts_;
};

std::string_view file_name(std::string_view path) {
  auto slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::vector<cfg::EnvAssignment> config_assignments(ConfigFileKind kind, std::string_view text) {
  switch (kind) {
    case ConfigFileKind::shell: return cfg::shell_assignments(text);
    case ConfigFileKind::dotenv: return cfg::dotenv_assignments(text);
    case ConfigFileKind::launch_json: return cfg::launch_json_assignments(text);
  }
  return {};
}

}  // namespace

std::optional<ConfigFileKind> config_file_kind(std::string_view path) {
  std::string_view name = file_name(path);
  if (name.ends_with(".sh") || name.ends_with(".bash")) return ConfigFileKind::shell;
  if (name.ends_with(".env")) return ConfigFileKind::dotenv;  // .env, train.env
  if (name == "launch.json" && name.size() < path.size()) {
    std::string_view dir = path.substr(0, path.size() - name.size() - 1);
    if (file_name(dir) == ".vscode") return ConfigFileKind::launch_json;
  }
  return std::nullopt;
}

std::vector<SourceDiagnostic> lint_config_file(ConfigFileKind kind, std::string_view text) {
  std::vector<SourceDiagnostic> out;
  LineIndex lines(text);
  auto point = [&lines](std::uint32_t b) { return lines.point(b); };
  for (const auto& a : config_assignments(kind, text))
    if (a.constant && analyzer::is_alloc_conf_variable(a.name))
      source::check_alloc_conf_value(a.name, a.value, point, true, {}, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const SourceDiagnostic& a, const SourceDiagnostic& b) { return a.range.begin < b.range.begin; });
  return out;
}

}  // namespace oomlens::rules
