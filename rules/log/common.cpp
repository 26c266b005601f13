#include "rules/log/common.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "rules/verify/command_line.hpp"

namespace oomlens::rules::log {

using analyzer::format_size;

const char* device_word(analyzer::Device d) {
  switch (d) {
    case analyzer::Device::tpu: return "TPU";
    case analyzer::Device::npu: return "NPU";
    case analyzer::Device::mlu: return "MLU";
    case analyzer::Device::gcu: return "GCU";
    case analyzer::Device::hpu: return "HPU";
    default: return "GPU";
  }
}

std::string failure_head(const analyzer::Incident& inc) {
  const auto& e = inc.primary;
  std::string s = !e.numbers.requested ? std::string("allocation failed")
                  : *e.numbers.requested >= analyzer::kPlaceholderSize
                      ? std::string("tried to allocate more than 1 EiB")
                      : fmt::format("tried to allocate {}", format_size(*e.numbers.requested));
  if (e.gpu) s += fmt::format(" on {} {}", device_word(e.device), *e.gpu);
  if (inc.first_failing_rank) {
    if (e.rank && e.rank != inc.first_failing_rank)
      // The figures come from another rank's message: the first one had none.
      s += fmt::format(" (rank {}'s message; rank {} failed first, of {} ranks)", *e.rank, *inc.first_failing_rank,
                       std::max<std::size_t>(inc.oom_ranks.size(), 2));
    else if (inc.oom_ranks.size() > 1)
      s += fmt::format(" (rank {}, first of {} ranks)", *inc.first_failing_rank, inc.oom_ranks.size());
    else
      s += fmt::format(" (rank {})", *inc.first_failing_rank);
  }
  return s;
}

AllocConf alloc_conf_with(const analyzer::Incident& inc, const std::string& option) {
  AllocConf c;
  // PYTORCH_CUDA_ALLOC_CONF is read by every CUDA release that has these
  // options; the newer PYTORCH_ALLOC_CONF did not enable expandable segments
  // on 2.9.1. ROCm builds read only PYTORCH_HIP_ALLOC_CONF.
  c.name = inc.primary.device == analyzer::Device::hip ? "PYTORCH_HIP_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
  std::string existing;
  if (const auto* setting = analyzer::allocator_conf_setting(inc)) {
    const std::string& d = setting->detail;
    auto eq = d.find('=');
    std::string name = d.substr(0, eq);
    if (eq != std::string::npos && name.find("ALLOC_CONF") != std::string::npos) {
      // The variable already in use wins: PYTORCH_ALLOC_CONF shadows the others.
      c.name = name;
      existing = d.substr(eq + 1);
    }
  }
  std::string key = option.substr(0, option.find(':'));
  if (existing.find(option) != std::string::npos) {
    c.already_set = true;
    c.value = existing;
    return c;
  }
  // Replace an existing value for the same key, keep the other options.
  std::string merged;
  std::size_t start = 0;
  while (start <= existing.size() && !existing.empty()) {
    std::size_t comma = existing.find(',', start);
    std::string item = existing.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty() && item.substr(0, item.find(':')) != key) merged += (merged.empty() ? "" : ",") + item;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  c.value = merged.empty() ? option : merged + "," + option;
  return c;
}

std::string script_of(const analyzer::Incident& inc) {
  if (inc.entry) return inc.entry->file;
  return inc.location ? inc.location->file : std::string("train.py");
}

std::string rerun_command(const analyzer::Incident& inc, const std::string& variable, const std::string& value,
                          bool baseline) {
  // A multi-rank job was started by a launcher; the highest rank seen tells
  // how many processes at least.
  int ranks = 0;
  for (int r : inc.oom_ranks) ranks = std::max(ranks, r + 1);
  for (int r : inc.collateral_ranks) ranks = std::max(ranks, r + 1);
  std::string launcher = ranks > 1 ? fmt::format("torchrun --nproc_per_node={}", ranks) : "python";
  return verify::verify_command(variable, value, fmt::format("{} {}", launcher, verify::shell_quote(script_of(inc))),
                                baseline);
}

Fix snapshot_fix() {
  return {"Record a memory snapshot of the failing step",
          FixKind::advice,
          FixSafety::display_only,
          {},
          {},
          {},
          "Call torch.cuda.memory._record_memory_history(max_entries=100000, stacks=\"python\") before the loop "
          "and torch.cuda.memory._dump_snapshot(\"oom.pickle\") in an `except torch.OutOfMemoryError` handler "
          "(or let `oomlens verify --snapshot` record one without editing the script); the snapshot shows which "
          "allocations were alive and how the cache was split."};
}

Fix no_empty_cache_fix() {
  return {"Do not add torch.cuda.empty_cache() to the loop",
          FixKind::advice,
          FixSafety::display_only,
          {},
          {},
          {},
          "The allocator already releases its unused cache and retries before it raises; empty_cache() cannot prevent "
          "this error and slows every step by forcing fresh cudaMalloc calls."};
}

std::vector<Fix> outside_memory_fixes(const analyzer::Incident& inc) {
  const auto& n = inc.primary.numbers;
  std::uint64_t others = 0;
  for (const auto& p : n.other_processes) others += p.bytes;
  const bool by_others = others >= n.non_pytorch.value_or(0) && !n.other_processes.empty();
  std::vector<Fix> fixes{find_holders_fix()};
  if (by_others || n.other_processes.empty()) {
    fixes.push_back({"Stop the other holder, or run on a free GPU", FixKind::advice, FixSafety::display_only, {}, {},
                     {},
                     "End the process found above (a leftover run holds memory until it exits), or choose a free "
                     "device with CUDA_VISIBLE_DEVICES."});
  }
  if (!by_others && n.non_pytorch) {
    fixes.push_back({"Shrink NCCL's buffers", FixKind::env, FixSafety::unsafe, "NCCL_BUFFSIZE", "1048576", {},
                     "Each NCCL channel allocates buffers per peer outside PyTorch (default 4 MiB each); smaller "
                     "buffers can slow collectives."});
    fixes.push_back({"Use small cuBLAS workspaces", FixKind::env, FixSafety::unsafe, "CUBLAS_WORKSPACE_CONFIG",
                     ":16:8", {},
                     "Eight 16 KiB workspaces per stream instead of cuBLAS's default of several MiB each; some "
                     "matrix multiplications get slower."});
    fixes.push_back({"Keep CUDA out of DataLoader workers", FixKind::advice, FixSafety::display_only, {}, {}, {},
                     "Each process that touches CUDA creates its own context (hundreds of MiB)."});
  }
  return fixes;
}

Fix find_holders_fix() {
  return {"List the processes holding GPU memory",
          FixKind::command,
          FixSafety::safe,
          {},
          {},
          "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
          "Read-only. On AMD GPUs: rocm-smi --showpids."};
}

std::string verdict_markdown(const analyzer::Verdict& verdict) {
  std::string md;
  for (const auto& line : verdict.arithmetic)
    if (!line.empty()) md += "- " + line + "\n";
  for (const auto& cause : verdict.secondary)
    md += fmt::format("- also: {}{} ({})\n", cause.bytes ? format_size(cause.bytes) + " " : "", cause.what,
                      analyzer::to_string(cause.cls));
  if (verdict.unaccounted && *verdict.unaccounted)
    md += fmt::format("- {} of device memory in use is not named by the message (driver reservations, processes "
                      "NVML cannot see)\n",
                      format_size(*verdict.unaccounted));
  for (const auto& note : verdict.notes) md += "\n" + note + "\n";
  return md;
}

std::string evidence_markdown(const analyzer::Incident& inc) {
  std::string md = verdict_markdown(inc.verdict);
  for (const auto& note : inc.notes) md += "\n" + note + "\n";
  return md;
}

}  // namespace oomlens::rules::log
