// The rule catalogue: adding a rule adds one line here.
#include <cctype>
#include <map>

#include "rules/log/log_rules.hpp"
#include "rules/source/source_rules.hpp"
#include "rules/rule.hpp"

namespace oomlens::rules {

const std::map<std::string, std::string_view>& embedded_rule_docs();  // generated from rules/docs/*.md

const std::vector<IncidentRule>& incident_rules() {
  static const std::vector<IncidentRule> rules = {
      log::fragmentation_rule(), log::capacity_rule(), log::external_rule(), log::limit_rule(),
      log::unquantified_rule(),
  };
  return rules;
}

const std::vector<FindingRule>& finding_rules() {
  static const std::vector<FindingRule> rules = {
      log::pressure_warning_rule(),        log::host_oom_kill_rule(),   log::dataloader_killed_rule(),
      log::host_allocation_failure_rule(), log::not_memory_error_rule(), log::collateral_rule(),
  };
  return rules;
}

const std::vector<SourceRule>& source_rules() {
  static const std::vector<SourceRule> rules = {source::empty_cache_in_loop_rule(), source::alloc_conf_too_late_rule(),
                                                source::invalid_alloc_conf_rule(),
                                                source::snapshot_never_dumped_rule()};
  return rules;
}

std::vector<RuleInfo> all_rules() {
  std::vector<RuleInfo> out;
  for (const auto& r : incident_rules()) out.push_back(r.info);
  for (const auto& r : finding_rules()) out.push_back(r.info);
  for (const auto& r : source_rules()) out.push_back(r.info);
  return out;
}

std::optional<RuleInfo> find_rule(std::string_view code_or_name) {
  for (const auto& info : all_rules()) {
    std::string upper(code_or_name);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (info.code == upper || info.name == code_or_name) return info;
  }
  return std::nullopt;
}

std::optional<std::string_view> rule_doc(std::string_view code_or_name) {
  auto info = find_rule(code_or_name);
  if (!info) return std::nullopt;
  const auto& docs = embedded_rule_docs();
  auto it = docs.find(std::string(info->code));
  if (it == docs.end()) return std::nullopt;
  return it->second;
}

std::string rule_doc_url(std::string_view code) {
  return "https://github.com/oomlens/oomlens/blob/main/rules/docs/" + std::string(code) + ".md";
}

}  // namespace oomlens::rules
