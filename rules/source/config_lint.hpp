// OOM303 on the files besides scripts that set the allocator configuration:
// shell scripts, .env files and VS Code launch configurations. Positions and
// edits are in the file's bytes, exactly as for a script.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/alloc_conf.hpp"
#include "analyzer/python/strings.hpp"
#include "rules/source/source_rules.hpp"

namespace oomlens::rules {

enum class ConfigFileKind { shell, dotenv, launch_json };

// *.sh, *.bash -> shell; .env, *.env (foo.env, .env.local is not) -> dotenv;
// .vscode/launch.json -> launch_json. Nothing for other paths.
std::optional<ConfigFileKind> config_file_kind(std::string_view path);

// OOM303 diagnostics for every assignment of an allocator variable in the
// file, in source order. Points follow the scripts' convention (1-based line,
// 1-based column in code points). Never throws.
std::vector<SourceDiagnostic> lint_config_file(ConfigFileKind kind, std::string_view text);

namespace source {
// The OOM303 diagnostics of one value of `variable` (rules/source/invalid_alloc_conf.cpp):
// `value` maps each value byte to its source bytes; `point` gives the position
// of a source byte; edits only when allow_edits (and the fix's characters come
// from one run of source bytes).
void check_alloc_conf_value(std::string_view variable, const analyzer::python::StringLiteral& value,
                            const std::function<analyzer::python::Point(std::uint32_t)>& point, bool allow_edits,
                            const analyzer::AllocConfContext& context, std::vector<SourceDiagnostic>& out);
}  // namespace source

}  // namespace oomlens::rules
