#include <iostream>

#include "cli/commands.hpp"

namespace oomlens::cli {
namespace {

constexpr const char* kHelp = R"(oomlens: explains GPU out-of-memory failures, on your machine

Usage: oomlens <COMMAND> [OPTIONS]

Commands:
  diagnose [FILE...|-]   Find and explain every GPU out-of-memory failure in training logs
  explain CODE           Show a rule's documentation (e.g. oomlens explain OOM101)
  lint [--fix|--diff] PATH...  Check Python training scripts (e.g. empty_cache in a loop) and fix them
  snapshot FILE          Explain a PyTorch memory snapshot (.pickle), read without running it
  lsp                    Run the language server on stdio (also: oomlens --stdio)

Options:
  -h, --help       Print help (also for each command: oomlens diagnose --help)
  -V, --version    Print version

Nothing is uploaded: oomlens reads your logs locally and makes no network connections.
)";

}  // namespace

int run(const Args& args) {
  if (args.empty()) {
    std::cerr << kHelp;
    return kExitUsage;
  }
  const std::string& cmd = args[0];
  Args rest(args.begin() + 1, args.end());
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::cout << kHelp;
    return kExitClean;
  }
  if (cmd == "-V" || cmd == "--version") {
    std::cout << "oomlens " << OOMLENS_VERSION << "\n";
    return kExitClean;
  }
  if (cmd == "diagnose") return diagnose_command(rest);
  if (cmd == "explain") return explain_command(rest);
  if (cmd == "lint") return lint_command(rest);
  if (cmd == "snapshot") return snapshot_command(rest);
  std::cerr << "oomlens: error: unknown command '" << cmd << "'\n\n" << kHelp;
  return kExitUsage;
}

}  // namespace oomlens::cli
