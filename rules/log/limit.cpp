// OOM104: a cap on the process's memory was hit while the device still had
// memory. The rule's words are on rules/docs/OOM104.md, read at build time.
#include <cmath>
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "rules/log/common.hpp"
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {
namespace {

using analyzer::format_size;

void describe(const analyzer::Incident& inc, const RuleOptions&, Diagnosis& d) {
  const auto& e = inc.primary;
  const auto& n = e.numbers;
  d.message = fmt::format("{} out of memory at a memory cap: {}; the cap is {}{}", device_word(inc.primary.device), failure_head(inc),
                          n.limit ? format_size(*n.limit) : "unknown",
                          n.free ? fmt::format(", {} still free on the device", format_size(*n.free)) : "");
  d.explanation = std::string(docs::OOM104::explanation) + "\n\n" + evidence_markdown(inc);

  if (e.family == analyzer::OomFamily::mps) {
    d.fixes.push_back({"Set PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0", FixKind::env, FixSafety::unsafe,
                       "PYTORCH_MPS_HIGH_WATERMARK_RATIO", "0.0", {},
                       "Removes MPS's upper limit; macOS may then swap heavily or the system may fail."});
    d.verify = rerun_command(inc, "PYTORCH_MPS_HIGH_WATERMARK_RATIO", "0.0");
    return;
  }
  if (e.framework == analyzer::Framework::jax) {
    d.fixes.push_back({"Set XLA_PYTHON_CLIENT_MEM_FRACTION=.90", FixKind::env, FixSafety::unsafe,
                       "XLA_PYTHON_CLIENT_MEM_FRACTION", ".90", {},
                       "JAX preallocates 75% of the device by default."});
    d.verify = rerun_command(inc, "XLA_PYTHON_CLIENT_MEM_FRACTION", ".90");
    return;
  }
  std::string needed = "a larger fraction";
  if (n.total && *n.total && n.requested) {
    std::uint64_t used = n.reserved ? *n.reserved : n.allocated.value_or(0);
    double frac = static_cast<double>(used + *n.requested) / static_cast<double>(*n.total);
    frac = std::min(1.0, std::ceil(frac * 20.0) / 20.0);  // round up to the next 0.05
    needed = fmt::format("{:.2f}", frac);
  }
  d.fixes.push_back({fmt::format("Raise torch.cuda.set_per_process_memory_fraction to at least {}", needed),
                     FixKind::advice, FixSafety::display_only, {}, {}, {},
                     "The cap counts this process's reserved memory; the request needs reserved + request under it. "
                     "Leave headroom if other jobs share the GPU on purpose."});
  d.fixes.push_back({"Remove the cap if nothing else shares the GPU", FixKind::advice, FixSafety::display_only, {}, {},
                     {}, "Look for set_per_process_memory_fraction or per_process_memory_fraction in the allocator settings."});
  d.verify = rerun_command(inc);
}

}  // namespace

IncidentRule limit_rule() {
  return {rule_info<docs::OOM104>(), analyzer::OomClass::limit, describe};
}

}  // namespace oomlens::rules::log
