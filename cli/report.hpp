// A diagnosed input, and how the terminal front end writes it as text.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/json_report.hpp"
#include "report/log_file.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::cli {

using report::FileReport;
using report::InputFile;

// Reading a log: shared with the language server (report/log_file.hpp).
using report::read_log;
using report::ReadResult;

struct TextStyle {
  bool color = false;
  std::size_t bar_width = 50;
};
void render_text(std::ostream& out, const std::vector<FileReport>& files, const TextStyle& style);

}  // namespace oomlens::cli
