// OOM105: a GPU OOM whose message carries no figures. The rule's words are on
// rules/docs/OOM105.md, read at build time.
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "rules/log/common.hpp"
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {
namespace {

void describe(const analyzer::Incident& inc, const RuleOptions&, Diagnosis& d) {
  const auto& e = inc.primary;
  std::string what;
  switch (e.family) {
    case analyzer::OomFamily::cuda_runtime: what = "a CUDA call failed with out of memory"; break;
    case analyzer::OomFamily::cublas: what = "cuBLAS could not allocate its workspace"; break;
    case analyzer::OomFamily::cudnn: what = "cuDNN could not allocate memory"; break;
    case analyzer::OomFamily::nccl: what = "NCCL could not allocate its buffers"; break;
    case analyzer::OomFamily::xla: what = "XLA could not allocate a buffer"; break;
    case analyzer::OomFamily::generic: what = "the runtime reported out of memory in its own words"; break;
    case analyzer::OomFamily::memory_summary: what = "memory_summary() counted out-of-memory errors"; break;
    case analyzer::OomFamily::tensorflow:
      // JAX ships the same BFC allocator; its warning reads like TensorFlow's.
      what = e.framework == analyzer::Framework::jax ? "XLA's allocator could not allocate a buffer"
                                                     : "TensorFlow could not allocate a tensor";
      break;
    default: what = e.truncated ? "the allocator's message was cut short" : "the allocator failed"; break;
  }
  d.message = fmt::format("{} out of memory without figures: {}{}", device_word(inc.primary.device), what,
                          e.numbers.requested ? fmt::format(" ({})", failure_head(inc)) : "");
  d.explanation = std::string(docs::OOM105::explanation) + "\n\n" + evidence_markdown(inc);
  if (inc.verdict.reason == "uvm") {
    d.message = fmt::format("{} out of memory in unified memory (torch.cuda._use_uvm): {}", device_word(e.device),
                            failure_head(inc));
    d.explanation = std::string(docs::OOM105::explanation_uvm) + "\n\n" + evidence_markdown(inc);
  }
  if (inc.verdict.reason == "numbers-contradict") {
    d.message = fmt::format("{} out of memory that its own figures do not explain: {}; {} free on the device", device_word(inc.primary.device),
                            failure_head(inc), e.numbers.free ? analyzer::format_size(*e.numbers.free) : "?");
    d.explanation = std::string(docs::OOM105::explanation_numbers_contradict) + "\n\n" + evidence_markdown(inc);
  }
  if (e.numbers.requested && *e.numbers.requested >= analyzer::kPlaceholderSize) {
    d.message = fmt::format("Impossible allocation size, not a memory shortage: {}", failure_head(inc));
    d.fixes.push_back({"Print the shapes that feed the failing line", FixKind::advice, FixSafety::display_only, {}, {},
                       {},
                       "A size this large comes from a negative, overflowing or uninitialised dimension: print the "
                       "shape arguments (and their dtype: int32 overflows) just before the call."});
    d.verify = rerun_command(inc);
    return;
  }
  d.fixes.push_back(find_holders_fix());
  if (e.framework == analyzer::Framework::pytorch || e.framework == analyzer::Framework::unknown) {
    d.fixes.push_back({"Print torch.cuda.memory_summary() when it fails", FixKind::advice, FixSafety::display_only, {},
                       {}, {},
                       "In an except handler around the step; with torch.cuda.mem_get_info() it gives the figures the "
                       "message lacks."});
    d.fixes.push_back(snapshot_fix());
  }
  if (e.family == analyzer::OomFamily::nccl)
    d.fixes.push_back({"Re-run with NCCL_DEBUG=INFO", FixKind::env, FixSafety::safe, "NCCL_DEBUG", "INFO", {},
                       "NCCL then logs which allocation failed."});
  if (e.family == analyzer::OomFamily::xla)
    d.fixes.push_back({"Set XLA_PYTHON_CLIENT_ALLOCATOR=platform to see real usage", FixKind::env, FixSafety::unsafe,
                       "XLA_PYTHON_CLIENT_ALLOCATOR", "platform", {},
                       "Allocates exactly what is needed (slow); shows whether the program fits at all."});
  if (e.truncated)
    d.fixes.push_back({"Upgrade to PyTorch 2.4 or later", FixKind::advice, FixSafety::display_only, {}, {}, {},
                       "2.3 cut the message after \"GPU\"; later releases print the full figures."});
  // Settings that make the next failure say more: one run with them, not an A/B.
  if (e.family == analyzer::OomFamily::cuda_runtime) d.verify = rerun_command(inc, "CUDA_LAUNCH_BLOCKING", "1", false);
  else if (e.family == analyzer::OomFamily::nccl) d.verify = rerun_command(inc, "NCCL_DEBUG", "INFO", false);
  else d.verify = rerun_command(inc);
}

}  // namespace

IncidentRule unquantified_rule() {
  return {rule_info<docs::OOM105>(), analyzer::OomClass::unquantified, describe};
}

}  // namespace oomlens::rules::log
