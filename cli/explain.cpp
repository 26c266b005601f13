#include <iostream>

#include "cli/commands.hpp"
#include "rules/rule.hpp"

namespace oomlens::cli {

int explain_command(const Args& args) {
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << "Usage: oomlens explain CODE|NAME\n\nPrints a rule's documentation page. Rules:\n";
    for (const auto& r : rules::all_rules()) std::cout << "  " << r.code << "  " << r.name << "\n";
    return kExitClean;
  }
  if (args.size() == 1 && args[0] == "--list") {
    for (const auto& r : rules::all_rules()) std::cout << r.code << "\t" << r.name << "\t" << r.summary << "\n";
    return kExitClean;
  }
  if (args.size() != 1) {
    std::cerr << "oomlens explain: error: expected one rule code (e.g. OOM101); `oomlens explain --list` lists them\n";
    return kExitUsage;
  }
  auto doc = rules::rule_doc(args[0]);
  if (!doc) {
    std::cerr << "oomlens explain: error: no rule named '" << args[0] << "'; `oomlens explain --list` lists them\n";
    return kExitUsage;
  }
  std::cout << *doc;
  if (!doc->empty() && doc->back() != '\n') std::cout << "\n";
  return kExitClean;
}

}  // namespace oomlens::cli
