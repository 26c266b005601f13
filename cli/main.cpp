#include <exception>
#include <iostream>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  oomlens::cli::Args args(argv + 1, argv + argc);
  try {
    return oomlens::cli::run(args);
  } catch (const std::exception& e) {
    // Nothing should reach here; if it does, say so plainly instead of aborting.
    std::cerr << "oomlens: internal error: " << e.what() << "\n";
    return oomlens::cli::kExitUsage;
  }
}
