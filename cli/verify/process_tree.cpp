#include "cli/verify/process_tree.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "report/files.hpp"

namespace oomlens::cli::verify {
namespace {

// Parent of `pid` from /proc/PID/stat: the field after the command name,
// which is in parentheses and may itself hold spaces and parentheses. A
// process may end between the listing of /proc and this read: its file then
// fails to open or to read (ESRCH), and it has no parent to report. Read with
// read(2), not a stream: libstdc++'s filebuf throws on a failed read.
pid_t parent_of(pid_t pid) {
  report::FileError error;
  auto stat = report::read_file("/proc/" + std::to_string(pid) + "/stat", error);
  if (!stat) return 0;
  auto close = stat->rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat->substr(close + 1));
  char state = 0;
  pid_t parent = 0;
  rest >> state >> parent;
  return state == 'Z' ? 0 : parent;  // a zombie is gone: only reaping is left
}

void reap() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

}  // namespace

void adopt_orphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }

std::vector<pid_t> descendants() {
  std::multimap<pid_t, pid_t> children;
  if (DIR* proc = ::opendir("/proc")) {
    while (dirent* e = ::readdir(proc)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (*end != '\0' || pid <= 0) continue;
      if (pid_t parent = parent_of(static_cast<pid_t>(pid))) children.emplace(parent, static_cast<pid_t>(pid));
    }
    ::closedir(proc);
  }
  std::vector<pid_t> out;
  std::vector<pid_t> todo{::getpid()};
  while (!todo.empty()) {
    pid_t at = todo.back();
    todo.pop_back();
    auto [from, to] = children.equal_range(at);
    for (auto it = from; it != to; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

void signal_descendants(int signal) {
  for (pid_t pid : descendants()) ::kill(pid, signal);
}

void stop_descendants(double grace_seconds) {
  reap();
  if (descendants().empty()) return;
  signal_descendants(SIGTERM);
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
  while (std::chrono::steady_clock::now() < until) {
    reap();
    if (descendants().empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  signal_descendants(SIGKILL);
  for (int i = 0; i < 100 && !descendants().empty(); ++i) {
    reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  reap();
}

}  // namespace oomlens::cli::verify
