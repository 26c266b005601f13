// OOM301 (its words: rules/docs/OOM301.md): torch.cuda.empty_cache() (or the
// MPS / XPU one) run on every iteration of a loop, directly or through a
// function of the same file or of another file of the project (reported at
// the call in the loop, the flush as a related place). A call under a step-counter guard
// (`if step % N == 0`) is a deliberate periodic flush: a hint, no fix. A call
// that runs after the training loop of its own function (the teardown of a
// `train()` that a sweep calls once per run) is a phase boundary: not flagged.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "analyzer/python/training_loop.hpp"
#include "rules/source/cache_flushes.hpp"
#include "rules/source/source_rules.hpp"
#include "rules/source/statement_edits.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::source {
namespace {

using analyzer::python::Call;
using analyzer::python::LoopPath;
using analyzer::python::Node;
using analyzer::python::Script;

// Whether every execution of the call along this path is under a periodic guard.
bool periodic_path(const Script& s, const Call& call, const LoopPath& path) {
  if (path.through.empty()) return periodic_guard(s, call.node, path.loop.node);
  if (periodic_guard(s, call.node, {})) return true;
  for (std::size_t i = 0; i < path.through.size(); ++i)
    if (periodic_guard(s, path.through[i].node, i == 0 ? path.loop.node : Node{})) return true;
  return false;
}

const char* loop_word(const analyzer::python::Loop& loop) {
  switch (loop.kind) {
    case analyzer::python::LoopKind::for_loop: return loop.is_async ? "`async for` loop" : "`for` loop";
    case analyzer::python::LoopKind::while_loop: return "`while` loop";
    case analyzer::python::LoopKind::comprehension: return "comprehension";
  }
  return "loop";
}

// Whether a call chain from a loop reaches the flush only after the training
// loop of a function on the way has finished: once per call of that
// function (once per run, fold or epoch), not once per iteration.
bool phase_boundary(const Script& s, const Call& call, const LoopPath& path,
                    std::optional<std::vector<analyzer::python::Loop>>& training) {
  if (path.through.empty()) return false;
  if (!training) training = analyzer::python::training_loops(s);
  if (analyzer::python::after_loop_in_own_function(s, *training, call.node)) return true;
  for (std::size_t i = 1; i < path.through.size(); ++i)  // through[0] is in the loop itself
    if (analyzer::python::after_loop_in_own_function(s, *training, path.through[i].node)) return true;
  return false;
}

struct Candidate {
  Diagnosis diag;
  Node statement;  // null when no automatic fix
};

// Calls in a loop to a function of another project file that flushes the
// cache: reported at the call, the flush named as a related place. No
// automatic fix: the function may do more than flush.
void check_imported(const Script& s, const ProjectContext& project,
                    std::optional<std::vector<analyzer::python::Loop>>& training, std::vector<Candidate>& found) {
  for (const Call& call : s.calls()) {
    auto flush = project.flush_through(call);
    if (!flush) continue;
    auto paths = s.loops_reaching(call.node);
    std::erase_if(paths, [&](const LoopPath& p) { return phase_boundary(s, call, p, training); });
    if (paths.empty()) continue;
    const LoopPath* every = nullptr;
    for (const auto& p : paths)
      if (!flush->periodic && !periodic_path(s, call, p)) {
        every = &p;
        break;
      }
    const LoopPath& p = every ? *every : paths.front();
    Candidate c;
    Diagnosis& d = c.diag;
    d.location = source_location(call.range, call.start);
    d.code = docs::OOM301::code;
    d.name = docs::OOM301::name;
    std::string via;
    if (!p.through.empty())
      via = fmt::format(" through `{}()` at line {}", s.text(p.through.front().callee), p.through.front().start.line);
    std::string helper = fmt::format("`{}()` calls it in {} at line {}", s.text(call.callee), flush->where.name,
                                     flush->where.line);
    auto loop_line = s.point(p.loop.node.start_byte()).line;
    d.severity = every ? Severity::warning : Severity::hint;
    d.message = every ? fmt::format("`{}()` runs on every iteration of the {} at line {}{}: {}", flush->flush,
                                    loop_word(p.loop), loop_line, via, helper)
                      : fmt::format("`{}()` flushed periodically in the {} at line {}{}: {}", flush->flush,
                                    loop_word(p.loop), loop_line, via, helper);
    d.explanation = std::string(every ? docs::OOM301::explanation : docs::OOM301::explanation_periodic);
    d.related.push_back({RelatedPlace::Kind::cause, 0, flush->where.line, flush->where.line,
                         fmt::format("`{}()` is called here, in `{}()`", flush->flush, flush->function),
                         flush->where.path, flush->where.column});
    if (every) {
      Fix f;
      f.title = fmt::format("Remove the `{}()` call from `{}()` in {}, or call it after the loop", flush->flush,
                            flush->function, flush->where.name);
      f.detail = "the function may do more than flush the cache: change it by hand";
      d.fixes.push_back(std::move(f));
    }
    found.push_back(std::move(c));
  }
}

void check(const Script& s, const ProjectContext& project, std::vector<Diagnosis>& out) {
  std::vector<Candidate> found;
  auto flushes = cache_flushes(s);
  std::optional<std::vector<analyzer::python::Loop>> training;  // computed when first needed
  for (const auto& [call, name] : flushes) {
    auto paths = s.loops_reaching(call.node);
    // `call` by name: clang 14 cannot capture a structured binding implicitly.
    std::erase_if(paths, [&, &call = call](const LoopPath& p) { return phase_boundary(s, call, p, training); });
    if (paths.empty()) continue;
    const LoopPath* every = nullptr;
    for (const auto& p : paths)
      if (!periodic_path(s, call, p)) {
        every = &p;
        break;
      }
    Candidate c;
    c.diag.location = source_location(call.range, call.start);
    Diagnosis& d = c.diag;
    d.code = docs::OOM301::code;
    d.name = docs::OOM301::name;
    const LoopPath& p = every ? *every : paths.front();
    auto loop_line = s.point(p.loop.node.start_byte()).line;
    std::string via;
    if (!p.through.empty())
      via = fmt::format(" through `{}()` at line {}", s.text(p.through.front().callee),
                        p.through.front().start.line);
    if (every) {
      d.severity = Severity::warning;
      d.message = fmt::format("`{}()` runs on every iteration of the {} at line {}{}", name, loop_word(p.loop),
                              loop_line, via);
      d.explanation = std::string(docs::OOM301::explanation);
      c.statement = statement_of_expression(s, call.node);
      Fix f;
      f.title = fmt::format("Remove the `{}()` call", name);
      f.kind = c.statement ? FixKind::edit : FixKind::advice;
      f.safety = c.statement ? FixSafety::safe : FixSafety::display_only;
      f.detail = c.statement ? "keeps behaviour: the allocator frees its cache and retries by itself"
                             : "the call is part of a larger expression: remove it by hand";
      d.fixes.push_back(f);
    } else {
      d.severity = Severity::hint;
      d.message = fmt::format("`{}()` flushed periodically in the {} at line {}{}", name, loop_word(p.loop),
                              loop_line, via);
      d.explanation = std::string(docs::OOM301::explanation_periodic);
    }
    found.push_back(std::move(c));
  }
  check_imported(s, project, training, found);
  if (!s.has_errors()) {
    std::set<const void*> removed;
    for (const auto& c : found)
      if (c.statement) removed.insert(c.statement.id());
    std::set<const void*> block_got_pass;
    for (auto& c : found) {
      if (!c.statement) continue;
      Node block = s.parent(c.statement);
      bool all_removed = block.is("block");
      for (Node child : block.named_children())  // comments alone do not make a valid body
        if (!child.is("comment") && !removed.count(child.id())) all_removed = false;
      // The first removal in a block left without statements becomes `pass`.
      bool make_pass = all_removed && block_got_pass.insert(block.id()).second;
      if (all_removed && !make_pass) {
        // Another removal already left `pass`: this one goes whole, if alone on its line.
        auto e = remove_statement_edit(s, c.statement, false);
        if (!e || e->replacement.size() || e->begin != line_start(s.source(), c.statement.start_byte())) continue;
        c.diag.fixes.front().edits.push_back(std::move(*e));
        continue;
      }
      auto e = remove_statement_edit(s, c.statement, make_pass);
      if (!e) continue;  // no safe edit found: diagnostic without fix
      c.diag.fixes.front().edits.push_back(std::move(*e));
    }
  }
  for (auto& c : found) {
    if (!c.diag.fixes.empty() && c.diag.fixes[0].kind == FixKind::edit && c.diag.fixes[0].edits.empty()) {
      c.diag.fixes[0].kind = FixKind::advice;
      c.diag.fixes[0].safety = FixSafety::display_only;
    }
    out.push_back(std::move(c.diag));
  }
}

}  // namespace

SourceRule empty_cache_in_loop_rule() {
  return {rule_info<docs::OOM301>(), &check};
}

}  // namespace oomlens::rules::source
