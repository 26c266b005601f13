// Pieces the log rules share: how a message names the failure, which
// allocator variable to set, the fixes that recur, the verification command,
// and the verdict's arithmetic as Markdown (which a snapshot's verdict, judged
// by the same OOM1xx rules, shares).
#pragma once

#include <string>

#include "analyzer/log/incident.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::rules::log {

// What the device is called in messages: "GPU", or the vendor's word (TPU,
// NPU, MLU, GCU, HPU).
const char* device_word(analyzer::Device d);

// "tried to allocate 2.00 GiB on GPU 3 (rank 3, first of 4 ranks)"
std::string failure_head(const analyzer::Incident& inc);

// The variable this job's PyTorch reads for allocator options, and its value
// with `option` merged into what the log showed already.
struct AllocConf {
  std::string name;
  std::string value;
  bool already_set = false;  // the option is already in the value the log showed
};
AllocConf alloc_conf_with(const analyzer::Incident& inc, const std::string& option);

// The script to re-run: the user's outermost frame's file, else train.py.
std::string script_of(const analyzer::Incident& inc);
// The `oomlens verify` command that re-runs the job (python train.py, or
// torchrun for a multi-rank job): an A/B run with `variable` set to `value`,
// a single run with it set when not `baseline`, a measured run without one.
std::string rerun_command(const analyzer::Incident& inc, const std::string& variable = {}, const std::string& value = {},
                          bool baseline = true);

Fix snapshot_fix();
// The fixes for memory held outside the allocator: find the holder, and when
// this process's own non-PyTorch memory is the larger part, shrink it.
std::vector<Fix> outside_memory_fixes(const analyzer::Incident& inc);
Fix no_empty_cache_fix();
Fix find_holders_fix();

// Markdown list of a verdict's arithmetic, its secondary causes and the
// memory nothing names, then its notes (a log's and a snapshot's verdict).
std::string verdict_markdown(const analyzer::Verdict& verdict);
// The same for an incident, followed by the incident's own notes.
std::string evidence_markdown(const analyzer::Incident& inc);

}  // namespace oomlens::rules::log
