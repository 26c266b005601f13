// OOM302 (its words: rules/docs/OOM302.md): PYTORCH_CUDA_ALLOC_CONF (or
// PYTORCH_ALLOC_CONF, PYTORCH_HIP_ALLOC_CONF) assigned in the script after the
// point where PyTorch reads it — after the first CUDA use, or for `backend`,
// after `import torch` — so the assignment silently does nothing.
#include <fmt/format.h>

#include "rules/source/alloc_conf_assignments.hpp"
#include "rules/source/set_alloc_conf.hpp"
#include "rules/source/source_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::source {
namespace {

using analyzer::python::Script;

void check(const Script& s, std::vector<Diagnosis>& out) {
  auto assignments = alloc_conf_assignments(s);
  if (assignments.empty()) return;
  auto steps = s.execution_order();
  auto uses = cuda_uses(s);
  for (const auto& a : assignments) {
    Lateness late = lateness(s, steps, uses, a);
    if (late.why == Lateness::Why::in_time) continue;
    Diagnosis g;
    g.location = source_location(a.statement.range(), s.point(a.statement.range().begin));
    g.code = docs::OOM302::code;
    g.name = docs::OOM302::name;
    g.severity = Severity::warning;
    std::uint32_t line = s.point(late.cause.start_byte()).line;
    g.message = late.why == Lateness::Why::after_cuda_use
                    ? fmt::format("`{}` is set after CUDA is first used at line {} (`{}`): the allocator has already "
                                  "read its settings, so this has no effect",
                                  a.variable, line, late.what)
                    : fmt::format("`{}` sets `backend` after `{}` at line {}: the backend is chosen when torch is "
                                  "imported, so this has no effect",
                                  a.variable, late.what, line);
    g.explanation = std::string(docs::OOM302::explanation);
    Fix fix;
    fix.title = fmt::format("Move the `{}` assignment above `import torch`", a.variable);
    fix.detail = "unsafe: the options take effect from now on, which changes how memory is allocated";
    auto edits = s.has_errors() ? std::nullopt : move_before_torch_import(s, a);
    fix.kind = edits ? FixKind::edit : FixKind::advice;
    fix.safety = edits ? FixSafety::unsafe : FixSafety::display_only;
    if (edits) fix.edits = std::move(*edits);
    g.fixes.push_back(std::move(fix));
    out.push_back(std::move(g));
  }
}

}  // namespace

SourceRule alloc_conf_too_late_rule() {
  return {rule_info<docs::OOM302>(), &check};
}

}  // namespace oomlens::rules::source
