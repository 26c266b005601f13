// OOM301 (its words: rules/docs/OOM301.md): torch.cuda.empty_cache() (or the
// MPS / XPU one) run on every iteration of a loop, directly or through a
// function of the same file. A call under a step-counter guard
// (`if step % N == 0`) is a deliberate periodic flush: a hint, no fix. A call
// that runs after the training loop of its own function (the teardown of a
// `train()` that a sweep calls once per run) is a phase boundary: not flagged.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "analyzer/python/training_loop.hpp"
#include "rules/source/source_rules.hpp"
#include "rules/source/statement_edits.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::source {
namespace {

using analyzer::python::Call;
using analyzer::python::LoopPath;
using analyzer::python::Node;
using analyzer::python::Script;

bool periodic_guard(const Script& s, Node node, Node stop) {
  for (const auto& g : s.guards(node, stop))
    if (g.condition && analyzer::python::periodic_condition(g.condition)) return true;
  return false;
}

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

// The device caches a script may flush; torch.cuda.memory.empty_cache and
// other re-exports resolve to these (Script::calls_to).
constexpr std::string_view kEmptyCacheNames[] = {"torch.cuda.empty_cache", "torch.mps.empty_cache",
                                                 "torch.xpu.empty_cache"};

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

void check(const Script& s, std::vector<Diagnosis>& out) {
  std::vector<Candidate> found;
  std::vector<std::pair<Call, std::string_view>> flushes;
  for (std::string_view name : kEmptyCacheNames)
    for (Call& call : s.calls_to(name)) flushes.emplace_back(std::move(call), name);
  std::sort(flushes.begin(), flushes.end(),
            [](const auto& a, const auto& b) { return a.first.range.begin < b.first.range.begin; });
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
