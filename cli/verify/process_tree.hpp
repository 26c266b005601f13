// The processes a job started, wherever they went: oomlens makes itself the
// subreaper of its descendants, so a grandchild that detached (setsid, a
// daemonised worker) is still found by following parent ids from here.
#pragma once

#include <sys/types.h>

#include <vector>

namespace oomlens::cli::verify {

// Makes this process the reaper of orphaned descendants (Linux), so that
// they stay in its tree.
void adopt_orphans();

// Every live process below this one, from /proc.
std::vector<pid_t> descendants();

// Sends `signal` to every descendant.
void signal_descendants(int signal);

// Stops every descendant: SIGTERM, then SIGKILL for those still alive after
// `grace_seconds`; reaps them.
void stop_descendants(double grace_seconds);

}  // namespace oomlens::cli::verify
