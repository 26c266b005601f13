#include <iostream>

#include "cli/commands.hpp"
#include "rules/rule.hpp"

namespace oomlens::cli {
namespace {

struct Options {
  std::string rule;
  bool list = false;
};

std::string rules_footer() {
  std::string text = "Rules:\n";
  for (const auto& r : rules::all_rules()) text += "  " + std::string(r.code) + "  " + std::string(r.name) + "\n";
  text.pop_back();
  return text;
}

int explain(const Options& o) {
  if (o.list) {
    for (const auto& r : rules::all_rules()) std::cout << r.code << "\t" << r.name << "\t" << r.summary << "\n";
    return kExitClean;
  }
  if (o.rule.empty()) {
    std::cerr << "oomlens explain: error: expected one rule code (e.g. OOM101); `oomlens explain --list` lists them\n";
    return kExitUsage;
  }
  auto doc = rules::rule_doc(o.rule);
  if (!doc) {
    std::cerr << "oomlens explain: error: no rule named '" << o.rule << "'; `oomlens explain --list` lists them\n";
    return kExitUsage;
  }
  std::cout << *doc;
  if (!doc->empty() && doc->back() != '\n') std::cout << "\n";
  return kExitClean;
}

}  // namespace

void add_explain(CLI::App& app, Action& action) {
  auto o = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand("explain", "Show a rule's documentation (e.g. oomlens explain OOM101)");
  command->add_option("CODE|NAME", o->rule, "The rule, by code (OOM101) or name (allocator-fragmentation)")
      ->type_name("");
  command->add_flag("--list", o->list, "List every rule: code, name and summary, tab-separated");
  command->footer(rules_footer);
  command->callback([o, &action] { action = [o] { return explain(*o); }; });
}

}  // namespace oomlens::cli
