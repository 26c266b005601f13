// The readers of Dockerfiles, SLURM headers and Kubernetes / Compose YAML.
#include <catch2/catch.hpp>

#include "analyzer/config/env_assignments.hpp"

using namespace oomlens::analyzer::config;

namespace {

std::string_view source_of(std::string_view text, const EnvAssignment& a) {
  auto r = a.value.source_range(0, a.value.value.size());
  return text.substr(r.begin, r.end - r.begin);
}

}  // namespace

TEST_CASE("dockerfile: ENV K=V words and the legacy ENV K V form", "[config][dockerfile]") {
  std::string_view t =
      "FROM python:3.11\n"
      "env A=1 B=\"two words\" C='x:$NOT'\n"
      "ENV PYTORCH_CUDA_ALLOC_CONF max_split_size_mb:512  \n"
      "# ENV COMMENTED=1\n"
      "RUN echo ENV=not\n"
      "ENV D=$HOME/x E=a\\ b\n";
  auto as = dockerfile_env_assignments(t);
  REQUIRE(as.size() == 6);
  CHECK(as[0].name == "A");
  CHECK(as[0].value.value == "1");
  CHECK(as[0].form == AssignmentForm::dockerfile_env);
  CHECK(as[1].value.value == "two words");
  CHECK(source_of(t, as[1]) == "two words");
  CHECK(as[2].value.value == "x:$NOT");
  CHECK(as[2].constant);  // single quotes: no expansion
  CHECK(as[3].name == "PYTORCH_CUDA_ALLOC_CONF");
  CHECK(as[3].value.value == "max_split_size_mb:512");  // trailing blanks dropped
  CHECK(as[3].statement_begin == t.find("ENV PYTORCH"));
  CHECK(as[3].name_begin == t.find("PYTORCH"));
  CHECK_FALSE(as[4].constant);
  CHECK(as[5].value.value == "a b");
  CHECK(source_of(t, as[5]) == "a\\ b");
}

TEST_CASE("dockerfile: continuation lines, comment lines inside them, the escape directive", "[config][dockerfile]") {
  std::string_view t =
      "FROM x\r\n"
      "ENV A=1 \\\r\n"
      "# a comment inside the instruction\r\n"
      "    PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb=512\r\n"
      "CMD [\"python\", \"t.py\"]\r\n";
  auto as = dockerfile_env_assignments(t);
  REQUIRE(as.size() == 2);
  CHECK(as[1].name == "PYTORCH_CUDA_ALLOC_CONF");
  CHECK(as[1].value.value == "max_split_size_mb=512");
  CHECK(source_of(t, as[1]) == "max_split_size_mb=512");
  CHECK(as[1].statement_begin == t.find("ENV"));

  std::string_view backtick =
      "# escape=`\n"
      "FROM x\n"
      "ENV P=C:\\path A=b `\n"
      "  C=d\n";
  auto bs = dockerfile_env_assignments(backtick);
  REQUIRE(bs.size() == 3);
  CHECK(bs[0].value.value == "C:\\path");  // `\` is no escape here
  CHECK(bs[2].name == "C");

  auto is = dockerfile_instructions(t);
  REQUIRE(is.size() == 3);
  CHECK(is[0].keyword == "FROM");
  CHECK(is[2].keyword == "CMD");
  CHECK(is[2].line_begin == t.find("CMD"));
}

TEST_CASE("dockerfile: broken input reads as far as it goes", "[config][dockerfile]") {
  CHECK(dockerfile_env_assignments("ENV\n").empty());
  CHECK(dockerfile_env_assignments("ENV A\n").empty());  // a name and no value
  CHECK(dockerfile_env_assignments("ENV A=\"unclosed\n").at(0).value.value == "unclosed");
  CHECK(dockerfile_env_assignments("ENV A=1 \\").size() == 1);  // a continuation at the end of the file
  CHECK(dockerfile_env_assignments(std::string(100000, '\\')).empty());
}

TEST_CASE("sbatch: --export items of the header, values with commas", "[config][slurm]") {
  std::string_view t =
      "#!/bin/bash\n"
      "#SBATCH --job-name=train --export=ALL,PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,"
      "garbage_collection_threshold:0.6,OMP_NUM_THREADS=4\n"
      "#SBATCH --export \"NCCL_DEBUG=INFO,X='a,b'\"\n"
      "\n"
      "srun python train.py\n"
      "#SBATCH --export=LATE=1\n";
  auto as = sbatch_export_assignments(t);
  REQUIRE(as.size() == 4);
  CHECK(as[0].name == "PYTORCH_CUDA_ALLOC_CONF");
  CHECK(as[0].value.value == "expandable_segments:True,garbage_collection_threshold:0.6");
  CHECK(source_of(t, as[0]) == as[0].value.value);
  CHECK(as[0].form == AssignmentForm::sbatch_export);
  CHECK(as[0].statement_begin == t.find("#SBATCH"));
  CHECK(as[1].name == "OMP_NUM_THREADS");
  CHECK(as[1].value.value == "4");
  CHECK(as[2].name == "NCCL_DEBUG");
  CHECK(as[3].value.value == "a,b");
  CHECK(sbatch_export_assignments("#SBATCH --export=NONE\n").empty());
  CHECK(sbatch_export_assignments("#SBATCH --export=X=$HOME\n").at(0).constant == false);
}

TEST_CASE("yaml: Kubernetes env lists", "[config][yaml]") {
  std::string_view t =
      "apiVersion: batch/v1\n"
      "kind: Job\n"
      "spec:\n"
      "  template:\n"
      "    spec:\n"
      "      containers:\n"
      "        - name: trainer\n"
      "          env:\n"
      "            - name: NCCL_DEBUG\n"
      "              value: INFO\n"
      "            - value: \"max_split_size_mb=512\"  # wrong separator\n"
      "              name: PYTORCH_CUDA_ALLOC_CONF\n"
      "            - name: FROM_SECRET\n"
      "              valueFrom:\n"
      "                secretKeyRef: {name: s, key: k}\n"
      "          env2: x\n"
      "        - name: sidecar\n"
      "          env:\n"
      "          - name: PYTORCH_ALLOC_CONF\n"
      "            value: 'it''s'\n";
  auto as = yaml_env_assignments(t);
  REQUIRE(as.size() == 3);
  CHECK(as[0].name == "NCCL_DEBUG");
  CHECK(as[0].value.value == "INFO");
  CHECK(as[0].form == AssignmentForm::yaml);
  CHECK(as[1].name == "PYTORCH_CUDA_ALLOC_CONF");
  CHECK(as[1].value.value == "max_split_size_mb=512");
  CHECK(source_of(t, as[1]) == "max_split_size_mb=512");
  CHECK(as[1].statement_begin == t.find("            - value"));
  CHECK(as[2].name == "PYTORCH_ALLOC_CONF");  // a list at the key's own indentation
  CHECK(as[2].value.value == "it's");
}

TEST_CASE("yaml: Compose environment maps and lists", "[config][yaml]") {
  std::string_view t =
      "services:\n"
      "  train:\n"
      "    image: trainer\n"
      "    environment:\n"
      "      PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb:512,expandable_segments:true # tuned\n"
      "      FROM_HOST: ${HOST_VALUE}\n"
      "      EMPTY:\n"
      "  eval:\n"
      "    environment:\n"
      "      - PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:1.5\n"
      "      - \"QUOTED=a\\tb\"\n"
      "      - JUST_A_NAME\n";
  auto as = yaml_env_assignments(t);
  REQUIRE(as.size() == 4);
  CHECK(as[0].value.value == "max_split_size_mb:512,expandable_segments:true");
  CHECK(as[0].name_begin == t.find("PYTORCH"));
  CHECK_FALSE(as[1].constant);
  CHECK(as[2].name == "PYTORCH_CUDA_ALLOC_CONF");
  CHECK(as[2].value.value == "garbage_collection_threshold:1.5");
  CHECK(source_of(t, as[2]) == "garbage_collection_threshold:1.5");
  CHECK(as[2].name_begin == t.find("PYTORCH", t.find("- PYTORCH")));
  CHECK(as[3].name == "QUOTED");
  CHECK(as[3].value.value == "a\tb");
}

TEST_CASE("yaml: shapes it does not read are skipped, hostile input stays linear", "[config][yaml]") {
  CHECK(yaml_env_assignments("env: {A: 1}\n").empty());
  CHECK(yaml_env_assignments("env:\n  A: |\n    block\n").empty());
  CHECK(yaml_env_assignments("env:\n  A: \"unclosed\n  B: 1\n").size() == 1);
  CHECK(yaml_env_assignments("env:\n- name: A\n").empty());  // no value
  std::string deep = "env:\n";
  for (int i = 0; i < 20000; ++i) deep += std::string(static_cast<std::size_t>(i % 200), ' ') + "- - - env:\n";
  CHECK(yaml_env_assignments(deep).empty());
  CHECK(yaml_env_assignments(std::string(1 << 20, ':')).empty());
}
