// OOM303 on the files besides scripts that set the allocator configuration:
// shell scripts (SLURM batch scripts included), .env files, VS Code launch
// configurations, Dockerfiles and Kubernetes / Compose YAML. Positions and
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

// The order is the fuzzer's (fuzz/source_rules_fuzzer.cpp): add at the end.
enum class ConfigFileKind { shell, dotenv, launch_json, dockerfile, yaml };

// By name alone: *.sh, *.bash, *.sbatch, *.slurm -> shell; .env, *.env
// (foo.env, .env.local is not) -> dotenv; .vscode/launch.json -> launch_json;
// Dockerfile, Dockerfile.*, *.dockerfile, Containerfile -> dockerfile;
// *.yaml, *.yml -> yaml. Nothing for other paths.
std::optional<ConfigFileKind> config_file_kind(std::string_view path);

// OOM303 diagnostics for every assignment of an allocator variable in the
// file, in source order. Points follow the scripts' convention (1-based line,
// 1-based column in code points). Never throws.
std::vector<Diagnosis> lint_config_file(ConfigFileKind kind, std::string_view text);

// "Set the allocator configuration" for configuration files: set one
// allocator option (`key:value`, e.g. "expandable_segments:True") for the
// training run the file launches.
// - shell: merged into every constant assignment of an allocator variable
//   that reaches a launch (exported or plain before the first launching
//   command, or a prefix/`env` assignment of a launching command); when the
//   first launch is not covered, `export PYTORCH_CUDA_ALLOC_CONF=<option>` is
//   added on the line before it, with its indentation. Launching commands:
//   python*, torchrun, accelerate, deepspeed (also behind env, nohup, exec,
//   srun, time). Nothing for a script that launches none of them.
// - launch_json: merged into the env entry of each python/debugpy
//   configuration, or an entry (or an `env` object) added as its first member.
// - dotenv: merged into the existing assignments, or a line appended.
// - dockerfile: merged into the existing ENV values, or
//   `ENV PYTORCH_CUDA_ALLOC_CONF=<option>` added before the first CMD or
//   ENTRYPOINT of the last stage (at the end when there is none).
// - yaml: merged into the existing entries only (where a new entry belongs
//   in a manifest is not for a line reader to guess): nothing when none.
// - shell also merges into `#SBATCH --export=` values of the header.
// Line endings and indentation are kept; edits sorted and non-overlapping.
// Nothing (std::nullopt) when the option is already set everywhere (so a
// second application does nothing), when the only assignments hold
// expansions ($X, ${env:X}) that cannot be merged, or the file cannot be read
// (launch.json that does not parse).
std::optional<Fix> set_alloc_conf_in_config(ConfigFileKind kind, std::string_view text,
                                                     std::string_view option);

namespace source {
// The OOM303 diagnostics of one value of `variable` (rules/source/invalid_alloc_conf.cpp):
// `value` maps each value byte to its source bytes; `point` gives the position
// of a source byte; edits only when allow_edits (and the fix's characters come
// from one run of source bytes).
void check_alloc_conf_value(std::string_view variable, const analyzer::python::StringLiteral& value,
                            const std::function<analyzer::python::Point(std::uint32_t)>& point, bool allow_edits,
                            const analyzer::AllocConfContext& context, std::vector<Diagnosis>& out);
}  // namespace source

}  // namespace oomlens::rules
