// Finding a job's processes in /proc while other processes come and go.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "cli/verify/process_tree.hpp"

using namespace oomlens::cli::verify;

namespace {

// A child that waits until it is killed.
pid_t start_sleeper() {
  pid_t pid = ::fork();
  if (pid == 0) {
    for (;;) ::pause();
  }
  return pid;
}

}  // namespace

TEST_CASE("descendants are found while other processes end during the listing of /proc", "[cli][verify]") {
  // A process listed in /proc may be reaped before its stat file is read:
  // the read then fails with ESRCH. Children that end and are reaped as fast
  // as they can be make that happen many times over the listings below.
  pid_t sleeper = start_sleeper();
  REQUIRE(sleeper > 0);
  std::atomic<bool> stop = false;
  std::atomic<int> churned = 0;
  auto churn = [&] {
    while (!stop) {
      pid_t pid = ::fork();
      if (pid == 0) ::_exit(0);
      if (pid > 0) ::waitpid(pid, nullptr, 0);
      ++churned;
    }
  };
  std::thread churners[] = {std::thread(churn), std::thread(churn)};
  int listings = 0, found = 0;
  bool threw = false;
  for (; listings < 1000; ++listings) {
    try {
      auto all = descendants();
      found += std::count(all.begin(), all.end(), sleeper) == 1;
    } catch (...) {
      threw = true;
      break;
    }
  }
  stop = true;
  for (auto& t : churners) t.join();
  ::kill(sleeper, SIGKILL);
  ::waitpid(sleeper, nullptr, 0);
  INFO(churned << " short-lived children during " << listings << " listings");
  CHECK_FALSE(threw);
  CHECK(found == listings);
  CHECK(churned > 0);
}
