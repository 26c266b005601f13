#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "lsp/server.hpp"

namespace {

constexpr const char* kLspFooter = R"(Speaks the Language Server Protocol on standard input and output.
Settings (initializationOptions or the "oomlens" configuration section):
  allocatorOption          the allocator option proposed against fragmentation
                           (default expandable_segments:True)
  progressThresholdBytes   show progress for documents at least this large)";

// The language server is its own front end; the binary only starts it, as
// `oomlens lsp` or `oomlens --stdio`.
void add_lsp(CLI::App& app, oomlens::cli::Action& action) {
  auto start = [&action] { action = [] { return oomlens::lsp::run_stdio_server(); }; };
  app.add_flag_callback("--stdio", start, "Run the language server on stdio (as oomlens lsp)");
  CLI::App* lsp = app.add_subcommand("lsp", "Run the language server on stdio (also: oomlens --stdio)");
  lsp->add_flag("--stdio")->description("Use standard input and output (the only transport; clients pass it)");
  // Clients add arguments of their own (--clientProcessId=N): the server
  // starts all the same, and says what it ignored.
  lsp->allow_extras();
  lsp->footer(kLspFooter);
  lsp->callback([lsp, start] {
    for (const auto& extra : lsp->remaining()) std::cerr << "oomlens lsp: ignoring argument '" << extra << "'\n";
    start();
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  try {
    return oomlens::cli::run(oomlens::cli::Args(argv + 1, argv + argc), {add_lsp});
  } catch (const std::exception& e) {
    // Nothing should reach here; if it does, say so plainly instead of aborting.
    std::cerr << "oomlens: internal error: " << e.what() << "\n";
    return oomlens::cli::kExitUsage;
  }
}
