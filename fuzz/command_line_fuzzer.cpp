// libFuzzer target: any bytes as a command line (arguments separated by NUL
// bytes) through the whole CLI11 setup of every command. Parsing must end in
// help, a usage error or a command to run, and never crash; the command
// itself is not run, since it would read files or start a job.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/commands.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  oomlens::cli::Args args;
  std::string arg;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += static_cast<char>(data[i]);
    }
  }
  if (!arg.empty()) args.push_back(arg);
  // Runs after every command's own callback: what they chose to run is
  // replaced by nothing.
  auto stand_in = [](CLI::App& app, oomlens::cli::Action& action) {
    app.final_callback([&action] { action = [] { return oomlens::cli::kExitClean; }; });
  };
  (void)oomlens::cli::run(args, {stand_in});
  return 0;
}
