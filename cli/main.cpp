#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "lsp/server.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  oomlens::cli::Args args(argv + 1, argv + argc);
  try {
    // The language server is its own front end; the binary only starts it.
    if (!args.empty() && (args[0] == "lsp" || args[0] == "--stdio")) {
      for (std::size_t i = 1; i < args.size(); ++i)
        if (args[i] == "-h" || args[i] == "--help") {
          std::cout << "Usage: oomlens lsp [--stdio]\n\nSpeaks the Language Server Protocol on standard input and "
                       "output.\nSettings (initializationOptions or the \"oomlens\" configuration section):\n"
                       "  allocatorOption          the allocator option proposed against fragmentation\n"
                       "                           (default expandable_segments:True)\n"
                       "  progressThresholdBytes   show progress for documents at least this large\n";
          return 0;
        }
      return oomlens::lsp::run_stdio_server();
    }
    return oomlens::cli::run(args);
  } catch (const std::exception& e) {
    // Nothing should reach here; if it does, say so plainly instead of aborting.
    std::cerr << "oomlens: internal error: " << e.what() << "\n";
    return oomlens::cli::kExitUsage;
  }
}
