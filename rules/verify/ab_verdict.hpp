// The verdict of `oomlens verify`: did the setting fix the OOM? From run B
// (with the setting) and, with --baseline, run A (without it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rules/verify/measures.hpp"

namespace oomlens::rules::verify {

enum class VerdictKind {
  fixed,         // A ran out of memory, B did not
  improved,      // neither did, and B's peak reserved or retries went down
  passed,        // one run, no baseline, and it finished without an OOM
  not_fixed,     // B ran out of memory
  inconclusive,  // the runs cannot tell (the reasons say why)
};

const char* to_string(VerdictKind kind);

// The exit status: 0 fixed, improved or passed; 1 not fixed; 3 inconclusive.
int exit_status(VerdictKind kind);

// The environment run B added (and A did not).
struct Setting {
  std::string variable;  // PYTORCH_CUDA_ALLOC_CONF
  std::string value;     // expandable_segments:True
};

struct AbVerdict {
  VerdictKind kind = VerdictKind::inconclusive;
  std::string summary;               // one line
  std::vector<std::string> reasons;  // the evidence, one line each
};

// Peak reserved memory must fall by at least this share to count as improved:
// smaller differences are run-to-run noise of the caching allocator.
inline constexpr double kImprovedShare = 0.05;

// `settings`: what B set (empty for a plain measured run). `baseline`: run A.
AbVerdict decide(const RunMeasure& with_setting, const std::optional<RunMeasure>& baseline,
                 const std::vector<Setting>& settings);

}  // namespace oomlens::rules::verify
