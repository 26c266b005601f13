// The plain data a pickle holds, as one arena: dicts, lists, tuples, strings,
// bytes, ints, floats, bools and None, addressed by index.
//
// Why an arena and not a node per value: a memory snapshot is tens of
// millions of small values (a trace entry alone is a dict of six), and the
// same frame list is referenced thousands of times. Values are 16 bytes each,
// children are 4-byte indices, and a memo reference is just the same index
// again, so shared objects stay shared (ValueRef equality means "the same
// Python object") and nothing is copied.
//
// The tree is acyclic and immutable once built: the reader refuses to change
// a container after it was placed in another one (only recursive structures,
// which no snapshot has, ever do that), so the nesting depth it checks is
// exact and no walk can loop. It is a DAG, though: a consumer that expands
// every shared reference can do exponential work on a hostile file, so walk
// a fixed schema and bound what you build (as the model does), or memoize by
// ValueRef.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/snapshot/chunked_array.hpp"

namespace oomlens::analyzer::snapshot {

enum class Kind : std::uint8_t {
  none,
  boolean,
  integer,      // fits in int64
  big_integer,  // does not: kept as its little-endian two's-complement bytes
  floating,
  string,  // UTF-8
  bytes,
  list,  // also sets and frozensets, in pickle order
  tuple,
  dict,  // insertion order, as Python keeps it
};

// The Python spelling ("dict", "str", "int", ...) for messages.
std::string_view kind_name(Kind kind);

// One value in a ValueTree. Two refs are equal when they name the same object.
struct ValueRef {
  std::uint32_t index = 0;
  friend bool operator==(ValueRef, ValueRef) = default;
};

class PickleMachine;  // the reader that builds trees (pickle.cpp)

class ValueTree {
  struct Node;
  struct Run;

 public:
  // The elements of a list or tuple, or the keys and values of a dict
  // interleaved (key, value, key, value, ...).
  class Children {
   public:
    class iterator {
     public:
      using value_type = ValueRef;
      using difference_type = std::ptrdiff_t;
      using iterator_category = std::forward_iterator_tag;
      using pointer = void;
      using reference = ValueRef;

      iterator() = default;
      ValueRef operator*() const;
      iterator& operator++();
      iterator operator++(int) {
        iterator old = *this;
        ++*this;
        return old;
      }
      // Iterators of one container compare by how many children are left.
      bool operator==(const iterator& other) const { return left_ == other.left_; }

     private:
      friend class Children;
      const ValueTree* tree_ = nullptr;
      std::uint32_t run_ = 0;
      std::uint32_t at_ = 0;
      std::uint32_t run_end_ = 0;
      std::uint32_t left_ = 0;
    };

    iterator begin() const;
    iterator end() const { return iterator(); }
    std::size_t size() const { return count_; }

   private:
    friend class ValueTree;
    // `first` is the first run, or (direct) the first child's slot.
    Children(const ValueTree* tree, std::uint32_t first, std::uint32_t count, bool direct)
        : tree_(tree), first_(first), count_(count), direct_(direct) {}
    const ValueTree* tree_;
    std::uint32_t first_;
    std::uint32_t count_;
    bool direct_;
  };

  // A dict's (key, value) pairs in insertion order.
  class Entries {
   public:
    class iterator {
     public:
      using value_type = std::pair<ValueRef, ValueRef>;
      using difference_type = std::ptrdiff_t;
      using iterator_category = std::forward_iterator_tag;
      using pointer = void;
      using reference = value_type;

      iterator() = default;
      explicit iterator(Children::iterator at) : at_(at) {}
      value_type operator*() const {
        Children::iterator next = at_;
        ValueRef key = *next;
        return {key, *++next};
      }
      iterator& operator++() {
        ++at_;
        ++at_;
        return *this;
      }
      bool operator==(const iterator& other) const { return at_ == other.at_; }

     private:
      Children::iterator at_;
    };

    explicit Entries(Children children) : children_(children) {}
    iterator begin() const { return iterator(children_.begin()); }
    iterator end() const { return iterator(children_.end()); }
    std::size_t size() const { return children_.size() / 2; }

   private:
    Children children_;
  };

  ValueTree();

  // The value the pickle's STOP returned.
  ValueRef root() const { return root_; }
  // Distinct values stored (shared ones count once).
  std::size_t value_count() const { return nodes_.size(); }
  // Item slots of all containers together (a dict entry is two). A walk that
  // visits each container once reads at most this many children; one that
  // expands shared references may read far more.
  std::size_t child_count() const { return children_.size(); }

  Kind kind(ValueRef ref) const;
  // Containers only: 1 + the depth of the deepest child; scalars are 0.
  std::size_t depth(ValueRef ref) const;

  // Scalars. Each answers nothing when the value is of another kind; there
  // are no conversions except that as_float takes an int, as Python would.
  std::optional<bool> as_bool(ValueRef ref) const;
  std::optional<std::int64_t> as_int(ValueRef ref) const;
  // Any int in [0, 2^64), big ones included (CUDA addresses, SIZE_MAX).
  std::optional<std::uint64_t> as_uint64(ValueRef ref) const;
  std::optional<double> as_float(ValueRef ref) const;
  std::optional<std::string_view> as_string(ValueRef ref) const;
  std::optional<std::string_view> as_bytes(ValueRef ref) const;
  // A big_integer's little-endian two's-complement bytes, minimal length.
  std::optional<std::string_view> big_integer_bytes(ValueRef ref) const;

  // Containers: items of a list/tuple (dict: keys and values interleaved);
  // empty for scalars.
  Children children(ValueRef ref) const;
  // A dict's entries; empty for anything else.
  Entries entries(ValueRef ref) const;
  // Number of items of a list/tuple or entries of a dict; 0 for scalars.
  std::size_t size(ValueRef ref) const;
  // The value under a string key; the last one when a pickle set it twice
  // (Python keeps the last value). Nothing when absent or not a dict.
  std::optional<ValueRef> find(ValueRef dict, std::string_view key) const;

 private:
  friend class PickleMachine;

  static constexpr std::uint32_t kNoRun = UINT32_MAX;
  static constexpr std::uint32_t kNoneIndex = 0, kFalseIndex = 1, kTrueIndex = 2;
  static constexpr std::uint32_t kFirstSmallInt = 3;  // nodes for the ints 0..255
  static constexpr std::uint8_t kSealed = 1;          // placed in a container: immutable from then on
  static constexpr std::uint8_t kSet = 2;             // a list that came from EMPTY_SET/FROZENSET
  // Children in one contiguous stretch of children_ (payload = its start),
  // as most containers are: no Run needed. Otherwise payload = last|first run.
  static constexpr std::uint8_t kDirect = 4;
  static constexpr std::uint8_t kStreamed = 8;  // a trace list whose entries went to a TraceSink
  static constexpr std::uint8_t kTaken = 16;    // a value a TraceSink took

  struct Node {
    Kind kind = Kind::none;
    std::uint8_t flags = 0;
    std::uint16_t depth = 0;
    std::uint32_t count = 0;    // string/bytes/big int: byte length; containers: children
    std::uint64_t payload = 0;  // int bits, double bits, text offset, first child (kDirect), or last|first run
  };
  struct Run {  // children of one container appended by one opcode, contiguous
    std::uint32_t start = 0;
    std::uint32_t count = 0;
    std::uint32_t next = kNoRun;
  };

  std::string_view text_of(const Node& node) const {
    return std::string_view(text_).substr(node.payload, node.count);
  }
  // Appends one opcode's worth of children to a container (no checks: the
  // reader has made them).
  void append_children(ValueRef container, const ValueRef* items, std::size_t count);

  ChunkedArray<Node> nodes_;
  ChunkedArray<Run> runs_;  // only for containers filled in batches that are not contiguous
  ChunkedArray<ValueRef> children_;
  std::string text_;  // bytes of strings, bytes objects and big ints, back to back
  ValueRef root_{kNoneIndex};
};

}  // namespace oomlens::analyzer::snapshot
