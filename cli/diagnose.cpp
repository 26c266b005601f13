#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/report.hpp"

namespace oomlens::cli {
namespace {

constexpr const char* kDiagnoseHelp = R"(Find and explain every GPU out-of-memory failure in training logs.

Usage: oomlens diagnose [OPTIONS] [FILE...|-]

Reads terminal output and log files (progress bars, colour codes, CRLF and
multi-rank launcher prefixes are fine) and reports each GPU OOM incident: its
class (fragmentation, capacity, external, limit, unquantified) with the
arithmetic that proves it, the memory breakdown, fixes marked safe / unsafe /
display-only, a command to verify the fix, and where it failed in your code.

It recognises PyTorch's CUDA/HIP/XPU/MPS out-of-memory messages of every
release, the cudaMallocAsync backend, CUDA/cuBLAS/cuDNN/NCCL allocation errors,
JAX/XLA RESOURCE_EXHAUSTED and TensorFlow ResourceExhaustedError, warnings
that come before an OOM, and look-alikes that are not GPU OOMs (host OOM kills,
DataLoader workers killed, illegal memory access).

Arguments:
  FILE...   Logs to read; '-' reads standard input (also when no FILE is
            given and standard input is not a terminal)

Options:
  --format <text|json|sarif>   Output format [default: text]
  --color <auto|always|never>  Colour in text output [default: auto: only on a
                               terminal, and never when NO_COLOR is set]
  -h, --help                   Print help

Exit status: 0 no GPU OOM found, 1 at least one found, 2 usage or input error.
Nothing is uploaded: the logs are read on this machine only.
)";

enum class Format { text, json, sarif };

int usage_error(const std::string& message) {
  std::cerr << "oomlens diagnose: error: " << message << "\nUsage: oomlens diagnose [OPTIONS] [FILE...|-]  (see --help)\n";
  return kExitUsage;
}

}  // namespace

int diagnose_command(const Args& args) {
  Format format = Format::text;
  std::string color = "auto";
  std::vector<std::string> inputs;
  bool only_files = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& name) -> std::optional<std::string> {
      if (a.starts_with(name + "=")) return a.substr(name.size() + 1);
      if (a == name && i + 1 < args.size()) return args[++i];
      return std::nullopt;
    };
    if (only_files || a == "-" || !a.starts_with("-")) {
      inputs.push_back(a);
    } else if (a == "--") {
      only_files = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kDiagnoseHelp;
      return kExitClean;
    } else if (a.starts_with("--format")) {
      auto v = value("--format");
      if (!v) return usage_error("--format needs a value: text, json or sarif");
      if (*v == "text") format = Format::text;
      else if (*v == "json") format = Format::json;
      else if (*v == "sarif") format = Format::sarif;
      else return usage_error("unknown format '" + *v + "' (expected text, json or sarif)");
    } else if (a.starts_with("--color")) {
      auto v = value("--color");
      if (!v || (*v != "auto" && *v != "always" && *v != "never"))
        return usage_error("--color takes auto, always or never");
      color = *v;
    } else {
      return usage_error("unknown option '" + a + "'");
    }
  }
  if (inputs.empty()) {
    if (::isatty(STDIN_FILENO)) {
      std::cerr << kDiagnoseHelp;
      return kExitUsage;
    }
    inputs.push_back("-");
  }

  std::vector<FileReport> reports;
  bool input_error = false;
  for (const auto& path : inputs) {
    std::string error;
    auto analysis = analyze_input(path, error);
    if (!analysis) {
      std::cerr << "oomlens diagnose: error: cannot read '" << (path == "-" ? "<stdin>" : path) << "': " << error << "\n";
      input_error = true;
      continue;
    }
    reports.push_back({path, rules::diagnose_log(std::move(*analysis))});
  }

  bool found = false;
  for (const auto& r : reports) found = found || !r.report.incidents.empty();
  if (format == Format::text) {
    if (!reports.empty()) {
      TextStyle style;
      style.color = color == "always" || (color == "auto" && ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
      render_text(std::cout, reports, style);
    }
  } else {
    auto j = format == Format::json ? report::report_json(reports) : report_sarif(reports);
    // Logs hold invalid UTF-8; JSON must not: replace, never throw.
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  std::cout.flush();
  if (input_error) return kExitUsage;
  return found ? kExitFound : kExitClean;
}

}  // namespace oomlens::cli
