// A thin, value-type view of one tree-sitter syntax node.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "analyzer/python/position.hpp"

namespace oomlens::analyzer::python {

// A node of the tree owned by a Script. Valid as long as that Script lives;
// a default-constructed Node is null (false in a boolean context).
class Node {
 public:
  Node() = default;
  explicit Node(TSNode raw) : raw_(raw) {}

  explicit operator bool() const { return !ts_node_is_null(raw_); }
  // The grammar's node type ("call", "for_statement", "ERROR", ...); "" for null.
  std::string_view type() const;
  bool is(std::string_view node_type) const { return type() == node_type; }
  ByteRange range() const;
  std::uint32_t start_byte() const { return range().begin; }
  std::uint32_t end_byte() const { return range().end; }

  bool named() const;
  bool is_error() const;    // an ERROR node: text the parser could not place
  bool is_missing() const;  // a token the parser inserted to recover
  bool has_error() const;   // this node or one below it is ERROR or missing

  // Walks down from the root (tree-sitter 0.20): prefer Script::parent in loops.
  Node parent() const;
  // The first child under a field of the grammar ("body", "condition", ...).
  Node field(std::string_view name) const;
  // Every child under that field (import names, comparison operators).
  std::vector<Node> fields(std::string_view name) const;
  std::uint32_t child_count() const;
  Node child(std::uint32_t index) const;
  // Named children, comments excluded.
  std::vector<Node> named_children() const;
  // Visits this node and every named descendant (comments included), in
  // source order; `visit` returns false to skip a node's children. Linear in
  // the tree's size: child(i) in a loop is quadratic on wide nodes (a module
  // of 2,000 statements), tree-sitter scanning from the first child each time.
  void walk(const std::function<bool(Node)>& visit) const;

  const TSNode& raw() const { return raw_; }
  // Identity of the node within its tree (stable while the tree lives).
  const void* id() const { return raw_.id; }
  friend bool operator==(const Node& a, const Node& b) { return ts_node_eq(a.raw_, b.raw_); }

 private:
  TSNode raw_{};
};

}  // namespace oomlens::analyzer::python
