// Scopes and bindings of a Python module, and name resolution over them.
// Internal to analyzer/python: Script is the public face.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analyzer/python/node.hpp"
#include "analyzer/python/script.hpp"

namespace oomlens::analyzer::python::detail {

// List, set and dict comprehensions and generator expressions: each a scope
// and a loop of its own.
bool is_comprehension(std::string_view type);

enum class ScopeKind { module, function, lambda, class_body, comprehension };

struct Binding {
  // instance: `mm = MemoryManager(...)`, node the callee (the class).
  enum class Kind { imported, alias, function, instance, other };
  Kind kind = Kind::other;
  int scope = 0;
  // In effect for uses at or after this byte (same-scope, textual order).
  std::uint32_t from = 0;
  std::string qualified;  // imported: what the name stands for
  Node node;              // function: the definition; alias: the value expression
};

struct Scope {
  ScopeKind kind = ScopeKind::module;
  Node node;
  int parent = -1;
  std::unordered_map<std::string, std::vector<Binding>> bindings;
  std::unordered_set<std::string> globals;
  std::unordered_set<std::string> nonlocals;
  std::string first_parameter;  // functions: `self` / `cls` for methods
};

struct Resolution {
  std::optional<std::string> qualified;
  Node local_function;
  // A name bound to a constant string (`device = "cuda"`): its value, for
  // `getattr(torch, device)`.
  std::optional<std::string> text;
  // A name bound to the result of calling an imported name
  // (`mm = MemoryManager()`): that name, so that `mm.flush()` can be told
  // to be the method `MemoryManager.flush`. The name itself stays local.
  std::optional<std::string> instance_of;
};

class NameIndex {
 public:
  NameIndex(Node root, std::string_view source);

  // The parent of a node, from a table built once: tree-sitter 0.20 finds a
  // parent by walking down from the root, which costs a scan of every
  // top-level statement per step up.
  Node parent(Node node) const;

  // The scope whose names a use at `node` sees.
  int scope_of(Node node) const;
  Resolution resolve(Node expression, int scope, std::string_view source) const;
  // As resolve, plus `self.method` inside a method of the same class.
  Resolution resolve_callee(Node callee, int scope, std::string_view source) const;
  // The def or lambda whose body the scope's code runs in; null for module level.
  Node owner_of_scope(int scope) const;

  std::unordered_map<const void*, TSNode> parents;  // named nodes only
  std::vector<Scope> scopes;
  std::unordered_map<const void*, int> scope_by_node;
  std::vector<Import> imports;
  std::vector<std::pair<Node, int>> call_sites;  // source order
  // Filled by Script from the above.
  std::vector<Call> calls;
  // Parallel to calls: the def or lambda whose body makes the call (null at
  // module level; class bodies and comprehensions run inline and do not count).
  std::vector<Node> call_owners;
  // The indices into calls of the calls to each function of this file.
  std::unordered_map<const void*, std::vector<std::size_t>> callers;
  std::vector<Function> functions;
  std::unordered_map<const void*, std::size_t> function_by_node;

 private:
  Resolution resolve_name(const std::string& name, std::uint32_t at, int scope,
                          std::string_view source, int depth) const;
  Resolution resolve_binding(const Binding& binding, std::string_view source, int depth) const;
  Resolution resolve_expression(Node expression, int scope, std::string_view source, int depth) const;
  // `getattr(X, "name")` (or a name bound to a constant string) with the
  // builtin getattr: X's qualified name and `.name`.
  Resolution resolve_getattr(Node call, int scope, std::string_view source, int depth) const;
};

}  // namespace oomlens::analyzer::python::detail
