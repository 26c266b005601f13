#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include "analyzer/log/job.hpp"
#include "cli/commands.hpp"
#include "cli/log_files.hpp"
#include "cli/report.hpp"
#include "report/json_text.hpp"
#include "report/sarif.hpp"

namespace oomlens::cli {
namespace {

constexpr const char* kAbout = R"(Reads terminal output and log files (progress bars, colour codes, CRLF and
multi-rank launcher prefixes are fine) and reports each GPU OOM incident: its
class (fragmentation, capacity, external, limit, unquantified) with the
arithmetic that proves it, the memory breakdown, fixes marked safe / unsafe /
display-only, a command to verify the fix, and where it failed in your code.

It recognises PyTorch's CUDA/HIP/XPU/MPS out-of-memory messages of every
release, the cudaMallocAsync backend, CUDA/cuBLAS/cuDNN/NCCL allocation errors,
JAX/XLA RESOURCE_EXHAUSTED and TensorFlow ResourceExhaustedError, warnings
that come before an OOM, and look-alikes that are not GPU OOMs (host OOM kills,
DataLoader workers killed, illegal memory access).

Directories are walked as ripgrep walks them: recursively, in name order,
skipping hidden files and directories, binary files, symbolic links and what
.gitignore and .ignore files exclude. Files one launcher wrote per rank
(torchrun --log-dir's attempt_0/3/stderr.log, SLURM's %x-%j-%t.out,
rank3.log, worker-3.log) are read as one job: one timeline, one incident
across them, the rank taken from the path when the lines name none.

Exit status: 0 no GPU OOM found, 1 at least one found, 2 usage or input error.
Nothing is uploaded: the logs are read on this machine only.)";

struct Options {
  std::string format = "text";
  std::string color = "auto";
  std::vector<std::string> inputs;
};

// What a job's report is called: the directory its files share.
std::string job_label(const std::vector<InputFile>& files) {
  std::string common = files.front().path;
  for (const auto& f : files) {
    std::size_t n = 0;
    while (n < common.size() && n < f.path.size() && common[n] == f.path[n]) ++n;
    common.resize(n);
  }
  auto slash = common.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : common.substr(0, slash);
}

int diagnose(const CLI::App& command, Options o) {
  if (o.inputs.empty()) {
    if (::isatty(STDIN_FILENO)) {
      std::cerr << command.help(command.get_parent()->get_name());
      return kExitUsage;
    }
    o.inputs.push_back("-");
  }

  LogFiles listed = expand_log_files(o.inputs);
  bool input_error = false;
  auto cannot_read = [&](const std::string& path, const std::string& reason) {
    std::cerr << "oomlens diagnose: error: cannot read '" << (path == "-" ? "<stdin>" : path) << "': " << reason << "\n";
    input_error = true;
  };
  for (const auto& e : listed.errors) cannot_read(e.path, e.reason);
  for (const auto& d : listed.empty_dirs) std::cerr << "oomlens diagnose: warning: no files to read under '" << d << "'\n";

  // Files of one job (a rank per file) are read as one log.
  std::vector<std::string> paths;
  for (const auto& f : listed.files) paths.push_back(f.path);
  std::vector<FileReport> reports;
  for (const auto& job : analyzer::group_job_files(paths)) {
    std::vector<analyzer::JobInput> parts;
    std::vector<InputFile> files;
    for (std::size_t n = 0; n < job.inputs.size(); ++n) {
      const LogFile& file = listed.files[job.inputs[n]];
      ReadResult read = read_log(file.path, file.walked);
      if (read.binary) continue;
      if (!read.log) {
        cannot_read(file.path, read.error);
        continue;
      }
      files.push_back(
          {file.path, read.log->bytes, read.log->lines, read.log->capped, job.ranks[n], read.log->ooms_not_analysed});
      parts.push_back({std::move(*read.log), file.path, job.ranks[n]});
    }
    if (parts.empty()) continue;
    FileReport report;
    report.path = files.size() == 1 ? files[0].path : job_label(files);
    if (files.size() > 1 || files[0].rank) report.inputs = std::move(files);
    report.report = rules::diagnose_log(analyzer::analyze_job(std::move(parts)));
    reports.push_back(std::move(report));
  }
  if (reports.empty() && !input_error) {
    std::cerr << "oomlens diagnose: error: nothing to read\n";
    return kExitUsage;
  }

  bool found = false;
  for (const auto& r : reports) found = found || !r.report.incidents.empty();
  if (o.format == "text") {
    if (!reports.empty()) {
      TextStyle style;
      style.color = o.color == "always" || (o.color == "auto" && ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
      render_text(std::cout, reports, style);
    }
  } else {
    auto j = o.format == "json" ? report::report_json(reports) : report::logs_sarif(reports);
    // Logs hold invalid UTF-8; JSON must not: replace, never throw.
    report::write_json_text(std::cout, j, 2);
    std::cout << "\n";
  }
  std::cout.flush();
  if (input_error) return kExitUsage;
  return found ? kExitFound : kExitClean;
}

}  // namespace

void add_diagnose(CLI::App& app, Action& action) {
  auto o = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand("diagnose", "Find and explain every GPU out-of-memory failure in training logs");
  command->add_option("FILE", o->inputs,
                      "Logs to read, or directories to read them from; '-' reads standard input (also when no FILE "
                      "is given and standard input is not a terminal)")
      ->type_name("");
  add_format_option(*command, o->format, {"text", "json", "sarif"}, "Output format [default: text]");
  command->add_option("--color", o->color,
                      "Colour in text output [default: auto: only on a terminal, and never when NO_COLOR is set]")
      ->check(CLI::IsMember(std::vector<std::string>{"auto", "always", "never"}).description(""))
      ->type_name("auto|always|never");
  command->footer(kAbout);
  command->callback([command, o, &action] { action = [command, o] { return diagnose(*command, *o); }; });
}

}  // namespace oomlens::cli
