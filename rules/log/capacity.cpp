// OOM102: live tensors fill the device. The rule's words are on
// rules/docs/OOM102.md, read at build time.
#include <algorithm>
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
  std::string held;
  if (n.allocated && n.total)
    held = fmt::format("; live tensors hold {} of {}", format_size(*n.allocated), format_size(*n.total));
  else if (n.allocated)
    held = fmt::format("; live tensors hold {}", format_size(*n.allocated));
  d.message = fmt::format("{} out of memory, capacity: {}{}{}", device_word(inc.primary.device), failure_head(inc), held,
                          n.free ? fmt::format(", {} free", format_size(*n.free)) : "");
  d.explanation = std::string(docs::OOM102::explanation) + "\n\n" + evidence_markdown(inc);

  const auto framework = inc.primary.framework;
  d.fixes.push_back({"Lower the per-device batch size and accumulate gradients", FixKind::advice,
                     FixSafety::display_only, {}, {}, {},
                     "Halve the micro-batch and double gradient accumulation steps: the same effective batch with "
                     "about half the activation memory."});
  if (framework == analyzer::Framework::tensorflow) {
    d.fixes.push_back({"Use mixed precision", FixKind::advice, FixSafety::display_only, {}, {}, {},
                       "tf.keras.mixed_precision.set_global_policy(\"mixed_float16\") halves activation memory."});
    d.fixes.push_back({"Recompute activations", FixKind::advice, FixSafety::display_only, {}, {}, {},
                       "tf.recompute_grad around large blocks trades compute for activation memory."});
  } else if (framework == analyzer::Framework::jax) {
    d.fixes.push_back({"Rematerialise activations", FixKind::advice, FixSafety::display_only, {}, {}, {},
                       "jax.checkpoint (jax.remat) around large blocks recomputes activations in the backward pass."});
    d.fixes.push_back({"Set XLA_PYTHON_CLIENT_MEM_FRACTION=.90", FixKind::env, FixSafety::unsafe,
                       "XLA_PYTHON_CLIENT_MEM_FRACTION", ".90", {},
                       "JAX preallocates 75% of the device by default; its pool may be the limit, not the device."});
  } else {
    d.fixes.push_back({"Train in bfloat16 autocast", FixKind::advice, FixSafety::display_only, {}, {}, {},
                       "torch.autocast(\"cuda\", dtype=torch.bfloat16) halves activation memory on GPUs that support "
                       "bf16."});
    d.fixes.push_back({"Checkpoint activations", FixKind::advice, FixSafety::display_only, {}, {}, {},
                       "torch.utils.checkpoint recomputes activations in the backward pass instead of storing them "
                       "(about 30% more compute)."});
    d.fixes.push_back({"Shard parameters and optimizer state (FSDP, ZeRO)", FixKind::advice,
                       FixSafety::display_only, {}, {}, {},
                       "With several GPUs, each holds only its shard of the weights, gradients and Adam state."});
  }
  if (inc.primary.family == analyzer::OomFamily::mps)
    d.fixes.push_back({"Set PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0", FixKind::env, FixSafety::unsafe,
                       "PYTORCH_MPS_HIGH_WATERMARK_RATIO", "0.0", {},
                       "Lifts MPS's cap above the recommended working set; macOS may then swap heavily or the "
                       "system may become unstable."});
  for (const auto& cause : inc.verdict.secondary)
    if (cause.cls == analyzer::OomClass::fragmentation && inc.primary.framework == analyzer::Framework::pytorch) {
      AllocConf conf = alloc_conf_with(inc, "expandable_segments:True");
      if (!conf.already_set)
        d.fixes.push_back({fmt::format("Set {}={} (may recover the cached gap)", conf.name, conf.value), FixKind::env,
                           FixSafety::safe, conf.name, conf.value, {},
                           "The cached-but-unallocated memory would have covered this request; expandable segments "
                           "let it be reused. It will not make a full device fit."});
      break;
    }
  // Memory outside the allocator large enough to name, though the tensors
  // hold more: its fixes come after the capacity ones.
  const std::uint64_t floor = std::max<std::uint64_t>(
      std::uint64_t{1} << 30, n.total ? *n.total / 10 : 0);
  for (const auto& cause : inc.verdict.secondary)
    if (cause.cls == analyzer::OomClass::external && cause.bytes >= floor &&
        inc.primary.family != analyzer::OomFamily::mps) {
      for (auto& fix : outside_memory_fixes(inc)) d.fixes.push_back(std::move(fix));
      break;
    }
  if (framework == analyzer::Framework::pytorch) d.fixes.push_back(snapshot_fix());
  d.verify = rerun_command(inc);
}

}  // namespace

IncidentRule capacity_rule() {
  return {rule_info<docs::OOM102>(), analyzer::OomClass::capacity, describe};
}

}  // namespace oomlens::rules::log
