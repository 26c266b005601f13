// Control flow around a node: loops, guards, enclosing functions, calls into
// functions of the same file, and the module's execution order.
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "analyzer/python/names.hpp"
#include "analyzer/python/script.hpp"

namespace oomlens::analyzer::python {

using detail::is_comprehension;

namespace {

bool is_function_like(Node node) { return node.is("function_definition") || node.is("lambda"); }

// The def or lambda whose body holds the node; null at module level.
Node body_owner(const detail::NameIndex& names, Node node) {
  Node child = node;
  for (Node p = names.parent(node); p; child = p, p = names.parent(p))
    if (is_function_like(p) && child == p.field("body")) return p;
  return {};
}

bool first_child_is_async(Node node) { return node.child(0).is("async"); }

Loop comprehension_loop(Node comprehension) {
  Loop loop{comprehension, LoopKind::comprehension, false, comprehension.field("body")};
  for (const Node& child : comprehension.named_children())
    if (child.is("for_in_clause") && first_child_is_async(child)) loop.is_async = true;
  return loop;
}

// Whether `child` (with `grandchild` below it) is a part of the comprehension
// that runs per item: everything but the first iterable.
bool in_comprehension_loop(Node comprehension, Node child, Node grandchild) {
  for (const Node& c : comprehension.named_children()) {
    if (!c.is("for_in_clause")) continue;
    if (!(c == child)) return true;
    for (const Node& iterable : c.fields("right"))
      if (grandchild == iterable) return false;
    return true;
  }
  return true;
}

std::optional<Periodic> find_periodic(Node node, int depth) {
  if (!node || depth > 64) return std::nullopt;
  std::string_view type = node.type();
  if (type == "binary_operator") {
    Node left = node.field("left");
    if (node.field("operator").is("%") && !left.is("string") && !left.is("concatenated_string"))
      return Periodic{node, left, node.field("right")};
    return std::nullopt;
  }
  if (type == "boolean_operator") {
    if (auto p = find_periodic(node.field("left"), depth + 1)) return p;
    return find_periodic(node.field("right"), depth + 1);
  }
  if (type == "not_operator") return find_periodic(node.field("argument"), depth + 1);
  if (type == "parenthesized_expression" || type == "comparison_operator") {
    for (const Node& child : node.named_children())
      if (auto p = find_periodic(child, depth + 1)) return p;
  }
  return std::nullopt;
}

// Lays out the module's steps in execution order (see Script::execution_order).
class ExecutionWalker {
 public:
  explicit ExecutionWalker(const Script& script, const detail::NameIndex& names, std::vector<Step>& out)
      : script_(script), names_(names), out_(out) {}

  // `owner`: the function whose body `container` is (null for the module).
  void block(Node container, Node owner, const std::vector<Call>& via, int depth) {
    if (!container || depth > kMaxDepth) return;
    for (const Node& statement : container.named_children()) this->statement(statement, owner, via, depth + 1);
  }

 private:
  static constexpr int kMaxDepth = 200;  // CPython allows 100 levels of indentation

  // From the statement's start to its body, without the whitespace before the body.
  ByteRange header(Node statement, Node body) const {
    std::uint32_t end = body ? body.start_byte() : statement.end_byte();
    std::string_view text = script_.text(ByteRange{statement.start_byte(), end});
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return {statement.start_byte(), statement.start_byte() + static_cast<std::uint32_t>(text.size())};
  }

  void statement(Node s, Node owner, const std::vector<Call>& via, int depth) {
    std::string_view type = s.type();
    auto header_step = [&](Node at, Node body) { step(at, header(at, body), true, owner, via, depth); };
    if (type == "decorated_definition") {
      Node definition = s.field("definition");
      Node body = definition.field("body");
      header_step(s, body);
      if (definition.is("class_definition")) block(body, owner, via, depth);
    } else if (type == "function_definition") {
      header_step(s, s.field("body"));  // the body runs when called
    } else if (type == "class_definition") {
      Node body = s.field("body");
      header_step(s, body);
      block(body, owner, via, depth);
    } else if (type == "if_statement") {
      Node consequence = s.field("consequence");
      header_step(s, consequence);
      block(consequence, owner, via, depth);
      for (const Node& alternative : s.fields("alternative")) {
        if (alternative.is("elif_clause")) {
          Node branch = alternative.field("consequence");
          header_step(alternative, branch);
          block(branch, owner, via, depth);
        } else {
          block(alternative.field("body"), owner, via, depth);
        }
      }
    } else if (type == "for_statement" || type == "while_statement" || type == "with_statement") {
      Node body = s.field("body");
      header_step(s, body);
      block(body, owner, via, depth);
      if (Node alternative = s.field("alternative")) block(alternative.field("body"), owner, via, depth);
    } else if (type == "try_statement") {
      block(s.field("body"), owner, via, depth);
      for (const Node& clause : s.named_children()) {
        Node inner;
        for (const Node& c : clause.named_children())
          if (c.is("block")) inner = c;
        if (clause.is("except_clause") || clause.is("except_group_clause")) {
          header_step(clause, inner);
          block(inner, owner, via, depth);
        } else if (clause.is("else_clause")) {
          block(clause.field("body"), owner, via, depth);
        } else if (clause.is("finally_clause")) {
          block(inner, owner, via, depth);
        }
      }
    } else if (type == "match_statement") {
      Node body = s.field("body");
      header_step(s, body);
      for (const Node& clause : body.named_children()) {
        if (!clause.is("case_clause")) continue;
        Node consequence = clause.field("consequence");
        header_step(clause, consequence);
        block(consequence, owner, via, depth);
      }
    } else {
      step(s, s.range(), false, owner, via, depth);
    }
  }

  void step(Node s, ByteRange range, bool header_only, Node owner, const std::vector<Call>& via, int depth) {
    // A call into a function of this file runs that function's body before
    // the statement completes; its first such call is where it first runs.
    const std::vector<Call>& calls = names_.calls;
    auto it = std::lower_bound(calls.begin(), calls.end(), range.begin,
                               [](const Call& c, std::uint32_t at) { return c.range.begin < at; });
    for (; it != calls.end() && it->range.begin < range.end; ++it) {
      if (!it->local_function || it->range.end > range.end) continue;
      if (expanded_.count(it->local_function.id())) continue;
      // A call inside a lambda runs later, if at all.
      if (!(names_.call_owners[static_cast<std::size_t>(it - calls.begin())] == owner)) continue;
      expanded_.insert(it->local_function.id());
      std::vector<Call> deeper = via;
      deeper.push_back(*it);
      block(it->local_function.field("body"), it->local_function, deeper, depth + 1);
    }
    out_.push_back({s, range, header_only, via});
  }

  const Script& script_;
  const detail::NameIndex& names_;
  std::vector<Step>& out_;
  std::unordered_set<const void*> expanded_;
};

}  // namespace

std::optional<Function> Script::enclosing_function(Node node) const {
  Node child = node;
  for (Node p = names_->parent(node); p; child = p, p = names_->parent(p)) {
    if (p.is("function_definition") && child == p.field("body")) {
      auto it = names_->function_by_node.find(p.id());
      if (it != names_->function_by_node.end()) return names_->functions[it->second];
    }
  }
  return std::nullopt;
}

std::vector<Loop> Script::enclosing_loops(Node node) const {
  std::vector<Loop> loops;
  Node grandchild;
  Node child = node;
  for (Node p = names_->parent(node); p; grandchild = child, child = p, p = names_->parent(p)) {
    std::string_view type = p.type();
    if (is_function_like(p) && child == p.field("body")) break;
    if ((type == "for_statement" || type == "while_statement") && child == p.field("body")) {
      loops.push_back({p, type == "for_statement" ? LoopKind::for_loop : LoopKind::while_loop,
                       first_child_is_async(p), child});
    } else if (is_comprehension(type) && in_comprehension_loop(p, child, grandchild)) {
      loops.push_back(comprehension_loop(p));
    }
  }
  return loops;
}

std::optional<Loop> Script::enclosing_loop(Node node) const {
  std::vector<Loop> loops = enclosing_loops(node);
  if (loops.empty()) return std::nullopt;
  return loops.front();
}

std::vector<LoopPath> Script::loops_reaching(Node node) const {
  std::vector<LoopPath> out;
  if (!node) return out;
  // Breadth first from the node up through the calls into its function, so
  // the first path found to each loop is a shortest one. Each item remembers
  // the item it came from; chains are built only for the results.
  struct Item {
    Node node;
    Node owner;
    int from = -1;          // index of the item this call leads into
    std::size_t call = 0;   // index into calls (for every item but the first)
  };
  const std::vector<Call>& calls = names_->calls;
  std::vector<Item> items{{node, body_owner(*names_, node), -1, 0}};
  std::unordered_set<const void*> visited;  // functions whose callers were followed
  std::unordered_set<const void*> found;    // loops already reported
  for (std::size_t next = 0; next < items.size(); ++next) {
    const Item item = items[next];
    for (Loop& loop : enclosing_loops(item.node)) {
      if (!found.insert(loop.node.id()).second) continue;
      LoopPath path{loop, {}};
      for (int i = static_cast<int>(next); items[static_cast<std::size_t>(i)].from >= 0;
           i = items[static_cast<std::size_t>(i)].from)
        path.through.push_back(calls[items[static_cast<std::size_t>(i)].call]);
      out.push_back(std::move(path));
    }
    if (!item.owner.is("function_definition") || !visited.insert(item.owner.id()).second) continue;
    auto callers = names_->callers.find(item.owner.id());
    if (callers == names_->callers.end()) continue;
    for (std::size_t c : callers->second)
      items.push_back({calls[c].node, names_->call_owners[c], static_cast<int>(next), c});
  }
  return out;
}

std::vector<Guard> Script::guards(Node node, Node stop) const {
  std::vector<Guard> out;
  Node grandchild;
  Node child = node;
  for (Node p = names_->parent(node); p; grandchild = child, child = p, p = names_->parent(p)) {
    if (stop && p == stop) break;
    if (is_function_like(p) && child == p.field("body")) break;
    if (!p.is("if_statement")) continue;
    if (child == p.field("consequence")) {
      out.push_back({p, Guard::Branch::then_branch, p.field("condition")});
    } else if (child.is("elif_clause") && grandchild == child.field("consequence")) {
      out.push_back({p, Guard::Branch::elif_branch, child.field("condition")});
    } else if (child.is("else_clause")) {
      out.push_back({p, Guard::Branch::else_branch, p.field("condition")});
    }
  }
  return out;
}

std::optional<Periodic> periodic_condition(Node condition) { return find_periodic(condition, 0); }

std::vector<Step> Script::execution_order() const {
  std::vector<Step> out;
  ExecutionWalker(*this, *names_, out).block(root(), {}, {}, 0);
  return out;
}

}  // namespace oomlens::analyzer::python
