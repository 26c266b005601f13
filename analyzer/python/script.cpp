#include "analyzer/python/script.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <stdexcept>

#include "analyzer/python/names.hpp"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace oomlens::analyzer::python {

namespace detail {
struct TypeIndex {
  std::once_flag once;
  // Keys are the grammar's own type strings (static, so views stay valid).
  std::unordered_map<std::string_view, std::vector<Node>> by_type;
};
}  // namespace detail

namespace {

bool starts_with_module(std::string_view name, std::string_view module) {
  return name == module || (name.size() > module.size() && name.substr(0, module.size()) == module &&
                            name[module.size()] == '.');
}

std::vector<SyntaxError> collect_errors(Node root, std::string_view source, const Script& script) {
  std::vector<SyntaxError> out;
  if (!root) {
    out.push_back({{0, 0}, script.point(0), "the file could not be parsed"});
    return out;
  }
  std::vector<Node> stack{root};
  while (!stack.empty()) {
    Node node = stack.back();
    stack.pop_back();
    if (node.is_missing()) {
      std::string what(node.type());
      out.push_back({node.range(), script.point(node.start_byte()), "missing `" + what + "`"});
      continue;
    }
    if (node.is_error()) {
      std::string_view text = source.substr(node.start_byte(), std::min<std::uint32_t>(node.range().size(), 40));
      text = text.substr(0, text.find('\n'));
      std::string message = "invalid syntax";
      if (!text.empty()) message += " at `" + std::string(text) + "`";
      out.push_back({node.range(), script.point(node.start_byte()), message});
      continue;
    }
    if (!node.has_error()) continue;
    for (std::uint32_t i = node.child_count(); i-- > 0;) stack.push_back(node.child(i));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SyntaxError& a, const SyntaxError& b) { return a.range.begin < b.range.begin; });
  return out;
}

}  // namespace

void Script::TreeDeleter::operator()(TSTree* tree) const { ts_tree_delete(tree); }

Script::Script() = default;
Script::Script(Script&&) noexcept = default;
Script& Script::operator=(Script&&) noexcept = default;
Script::~Script() = default;

std::uint32_t grammar_abi_version() { return ts_language_version(tree_sitter_python()); }
std::uint32_t runtime_min_abi_version() { return TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION; }
std::uint32_t runtime_max_abi_version() { return TREE_SITTER_LANGUAGE_VERSION; }

namespace {

TSPoint ts_point(const Script& script, std::uint32_t byte) {
  Point p = script.point(byte);  // 1-based line, byte column
  return {p.line - 1, p.column};
}

// The one edit that turns `before` into `after`: everything between their
// common prefix and common suffix. Comparing the texts (memcmp speed) spares
// threading the client's change list through the document store, and is
// exact however many changes a version bundled.
TSInputEdit edit_between(const Script& before, const Script& after) {
  std::string_view a = before.source(), b = after.source();
  std::size_t limit = std::min(a.size(), b.size());
  std::size_t prefix = 0;
  while (prefix < limit && a[prefix] == b[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < limit - prefix && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) ++suffix;
  TSInputEdit edit{};
  edit.start_byte = static_cast<std::uint32_t>(prefix);
  edit.old_end_byte = static_cast<std::uint32_t>(a.size() - suffix);
  edit.new_end_byte = static_cast<std::uint32_t>(b.size() - suffix);
  edit.start_point = ts_point(before, edit.start_byte);
  edit.old_end_point = ts_point(before, edit.old_end_byte);
  edit.new_end_point = ts_point(after, edit.new_end_byte);
  return edit;
}

}  // namespace

Script parse_script(std::string_view source, const Script* previous) {
  Script script;
  script.types_ = std::make_unique<detail::TypeIndex>();
  script.source_ = std::string(source);

  script.line_starts_.push_back(0);
  for (std::size_t i = 0; i < script.source_.size(); ++i)
    if (script.source_[i] == '\n') script.line_starts_.push_back(static_cast<std::uint32_t>(i + 1));

  if (script.source_.size() < std::numeric_limits<std::uint32_t>::max()) {
    std::unique_ptr<TSParser, void (*)(TSParser*)> parser(ts_parser_new(), ts_parser_delete);
    if (!ts_parser_set_language(parser.get(), tree_sitter_python()))
      throw std::runtime_error("tree-sitter-python ABI " + std::to_string(grammar_abi_version()) +
                               " is not supported by the linked tree-sitter runtime");
    // Incremental: tree-sitter reuses the subtrees the edit did not touch.
    // The previous tree is copied (cheap, reference counted), never edited
    // in place: another thread may still be reading it.
    std::unique_ptr<TSTree, Script::TreeDeleter> old_tree;
    if (previous && previous->tree_) {
      old_tree.reset(ts_tree_copy(previous->tree_.get()));
      TSInputEdit edit = edit_between(*previous, script);
      ts_tree_edit(old_tree.get(), &edit);
    }
    script.tree_.reset(ts_parser_parse_string(parser.get(), old_tree.get(), script.source_.data(),
                                              static_cast<std::uint32_t>(script.source_.size())));
  }

  Node root = script.root();
  script.errors_ = collect_errors(root, script.source_, script);
  script.names_ = std::make_unique<detail::NameIndex>(root, script.source_);

  detail::NameIndex& names = *script.names_;
  names.calls.reserve(names.call_sites.size());
  for (const auto& [node, scope] : names.call_sites) {
    Call call;
    call.node = node;
    call.callee = node.field("function");
    call.range = node.range();
    call.start = script.point(node.start_byte());
    detail::Resolution r = names.resolve_callee(call.callee, scope, script.source_);
    call.qualified_name = r.qualified;
    call.instance_method = std::move(r.instance_of);
    call.local_function = r.local_function;
    if (call.local_function) names.callers[call.local_function.id()].push_back(names.calls.size());
    names.calls.push_back(std::move(call));
    names.call_owners.push_back(names.owner_of_scope(scope));
  }
  return script;
}

const std::vector<Node>& Script::nodes_of_type(std::string_view type) const {
  static const std::vector<Node> none;
  std::call_once(types_->once, [this] {
    root().walk([this](Node n) {
      types_->by_type[n.type()].push_back(n);
      return true;
    });
  });
  auto it = types_->by_type.find(type);
  return it == types_->by_type.end() ? none : it->second;
}

Node Script::root() const { return tree_ ? Node(ts_tree_root_node(tree_.get())) : Node(); }

std::string_view Script::text(ByteRange range) const {
  if (range.begin > source_.size() || range.end < range.begin) return {};
  return std::string_view(source_).substr(range.begin, range.size());
}

std::string_view Script::text(Node node) const { return node ? text(node.range()) : std::string_view(); }

Point Script::point(std::uint32_t byte) const {
  byte = std::min<std::uint32_t>(byte, static_cast<std::uint32_t>(source_.size()));
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), byte);
  std::uint32_t line = static_cast<std::uint32_t>(it - line_starts_.begin());
  std::uint32_t start = line_starts_[line - 1];
  std::uint32_t characters = 0;
  for (std::uint32_t i = start; i < byte; ++i)
    if ((static_cast<unsigned char>(source_[i]) & 0xC0) != 0x80) ++characters;
  return {line, characters + 1, byte - start + 1};
}

std::string_view Script::line_ending() const {
  std::size_t newline = source_.find('\n');
  return newline != std::string::npos && newline > 0 && source_[newline - 1] == '\r' ? "\r\n" : "\n";
}

Node Script::node_at(ByteRange range) const {
  Node r = root();
  if (!r) return {};
  return Node(ts_node_named_descendant_for_byte_range(r.raw(), range.begin, range.end));
}

Node Script::parent(Node node) const { return names_->parent(node); }

std::optional<std::string> Script::qualified_name(Node expression) const {
  if (!expression) return std::nullopt;
  return names_->resolve(expression, names_->scope_of(expression), source_).qualified;
}

const std::vector<Import>& Script::imports() const { return names_->imports; }

std::optional<Import> Script::first_import_of(std::string_view module) const {
  for (const Import& import : names_->imports) {
    if (!import.top_level || import.future) continue;
    if (!import.from_module.empty() && starts_with_module(import.from_module, module)) return import;
    for (const ImportedName& name : import.names)
      if (starts_with_module(name.module, module)) return import;
  }
  return std::nullopt;
}

const std::vector<Call>& Script::calls() const { return names_->calls; }

std::string canonical_name(std::string_view qualified) {
  // torch/cuda/__init__.py does `from .memory import *`: the public functions
  // of torch.cuda.memory are the same objects as torch.cuda's.
  constexpr std::string_view kCudaMemory = "torch.cuda.memory.";
  if (qualified.starts_with(kCudaMemory)) {
    std::string_view rest = qualified.substr(kCudaMemory.size());
    if (!rest.empty() && rest[0] != '_' && rest.find('.') == std::string_view::npos)
      return std::string("torch.cuda.").append(rest);
  }
  return std::string(qualified);
}

std::vector<Call> Script::calls_to(std::string_view qualified) const {
  std::vector<Call> out;
  std::string wanted = canonical_name(qualified);
  for (const Call& call : names_->calls)
    if (call.qualified_name && canonical_name(*call.qualified_name) == wanted) out.push_back(call);
  return out;
}

const std::vector<Function>& Script::functions() const { return names_->functions; }

std::optional<StringLiteral> Script::string_literal(Node node) const {
  return decode_string_literal(node, source_);
}

}  // namespace oomlens::analyzer::python
