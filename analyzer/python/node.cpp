#include "analyzer/python/node.hpp"

namespace oomlens::analyzer::python {

std::string_view Node::type() const {
  return *this ? std::string_view(ts_node_type(raw_)) : std::string_view();
}

ByteRange Node::range() const {
  if (!*this) return {};
  return {ts_node_start_byte(raw_), ts_node_end_byte(raw_)};
}

bool Node::named() const { return *this && ts_node_is_named(raw_); }
bool Node::is_error() const { return *this && type() == "ERROR"; }
bool Node::is_missing() const { return *this && ts_node_is_missing(raw_); }
bool Node::has_error() const { return *this && ts_node_has_error(raw_); }

Node Node::parent() const { return *this ? Node(ts_node_parent(raw_)) : Node(); }

Node Node::field(std::string_view name) const {
  if (!*this) return {};
  return Node(ts_node_child_by_field_name(raw_, name.data(), static_cast<std::uint32_t>(name.size())));
}

std::vector<Node> Node::fields(std::string_view name) const {
  std::vector<Node> out;
  if (!*this) return out;
  // A cursor, not ts_node_field_name_for_child: the latter misreports fields
  // of some children in the 0.20 runtime.
  TSTreeCursor cursor = ts_tree_cursor_new(raw_);
  if (ts_tree_cursor_goto_first_child(&cursor)) {
    do {
      const char* field = ts_tree_cursor_current_field_name(&cursor);
      if (field && name == field) out.emplace_back(ts_tree_cursor_current_node(&cursor));
    } while (ts_tree_cursor_goto_next_sibling(&cursor));
  }
  ts_tree_cursor_delete(&cursor);
  return out;
}

std::uint32_t Node::child_count() const { return *this ? ts_node_child_count(raw_) : 0; }

Node Node::child(std::uint32_t index) const {
  return index < child_count() ? Node(ts_node_child(raw_, index)) : Node();
}

void Node::walk(const std::function<bool(Node)>& visit) const {
  if (!*this) return;
  TSTreeCursor cursor = ts_tree_cursor_new(raw_);
  bool descend = true;
  for (;;) {
    TSNode current = ts_tree_cursor_current_node(&cursor);
    if (descend && ts_node_is_named(current) && !visit(Node(current))) descend = false;
    if (descend && ts_tree_cursor_goto_first_child(&cursor)) continue;
    // Up until a next sibling exists; done when back at the start node.
    bool moved = false;
    for (;;) {
      if (ts_node_eq(ts_tree_cursor_current_node(&cursor), raw_)) break;
      if (ts_tree_cursor_goto_next_sibling(&cursor)) {
        moved = true;
        break;
      }
      if (!ts_tree_cursor_goto_parent(&cursor)) break;
    }
    if (!moved) break;
    descend = true;
  }
  ts_tree_cursor_delete(&cursor);
}

std::vector<Node> Node::named_children() const {
  std::vector<Node> out;
  if (!*this) return out;
  // A cursor steps to the next sibling in constant time; ts_node_named_child(i)
  // scans from the first child each time.
  TSTreeCursor cursor = ts_tree_cursor_new(raw_);
  if (ts_tree_cursor_goto_first_child(&cursor)) {
    do {
      TSNode child = ts_tree_cursor_current_node(&cursor);
      if (ts_node_is_named(child) && std::string_view(ts_node_type(child)) != "comment") out.emplace_back(child);
    } while (ts_tree_cursor_goto_next_sibling(&cursor));
  }
  ts_tree_cursor_delete(&cursor);
  return out;
}

}  // namespace oomlens::analyzer::python
