// What `oomlens verify` prints at the end: one row per run, the verdict, and
// where the logs, probe reports and snapshots are; as text or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "rules/verify/ab_verdict.hpp"

namespace oomlens::cli::verify {

struct VerifyResult {
  std::vector<std::string> command;
  std::vector<rules::verify::Setting> settings;
  std::optional<rules::verify::RunMeasure> baseline;  // run A
  rules::verify::RunMeasure with_setting;             // run B (the only run without --baseline)
  bool b_ran = true;                                  // false: stopped before run B started
  rules::verify::AbVerdict verdict;
  std::string out_dir;
  std::vector<std::string> warnings;  // unreadable probe reports ...
};

void render_verify_text(std::ostream& out, const VerifyResult& result, bool color);
nlohmann::json verify_json(const VerifyResult& result);

}  // namespace oomlens::cli::verify
