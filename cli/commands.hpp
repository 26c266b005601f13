// The command-line front end: one function per subcommand.
#pragma once

#include <string>
#include <vector>

namespace oomlens::cli {

using Args = std::vector<std::string>;

// Exit statuses, as ripgrep and ruff use them.
inline constexpr int kExitClean = 0;     // nothing found
inline constexpr int kExitFound = 1;     // at least one GPU OOM incident
inline constexpr int kExitUsage = 2;     // usage or input error

int run(const Args& args);  // args[0] is the subcommand
int diagnose_command(const Args& args);
int explain_command(const Args& args);
int lint_command(const Args& args);
int snapshot_command(const Args& args);

}  // namespace oomlens::cli
