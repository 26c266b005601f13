// OOM103 external-memory-holder: memory outside this process's allocator
// (other processes, or non-PyTorch memory inside it) squeezes the request.
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "rules/log/common.hpp"
#include "rules/log/log_rules.hpp"

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
  if (by_others)
    d.explanation = "Another process on the same GPU holds the memory this job needed: a second job, a notebook, a "
                    "zombie from an earlier run, or DataLoader workers that touched CUDA.\n\n";
  else if (n.non_pytorch)
    d.explanation = "Memory outside PyTorch's caching allocator fills the device: the CUDA context, cuBLAS/cuDNN "
                    "workspaces, NCCL communication buffers or another library in this process. Allocator settings "
                    "do not reach it.\n\n";
  else
    d.explanation = "The device uses far more memory than this process reserved. The message does not list processes "
                    "(ROCm, Windows and PyTorch before 2.1 print none), so the holder may be another process or "
                    "non-PyTorch memory in this one; the command below tells which.\n\n";
  d.explanation += evidence_markdown(inc);

  for (auto& fix : outside_memory_fixes(inc)) d.fixes.push_back(std::move(fix));
  d.verify = "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv";
}

}  // namespace

IncidentRule external_rule() {
  return {{"OOM103", "external-memory-holder",
           "Memory held outside this process's allocator (other processes, non-PyTorch memory) squeezes the request."},
          analyzer::OomClass::external,
          describe};
}

}  // namespace oomlens::rules::log
