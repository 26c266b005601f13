#include "analyzer/python/training_loop.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_set>
#include <vector>

namespace oomlens::analyzer::python {

namespace {

bool is_statement_loop(Node node) { return node.is("for_statement") || node.is("while_statement"); }

Loop loop_of(Node statement) {
  return {statement, statement.is("for_statement") ? LoopKind::for_loop : LoopKind::while_loop,
          statement.child(0).is("async"), statement.field("body")};
}

// The last name of `opt`, `self.optimizer`, `scaler`: what the object is called.
std::string last_name(const Script& script, Node object) {
  if (object.is("attribute")) object = object.field("attribute");
  if (!object.is("identifier")) return {};
  std::string name(script.text(object));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

bool names_optimizer(const std::string& name) {
  return name.find("optim") != std::string::npos || name.find("scaler") != std::string::npos || name == "opt" ||
         name.starts_with("opt_") || name.ends_with("_opt");
}

// The loop one level out that runs `loop` on every iteration, if any.
std::optional<Loop> loop_around(const Script& script, const Loop& loop) {
  for (const LoopPath& path : script.loops_reaching(loop.node))
    if (is_statement_loop(path.loop.node)) return path.loop;
  return std::nullopt;
}

Loop outermost(const Script& script, Loop loop) {
  std::unordered_set<const void*> seen{loop.node.id()};
  while (auto outer = loop_around(script, loop)) {
    if (!seen.insert(outer->node.id()).second) break;  // recursion through calls
    loop = *outer;
  }
  return loop;
}

}  // namespace

bool is_training_call(const Script& script, const Call& call) {
  if (call.qualified_name && *call.qualified_name == "torch.autograd.backward") return true;
  if (!call.callee.is("attribute")) return false;
  std::string_view method = script.text(call.callee.field("attribute"));
  if (method == "backward") return true;
  return method == "step" && names_optimizer(last_name(script, call.callee.field("object")));
}

std::optional<Loop> training_loop(const Script& script) {
  for (const Call& call : script.calls()) {
    if (!is_training_call(script, call)) continue;
    for (const LoopPath& path : script.loops_reaching(call.node))
      if (is_statement_loop(path.loop.node)) return outermost(script, path.loop);
  }
  return std::nullopt;
}

std::vector<Loop> training_loops(const Script& script) {
  std::vector<Loop> out;
  std::unordered_set<const void*> seen;
  for (const Call& call : script.calls()) {
    if (!is_training_call(script, call)) continue;
    for (const LoopPath& path : script.loops_reaching(call.node))
      if (is_statement_loop(path.loop.node) && seen.insert(path.loop.node.id()).second) out.push_back(path.loop);
  }
  return out;
}

bool after_loop_in_own_function(const Script& script, const std::vector<Loop>& loops, Node node) {
  auto function = script.enclosing_function(node);
  if (!function) return false;
  for (const Loop& loop : loops) {
    if (loop.node.end_byte() > node.start_byte()) continue;
    if (loop.node.start_byte() < function->body.start_byte()) continue;
    auto owner = script.enclosing_function(loop.node);
    if (owner && owner->node == function->node) return true;
  }
  return false;
}

std::optional<Loop> loop_at_line(const Script& script, std::uint32_t line) {
  std::string_view src = script.source();
  if (line == 0) return std::nullopt;
  // The line's bytes [begin, end).
  std::size_t begin = 0;
  for (std::uint32_t l = 1; l < line; ++l) {
    std::size_t newline = src.find('\n', begin);
    if (newline == std::string_view::npos) return std::nullopt;
    begin = newline + 1;
  }
  std::size_t newline = src.find('\n', begin);
  std::size_t end = newline == std::string_view::npos ? src.size() : newline;
  // The deepest loop whose text holds part of the line.
  Node innermost;
  std::vector<Node> stack{script.root()};
  while (!stack.empty()) {
    Node node = stack.back();
    stack.pop_back();
    if (!node) continue;
    if (is_statement_loop(node) && (!innermost || node.start_byte() > innermost.start_byte())) innermost = node;
    for (const Node& child : node.named_children())
      if (child.start_byte() <= end && child.end_byte() > begin) stack.push_back(child);
  }
  if (!innermost) return std::nullopt;
  return outermost(script, loop_of(innermost));
}

}  // namespace oomlens::analyzer::python
