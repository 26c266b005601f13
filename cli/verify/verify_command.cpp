#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "analyzer/alloc_conf.hpp"
#include "analyzer/log/analyzer.hpp"
#include "cli/commands.hpp"
#include "cli/verify/job_runner.hpp"
#include "cli/verify/verify_report.hpp"
#include "report/json_text.hpp"
#include "report/probe_reports.hpp"
#include "rules/diagnose_log.hpp"

namespace oomlens::cli::verify {

extern const std::string_view kProbe_sitecustomize;
extern const std::string_view kProbe_oomlens_probe;

namespace {

namespace v = rules::verify;

constexpr const char* kAbout = R"(Runs a training command and shows whether a fix worked, with numbers measured
inside the job. A probe is injected through the environment (a sitecustomize
module first on PYTHONPATH, which loads your own sitecustomize too); every
Python process of the job, each rank of torchrun, accelerate launch,
deepspeed or srun included, reports its true peak reserved and allocated
memory (torch.cuda.max_memory_reserved, not nvidia-smi), allocator retries,
OOMs and the allocator settings PyTorch actually read. Your code is not
edited, and a job that never imports torch is not touched.

With --baseline the command runs twice: A as your environment has it, then B
with the setting. The output streams live (colours and progress bars kept)
and is read by the same analyzer as `oomlens diagnose`. The verdict:
  fixed         A ran out of memory, B did not
  improved      neither did; B's peak reserved or retries went down
  passed        one run, no OOM (add --baseline to compare)
  not fixed     B ran out of memory
  inconclusive  the setting was not in effect in the job, a run was stopped
                before the failing step, the probe never saw torch ...

Exit status: 0 fixed, improved or passed; 1 not fixed; 2 usage error or a
command that cannot start; 3 inconclusive.
Examples:
  oomlens verify --baseline --conf expandable_segments:True -- python train.py
  oomlens verify --baseline --max-seconds 300 --conf expandable_segments:True -- torchrun --nproc_per_node=8 train.py
Nothing is uploaded: the runs, their logs and reports stay on this machine.)";

struct Options {
  std::string conf;
  std::vector<std::string> env;
  bool baseline = false;
  double max_seconds = 0;
  bool snapshot = false;
  std::string format = "text";
  std::string out_dir;
  std::vector<std::string> command;
};

int usage(const std::string& message) {
  std::cerr << "oomlens verify: error: " << message << "\nFor more information, run 'oomlens verify --help'.\n";
  return kExitUsage;
}

std::optional<std::string> make_out_dir(std::string& dir) {
  std::error_code ec;
  if (!dir.empty()) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return "cannot create '" + dir + "': " + ec.message();
    return std::nullopt;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/oomlens-verify-XXXXXX";
  if (!::mkdtemp(pattern.data())) return "cannot create a directory under " + pattern + ": " + std::strerror(errno);
  dir = pattern;
  return std::nullopt;
}

// The probe as the job's processes will find it: <out>/probe/sitecustomize.py
// and, beside it, the half it loads once torch is imported.
std::optional<std::string> write_probe(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/probe", ec);
  for (auto [name, text] : {std::pair{"sitecustomize.py", kProbe_sitecustomize},
                            std::pair{"oomlens_probe.py", kProbe_oomlens_probe}}) {
    std::ofstream f(dir + "/probe/" + name, std::ios::binary);
    f << text;
    if (!f) return "cannot write the probe into '" + dir + "/probe'";
  }
  return std::nullopt;
}

// The OOM the run's output shows, by the same rules as `oomlens diagnose`.
std::optional<v::LoggedOom> logged_oom(analyzer::LogAnalyzer& analyzer) {
  auto report = rules::diagnose_log(analyzer.finish());
  if (report.incidents.empty()) return std::nullopt;
  const auto& first = report.incidents.front();
  return v::LoggedOom{first.incident().verdict.cls, first.code, first.message};
}

struct Runner {
  const Options& o;
  std::string out_dir;
  int echo_fd;
  bool terminal;

  v::RunMeasure run(const std::string& label, const std::vector<v::Setting>& settings,
                    const std::vector<std::string>& unset) {
    JobSpec spec;
    spec.argv = o.command;
    spec.echo_fd = echo_fd;
    spec.terminal = terminal;
    if (o.max_seconds > 0) spec.max_seconds = o.max_seconds;
    const char* path = std::getenv("PYTHONPATH");
    std::string probe = out_dir + "/probe";
    spec.set_env = {{"PYTHONPATH", path && *path ? probe + ":" + path : probe},
                    {"OOMLENS_PROBE_DIR", out_dir},
                    {"OOMLENS_PROBE_RUN", label}};
    if (o.snapshot) spec.set_env.emplace_back("OOMLENS_PROBE_SNAPSHOT", "1");
    // Through a pipe Python buffers its output in blocks: unbuffered, it
    // arrives as the job prints it (a terminal is line-buffered already).
    if (!terminal && !std::getenv("PYTHONUNBUFFERED")) spec.set_env.emplace_back("PYTHONUNBUFFERED", "1");
    for (const auto& s : settings) spec.set_env.emplace_back(s.variable, s.value);
    spec.unset_env = unset;

    v::RunMeasure m;
    m.label = label;
    m.log_path = out_dir + "/" + label + ".log";
    std::ofstream log(m.log_path, std::ios::binary);
    analyzer::LogAnalyzer analyzer;
    JobOutcome outcome = run_job(spec, [&](std::string_view piece) {
      log.write(piece.data(), static_cast<std::streamsize>(piece.size()));
      analyzer.feed(piece);
    });
    m.started = true;
    m.exit_code = outcome.exit_code;
    m.signal = outcome.signal;
    m.timed_out = outcome.timed_out;
    m.interrupted = outcome.interrupted;
    m.wall_seconds = outcome.wall_seconds;
    m.oom = logged_oom(analyzer);
    auto reports = report::read_probe_reports(out_dir, label);
    m.processes = std::move(reports.processes);
    for (const auto& u : reports.unreadable) warnings.push_back("unreadable probe report " + u);
    return m;
  }
  std::vector<std::string> warnings;
};

void announce(int fd, const std::string& line) {
  std::string text = "==> oomlens verify: " + line + "\n";
  [[maybe_unused]] auto n = ::write(fd, text.data(), text.size());
}

int verify(Options o) {
  if (!o.command.empty() && o.command.front() == "--") o.command.erase(o.command.begin());
  if (o.command.empty()) return usage("no command to run: put it after '--' (oomlens verify -- python train.py)");
  if (auto why = cannot_start(o.command.front()); !why.empty())
    return usage("cannot start '" + o.command.front() + "': " + why);

  std::vector<v::Setting> settings;
  if (!o.conf.empty()) settings.push_back({"PYTORCH_CUDA_ALLOC_CONF", o.conf});
  for (const auto& e : o.env) {
    auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0) return usage("--env takes NAME=VALUE, not '" + e + "'");
    settings.push_back({e.substr(0, eq), e.substr(eq + 1)});
  }
  if (o.baseline && settings.empty())
    return usage("--baseline compares a run without a setting to one with it: name the setting with --conf or --env");
  std::vector<std::string> warnings;
  for (const auto& s : settings) {
    if (!analyzer::is_alloc_conf_variable(s.variable)) continue;
    for (const auto& p : analyzer::parse_alloc_conf(s.value, {s.variable}).problems)
      if (p.severity == analyzer::ConfSeverity::error)
        std::cerr << "oomlens verify: warning: " << s.variable << "='" << s.value << "': " << p.message << "\n";
  }

  if (auto error = make_out_dir(o.out_dir)) return usage(*error);
  if (auto error = write_probe(o.out_dir)) return usage(*error);

  // Text: the job's output and then the table on standard output. JSON: the
  // job's output on standard error, so that standard output is one document.
  int echo_fd = o.format == "json" ? STDERR_FILENO : STDOUT_FILENO;
  Runner runner{o, o.out_dir, echo_fd, ::isatty(echo_fd) == 1, {}};
  VerifyResult result;
  result.command = o.command;
  result.settings = settings;
  result.out_dir = o.out_dir;

  InterruptWatch interrupts;
  try {
    if (o.baseline) {
      // A is the environment as it is; when it already holds B's value, A
      // goes without the variable so that the two runs differ.
      std::vector<std::string> unset;
      for (const auto& s : settings) {
        const char* now = std::getenv(s.variable.c_str());
        if (now && now == s.value) {
          unset.push_back(s.variable);
          warnings.push_back(s.variable + " already holds '" + s.value + "' here: run A went without it");
        }
      }
      announce(echo_fd, "run A of 2, without the setting: " + o.command.front());
      result.baseline = runner.run("A", {}, unset);
    }
    if (InterruptWatch::interrupted()) {
      result.b_ran = false;
      result.verdict = {v::VerdictKind::inconclusive, "stopped by Ctrl-C during run A, before run B", {}};
    } else {
      announce(echo_fd, std::string(o.baseline ? "run B of 2" : "run") +
                            (settings.empty() ? "" : ", with the setting") + ": " + o.command.front());
      result.with_setting = runner.run(o.baseline ? "B" : "run", settings, {});
      result.verdict = v::decide(result.with_setting, result.baseline, settings);
    }
  } catch (const std::exception& e) {
    std::cerr << "oomlens verify: error: " << e.what() << "\n";
    return kExitUsage;
  }
  warnings.insert(warnings.end(), runner.warnings.begin(), runner.warnings.end());
  result.warnings = warnings;

  if (o.format == "json") {
    std::cout << report::json_text(verify_json(result), 2) << "\n";
  } else {
    bool color = ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
    render_verify_text(std::cout, result, color);
  }
  std::cout.flush();
  return v::exit_status(result.verdict.kind);
}

}  // namespace
}  // namespace oomlens::cli::verify

namespace oomlens::cli {

void add_verify(CLI::App& app, Action& action) {
  auto o = std::make_shared<verify::Options>();
  CLI::App* command = app.add_subcommand("verify", "Run a training command and show whether a fix worked (A/B)");
  command->add_option("--conf", o->conf,
                      "The PYTORCH_CUDA_ALLOC_CONF value to verify, e.g. expandable_segments:True")
      ->type_name("VALUE");
  command->add_option("--env", o->env, "Another variable to set in the run with the setting (repeatable)")
      ->type_name("NAME=VALUE");
  command->add_flag("--baseline", o->baseline, "Run the command twice: A without the setting, then B with it");
  command->add_option("--max-seconds", o->max_seconds,
                      "Stop each run after this many seconds (SIGTERM, then SIGKILL), to check a long job on its "
                      "first steps")
      ->check(CLI::PositiveNumber.description(""))
      ->type_name("S");
  command->add_flag("--snapshot", o->snapshot,
                    "Record allocation history and dump a memory snapshot at the first OOM (for oomlens snapshot)");
  add_format_option(*command, o->format, {"text", "json"}, "Output format [default: text]");
  command->add_option("--out", o->out_dir,
                      "Where the runs' logs, probe reports and snapshots go [default: a new directory under $TMPDIR]")
      ->type_name("DIR");
  command->add_option("COMMAND", o->command, "The training command, after '--'")->type_name("-- COMMAND [ARGS...]");
  command->positionals_at_end();
  command->footer(verify::kAbout);
  command->callback([o, &action] { action = [o] { return verify::verify(*o); }; });
}

}  // namespace oomlens::cli
