// The pickle virtual machine, data opcodes only. It follows CPython's
// Lib/pickle.py `_Unpickler` opcode by opcode (stack, MARK segments, memo),
// so what it accepts means what Python would have built, minus code.
#include "analyzer/snapshot/pickle.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analyzer/snapshot/pickle_opcodes.hpp"
#include "analyzer/snapshot/pickle_text.hpp"
#include "analyzer/snapshot/chunked_array.hpp"

namespace oomlens::analyzer::snapshot {

class PickleMachine {
 public:
  PickleMachine(std::string_view in, const PickleLimits& limits, TraceSink* traces)
      : in_(in), limits_(limits), max_depth_(std::min<std::size_t>(limits.max_depth, UINT16_MAX)), traces_(traces) {}

  Expected<ValueTree, PickleError> run(const ReadProgress& progress);

 private:
  using Node = ValueTree::Node;
  static constexpr ValueRef kUnset{UINT32_MAX};
  static constexpr ValueRef kDropped{UINT32_MAX - 1};  // memoized trace entry, taken by the sink and dropped

  // An open MARK: the stack's size then, and the arenas' sizes, so that what
  // was built since can be dropped once a sink took it.
  struct Mark {
    std::size_t stack = 0;
    std::size_t nodes = 0, children = 0, runs = 0, text = 0, memo = 0, memo_rewrites = 0;
    bool older_changed = false;  // a container made before the MARK got children since
  };

  bool step();

  // -- errors ---------------------------------------------------------------
  bool fail(std::string_view why) {
    std::string_view name = opcode_name(op_);
    error_ = PickleError{op_at_, fmt::format("{} (0x{:02x}) at byte {}: {}", name, op_, op_at_, why)};
    return false;
  }
  bool refuse(std::string_view reason) {
    error_ = PickleError{op_at_, fmt::format("refused opcode {} (0x{:02x}) at byte {}: {}; a memory snapshot holds only plain data",
                                             opcode_name(op_), op_, op_at_, reason)};
    return false;
  }

  // -- input ----------------------------------------------------------------
  std::size_t left() const { return in_.size() - pos_; }
  bool need_argument(std::size_t n) {
    if (left() >= n) return true;
    return fail(fmt::format("the file ends inside its argument ({} bytes needed, {} left): truncated", n, left()));
  }
  // Checked before anything is allocated, so a length of 2^60 costs nothing.
  bool need_declared(std::uint64_t n) {
    if (left() >= n) return true;
    return fail(fmt::format("it declares {} bytes but only {} remain: truncated or hostile", n, left()));
  }
  std::uint64_t read_le(std::size_t n) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < n; ++i) value |= std::uint64_t{static_cast<unsigned char>(in_[pos_ + i])} << (8 * i);
    pos_ += n;
    return value;
  }
  std::uint64_t read_be64() {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < 8; ++i) value = (value << 8) | static_cast<unsigned char>(in_[pos_ + i]);
    pos_ += 8;
    return value;
  }
  std::string_view take(std::size_t n) {
    std::string_view out = in_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  bool read_line(std::string_view& line) {
    std::size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) return fail("the file ends before its text argument's newline: truncated");
    line = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }

  // -- stack ----------------------------------------------------------------
  // Python starts a fresh stack at each MARK; only values above it are reachable.
  std::size_t base() const { return marks_.empty() ? 0 : marks_.back().stack; }
  bool need_stack(std::size_t n) {
    if (stack_.size() - base() >= n) return true;
    return fail(fmt::format("needs {} value(s) on the stack above the last MARK, finds {}", n, stack_.size() - base()));
  }
  bool push(ValueRef ref) {
    if (stack_.size() >= limits_.max_stack)
      return fail(fmt::format("more than {} values on the stack (limit)", limits_.max_stack));
    stack_.push_back(ref);
    return true;
  }
  bool pop_mark(Mark& mark) {
    if (marks_.empty()) return fail("no MARK is open");
    mark = marks_.back();
    marks_.pop_back();
    return true;
  }
  bool pop_mark(std::size_t& stack_size) {
    Mark mark;
    if (!pop_mark(mark)) return false;
    stack_size = mark.stack;
    return true;
  }

  // -- values ---------------------------------------------------------------
  bool add_node(const Node& node, ValueRef& out) {
    if (tree_.nodes_.size() >= limits_.max_values)
      return fail(fmt::format("more than {} values (limit)", limits_.max_values));
    out = ValueRef{static_cast<std::uint32_t>(tree_.nodes_.size())};
    tree_.nodes_.push_back(node);
    return true;
  }
  bool push_node(const Node& node) {
    ValueRef ref;
    return add_node(node, ref) && push(ref);
  }
  bool push_int(std::int64_t value) {
    if (value >= 0 && value < 256) return push(ValueRef{ValueTree::kFirstSmallInt + static_cast<std::uint32_t>(value)});
    return push_node(Node{Kind::integer, 0, 0, 0, static_cast<std::uint64_t>(value)});
  }
  bool push_long_bytes(std::string_view le);
  // Appends decoded text to the tree, then the node that spans it.
  template <typename Decode>
  bool push_text(Kind kind, Decode decode) {
    std::size_t start = tree_.text_.size();
    if (!decode(tree_.text_)) return false;
    std::size_t length = tree_.text_.size() - start;
    if (length > UINT32_MAX) return fail("a string longer than 4 GiB");
    return push_node(Node{kind, 0, 0, static_cast<std::uint32_t>(length), start});
  }
  bool push_utf8(std::string_view raw) {
    return push_text(Kind::string, [&](std::string& out) { return pickle_text::append_utf8(out, raw), true; });
  }
  bool push_bytes(std::string_view raw) {
    return push_text(Kind::bytes, [&](std::string& out) { return out.append(raw), true; });
  }
  bool push_container(Kind kind, std::uint8_t flags = 0) { return push_node(Node{kind, flags, 1, 0, 0}); }
  bool new_container(Kind kind, ValueRef& out, std::uint8_t flags = 0) {
    return add_node(Node{kind, flags, 1, 0, 0}, out);
  }
  bool add_children(ValueRef container, std::size_t from);
  bool check_keys(std::size_t from);
  bool container_from_mark(Kind kind, std::uint8_t flags = 0);
  bool append_to(Kind kind, bool is_set, std::size_t target_at, std::size_t from, const Mark* mark = nullptr);

  // -- traces streamed to the sink --------------------------------------------
  std::optional<std::size_t> trace_device(std::size_t target_at) const;
  bool is_string(ValueRef ref, std::string_view text) const {
    return tree_.kind(ref) == Kind::string && tree_.as_string(ref) == text;
  }
  bool stream_trace(std::size_t target_at, std::size_t from, const Mark* mark);
  void drop_built_since(const Mark& mark, std::size_t from);

  // -- memo -----------------------------------------------------------------
  bool memo_put(std::uint64_t index);
  bool memo_get(std::uint64_t index);
  bool line_index(std::uint64_t& index) {
    std::string_view line;
    if (!read_line(line)) return false;
    auto parsed = pickle_text::parse_decimal_int(line);
    if (!parsed || parsed->big || parsed->value < 0 || parsed->value > UINT32_MAX)
      return fail("its memo index is not a number from 0 to 2^32-1");
    index = static_cast<std::uint64_t>(parsed->value);
    return true;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  std::size_t op_at_ = 0;
  unsigned char op_ = 0;
  const PickleLimits& limits_;
  const std::size_t max_depth_;
  ValueTree tree_;
  std::vector<ValueRef> stack_;
  std::vector<Mark> marks_;
  // Memo: dense while indices come in order (as every pickler writes them),
  // a map for the rest, so a huge index costs one entry, not 2^32. In chunks:
  // a snapshot memoizes every trace entry, tens of millions of them.
  ChunkedArray<ValueRef> memo_;
  std::size_t memo_rewrites_ = 0;  // PUTs to an index below the memo's end, or sparse
  TraceSink* traces_;
  bool streaming_ = true;
  std::unordered_map<std::uint64_t, ValueRef> sparse_memo_;
  std::size_t memo_entries_ = 0;
  bool stopped_ = false;
  std::optional<PickleError> error_;
};

bool PickleMachine::push_long_bytes(std::string_view le) {
  if (le.size() <= 8) {
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < le.size(); ++i) bits |= std::uint64_t{static_cast<unsigned char>(le[i])} << (8 * i);
    if (!le.empty() && le.size() < 8 && (static_cast<unsigned char>(le.back()) & 0x80))
      bits |= ~std::uint64_t{0} << (8 * le.size());  // sign-extend
    return push_int(static_cast<std::int64_t>(bits));
  }
  std::string trimmed(le);
  pickle_text::trim_twos_complement(trimmed);
  if (trimmed.size() <= 8) return push_long_bytes(trimmed);
  return push_text(Kind::big_integer, [&](std::string& out) { return out.append(trimmed), true; });
}

// Moves stack_[from..] into the container. Children are sealed as they go in:
// a sealed container can no longer change, which keeps the tree acyclic and
// each container's depth final (see value_tree.hpp).
bool PickleMachine::add_children(ValueRef container, std::size_t from) {
  auto& nodes = tree_.nodes_;
  std::size_t count = stack_.size() - from;
  if (nodes[container.index].count + count > limits_.max_items)
    return fail(fmt::format("a container with more than {} items (limit)", limits_.max_items));
  std::size_t depth = nodes[container.index].depth;
  for (std::size_t i = from; i < stack_.size(); ++i) {
    Node& child = nodes[stack_[i].index];
    child.flags |= ValueTree::kSealed;
    depth = std::max<std::size_t>(depth, child.depth + std::size_t{1});
  }
  if (nodes[container.index].flags & ValueTree::kSealed)
    return fail("it changes a container already placed inside another one: recursive structures are not read");
  if (depth > max_depth_) return fail(fmt::format("containers nested more than {} deep (limit)", max_depth_));
  nodes[container.index].depth = static_cast<std::uint16_t>(depth);
  for (auto it = marks_.rbegin(); it != marks_.rend() && container.index < it->nodes; ++it) it->older_changed = true;
  tree_.append_children(container, stack_.data() + from, count);
  stack_.resize(from);
  return true;
}

// Dict keys must be hashable in Python: lists, dicts and sets are not.
bool PickleMachine::check_keys(std::size_t from) {
  if ((stack_.size() - from) % 2 != 0) return fail("an odd number of values for key/value pairs");
  for (std::size_t i = from; i < stack_.size(); i += 2) {
    Kind kind = tree_.kind(stack_[i]);
    if (kind == Kind::list || kind == Kind::dict)
      return fail(fmt::format("a dict key of unhashable type {}", kind_name(kind)));
  }
  return true;
}

// TUPLE, LIST, DICT, FROZENSET: a new container of the values above the MARK.
bool PickleMachine::container_from_mark(Kind kind, std::uint8_t flags) {
  std::size_t mark = 0;
  if (!pop_mark(mark)) return false;
  if (kind == Kind::dict && !check_keys(mark)) return false;
  ValueRef container;
  if (!new_container(kind, container, flags) || !add_children(container, mark)) return false;
  return push(container);
}

// APPEND(S), ADDITEMS, SETITEM(S): the target sits just below the new values.
bool PickleMachine::append_to(Kind kind, bool is_set, std::size_t target_at, std::size_t from, const Mark* mark) {
  if (target_at < base()) return fail("no container below its values on the stack");
  ValueRef target = stack_[target_at];
  const Node& node = tree_.nodes_[target.index];
  bool node_is_set = node.flags & ValueTree::kSet;
  if (node.kind != kind || node_is_set != is_set) {
    std::string_view want = is_set ? "set" : kind_name(kind);
    std::string_view found = node_is_set ? "set" : kind_name(node.kind);
    return fail(fmt::format("its target is a {}, not a {}", found, want));
  }
  if (kind == Kind::dict && !check_keys(from)) return false;
  if (kind == Kind::list && !is_set && traces_ && streaming_ && stream_trace(target_at, from, mark)) return true;
  return add_children(target, from);
}

// Which device's trace the list at stack_[target_at] is, when the stack has
// the shape a snapshot's top-level dict gives it while its device_traces are
// being written: the dict, string keys each followed by its value,
// "device_traces", the list of traces, then the traces up to this one, with
// no MARK open but the dict's and the list of traces'.
std::optional<std::size_t> PickleMachine::trace_device(std::size_t target_at) const {
  const auto& nodes = tree_.nodes_;
  auto open_list = [&](std::size_t at) {
    const Node& node = nodes[stack_[at].index];
    return node.kind == Kind::list && !(node.flags & (ValueTree::kSet | ValueTree::kSealed));
  };
  if (target_at < 3 || tree_.kind(stack_[0]) != Kind::dict) return std::nullopt;
  for (std::size_t at = target_at; at >= 3 && open_list(at); --at) {
    std::size_t key_at = at - 2;
    if (!open_list(at - 1) || key_at % 2 != 1 || !is_string(stack_[key_at], "device_traces")) continue;
    for (std::size_t k = 1; k < key_at; k += 2)
      if (tree_.kind(stack_[k]) != Kind::string) return std::nullopt;
    for (const Mark& m : marks_)
      if (m.stack > 1 && m.stack != key_at + 2) return std::nullopt;
    return target_at - at;
  }
  return std::nullopt;
}

// Hands stack_[from..] to the sink when the target is a trace; once it took
// them, what they were built from is dropped if nothing else refers to it.
bool PickleMachine::stream_trace(std::size_t target_at, std::size_t from, const Mark* mark) {
  auto device = trace_device(target_at);
  if (!device) return false;
  ValueRef list = stack_[target_at];
  std::span<const ValueRef> items(stack_.data() + from, stack_.size() - from);
  if (!traces_->take(tree_, list, *device, items, left())) {
    streaming_ = false;
    return false;
  }
  tree_.nodes_[list.index].flags |= ValueTree::kStreamed;
  if (mark) drop_built_since(*mark, from);
  stack_.resize(from);
  return true;
}

// Drops the values built since `mark` when they were all for the items the
// sink took: no container made before the MARK got any of them, no memo
// entry but the items' own names them (those are marked dropped), and the
// sink keeps none. Otherwise (a new frame list memoized among the entries,
// say) they stay, unreachable but harmless.
void PickleMachine::drop_built_since(const Mark& mark, std::size_t from) {
  auto& nodes = tree_.nodes_;
  if (mark.older_changed || memo_rewrites_ != mark.memo_rewrites || traces_->holds_from(static_cast<std::uint32_t>(mark.nodes)))
    return;
  for (std::size_t i = from; i < stack_.size(); ++i) {
    if (stack_[i].index < mark.nodes) return;
    nodes[stack_[i].index].flags |= ValueTree::kTaken;
  }
  for (std::size_t i = mark.memo; i < memo_.size(); ++i) {
    ValueRef ref = memo_[i];
    if (ref != kUnset && ref != kDropped && ref.index >= mark.nodes && !(nodes[ref.index].flags & ValueTree::kTaken)) return;
  }
  for (std::size_t i = mark.memo; i < memo_.size(); ++i)
    if (memo_[i] != kUnset && memo_[i] != kDropped && memo_[i].index >= mark.nodes) memo_[i] = kDropped;
  nodes.truncate(mark.nodes);
  tree_.children_.truncate(mark.children);
  tree_.runs_.truncate(mark.runs);
  tree_.text_.resize(mark.text);
}

bool PickleMachine::memo_put(std::uint64_t index) {
  if (!need_stack(1)) return false;
  ValueRef top = stack_.back();
  bool added = false;
  if (index < memo_.size()) {
    ++memo_rewrites_;
    added = memo_[index] == kUnset;
    memo_[index] = top;
  } else if (index == memo_.size()) {
    memo_.push_back(top);
    added = sparse_memo_.empty() || sparse_memo_.erase(index) == 0;  // one entry per index, as Python's dict
  } else {
    ++memo_rewrites_;
    added = sparse_memo_.insert_or_assign(index, top).second;
  }
  if (added && ++memo_entries_ > limits_.max_memo)
    return fail(fmt::format("more than {} memo entries (limit)", limits_.max_memo));
  return true;
}

bool PickleMachine::memo_get(std::uint64_t index) {
  if (index < memo_.size() && memo_[index] == kDropped)
    return fail(fmt::format("memo index {} names a trace entry, which this reader does not keep once read; "
                            "a snapshot never refers to one twice",
                            index));
  if (index < memo_.size() && memo_[index] != kUnset) {
    if (tree_.nodes_[memo_[index].index].flags & ValueTree::kStreamed)
      return fail(fmt::format("memo index {} names a trace whose entries were read as a trace; "
                              "a snapshot never refers to one twice",
                              index));
    return push(memo_[index]);
  }
  if (auto it = sparse_memo_.find(index); it != sparse_memo_.end()) return push(it->second);
  return fail(fmt::format("memo index {} was never stored", index));
}

bool PickleMachine::step() {
  op_at_ = pos_;
  op_ = static_cast<unsigned char>(in_[pos_++]);
  switch (static_cast<Op>(op_)) {
    case Op::PROTO: {
      if (!need_argument(1)) return false;
      auto version = read_le(1);
      if (version > 5) return fail(fmt::format("protocol {} is newer than 5, the highest known", version));
      return true;
    }
    case Op::FRAME:  // a read-ahead hint; only its length is checked
      if (!need_argument(8)) return false;
      return need_declared(read_le(8));
    case Op::STOP:
      if (!need_stack(1)) return false;
      tree_.root_ = stack_.back();
      stopped_ = true;
      return true;
    case Op::MARK:
      if (marks_.size() >= max_depth_) return fail(fmt::format("more than {} MARKs open (limit)", max_depth_));
      marks_.push_back(Mark{stack_.size(), tree_.nodes_.size(), tree_.children_.size(), tree_.runs_.size(),
                            tree_.text_.size(), memo_.size(), memo_rewrites_, false});
      return true;
    case Op::POP:  // Python: pop a value, or the empty segment of the last MARK
      if (stack_.size() > base()) {
        stack_.pop_back();
      } else if (!marks_.empty()) {
        marks_.pop_back();
      } else {
        return fail("the stack is empty");
      }
      return true;
    case Op::POP_MARK: {
      std::size_t mark = 0;
      if (!pop_mark(mark)) return false;
      stack_.resize(mark);
      return true;
    }
    case Op::DUP:
      return need_stack(1) && push(stack_.back());

    case Op::NONE: return push(ValueRef{ValueTree::kNoneIndex});
    case Op::NEWTRUE: return push(ValueRef{ValueTree::kTrueIndex});
    case Op::NEWFALSE: return push(ValueRef{ValueTree::kFalseIndex});
    case Op::BININT1: return need_argument(1) && push_int(static_cast<std::int64_t>(read_le(1)));
    case Op::BININT2: return need_argument(2) && push_int(static_cast<std::int64_t>(read_le(2)));
    case Op::BININT:
      return need_argument(4) && push_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(read_le(4))));
    case Op::LONG1: {
      if (!need_argument(1)) return false;
      auto n = read_le(1);
      return need_declared(n) && push_long_bytes(take(n));
    }
    case Op::LONG4: {
      if (!need_argument(4)) return false;
      auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(read_le(4)));
      if (n < 0) return fail("a negative byte count");
      return need_declared(static_cast<std::uint64_t>(n)) && push_long_bytes(take(static_cast<std::size_t>(n)));
    }
    case Op::INT:
    case Op::LONG: {
      std::string_view line;
      if (!read_line(line)) return false;
      if (static_cast<Op>(op_) == Op::INT && (line == "00" || line == "01"))  // protocol 0's bools
        return push(ValueRef{line == "01" ? ValueTree::kTrueIndex : ValueTree::kFalseIndex});
      auto parsed = pickle_text::parse_decimal_int(line);
      if (!parsed) return fail("its text is not a decimal integer (or has more than 4300 digits)");
      if (!parsed->big) return push_int(parsed->value);
      return push_text(Kind::big_integer, [&](std::string& out) { return out.append(parsed->big_bytes), true; });
    }
    case Op::BINFLOAT:
      if (!need_argument(8)) return false;
      return push_node(Node{Kind::floating, 0, 0, 0, read_be64()});  // the one big-endian value in a pickle
    case Op::FLOAT: {
      std::string_view line;
      if (!read_line(line)) return false;
      auto value = pickle_text::parse_float(line);
      if (!value) return fail("its text is not a float");
      return push_node(Node{Kind::floating, 0, 0, 0, std::bit_cast<std::uint64_t>(*value)});
    }

    case Op::SHORT_BINUNICODE:
    case Op::BINUNICODE:
    case Op::BINUNICODE8:
    case Op::SHORT_BINBYTES:
    case Op::BINBYTES:
    case Op::BINBYTES8:
    case Op::BYTEARRAY8:
    case Op::SHORT_BINSTRING:
    case Op::BINSTRING: {
      Op op = static_cast<Op>(op_);
      std::size_t width = (op == Op::SHORT_BINUNICODE || op == Op::SHORT_BINBYTES || op == Op::SHORT_BINSTRING) ? 1
                          : (op == Op::BINUNICODE || op == Op::BINBYTES || op == Op::BINSTRING)                 ? 4
                                                                                                                 : 8;
      if (!need_argument(width)) return false;
      std::uint64_t n = read_le(width);
      if (op == Op::BINSTRING && n > INT32_MAX) return fail("a negative length");  // Python reads it signed
      if (!need_declared(n)) return false;
      std::string_view raw = take(static_cast<std::size_t>(n));
      if (op == Op::SHORT_BINUNICODE || op == Op::BINUNICODE || op == Op::BINUNICODE8) return push_utf8(raw);
      if (op == Op::SHORT_BINSTRING || op == Op::BINSTRING)
        return push_text(Kind::string, [&](std::string& out) { return pickle_text::append_latin1(out, raw), true; });
      return push_bytes(raw);  // BYTEARRAY8 too: a bytearray is bytes that Python lets change
    }
    case Op::UNICODE: {
      std::string_view line;
      if (!read_line(line)) return false;
      bool ok = true;
      if (!push_text(Kind::string, [&](std::string& out) { return ok = pickle_text::append_raw_unicode_escape(out, line); }))
        return ok ? false : fail("a \\u or \\U escape is cut short");
      return true;
    }
    case Op::STRING:
      return fail("protocol 0's quoted strings are not read (no PyTorch snapshot uses them)");

    case Op::EMPTY_LIST: return push_container(Kind::list);
    case Op::EMPTY_TUPLE: return push_container(Kind::tuple);
    case Op::EMPTY_DICT: return push_container(Kind::dict);
    case Op::EMPTY_SET: return push_container(Kind::list, ValueTree::kSet);
    case Op::TUPLE1:
    case Op::TUPLE2:
    case Op::TUPLE3: {
      std::size_t n = op_ - static_cast<unsigned char>(Op::TUPLE1) + 1;
      if (!need_stack(n)) return false;
      ValueRef tuple;
      return new_container(Kind::tuple, tuple) && add_children(tuple, stack_.size() - n) && push(tuple);
    }
    case Op::TUPLE: return container_from_mark(Kind::tuple);
    case Op::LIST: return container_from_mark(Kind::list);
    case Op::DICT: return container_from_mark(Kind::dict);
    case Op::FROZENSET: return container_from_mark(Kind::list, ValueTree::kSet);
    case Op::APPEND:
      return need_stack(2) && append_to(Kind::list, false, stack_.size() - 2, stack_.size() - 1);
    case Op::SETITEM:
      return need_stack(3) && append_to(Kind::dict, false, stack_.size() - 3, stack_.size() - 2);
    case Op::APPENDS:
    case Op::SETITEMS:
    case Op::ADDITEMS: {
      Mark mark;
      if (!pop_mark(mark)) return false;
      if (mark.stack == 0) return fail("no container below its MARK");
      Op op = static_cast<Op>(op_);
      Kind kind = op == Op::SETITEMS ? Kind::dict : Kind::list;
      return append_to(kind, op == Op::ADDITEMS, mark.stack - 1, mark.stack, &mark);
    }

    case Op::MEMOIZE: return memo_put(memo_entries_);  // Python: memo[len(memo)]
    case Op::BINPUT: return need_argument(1) && memo_put(read_le(1));
    case Op::LONG_BINPUT: return need_argument(4) && memo_put(read_le(4));
    case Op::PUT: {
      std::uint64_t index = 0;
      return line_index(index) && memo_put(index);
    }
    case Op::BINGET: return need_argument(1) && memo_get(read_le(1));
    case Op::LONG_BINGET: return need_argument(4) && memo_get(read_le(4));
    case Op::GET: {
      std::uint64_t index = 0;
      return line_index(index) && memo_get(index);
    }

    case Op::GLOBAL:
    case Op::STACK_GLOBAL:
    case Op::INST:
    case Op::OBJ:
    case Op::REDUCE:
    case Op::BUILD:
    case Op::NEWOBJ:
    case Op::NEWOBJ_EX:
    case Op::EXT1:
    case Op::EXT2:
    case Op::EXT4:
    case Op::PERSID:
    case Op::BINPERSID:
    case Op::NEXT_BUFFER:
    case Op::READONLY_BUFFER:
      return refuse(refusal_reason(static_cast<Op>(op_)));
  }
  error_ = PickleError{op_at_, fmt::format("unknown opcode 0x{:02x} at byte {}: not a pickle, or one newer than protocol 5", op_, op_at_)};
  return false;
}

Expected<ValueTree, PickleError> PickleMachine::run(const ReadProgress& progress) {
  if (in_.empty()) return PickleError{0, "empty input: not a pickle"};
  if (in_.size() > kMaxPickleBytes)
    return PickleError{0, fmt::format("input of {} bytes is larger than the {} this reader handles", in_.size(), kMaxPickleBytes)};
  std::size_t next_report = kProgressBytes;
  while (!stopped_) {
    if (progress && pos_ >= next_report) {
      progress(pos_);
      next_report = pos_ + kProgressBytes;
    }
    if (pos_ >= in_.size())
      return PickleError{pos_, fmt::format("the pickle ends at byte {} without STOP: truncated", pos_)};
    if (!step()) return error_ ? std::move(*error_) : PickleError{op_at_, "unreadable pickle"};
  }
  // Like pickle.loads, bytes after STOP are not read.
  return std::move(tree_);
}

Expected<ValueTree, PickleError> read_pickle(std::string_view bytes, const PickleLimits& limits,
                                             const ReadProgress& progress, TraceSink* traces) {
  return PickleMachine(bytes, limits, traces).run(progress);
}

Expected<ValueTree, PickleError> read_pickle(std::span<const std::byte> bytes, const PickleLimits& limits) {
  return read_pickle(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), limits);
}

}  // namespace oomlens::analyzer::snapshot
