// A data-only pickle reader (protocols 0 to 5; PyTorch snapshots use 2, 4
// and 5). It builds plain values and nothing else: every opcode that can name,
// import or call Python code (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ,
// NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID) or reach outside the byte
// string (NEXT_BUFFER, READONLY_BUFFER) is refused, as is any unknown byte,
// with the opcode's name, hex value and offset in the message.
//
// A hostile file cannot exhaust the stack (the machine is iterative: no C++
// recursion follows the input's nesting) nor memory: declared lengths are
// checked against the bytes that remain before anything is allocated, and
// nesting, values, container sizes, memo entries and the stack are bounded
// (PickleLimits), each with its own message. What the reader accepts is a
// subset of what Python's pickle.loads accepts, with the same meaning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/snapshot/expected.hpp"
#include "analyzer/snapshot/value_tree.hpp"

namespace oomlens::analyzer::snapshot {

struct PickleLimits {
  // Containers inside containers, and MARKs open at once. Python's own
  // pickler stops near 1000 (its recursion limit); real snapshots nest 5 deep.
  std::size_t max_depth = 512;
  // Distinct values built. Each costs 16 bytes; the default allows ~2 GiB.
  std::size_t max_values = std::size_t{1} << 27;
  // Items of one list/tuple, or keys plus values of one dict.
  std::size_t max_items = std::size_t{1} << 27;
  // Memo entries. PyTorch memoizes every container and string once.
  std::size_t max_memo = std::size_t{1} << 27;
  // Values on the stack at once. PyTorch's C++ pickler pushes a whole list
  // before one APPENDS, so this must exceed the longest list.
  std::size_t max_stack = std::size_t{1} << 27;
};

// Files above this are refused: indices in the tree are 32-bit.
inline constexpr std::size_t kMaxPickleBytes = 0xFFFF0000u;

struct PickleError {
  std::size_t offset = 0;  // byte offset of the opcode at fault (or of the end, when truncated)
  std::string message;     // one line, names the opcode and repeats the offset
};

// Told, now and then (every kProgressBytes or so), how many bytes of the input
// the reader has passed. It never looks back and keeps nothing that points
// into the input, so a caller that mapped the file may drop those pages.
using ReadProgress = std::function<void(std::size_t consumed)>;
inline constexpr std::size_t kProgressBytes = std::size_t{4} << 20;

// Takes the entries of a snapshot's traces as the reader meets them, so that
// they never become values in the tree: a long trace is most of a snapshot,
// and kept as values it costs several times its bytes (bench/README.md,
// snapshot). The reader hands over the items that an APPEND or APPENDS adds
// to a list it recognises as device_traces[device] of the top-level dict
// while that dict is being built (a fixed shape on the stack: the dict,
// string keys and their values, "device_traces", the list of traces, the
// traces before this one); anything else is built as usual.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // True when it took the items, which the tree then leaves out of `list`
  // (the values they are made of may be dropped too). False to have them
  // added as usual; it is then not asked again, so a trace it cannot read is
  // kept whole for the model to report on. `bytes_left` is what remains of
  // the input, for a guess at the trace's length.
  virtual bool take(const ValueTree& tree, ValueRef list, std::size_t device, std::span<const ValueRef> items,
                    std::size_t bytes_left) = 0;
  // Whether it keeps a reference to any value numbered `first` or higher; if
  // so, those values stay.
  virtual bool holds_from(std::uint32_t first) const = 0;
};

Expected<ValueTree, PickleError> read_pickle(std::span<const std::byte> bytes, const PickleLimits& limits = {});
Expected<ValueTree, PickleError> read_pickle(std::string_view bytes, const PickleLimits& limits = {},
                                             const ReadProgress& progress = {}, TraceSink* traces = nullptr);

// The opcode's pickletools name ("SHORT_BINUNICODE"), or "" for a byte that is
// no opcode.
std::string_view opcode_name(unsigned char opcode);

}  // namespace oomlens::analyzer::snapshot
