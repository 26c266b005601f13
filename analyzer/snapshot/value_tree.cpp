#include "analyzer/snapshot/value_tree.hpp"

#include <bit>
#include <cstring>

namespace oomlens::analyzer::snapshot {

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::none: return "None";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::big_integer: return "int";
    case Kind::floating: return "float";
    case Kind::string: return "str";
    case Kind::bytes: return "bytes";
    case Kind::list: return "list";
    case Kind::tuple: return "tuple";
    case Kind::dict: return "dict";
  }
  return "?";
}

// None, False, True and the ints 0..255 exist once per tree: a snapshot
// repeats them constantly (BININT1, NEWFALSE), and sharing them costs nothing.
ValueTree::ValueTree() {
  nodes_.push_back(Node{Kind::none});
  nodes_.push_back(Node{Kind::boolean, 0, 0, 0, 0});
  nodes_.push_back(Node{Kind::boolean, 0, 0, 0, 1});
  for (std::uint64_t i = 0; i < 256; ++i) nodes_.push_back(Node{Kind::integer, 0, 0, 0, i});
}

Kind ValueTree::kind(ValueRef ref) const { return nodes_[ref.index].kind; }

std::size_t ValueTree::depth(ValueRef ref) const { return nodes_[ref.index].depth; }

std::optional<bool> ValueTree::as_bool(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (node.kind != Kind::boolean) return std::nullopt;
  return node.payload != 0;
}

std::optional<std::int64_t> ValueTree::as_int(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (node.kind != Kind::integer) return std::nullopt;
  return static_cast<std::int64_t>(node.payload);
}

std::optional<std::uint64_t> ValueTree::as_uint64(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (node.kind == Kind::integer) {
    auto value = static_cast<std::int64_t>(node.payload);
    if (value < 0) return std::nullopt;
    return static_cast<std::uint64_t>(value);
  }
  if (node.kind != Kind::big_integer) return std::nullopt;
  // Minimal two's complement: [2^63, 2^64) takes 9 bytes, the last one 0.
  std::string_view bytes = text_of(node);
  if (bytes.size() > 9 || (bytes.size() == 9 && bytes[8] != 0)) return std::nullopt;
  if (bytes.size() < 9 && (static_cast<unsigned char>(bytes.back()) & 0x80)) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes.size() && i < 8; ++i)
    value |= std::uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  return value;
}

std::optional<double> ValueTree::as_float(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (node.kind == Kind::floating) return std::bit_cast<double>(node.payload);
  if (node.kind == Kind::integer) return static_cast<double>(static_cast<std::int64_t>(node.payload));
  return std::nullopt;
}

std::optional<std::string_view> ValueTree::as_string(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (node.kind != Kind::string) return std::nullopt;
  return text_of(node);
}

std::optional<std::string_view> ValueTree::as_bytes(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (node.kind != Kind::bytes) return std::nullopt;
  return text_of(node);
}

std::optional<std::string_view> ValueTree::big_integer_bytes(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (node.kind != Kind::big_integer) return std::nullopt;
  return text_of(node);
}

namespace {
bool is_container(Kind kind) { return kind == Kind::list || kind == Kind::tuple || kind == Kind::dict; }
}  // namespace

ValueTree::Children ValueTree::children(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (!is_container(node.kind) || node.count == 0) return Children(this, kNoRun, 0, false);
  return Children(this, static_cast<std::uint32_t>(node.payload), node.count, (node.flags & kDirect) != 0);
}

ValueTree::Entries ValueTree::entries(ValueRef ref) const {
  if (kind(ref) != Kind::dict) return Entries(Children(this, kNoRun, 0, false));
  return Entries(children(ref));
}

std::size_t ValueTree::size(ValueRef ref) const {
  const Node& node = nodes_[ref.index];
  if (!is_container(node.kind)) return 0;
  return node.kind == Kind::dict ? node.count / 2 : node.count;
}

std::optional<ValueRef> ValueTree::find(ValueRef dict, std::string_view key) const {
  std::optional<ValueRef> found;
  for (auto [k, v] : entries(dict)) {
    const Node& node = nodes_[k.index];
    if (node.kind == Kind::string && text_of(node) == key) found = v;
  }
  return found;
}

// Runs: a container's children arrive in batches (APPENDS of 1000 items, one
// SETITEM at a time) interleaved with other containers' batches. While they
// are contiguous in the shared children array, the node points at them
// directly; the first batch that is not becomes a second run, and the
// container chains its runs from then on.
void ValueTree::append_children(ValueRef container, const ValueRef* items, std::size_t count) {
  if (count == 0) return;
  Node& node = nodes_[container.index];
  auto start = static_cast<std::uint32_t>(children_.size());
  children_.append(items, count);
  auto added = static_cast<std::uint32_t>(count);
  if (node.count == 0) {
    node.flags |= kDirect;
    node.payload = start;
  } else if (node.flags & kDirect) {
    auto first = static_cast<std::uint32_t>(node.payload);
    if (first + node.count != start) {  // no longer contiguous: two runs
      auto run = static_cast<std::uint32_t>(runs_.size());
      runs_.push_back(Run{first, node.count, run + 1});
      runs_.push_back(Run{start, added, kNoRun});
      node.flags &= static_cast<std::uint8_t>(~kDirect);
      node.payload = (std::uint64_t{run + 1} << 32) | run;
    }
  } else {
    auto last = static_cast<std::uint32_t>(node.payload >> 32);
    if (runs_[last].start + runs_[last].count == start) {
      runs_[last].count += added;
    } else {
      auto run = static_cast<std::uint32_t>(runs_.size());
      runs_.push_back(Run{start, added, kNoRun});
      runs_[last].next = run;
      node.payload = (std::uint64_t{run} << 32) | (node.payload & 0xFFFFFFFFu);
    }
  }
  node.count += added;
}

ValueTree::Children::iterator ValueTree::Children::begin() const {
  iterator it;
  if (count_ == 0) return it;
  it.tree_ = tree_;
  if (direct_) {
    it.run_ = kNoRun;
    it.at_ = first_;
    it.run_end_ = first_ + count_;
  } else {
    const Run& run = tree_->runs_[first_];
    it.run_ = first_;
    it.at_ = run.start;
    it.run_end_ = run.start + run.count;
  }
  it.left_ = count_;
  return it;
}

ValueRef ValueTree::Children::iterator::operator*() const { return tree_->children_[at_]; }

ValueTree::Children::iterator& ValueTree::Children::iterator::operator++() {
  --left_;
  if (++at_ == run_end_ && left_ > 0) {
    run_ = tree_->runs_[run_].next;
    const Run& run = tree_->runs_[run_];
    at_ = run.start;
    run_end_ = run.start + run.count;
  }
  return *this;
}

}  // namespace oomlens::analyzer::snapshot
