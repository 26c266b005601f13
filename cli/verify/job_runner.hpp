// Running one job for `oomlens verify`: its output shown live and kept, a
// time limit, Ctrl-C, and nothing left running afterwards.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oomlens::cli::verify {

struct JobSpec {
  std::vector<std::string> argv;                            // argv[0] looked up on PATH
  std::vector<std::pair<std::string, std::string>> set_env;  // on top of this process's environment
  std::vector<std::string> unset_env;
  std::optional<double> max_seconds;
  int echo_fd = 1;  // where the job's output is shown as it comes
  // The job's output goes to a pseudo-terminal, so that it keeps its colours
  // and progress bars (when echo_fd is a terminal); else to a pipe.
  bool terminal = false;
};

struct JobOutcome {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;
  bool interrupted = false;
  double wall_seconds = 0;
};

// Whether `program` can be started: empty when it can, else the reason
// ("not found on PATH", "Permission denied").
std::string cannot_start(const std::string& program);

// Runs the job to its end (or the time limit, or Ctrl-C), passing every piece
// of its output to `output` as it comes. Throws std::runtime_error when the
// job cannot be started, naming the program and the reason.
JobOutcome run_job(const JobSpec& spec, const std::function<void(std::string_view)>& output);

// Ctrl-C (SIGINT), SIGTERM and SIGHUP, while alive, stop the running job
// instead of oomlens: oomlens stops it, then reports what it measured.
class InterruptWatch {
 public:
  InterruptWatch();
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;
  static bool interrupted();
};

}  // namespace oomlens::cli::verify
