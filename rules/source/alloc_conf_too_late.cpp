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

// Where CUDA starts in another file of the project, as the diagnosis' related place.
RelatedPlace imported_start(const Script& s, const Lateness& late) {
  const auto& where = late.imported->where;
  return {RelatedPlace::Kind::cause,
          0,
          where.line,
          where.line,
          fmt::format("CUDA is first used here (`{}`), when `{}` at line {} runs", late.imported->what, late.what,
                      s.point(late.cause.start_byte()).line),
          where.path,
          where.column};
}

std::string message(const Script& s, const AllocConfAssignment& a, const Lateness& late) {
  std::uint32_t line = s.point(late.cause.start_byte()).line;
  if (late.why == Lateness::Why::backend_after_import)
    return fmt::format("`{}` sets `backend` after `{}` at line {}: the backend is chosen when torch is imported, so "
                       "this has no effect",
                       a.variable, late.what, line);
  std::string what = late.imported ? fmt::format("`{}`, which runs `{}` in {} at line {}", late.what,
                                                 late.imported->what, late.imported->where.name,
                                                 late.imported->where.line)
                                   : fmt::format("`{}`", late.what);
  return fmt::format("`{}` is set after CUDA is first used at line {} ({}): the allocator has already read its "
                     "settings, so this has no effect",
                     a.variable, line, what);
}

void check(const Script& s, const ProjectContext& project, std::vector<Diagnosis>& out) {
  auto assignments = alloc_conf_assignments(s);
  if (assignments.empty()) return;
  auto steps = s.execution_order();
  auto uses = cuda_uses(s);
  for (const auto& a : assignments) {
    Lateness late = lateness(s, steps, uses, a, project);
    if (late.why == Lateness::Why::in_time) continue;
    Diagnosis g;
    g.location = source_location(a.statement.range(), s.point(a.statement.range().begin));
    g.code = docs::OOM302::code;
    g.name = docs::OOM302::name;
    g.severity = Severity::warning;
    g.message = message(s, a, late);
    g.explanation = std::string(docs::OOM302::explanation);
    if (late.imported) g.related.push_back(imported_start(s, late));
    Fix fix;
    fix.title = fmt::format("Move the `{}` assignment above `import torch`", a.variable);
    fix.detail = "unsafe: the options take effect from now on, which changes how memory is allocated";
    auto edits = s.has_errors() ? std::nullopt : move_before_torch_import(s, a);
    // Above `import torch` but still below the import that starts CUDA: no better.
    if (edits && late.imported && !edits->empty() && edits->front().begin > late.cause.start_byte()) {
      edits.reset();
      fix.title = fmt::format("Move the `{}` assignment above `{}`", a.variable, late.what);
    }
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
