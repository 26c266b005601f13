#include "cli/verify/job_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>

#include "cli/verify/process_tree.hpp"

extern char** environ;

namespace oomlens::cli::verify {
namespace {

using Clock = std::chrono::steady_clock;

// After a stop signal, how long the job has before the next, harder one: long
// enough for the probe to write its report and for atexit handlers.
constexpr double kStopGraceSeconds = 5;
// After the job's main process ended, how long its output may still come from
// processes it left behind before they are stopped.
constexpr double kDrainSeconds = 2;

std::atomic<bool> g_interrupted{false};
int g_wake[2] = {-1, -1};  // the signal handler's self-pipe: wakes poll()

void on_interrupt(int) {
  g_interrupted = true;
  char c = 1;
  [[maybe_unused]] auto n = ::write(g_wake[1], &c, 1);
}

std::vector<std::string> environment(const JobSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  for (const auto& name : spec.unset_env) env.erase(name);
  for (const auto& [name, value] : spec.set_env) env[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

struct Output {
  int read_fd = -1;   // what oomlens reads the job's output from
  int write_fd = -1;  // what the job writes to (its stdout and stderr)
  bool terminal = false;
};

Output open_output(const JobSpec& spec) {
  if (spec.terminal) {
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master >= 0 && ::grantpt(master) == 0 && ::unlockpt(master) == 0) {
      if (const char* name = ::ptsname(master)) {
        int slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave >= 0) {
          winsize size{};
          if (::ioctl(spec.echo_fd, TIOCGWINSZ, &size) == 0) ::ioctl(master, TIOCSWINSZ, &size);
          // The job's bytes pass through unchanged ('\n' not turned into
          // "\r\n"): the user's terminal does that itself, and the kept log
          // reads like one the job would have written to a file.
          termios mode{};
          if (::tcgetattr(slave, &mode) == 0) {
            mode.c_oflag &= ~static_cast<tcflag_t>(ONLCR);
            ::tcsetattr(slave, TCSANOW, &mode);
          }
          return {master, slave, true};
        }
      }
    }
    if (master >= 0) ::close(master);  // no pseudo-terminal here: a pipe will do
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  return {fds[0], fds[1], false};
}

void write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    auto w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;  // the terminal went away: the job still runs to its end
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

// The job's process, started: its own session on a pseudo-terminal (so it
// is that terminal's foreground job), else its own process group.
pid_t start(const JobSpec& spec, const Output& out) {
  std::vector<std::string> env = environment(spec);
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int failed[2];  // the child reports a failed exec through it; closes on success
  if (::pipe2(failed, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(s, SIG_DFL);
    if (out.terminal) {
      ::setsid();
      ::ioctl(out.write_fd, TIOCSCTTY, 0);
    } else {
      ::setpgid(0, 0);
    }
    ::dup2(out.write_fd, STDOUT_FILENO);
    ::dup2(out.write_fd, STDERR_FILENO);
    ::execvpe(argv[0], argv.data(), envp.data());
    int error = errno;
    [[maybe_unused]] auto n = ::write(failed[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(failed[1]);
  int error = 0;
  ssize_t n;
  do n = ::read(failed[0], &error, sizeof error);
  while (n < 0 && errno == EINTR);
  ::close(failed[0]);
  if (n == static_cast<ssize_t>(sizeof error)) {
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error("cannot start '" + spec.argv[0] + "': " + std::strerror(error));
  }
  return pid;
}

// Escalating stop: the first signal, then SIGTERM, then SIGKILL, each after
// a grace period, to the job's process group and every descendant.
class Stopper {
 public:
  explicit Stopper(pid_t group) : group_(group) {}
  void begin(int first_signal) {
    if (stage_ > 0) return;
    send(first_signal);
    stage_ = first_signal == SIGTERM ? 2 : 1;
  }
  void tick() {
    if (stage_ == 0 || std::chrono::duration<double>(Clock::now() - since_).count() < kStopGraceSeconds) return;
    if (stage_ == 1) send(SIGTERM), stage_ = 2;
    else if (stage_ == 2) send(SIGKILL), stage_ = 3;
  }

 private:
  void send(int signal) {
    ::kill(-group_, signal);
    signal_descendants(signal);
    since_ = Clock::now();
  }
  pid_t group_;
  int stage_ = 0;
  Clock::time_point since_;
};

}  // namespace

std::string cannot_start(const std::string& program) {
  auto check = [](const std::string& path) -> std::string {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (::access(path.c_str(), X_OK) != 0) return std::strerror(errno);
    return {};
  };
  if (program.empty()) return "no command given";
  if (program.find('/') != std::string::npos) return check(program);
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (check((dir.empty() ? "." : dir) + "/" + program).empty()) return {};
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return "not found on PATH";
}

InterruptWatch::InterruptWatch() {
  g_interrupted = false;
  if (g_wake[0] < 0 && ::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  ::sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
  adopt_orphans();
}

InterruptWatch::~InterruptWatch() {
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
}

bool InterruptWatch::interrupted() { return g_interrupted; }

JobOutcome run_job(const JobSpec& spec, const std::function<void(std::string_view)>& output) {
  Output out = open_output(spec);
  auto started = Clock::now();
  pid_t pid;
  try {
    pid = start(spec, out);
  } catch (...) {
    ::close(out.read_fd);
    ::close(out.write_fd);
    throw;
  }
  ::close(out.write_fd);  // the job holds its end; EOF comes when all its processes closed theirs

  JobOutcome result;
  Stopper stopper(pid);
  bool reaped = false, output_open = true, drained = false;
  std::optional<Clock::time_point> ended;
  std::vector<char> buffer(1 << 16);
  while (!reaped || output_open) {
    double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    if (!reaped && spec.max_seconds && elapsed >= *spec.max_seconds && !result.timed_out && !result.interrupted) {
      result.timed_out = true;
      stopper.begin(SIGTERM);  // the probe writes its report on SIGTERM
    }
    if (!reaped && g_interrupted && !result.interrupted) {
      result.interrupted = true;
      stopper.begin(SIGINT);  // as Ctrl-C would have reached it: KeyboardInterrupt, atexit
    }
    // Processes the job left behind may hold its output open for ever.
    if (reaped && output_open) {
      double since_end = std::chrono::duration<double>(Clock::now() - *ended).count();
      if (since_end > kDrainSeconds && !drained) {
        stop_descendants(kStopGraceSeconds);
        drained = true;
      } else if (since_end > 2 * kDrainSeconds + kStopGraceSeconds) {
        break;  // held open by something outside the job's tree: stop reading
      }
    }
    stopper.tick();

    pollfd fds[2] = {{output_open ? out.read_fd : -1, POLLIN, 0}, {g_wake[0], POLLIN, 0}};
    int ready = ::poll(fds, 2, 100);
    if (ready > 0 && (fds[1].revents & POLLIN)) {
      char drain[64];
      while (::read(g_wake[0], drain, sizeof drain) > 0) {
      }
    }
    if (ready > 0 && fds[0].revents) {
      auto n = ::read(out.read_fd, buffer.data(), buffer.size());
      if (n > 0) {
        write_all(spec.echo_fd, buffer.data(), static_cast<std::size_t>(n));
        output(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        output_open = false;  // EOF; on a pseudo-terminal, EIO once the last writer closed
      }
    }
    if (!reaped) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        reaped = true;
        ended = Clock::now();
        result.wall_seconds = std::chrono::duration<double>(*ended - started).count();
        if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
      }
    }
  }
  ::close(out.read_fd);
  stop_descendants(kStopGraceSeconds);  // nothing of the job outlives its run
  return result;
}

}  // namespace oomlens::cli::verify
