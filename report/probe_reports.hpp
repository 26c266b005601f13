// Reading the probe's reports (cli/verify/probe/sitecustomize.py): one JSON
// file per Python process of a run, `probe-<run>-<pid>.json`.
#pragma once

#include <string>
#include <vector>

#include "rules/verify/measures.hpp"

namespace oomlens::report {

struct ProbeReports {
  std::vector<rules::verify::ProcessMeasure> processes;  // by rank, then pid
  std::vector<std::string> unreadable;                   // "path: reason"
};

// Every report run `run` left in `dir`.
ProbeReports read_probe_reports(const std::string& dir, const std::string& run);

// One report's text; throws std::runtime_error naming what is wrong.
rules::verify::ProcessMeasure parse_probe_report(const std::string& text);

}  // namespace oomlens::report
