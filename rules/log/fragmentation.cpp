// OOM101: the allocator's cache would cover the request but no block is big
// enough. The rule's words are on rules/docs/OOM101.md, read at build time.
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "rules/log/common.hpp"
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {
namespace {

using analyzer::format_size;

void describe(const analyzer::Incident& inc, const RuleOptions& options, Diagnosis& d) {
  const auto& n = inc.primary.numbers;
  const bool pytorch = inc.primary.framework == analyzer::Framework::pytorch;
  std::string amount = n.reserved_unallocated ? format_size(*n.reserved_unallocated) : "free pool memory";
  d.message = fmt::format("{} out of memory from fragmentation: {}; {} is cached but unallocated{}{}", device_word(inc.primary.device),
                          failure_head(inc), amount,
                          n.total && n.reserved_unallocated
                              ? fmt::format(" ({:.1f}% of {})", 100.0 * static_cast<double>(*n.reserved_unallocated) / static_cast<double>(*n.total), format_size(*n.total))
                              : "",
                          n.free ? fmt::format(", {} free", format_size(*n.free)) : "");
  d.explanation = std::string(docs::OOM101::explanation) + "\n\n" + evidence_markdown(inc);

  if (pytorch) {
    AllocConf conf = alloc_conf_with(inc, options.fragmentation_option);
    if (conf.already_set) {
      d.explanation += fmt::format("\n`{}` already holds `{}` in this log, so the usual fix is in place; cap block "
                                   "splitting instead.\n",
                                   conf.name, options.fragmentation_option);
    } else {
      Fix f{fmt::format("Set {}={} before torch starts", conf.name, conf.value), FixKind::env, FixSafety::safe,
            conf.name, conf.value, {},
            "Segments grow in place instead of being carved into fixed pieces, so freed memory can be reused for "
            "large requests. Must be in the environment before the first CUDA allocation."};
      if (inc.primary.device == analyzer::Device::hip) {
        f.safety = FixSafety::unsafe;
        f.detail += " Upstream ROCm builds support it from PyTorch 2.12 (ROCm's own 2.11 builds backport it); "
                    "older ones ignore it with a warning.";
      }
      d.fixes.push_back(f);
    }
    AllocConf split = alloc_conf_with(inc, "max_split_size_mb:512");
    d.fixes.push_back({fmt::format("Set {}={}", split.name, split.value), FixKind::env, FixSafety::unsafe, split.name,
                       split.value, {},
                       "Blocks of 512 MiB or more are never split for small requests, so large free blocks stay "
                       "whole. Can raise memory use when many large tensors differ slightly in size; ignored under "
                       "backend:cudaMallocAsync."});
    d.fixes.push_back(snapshot_fix());
    d.fixes.push_back(no_empty_cache_fix());
    d.verify = conf.already_set ? rerun_command(inc, split.name, split.value) : rerun_command(inc, conf.name, conf.value);
  } else {
    d.fixes.push_back({"Set TF_GPU_ALLOCATOR=cuda_malloc_async", FixKind::env, FixSafety::unsafe, "TF_GPU_ALLOCATOR",
                       "cuda_malloc_async", {},
                       "Replaces the BFC allocator with CUDA's stream-ordered allocator, which does not fragment the "
                       "same way (TensorFlow and XLA)."});
    d.verify = rerun_command(inc, "TF_GPU_ALLOCATOR", "cuda_malloc_async");
  }
}

}  // namespace

IncidentRule fragmentation_rule() {
  return {rule_info<docs::OOM101>(), analyzer::OomClass::fragmentation, describe};
}

}  // namespace oomlens::rules::log
