// The command-line front end: one subcommand a file. Each adds itself to the
// program's parser (CLI11) and, once its arguments parsed, says what to run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace oomlens::cli {

using Args = std::vector<std::string>;

// Exit statuses, as ripgrep and ruff use them.
inline constexpr int kExitClean = 0;     // nothing found
inline constexpr int kExitFound = 1;     // at least one GPU OOM incident
inline constexpr int kExitUsage = 2;     // usage or input error

// What the command line asks for: set by the chosen subcommand's callback,
// run once the whole line parsed.
using Action = std::function<int()>;

// Adds a subcommand to `app`; its callback sets `action`.
using AddCommand = std::function<void(CLI::App& app, Action& action)>;

void add_diagnose(CLI::App& app, Action& action);
void add_explain(CLI::App& app, Action& action);
void add_lint(CLI::App& app, Action& action);
void add_snapshot(CLI::App& app, Action& action);
void add_verify(CLI::App& app, Action& action);

// Parses `args` (without the program's name) and runs the command they name.
// `more` adds commands this library cannot hold (the language server).
// A usage error is named on stderr and returns kExitUsage.
int run(const Args& args, const std::vector<AddCommand>& more = {});

// --format, one of `formats`; `help` says what each is.
CLI::Option* add_format_option(CLI::App& app, std::string& format, const std::vector<std::string>& formats,
                               const std::string& help);

}  // namespace oomlens::cli
