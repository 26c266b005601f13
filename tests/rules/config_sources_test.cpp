// OOM303 and the set-allocator action on Dockerfiles, SLURM batch scripts and
// Kubernetes / Compose YAML; and how `oomlens lint` tells a file's kind.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "rules/source/config_lint.hpp"
#include "rules/source/file_kind.hpp"
#include "rules/source/lint.hpp"
#include "tests/rules/fixture_files.hpp"

using namespace oomlens::rules;
using oomlens::testing::read_config_fixture;

namespace {

std::vector<std::string> lines_of(ConfigFileKind kind, std::string_view text) {
  std::vector<std::string> out;
  for (const auto& d : lint_config_file(kind, text))
    out.push_back(fmt::format("{}:{}: {} {}", d.location.source->start.line, d.location.source->start.column, d.code, d.message));
  return out;
}

std::string apply_all(std::string_view text, ConfigFileKind kind) {
  return apply_edits(text, fix_edits(lint_config_file(kind, text), true));
}

void check_set(ConfigFileKind kind, const std::string& name, const std::string& expected) {
  INFO(name);
  std::string before = read_config_fixture("set_alloc_conf/" + name);
  auto action = set_alloc_conf_in_config(kind, before, "expandable_segments:True");
  REQUIRE(action);
  std::string once = apply_edits(before, action->edits);
  CHECK(once == read_config_fixture("set_alloc_conf/" + expected));
  CHECK_FALSE(set_alloc_conf_in_config(kind, once, "expandable_segments:True"));  // idempotent
  CHECK(lint_config_file(kind, once).empty());
}

}  // namespace

TEST_CASE("config kinds by name: Dockerfiles, SLURM scripts, YAML", "[config_sources]") {
  CHECK(config_file_kind("Dockerfile") == ConfigFileKind::dockerfile);
  CHECK(config_file_kind("docker/Dockerfile.cuda12") == ConfigFileKind::dockerfile);
  CHECK(config_file_kind("train.Dockerfile") == ConfigFileKind::dockerfile);
  CHECK(config_file_kind("gpu.dockerfile") == ConfigFileKind::dockerfile);
  CHECK(config_file_kind("Containerfile") == ConfigFileKind::dockerfile);
  CHECK(config_file_kind("job.sbatch") == ConfigFileKind::shell);
  CHECK(config_file_kind("run.slurm") == ConfigFileKind::shell);
  CHECK(config_file_kind("k8s/job.yaml") == ConfigFileKind::yaml);
  CHECK(config_file_kind("compose.yml") == ConfigFileKind::yaml);
  CHECK_FALSE(config_file_kind("Dockerfiles.md"));
  CHECK_FALSE(config_file_kind("notes.txt"));
}

TEST_CASE("lint file kinds: name first, then shebang, SLURM header, YAML content", "[config_sources]") {
  auto kind = [](std::string_view path, std::string_view head) { return lint_file_kind(path, head); };
  CHECK(kind("train.py", "#!/bin/bash\n").kind == LintKind::python);  // the name wins
  CHECK(kind("nb.ipynb", "{}").kind == LintKind::notebook);
  CHECK(kind("run", "#!/bin/bash -e\necho\n").config == ConfigFileKind::shell);
  CHECK(kind("run", "#!/usr/bin/env bash\n").config == ConfigFileKind::shell);
  CHECK(kind("run", "#!/bin/sh\r\n").config == ConfigFileKind::shell);
  CHECK(kind("job", "#SBATCH -N 1\nsrun x\n").config == ConfigFileKind::shell);
  CHECK(kind("train", "#!/usr/bin/env -S python3 -u\nimport torch\n").kind == LintKind::python);
  CHECK(kind("deploy", "# a manifest\napiVersion: v1\nkind: Pod\n").config == ConfigFileKind::yaml);
  CHECK(kind("deploy", "---\n").config == ConfigFileKind::yaml);
  CHECK(kind("notes.txt", "torch.cuda.empty_cache()\n").kind == LintKind::other);
  CHECK(kind("setup.cfg", "[metadata]\nname: x\n").kind == LintKind::other);
  CHECK(kind("script", "if x:\n  pass\n").kind == LintKind::other);  // not a plain key
  CHECK(kind("empty", "").kind == LintKind::other);
  CHECK(lint_file_kind_by_name("run").kind == LintKind::other);  // a walk reads no content
}

TEST_CASE("OOM303 on a Dockerfile: ENV K=V and ENV K V, the = for : fixed", "[config_sources]") {
  std::string t = read_config_fixture("Dockerfile");
  CHECK(lines_of(ConfigFileKind::dockerfile, t) ==
        std::vector<std::string>{
            "8:29: OOM303 'max_split_size_mb=512': key and value are separated by ':', not '='",
            "12:24: OOM303 expandable_segments:yes: must be True or False",
        });
  std::string fixed = apply_all(t, ConfigFileKind::dockerfile);
  CHECK(fixed.find("ENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512\n") != std::string::npos);
  CHECK(lines_of(ConfigFileKind::dockerfile, fixed).size() == 1);  // `yes` has no fix: which value was meant?
}

TEST_CASE("OOM303 on a SLURM batch script: the #SBATCH --export header and the body", "[config_sources]") {
  std::string t = read_config_fixture("job.sbatch");
  CHECK(lines_of(ConfigFileKind::shell, t) ==
        std::vector<std::string>{
            "4:71: OOM303 unknown option 'garbage_collection_treshold' (did you mean "
            "'garbage_collection_threshold'?)",
            "8:27: OOM303 max_split_size_mb:10: must be an integer ≥ 20 (MiB)",
        });
  CHECK(apply_all(t, ConfigFileKind::shell).find("expandable_segments:True,garbage_collection_threshold:0.8\n") !=
        std::string::npos);
}

TEST_CASE("OOM303 on Kubernetes and Compose YAML", "[config_sources]") {
  std::string k8s = read_config_fixture("k8s-job.yaml");
  CHECK(lines_of(ConfigFileKind::yaml, k8s) ==
        std::vector<std::string>{
            "18:23: OOM303 'expandable_segments=True': key and value are separated by ':', not '='",
        });
  CHECK(apply_all(k8s, ConfigFileKind::yaml).find("value: \"expandable_segments:True\"\n") != std::string::npos);
  std::string compose = read_config_fixture("compose.yaml");
  CHECK(lines_of(ConfigFileKind::yaml, compose) ==
        std::vector<std::string>{
            "6:54: OOM303 unknown option 'roundup_power2_division' (did you mean 'roundup_power2_divisions'?)",
            "12:33: OOM303 garbage_collection_threshold:1.2: must be a number between 0 and 1, exclusive",
        });
  // A variable the file does not set to a constant is not checked.
  CHECK(lint_config_file(ConfigFileKind::yaml, "environment:\n  PYTORCH_CUDA_ALLOC_CONF: ${CONF:-bogus:1}\n").empty());
}

TEST_CASE("set allocator config: Dockerfile, SLURM header, Compose; a second time nothing", "[config_sources]") {
  check_set(ConfigFileKind::dockerfile, "Dockerfile", "Dockerfile.set");
  check_set(ConfigFileKind::shell, "job.sbatch", "job.set.sbatch");
  check_set(ConfigFileKind::yaml, "compose.yaml", "compose.set.yaml");
  // A Dockerfile without CMD/ENTRYPOINT: at the end, with a line end of its own.
  auto end = set_alloc_conf_in_config(ConfigFileKind::dockerfile, "FROM x", "expandable_segments:True");
  REQUIRE(end);
  CHECK(apply_edits("FROM x", end->edits) == "FROM x\nENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
  // YAML without an entry: nothing (no guess at where one belongs).
  CHECK_FALSE(set_alloc_conf_in_config(ConfigFileKind::yaml, "services:\n  t:\n    image: x\n",
                                       "expandable_segments:True"));
  // An expansion cannot be merged into.
  CHECK_FALSE(set_alloc_conf_in_config(ConfigFileKind::dockerfile, "ENV PYTORCH_CUDA_ALLOC_CONF=$BASE\nCMD x\n",
                                       "expandable_segments:True"));
}
