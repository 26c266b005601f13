#include <iostream>

#include "cli/commands.hpp"

namespace oomlens::cli {
namespace {

constexpr const char* kFooter = R"(Each command has its own help: oomlens diagnose --help (or oomlens help diagnose).
Nothing is uploaded: oomlens reads your logs locally and makes no network connections.)";

// The command a parse stopped in: the deepest one it had entered.
const CLI::App* innermost(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return at;
}

// "oomlens diagnose": the words that start a message about `command`.
std::string command_name(const CLI::App* command) {
  std::string name;
  for (; command; command = command->get_parent()) name = command->get_name() + (name.empty() ? "" : " " + name);
  return name;
}

int usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* at = innermost(app);
  std::string name = command_name(at);
  std::string message = e.what();
  // An argument no one takes: named, and what it was taken for.
  if (dynamic_cast<const CLI::ExtrasError*>(&e) && !at->remaining().empty()) {
    const std::string extra = at->remaining().front();
    message = extra.starts_with("-") ? "unknown option '" + extra + "'"
              : at == &app            ? "unknown command '" + extra + "'"
                                      : "unexpected argument '" + extra + "'";
  }
  std::cerr << name << ": error: " << message << "\nFor more information, run '" << name << " --help'.\n";
  return kExitUsage;
}

}  // namespace

CLI::Option* add_format_option(CLI::App& app, std::string& format, const std::vector<std::string>& formats,
                               const std::string& help) {
  std::string names;
  for (const auto& f : formats) names += (names.empty() ? "" : "|") + f;
  // The names are shown as the value's type; the check's own description would repeat them.
  return app.add_option("--format", format, help)
      ->check(CLI::IsMember(formats).description(""))
      ->type_name(names);
}

int run(const Args& args, const std::vector<AddCommand>& more) {
  CLI::App app("oomlens: explains GPU out-of-memory failures, on your machine", "oomlens");
  app.set_help_flag("-h,--help", "Print help");
  app.set_version_flag("-V,--version", std::string("oomlens ") + OOMLENS_VERSION, "Print version");
  app.get_formatter()->label("SUBCOMMAND", "COMMAND");
  app.get_formatter()->column_width(26);
  app.require_subcommand(0, 1);
  app.group("Commands");  // the heading the commands are listed under (each inherits it)
  Action action;
  add_diagnose(app, action);
  add_explain(app, action);
  add_lint(app, action);
  add_snapshot(app, action);
  add_verify(app, action);
  for (const auto& add : more) add(app, action);
  app.footer(kFooter);  // after the commands: each would inherit it

  Args line = args;
  // `oomlens help [COMMAND]` is `oomlens [COMMAND] --help`.
  if (!line.empty() && line.front() == "help") {
    line.erase(line.begin());
    line.push_back("--help");
  }
  if (line.empty()) {
    std::cerr << app.help();
    return kExitUsage;
  }
  try {
    app.parse(Args(line.rbegin(), line.rend()));  // CLI11 takes them last first
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitClean;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return kExitClean;
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e);
  }
  if (!action) {  // only options, no command
    std::cerr << app.help();
    return kExitUsage;
  }
  return action();
}

}  // namespace oomlens::cli
