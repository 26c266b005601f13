#include "analyzer/python/names.hpp"

#include <algorithm>
#include <cctype>

#include "analyzer/python/strings.hpp"

namespace oomlens::analyzer::python::detail {

namespace {

// Deeper nesting than this is not real code (CPython itself refuses about 200
// nested parentheses); stop there rather than risk the stack, sanitizers included.
constexpr int kMaxDepth = 500;
// Alias chains (a = b; b = torch.cuda; ...) are followed this far.
constexpr int kMaxAliasDepth = 32;

std::string_view text_of(Node node, std::string_view source) {
  ByteRange r = node.range();
  if (r.end > source.size() || r.begin > r.end) return {};
  return source.substr(r.begin, r.size());
}

// `getattr(...)`, as written (whether it is the builtin is for resolution).
bool is_getattr_call(Node node, std::string_view source) {
  if (!node.is("call")) return false;
  Node function = node.field("function");
  return function.is("identifier") && text_of(function, source) == "getattr" && node.field("arguments").is("argument_list");
}

// `torch . cuda` is legal Python; qualified names are written without the spaces.
std::string dotted_text(Node node, std::string_view source) {
  if (!node.is("dotted_name")) return std::string(text_of(node, source));
  std::string out;
  for (const Node& part : node.named_children()) {
    if (!out.empty()) out += '.';
    out += text_of(part, source);
  }
  return out;
}

std::string module_text(Node node, std::string_view source) {
  if (!node.is("relative_import")) return dotted_text(node, source);
  std::string out;
  for (const Node& part : node.named_children()) {
    if (part.is("import_prefix")) out += text_of(part, source);
    else out += dotted_text(part, source);
  }
  return out;
}

std::string join_module(const std::string& module, std::string_view name) {
  if (module.empty() || module.back() == '.') return module + std::string(name);
  return module + "." + std::string(name);
}

// The module-level statement holding an import; null inside a def or class.
Node top_level_of(const NameIndex& index, Node node) {
  Node child = node;
  for (Node p = index.parent(node); p; child = p, p = index.parent(p)) {
    if (p.is("function_definition") || p.is("class_definition") || p.is("lambda")) return {};
    if (p.is("module")) return child;
  }
  return {};
}

class Builder {
 public:
  Builder(NameIndex& index, std::string_view source) : index_(index), source_(source) {}

  void run(Node root) {
    index_.scopes.push_back({ScopeKind::module, root, -1, {}, {}, {}, {}});
    if (!root) return;
    index_.scope_by_node[root.id()] = 0;
    visit_children(root, 0, 0);
  }

 private:
  std::string text(Node node) const { return std::string(text_of(node, source_)); }

  int new_scope(ScopeKind kind, Node node, int parent) {
    index_.scopes.push_back({kind, node, parent, {}, {}, {}, {}});
    int id = static_cast<int>(index_.scopes.size()) - 1;
    index_.scope_by_node[node.id()] = id;
    return id;
  }

  void bind(int scope, Node name, Binding binding) {
    if (!name.is("identifier")) return;
    // `except ImportError: torch = None` runs only when the import failed,
    // when nothing about that module applies: it does not shadow the import.
    if (import_fallback_ > 0) return;
    std::string key = text(name);
    // `global x` / `nonlocal x` (declared before, as Python requires) send the binding outward.
    if (scope != 0 && index_.scopes[scope].globals.count(key)) {
      scope = 0;
    } else if (index_.scopes[scope].nonlocals.count(key)) {
      int outer = index_.scopes[scope].parent;
      while (outer > 0 && index_.scopes[outer].kind != ScopeKind::function) outer = index_.scopes[outer].parent;
      scope = outer > 0 ? outer : scope;
    }
    binding.scope = scope;
    index_.scopes[scope].bindings[key].push_back(std::move(binding));
  }

  // Names bound by an assignment target, a for target, an `as` target:
  // identifiers, also inside tuples, lists and starred targets, but not
  // attributes or subscripts (those bind nothing).
  void bind_targets(Node pattern, int scope, std::uint32_t from, int depth = 0) {
    if (!pattern || depth > kMaxDepth) return;
    if (pattern.is("identifier")) {
      bind(scope, pattern, {Binding::Kind::other, scope, from, {}, {}});
      return;
    }
    if (pattern.is("attribute") || pattern.is("subscript")) return;
    for (const Node& child : pattern.named_children()) bind_targets(child, scope, from, depth + 1);
  }

  // The parameter name of one `parameters` entry.
  static Node parameter_name(Node parameter) {
    if (parameter.is("identifier")) return parameter;
    if (parameter.is("default_parameter") || parameter.is("typed_default_parameter"))
      return parameter.field("name");
    if (parameter.is("typed_parameter") || parameter.is("list_splat_pattern") ||
        parameter.is("dictionary_splat_pattern")) {
      for (const Node& child : parameter.named_children()) {
        if (child.is("identifier")) return child;
        if (child.is("list_splat_pattern") || child.is("dictionary_splat_pattern")) return parameter_name(child);
      }
    }
    return {};
  }

  void visit_parameters(Node parameters, int outer, int inner, int depth) {
    bool first = true;
    for (const Node& p : parameters.named_children()) {
      // Defaults and annotations are evaluated where the def is, not inside it.
      for (const char* field : {"value", "type"})
        if (Node part = p.field(field)) visit(part, outer, depth + 1);
      Node name = parameter_name(p);
      if (name.is("identifier")) {
        if (first && (p.is("identifier") || p.is("typed_parameter") || p.is("default_parameter") ||
                      p.is("typed_default_parameter")))
          index_.scopes[inner].first_parameter = text(name);
        bind(inner, name, {Binding::Kind::other, inner, 0, {}, {}});
      } else if (name) {
        bind_targets(name, inner, 0);
      }
      if (!p.is("positional_separator") && !p.is("keyword_separator")) first = false;
    }
  }

  void visit_function(Node def, int scope, int depth) {
    Node name = def.field("name");
    bind(scope, name, {Binding::Kind::function, scope, def.end_byte(), {}, def});
    index_.function_by_node[def.id()] = index_.functions.size();
    index_.functions.push_back({def, text(name), def.field("body")});
    int inner = new_scope(ScopeKind::function, def, scope);
    if (Node parameters = def.field("parameters")) visit_parameters(parameters, scope, inner, depth);
    if (Node returns = def.field("return_type")) visit(returns, scope, depth + 1);
    if (Node body = def.field("body")) visit(body, inner, depth + 1);
  }

  void visit_lambda(Node lambda, int scope, int depth) {
    int inner = new_scope(ScopeKind::lambda, lambda, scope);
    if (Node parameters = lambda.field("parameters")) visit_parameters(parameters, scope, inner, depth);
    if (Node body = lambda.field("body")) visit(body, inner, depth + 1);
  }

  void visit_class(Node cls, int scope, int depth) {
    bind(scope, cls.field("name"), {Binding::Kind::other, scope, cls.end_byte(), {}, {}});
    if (Node bases = cls.field("superclasses")) visit(bases, scope, depth + 1);
    int inner = new_scope(ScopeKind::class_body, cls, scope);
    if (Node body = cls.field("body")) visit(body, inner, depth + 1);
  }

  void visit_comprehension(Node comprehension, int scope, int depth) {
    int inner = new_scope(ScopeKind::comprehension, comprehension, scope);
    bool first = true;
    for (const Node& child : comprehension.named_children()) {
      if (child.is("for_in_clause")) {
        // The first iterable is evaluated outside, before the comprehension's scope exists.
        for (const Node& iterable : child.fields("right")) visit(iterable, first ? scope : inner, depth + 1);
        bind_targets(child.field("left"), inner, comprehension.start_byte());
        first = false;
      } else {
        visit(child, inner, depth + 1);
      }
    }
  }

  void visit_import(Node statement, int scope) {
    Import record{statement, top_level_of(index_, statement), {}, {}, false, false};
    for (const Node& name : statement.fields("name")) {
      if (name.is("dotted_name")) {
        // `import torch.cuda` binds `torch` (the package), not `torch.cuda`.
        std::string module = dotted_text(name, source_);
        Node head = name.named_children().empty() ? Node() : name.named_children().front();
        std::string local = text(head);
        bind(scope, head, {Binding::Kind::imported, scope, statement.end_byte(), local, {}});
        record.names.push_back({local, local, module, name});
      } else if (name.is("aliased_import")) {
        std::string module = dotted_text(name.field("name"), source_);
        Node alias = name.field("alias");
        bind(scope, alias, {Binding::Kind::imported, scope, statement.end_byte(), module, {}});
        record.names.push_back({text(alias), module, module, name});
      }
    }
    index_.imports.push_back(std::move(record));
  }

  void visit_import_from(Node statement, int scope, bool future) {
    Import record{statement, top_level_of(index_, statement), {}, {}, false, future};
    record.from_module = future ? "__future__" : module_text(statement.field("module_name"), source_);
    for (const Node& name : statement.fields("name")) {
      Node original = name.is("aliased_import") ? name.field("name") : name;
      Node local = name.is("aliased_import") ? name.field("alias") : original;
      if (local.is("dotted_name") && local.named_children().size() == 1) local = local.named_children().front();
      std::string qualified = join_module(record.from_module, dotted_text(original, source_));
      if (!future) bind(scope, local, {Binding::Kind::imported, scope, statement.end_byte(), qualified, {}});
      record.names.push_back({text(local), qualified, qualified, name});
    }
    for (const Node& child : statement.named_children())
      if (child.is("wildcard_import")) record.wildcard = true;
    index_.imports.push_back(std::move(record));
  }

  // What an alias may stand for: a chain of attributes on a name or on
  // `getattr(...)`, or a constant string (for getattr's second argument).
  bool is_name_chain(Node node) const {
    if (node.is("string")) return true;
    while (node.is("attribute")) node = node.field("object");
    return node.is("identifier") || is_getattr_call(node, source_);
  }

  void visit(Node node, int scope, int depth) {
    if (!node || depth > kMaxDepth) return;
    std::string_view type = node.type();
    if (type == "function_definition") return visit_function(node, scope, depth);
    if (type == "lambda") return visit_lambda(node, scope, depth);
    if (type == "class_definition") return visit_class(node, scope, depth);
    if (is_comprehension(type)) return visit_comprehension(node, scope, depth);
    if (type == "import_statement") return visit_import(node, scope);
    if (type == "import_from_statement") return visit_import_from(node, scope, false);
    if (type == "future_import_statement") return visit_import_from(node, scope, true);

    if (type == "assignment") {
      Node left = node.field("left");
      Node right = node.field("right");
      // `cuda = torch.cuda` makes `cuda` an alias; any other value makes a local.
      if (left.is("identifier") && is_name_chain(right))
        bind(scope, left, {Binding::Kind::alias, scope, node.end_byte(), {}, right});
      else if (left.is("identifier") && right.is("call") && is_name_chain(right.field("function")))
        bind(scope, left, {Binding::Kind::instance, scope, node.end_byte(), {}, right.field("function")});
      else
        bind_targets(left, scope, node.end_byte());
    } else if (type == "augmented_assignment") {
      bind_targets(node.field("left"), scope, node.end_byte());
    } else if (type == "for_statement") {
      Node left = node.field("left");
      bind_targets(left, scope, left.end_byte());
    } else if (type == "as_pattern") {
      bind_targets(node.field("alias"), scope, node.end_byte());
    } else if (type == "named_expression") {
      // The walrus binds in the enclosing function or module, even from a comprehension.
      int target = scope;
      while (index_.scopes[target].kind == ScopeKind::comprehension) target = index_.scopes[target].parent;
      bind(target, node.field("name"), {Binding::Kind::other, target, node.end_byte(), {}, {}});
    } else if (type == "global_statement" || type == "nonlocal_statement") {
      auto& names = type == "global_statement" ? index_.scopes[scope].globals : index_.scopes[scope].nonlocals;
      for (const Node& name : node.named_children())
        if (name.is("identifier")) names.insert(text(name));
    } else if (type == "call") {
      index_.call_sites.emplace_back(node, scope);
    } else if (type == "except_clause" && catches_import_error(node)) {
      ++import_fallback_;
      visit_children(node, scope, depth);
      --import_fallback_;
      return;
    }
    visit_children(node, scope, depth);
  }

  bool catches_import_error(Node clause) const {
    for (const Node& child : clause.named_children()) {
      if (child.is("block")) break;
      std::string_view caught = text_of(child, source_);
      if (caught.find("ImportError") != std::string_view::npos ||
          caught.find("ModuleNotFoundError") != std::string_view::npos)
        return true;
    }
    return false;
  }

  void visit_children(Node node, int scope, int depth) {
    for (const Node& child : node.named_children()) visit(child, scope, depth + 1);
  }

  NameIndex& index_;
  std::string_view source_;
  int import_fallback_ = 0;  // inside `except ImportError:` blocks
};

bool same(const Resolution& a, const Resolution& b) {
  if (a.qualified || b.qualified) return a.qualified == b.qualified;
  if (a.text || b.text) return a.text == b.text;
  if (a.local_function || b.local_function) return a.local_function && b.local_function && a.local_function == b.local_function;
  if (a.instance_of || b.instance_of) return a.instance_of == b.instance_of;
  return false;  // two unknowns are not known to agree
}

}  // namespace

namespace {

void index_parents(Node root, std::unordered_map<const void*, TSNode>& parents) {
  if (!root) return;
  TSTreeCursor cursor = ts_tree_cursor_new(root.raw());
  std::vector<TSNode> path;  // ancestors of the cursor's node
  while (true) {
    TSNode node = ts_tree_cursor_current_node(&cursor);
    if (!path.empty() && ts_node_is_named(node)) parents.emplace(node.id, path.back());
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      path.push_back(node);
      continue;
    }
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (!ts_tree_cursor_goto_parent(&cursor)) {
        ts_tree_cursor_delete(&cursor);
        return;
      }
      path.pop_back();
    }
  }
}

}  // namespace

NameIndex::NameIndex(Node root, std::string_view source) {
  index_parents(root, parents);
  Builder(*this, source).run(root);
  std::stable_sort(call_sites.begin(), call_sites.end(),
                   [](const auto& a, const auto& b) { return a.first.start_byte() < b.first.start_byte(); });
}

Node NameIndex::parent(Node node) const {
  if (!node) return {};
  auto it = parents.find(node.id());
  if (it != parents.end()) return Node(it->second);
  return node.parent();  // an anonymous token: not in the table
}

int NameIndex::scope_of(Node node) const {
  Node grandchild;
  Node child = node;
  for (Node p = parent(node); p; grandchild = child, child = p, p = parent(p)) {
    auto it = scope_by_node.find(p.id());
    if (it == scope_by_node.end()) continue;
    std::string_view type = p.type();
    if (type == "function_definition" || type == "lambda" || type == "class_definition") {
      // Only the body is inside: defaults, annotations, decorators and bases are not.
      if (child == p.field("body")) return it->second;
    } else if (is_comprehension(type)) {
      Node first;
      for (const Node& c : p.named_children())
        if (c.is("for_in_clause")) { first = c; break; }
      if (!(child == first)) return it->second;
      bool in_first_iterable = false;
      for (const Node& iterable : first.fields("right")) in_first_iterable |= grandchild == iterable;
      if (!in_first_iterable) return it->second;
    } else {
      return it->second;
    }
  }
  return 0;
}

bool is_comprehension(std::string_view type) {
  return type == "list_comprehension" || type == "set_comprehension" ||
         type == "dictionary_comprehension" || type == "generator_expression";
}

Node NameIndex::owner_of_scope(int scope) const {
  for (int s = scope; s > 0; s = scopes[s].parent)
    if (scopes[s].kind == ScopeKind::function || scopes[s].kind == ScopeKind::lambda) return scopes[s].node;
  return {};
}

Resolution NameIndex::resolve(Node expression, int scope, std::string_view source) const {
  return resolve_expression(expression, scope, source, 0);
}

Resolution NameIndex::resolve_callee(Node callee, int scope, std::string_view source) const {
  Resolution r = resolve(callee, scope, source);
  if (r.qualified || r.local_function) return r;
  // self.method(...) / cls.method(...) in a method of the class that defines `method`.
  if (!callee.is("attribute")) return r;
  Node object = callee.field("object");
  if (!object.is("identifier")) return r;
  // mm.flush(...) where `mm = MemoryManager(...)`: the class's method.
  if (Resolution made = resolve(object, scope, source); made.instance_of) {
    r.instance_of = *made.instance_of + "." + std::string(text_of(callee.field("attribute"), source));
    return r;
  }
  int s = scope;
  while (s > 0 && scopes[s].kind == ScopeKind::comprehension) s = scopes[s].parent;
  if (s <= 0 || scopes[s].kind != ScopeKind::function) return r;
  const Scope& method = scopes[s];
  if (method.parent < 0 || scopes[method.parent].kind != ScopeKind::class_body) return r;
  std::string self(text_of(object, source));
  if (self.empty() || self != method.first_parameter) return r;
  auto rebound = method.bindings.find(self);
  if (rebound != method.bindings.end() && rebound->second.size() != 1) return r;  // `self = ...` somewhere
  const Scope& cls = scopes[method.parent];
  auto it = cls.bindings.find(std::string(text_of(callee.field("attribute"), source)));
  if (it == cls.bindings.end() || it->second.back().kind != Binding::Kind::function) return r;
  return {std::nullopt, it->second.back().node, std::nullopt, std::nullopt};
}

Resolution NameIndex::resolve_expression(Node expression, int scope, std::string_view source, int depth) const {
  std::vector<std::string_view> attributes;  // innermost last
  Node node = expression;
  while (true) {
    if (node.is("attribute")) {
      Node attribute = node.field("attribute");
      if (!attribute) return {};
      attributes.push_back(text_of(attribute, source));
      node = node.field("object");
    } else if (node.is("parenthesized_expression") && node.named_children().size() == 1) {
      node = node.named_children().front();
    } else {
      break;
    }
  }
  Resolution base;
  if (node.is("string")) {
    auto literal = decode_string_literal(node, source);
    if (!literal || !attributes.empty()) return {};
    base.text = literal->value;
    return base;
  }
  if (is_getattr_call(node, source)) {
    base = resolve_getattr(node, scope, source, depth);
  } else if (node.is("identifier")) {
    base = resolve_name(std::string(text_of(node, source)), node.start_byte(), scope, source, depth);
  } else {
    return {};
  }
  if (attributes.empty()) return base;
  if (!base.qualified) return {};
  std::string qualified = *base.qualified;
  for (auto it = attributes.rbegin(); it != attributes.rend(); ++it) {
    qualified += '.';
    qualified += *it;
  }
  return {qualified, {}, std::nullopt, std::nullopt};
}

Resolution NameIndex::resolve_getattr(Node call, int scope, std::string_view source, int depth) const {
  if (depth > kMaxAliasDepth) return {};
  Node function = call.field("function");
  Resolution shadowed = resolve_name("getattr", function.start_byte(), scope, source, depth + 1);
  if (shadowed.qualified || shadowed.local_function || shadowed.text) return {};  // not the builtin
  std::vector<Node> args;
  for (Node a : call.field("arguments").named_children())
    if (!a.is("comment")) args.push_back(a);
  if (args.size() < 2 || args.size() > 3) return {};
  Resolution object = resolve_expression(args[0], scope, source, depth + 1);
  Resolution name = resolve_expression(args[1], scope, source, depth + 1);
  if (!object.qualified || !name.text || name.text->empty()) return {};
  for (char c : *name.text)  // an attribute name, nothing else
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return {};
  return {*object.qualified + "." + *name.text, {}, std::nullopt, std::nullopt};
}

Resolution NameIndex::resolve_binding(const Binding& binding, std::string_view source, int depth) const {
  switch (binding.kind) {
    case Binding::Kind::imported: return {binding.qualified, {}, std::nullopt, std::nullopt};
    case Binding::Kind::function: return {std::nullopt, binding.node, std::nullopt, std::nullopt};
    case Binding::Kind::alias: return resolve_expression(binding.node, binding.scope, source, depth + 1);
    case Binding::Kind::instance: {
      Resolution made = resolve_expression(binding.node, binding.scope, source, depth + 1);
      if (!made.qualified) return {};
      return {std::nullopt, {}, std::nullopt, std::move(made.qualified)};
    }
    case Binding::Kind::other: break;
  }
  return {};
}

Resolution NameIndex::resolve_name(const std::string& name, std::uint32_t at, int scope,
                                   std::string_view source, int depth) const {
  if (depth > kMaxAliasDepth || scope < 0 || scope >= static_cast<int>(scopes.size())) return {};
  // positional: the use runs when its code is reached, so the last binding
  // before it in source order is the live one. Seen from inside a function
  // (which runs later, when called), any binding of an outer scope may be.
  bool positional = true;
  bool skip_classes = false;  // class bodies are invisible from functions nested in them
  int s = scope;
  while (s >= 0) {
    const Scope& sc = scopes[s];
    if (skip_classes && sc.kind == ScopeKind::class_body) {
      s = sc.parent;
      continue;
    }
    if (sc.kind != ScopeKind::module && sc.globals.count(name)) {
      s = 0;
      positional = false;
      continue;
    }
    if (sc.nonlocals.count(name)) {
      s = sc.parent;
      positional = false;
      skip_classes = true;
      continue;
    }
    auto it = sc.bindings.find(name);
    if (it != sc.bindings.end()) {
      const std::vector<Binding>& bindings = it->second;
      if (!positional) {
        Resolution first = resolve_binding(bindings.front(), source, depth);
        for (std::size_t i = 1; i < bindings.size(); ++i)
          if (!same(first, resolve_binding(bindings[i], source, depth))) return {};
        return first;
      }
      const Binding* live = nullptr;
      for (const Binding& b : bindings)
        if (b.from <= at && (!live || b.from >= live->from)) live = &b;
      if (live) return resolve_binding(*live, source, depth);
      // Used before any binding: in a function that is an unbound local, at
      // module level a NameError (or the previous loop iteration's value).
      // A class body falls back to the enclosing scopes, as Python does.
      if (sc.kind != ScopeKind::class_body && sc.kind != ScopeKind::comprehension) return {};
    }
    if (sc.kind == ScopeKind::function || sc.kind == ScopeKind::lambda) positional = false;
    if (sc.kind != ScopeKind::module && sc.kind != ScopeKind::class_body) skip_classes = true;
    s = sc.parent;
  }
  return {};  // a builtin, or undefined
}

}  // namespace oomlens::analyzer::python::detail
