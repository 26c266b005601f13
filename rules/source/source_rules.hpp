// Rules over Python training scripts: each one file under
// rules/source/, matching on the parsed view of analyzer/python/script.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/python/script.hpp"
#include "rules/diagnosis.hpp"
#include "rules/rule.hpp"
#include "rules/source/project_context.hpp"

namespace oomlens::rules {

struct SourceRule {
  RuleInfo info;
  // The project answers what the script's imports do in other files of
  // it; source::no_project() for a script read alone.
  void (*check)(const analyzer::python::Script&, const source::ProjectContext&, std::vector<Diagnosis>&);
};

// In source order: by the byte each diagnosis' span begins at; stable.
void sort_in_source_order(std::vector<Diagnosis>& diagnostics);

namespace source {
SourceRule empty_cache_in_loop_rule();       // OOM301
SourceRule alloc_conf_too_late_rule();       // OOM302 (rules/source/alloc_conf_too_late.cpp)
SourceRule invalid_alloc_conf_rule();        // OOM303 (rules/source/invalid_alloc_conf.cpp)
SourceRule snapshot_never_dumped_rule();     // OOM304 (rules/source/snapshot_never_dumped.cpp)
}

}  // namespace oomlens::rules
