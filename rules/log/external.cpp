// OOM103: memory outside this process's allocator squeezes the request. The
// rule's words are on rules/docs/OOM103.md, read at build time.
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "rules/log/common.hpp"
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {
namespace {

using analyzer::format_size;

void describe(const analyzer::Incident& inc, const RuleOptions&, Diagnosis& d) {
  const auto& n = inc.primary.numbers;
  std::uint64_t others = 0;
  for (const auto& p : n.other_processes) others += p.bytes;
  bool by_others = others >= n.non_pytorch.value_or(0) && !n.other_processes.empty();
  std::string holder;
  if (by_others)
    holder = fmt::format("other processes hold {}{}", format_size(others),
                         n.other_processes.size() == 1 ? fmt::format(" (pid {})", n.other_processes[0].pid) : "");
  else if (n.non_pytorch)
    holder = fmt::format("this process holds {} outside PyTorch's allocator", format_size(*n.non_pytorch));
  else
    holder = "memory outside this process's reservation is in use";
  d.message = fmt::format("{} out of memory, held elsewhere: {}; {}{}", device_word(inc.primary.device), failure_head(inc), holder,
                          n.total ? fmt::format(" of {}", format_size(*n.total)) : "");
  d.explanation = std::string(by_others        ? docs::OOM103::explanation_other_processes
                                : n.non_pytorch ? docs::OOM103::explanation_non_pytorch
                                                : docs::OOM103::explanation_holder_unknown) +
                  "\n\n" + evidence_markdown(inc);

  for (auto& fix : outside_memory_fixes(inc)) d.fixes.push_back(std::move(fix));
  d.verify = find_holders_fix().command;
}

}  // namespace

IncidentRule external_rule() {
  return {rule_info<docs::OOM103>(), analyzer::OomClass::external, describe};
}

}  // namespace oomlens::rules::log
