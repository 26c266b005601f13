#include "rules/source/config_lint.hpp"

namespace oomlens::rules {

std::optional<ConfigFileKind> config_file_kind(std::string_view path) {
  auto slash = path.find_last_of("/\\");
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (name.ends_with(".sh") || name.ends_with(".bash")) return ConfigFileKind::shell;
  if (name.ends_with(".env")) return ConfigFileKind::dotenv;  // .env, train.env
  if (name == "launch.json" && slash != std::string_view::npos) {
    std::string_view dir = path.substr(0, slash);
    auto s2 = dir.find_last_of("/\\");
    if ((s2 == std::string_view::npos ? dir : dir.substr(s2 + 1)) == ".vscode") return ConfigFileKind::launch_json;
  }
  return std::nullopt;
}

std::vector<SourceDiagnostic> lint_config_file(ConfigFileKind, std::string_view) { return {}; }

}  // namespace oomlens::rules
