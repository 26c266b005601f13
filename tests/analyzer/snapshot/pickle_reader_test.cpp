// The data opcodes of the pickle reader, one by one, against what CPython's
// pickle.loads builds from the same bytes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analyzer/snapshot/pickle.hpp"
#include "tests/analyzer/snapshot/pickle_bytes.hpp"

using namespace oomlens::analyzer::snapshot;
using oomlens::analyzer::snapshot::testing::PickleBytes;

namespace {

// Reads a pickle that must be valid and returns its tree.
ValueTree read_ok(std::string_view bytes) {
  auto tree = read_pickle(bytes);
  if (!tree) FAIL(tree.error().message);
  return std::move(tree).value();
}

// The program `PROTO 4, <value opcodes>, STOP`.
ValueTree read_value(const PickleBytes& value) { return read_ok(PickleBytes().proto(4).raw(value.bytes()).stop()); }

std::vector<ValueRef> items(const ValueTree& tree, ValueRef ref) {
  std::vector<ValueRef> out;
  for (ValueRef item : tree.children(ref)) out.push_back(item);
  return out;
}

}  // namespace

TEST_CASE("NONE, NEWTRUE, NEWFALSE", "[pickle]") {
  auto none = read_value(PickleBytes().op(Op::NONE));
  CHECK(none.kind(none.root()) == Kind::none);
  auto yes = read_value(PickleBytes().op(Op::NEWTRUE));
  CHECK(yes.as_bool(yes.root()) == true);
  auto no = read_value(PickleBytes().op(Op::NEWFALSE));
  CHECK(no.as_bool(no.root()) == false);
  CHECK_FALSE(no.as_int(no.root()));  // a bool is not read as an int
}

TEST_CASE("BININT1, BININT2 and BININT (signed)", "[pickle]") {
  auto one = read_value(PickleBytes().op(Op::BININT1).u8(255));
  CHECK(one.as_int(one.root()) == 255);
  auto two = read_value(PickleBytes().op(Op::BININT2).le(65535, 2));
  CHECK(two.as_int(two.root()) == 65535);
  auto minus_one = read_value(PickleBytes().op(Op::BININT).le(0xFFFFFFFF, 4));  // max_split_size = -1
  CHECK(minus_one.as_int(minus_one.root()) == -1);
  CHECK_FALSE(minus_one.as_uint64(minus_one.root()));
  auto lowest = read_value(PickleBytes().op(Op::BININT).le(0x80000000, 4));
  CHECK(lowest.as_int(lowest.root()) == INT32_MIN);
}

TEST_CASE("LONG1: little-endian two's complement of any length", "[pickle]") {
  auto long1 = [](std::initializer_list<unsigned> bytes) {
    PickleBytes p;
    p.op(Op::LONG1).u8(static_cast<unsigned>(bytes.size()));
    for (unsigned b : bytes) p.u8(b);
    return read_value(p);
  };
  auto zero = long1({});
  CHECK(zero.as_int(zero.root()) == 0);
  auto minus_one = long1({0xFF});
  CHECK(minus_one.as_int(minus_one.root()) == -1);
  auto minus_256 = long1({0x00, 0xFF});
  CHECK(minus_256.as_int(minus_256.root()) == -256);
  auto plus_128 = long1({0x80, 0x00});
  CHECK(plus_128.as_int(plus_128.root()) == 128);
  // A CUDA address (~2^47) in 6 bytes, as Python writes it.
  auto address = long1({0x00, 0x00, 0x00, 0x00, 0x2A, 0x7F});
  CHECK(address.as_int(address.root()) == 0x7F2A00000000);
  CHECK(address.as_uint64(address.root()) == 0x7F2A00000000u);
  // PyTorch's C++ pickler always writes 8 bytes.
  auto lowest = long1({0, 0, 0, 0, 0, 0, 0, 0x80});
  CHECK(lowest.as_int(lowest.root()) == INT64_MIN);
  auto negative_8 = long1({0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  CHECK(negative_8.as_int(negative_8.root()) == -2);
  // Redundant sign bytes beyond 8 still give an int64.
  auto padded = long1({0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(padded.as_int(padded.root()) == 5);
}

TEST_CASE("LONG1 beyond int64 is a big int with its bytes kept", "[pickle]") {
  PickleBytes p;
  p.op(Op::LONG1).u8(9);
  for (int i = 0; i < 8; ++i) p.u8(0xFF);
  p.u8(0x00);  // 2^64 - 1 (SIZE_MAX as an unsigned Python int)
  auto max = read_value(p);
  CHECK(max.kind(max.root()) == Kind::big_integer);
  CHECK_FALSE(max.as_int(max.root()));
  CHECK(max.as_uint64(max.root()) == UINT64_MAX);
  CHECK(max.big_integer_bytes(max.root())->size() == 9);

  PickleBytes q;
  q.op(Op::LONG1).u8(10);
  for (int i = 0; i < 9; ++i) q.u8(0x00);
  q.u8(0x80);  // -2^79
  auto huge_negative = read_value(q);
  CHECK(huge_negative.kind(huge_negative.root()) == Kind::big_integer);
  CHECK_FALSE(huge_negative.as_uint64(huge_negative.root()));
}

TEST_CASE("LONG4, INT and LONG text forms", "[pickle]") {
  auto long4 = read_value(PickleBytes().op(Op::LONG4).le(2, 4).u8(0x00).u8(0x01));
  CHECK(long4.as_int(long4.root()) == 256);
  auto text_int = read_value(PickleBytes().op(Op::INT).line("-42"));
  CHECK(text_int.as_int(text_int.root()) == -42);
  auto text_true = read_value(PickleBytes().op(Op::INT).line("01"));  // protocol 0's True
  CHECK(text_true.as_bool(text_true.root()) == true);
  auto text_false = read_value(PickleBytes().op(Op::INT).line("00"));
  CHECK(text_false.as_bool(text_false.root()) == false);
  auto text_long = read_value(PickleBytes().op(Op::LONG).line("1234567890123L"));
  CHECK(text_long.as_int(text_long.root()) == 1234567890123);
  auto text_big = read_value(PickleBytes().op(Op::LONG).line("18446744073709551615L"));
  CHECK(text_big.kind(text_big.root()) == Kind::big_integer);
  CHECK(text_big.as_uint64(text_big.root()) == UINT64_MAX);
  auto text_big_negative = read_value(PickleBytes().op(Op::LONG).line("-9223372036854775809"));
  CHECK(text_big_negative.big_integer_bytes(text_big_negative.root()) ==
        std::string("\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x7F\xFF", 9));
}

TEST_CASE("BINFLOAT is big-endian; FLOAT is Python's repr", "[pickle]") {
  auto half = read_value(PickleBytes().op(Op::BINFLOAT).raw(std::string("\x3F\xE0\0\0\0\0\0\0", 8)));
  CHECK(half.as_float(half.root()) == 0.5);
  auto text = read_value(PickleBytes().op(Op::FLOAT).line("0.8"));
  CHECK(text.as_float(text.root()) == 0.8);
  auto inf = read_value(PickleBytes().op(Op::FLOAT).line("inf"));
  CHECK(std::isinf(*inf.as_float(inf.root())));
  auto from_int = read_value(PickleBytes().op(Op::BININT1).u8(3));
  CHECK(from_int.as_float(from_int.root()) == 3.0);  // an int where a float is expected, as Python allows
}

TEST_CASE("strings: SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, UNICODE", "[pickle]") {
  auto short_str = read_value(PickleBytes().op(Op::SHORT_BINUNICODE).u8(5).raw("alloc"));
  CHECK(short_str.as_string(short_str.root()) == "alloc");
  std::string path(300, 'p');
  auto long_str = read_value(PickleBytes().op(Op::BINUNICODE).le(path.size(), 4).raw(path));
  CHECK(long_str.as_string(long_str.root()) == path);
  auto str8 = read_value(PickleBytes().op(Op::BINUNICODE8).le(5, 8).raw("josé"));
  CHECK(str8.as_string(str8.root()) == "josé");
  auto escaped = read_value(PickleBytes().op(Op::UNICODE).line("caf\\u00e9 \\U0001F600 a\\\\u"));
  CHECK(escaped.as_string(escaped.root()) == "café 😀 a\\\\u");
  CHECK_FALSE(escaped.as_bytes(escaped.root()));
}

TEST_CASE("invalid UTF-8 and lone surrogates become U+FFFD", "[pickle]") {
  // "\xED\xA0\x80" is a lone surrogate as Python's surrogatepass writes it.
  auto bad = read_value(PickleBytes().op(Op::SHORT_BINUNICODE).u8(6).raw(std::string("a\xFF" "b\xED\xA0\x80", 6)));
  CHECK(bad.as_string(bad.root()) == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("bytes: SHORT_BINBYTES, BINBYTES, BINBYTES8, BYTEARRAY8", "[pickle]") {
  std::string blob("\x00\xFF\x80", 3);
  for (auto [op, width] : {std::pair{Op::SHORT_BINBYTES, 1}, {Op::BINBYTES, 4}, {Op::BINBYTES8, 8}, {Op::BYTEARRAY8, 8}}) {
    auto tree = read_value(PickleBytes().op(op).le(blob.size(), width).raw(blob));
    CHECK(tree.kind(tree.root()) == Kind::bytes);
    CHECK(tree.as_bytes(tree.root()) == blob);
  }
}

TEST_CASE("protocol 1 str (SHORT_BINSTRING, BINSTRING) is read as Latin-1", "[pickle]") {
  auto short_str = read_value(PickleBytes().op(Op::SHORT_BINSTRING).u8(3).raw("a\xE9z"));
  CHECK(short_str.as_string(short_str.root()) == "aéz");
  auto str = read_value(PickleBytes().op(Op::BINSTRING).le(2, 4).raw("ok"));
  CHECK(str.as_string(str.root()) == "ok");
}

TEST_CASE("lists: EMPTY_LIST with APPEND and APPENDS, and LIST", "[pickle]") {
  auto tree = read_value(PickleBytes().op(Op::EMPTY_LIST).integer(1).op(Op::APPEND).mark().integer(2).integer(3).op(Op::APPENDS));
  REQUIRE(tree.kind(tree.root()) == Kind::list);
  REQUIRE(tree.size(tree.root()) == 3);
  auto list = items(tree, tree.root());
  CHECK(tree.as_int(list[0]) == 1);
  CHECK(tree.as_int(list[2]) == 3);
  auto protocol0 = read_value(PickleBytes().mark().integer(7).integer(8).op(Op::LIST));
  CHECK(protocol0.size(protocol0.root()) == 2);
}

TEST_CASE("a list filled in batches between other containers keeps its order", "[pickle]") {
  // Python's pickler appends 1000 items per APPENDS; here each batch holds a
  // nested list, so the batches are not contiguous in the arena.
  PickleBytes p;
  p.op(Op::EMPTY_LIST);
  for (int batch = 0; batch < 3; ++batch) {
    p.mark();
    for (int i = 0; i < 1000; ++i) p.integer(batch * 1000 + i);
    p.op(Op::EMPTY_LIST).integer(-batch).op(Op::APPEND);
    p.op(Op::APPENDS);
  }
  auto tree = read_value(p);
  REQUIRE(tree.size(tree.root()) == 3003);
  std::int64_t expected = 0;
  std::size_t position = 0;
  for (ValueRef item : tree.children(tree.root())) {
    if (position++ % 1001 == 1000) {
      CHECK(tree.kind(item) == Kind::list);
      continue;
    }
    CHECK(tree.as_int(item) == expected++);
  }
  CHECK(tree.depth(tree.root()) == 2);
}

TEST_CASE("batches that follow each other stay one stretch; big containers cross storage chunks", "[pickle]") {
  // 70000 items (more than one 65536-slot chunk of the tree's arrays) in
  // back-to-back APPENDS, then one more batch after a nested list.
  PickleBytes p;
  p.op(Op::EMPTY_LIST);
  for (int batch = 0; batch < 70; ++batch) {
    p.mark();
    for (int i = 0; i < 1000; ++i) p.integer(100000 + batch * 1000 + i);
    p.op(Op::APPENDS);
  }
  p.op(Op::EMPTY_LIST).integer(7).op(Op::APPEND).op(Op::APPEND);
  p.mark().integer(-1).integer(-2).op(Op::APPENDS);
  auto tree = read_value(p);
  REQUIRE(tree.size(tree.root()) == 70003);
  std::int64_t expected = 100000;
  std::size_t position = 0;
  for (ValueRef item : tree.children(tree.root())) {
    if (position < 70000) CHECK(tree.as_int(item) == expected++);
    if (position == 70000) CHECK(tree.size(item) == 1);
    if (position == 70001) CHECK(tree.as_int(item) == -1);
    if (position == 70002) CHECK(tree.as_int(item) == -2);
    ++position;
  }
  CHECK(position == 70003);
}

TEST_CASE("tuples: EMPTY_TUPLE, TUPLE1-3 and TUPLE", "[pickle]") {
  auto empty = read_value(PickleBytes().op(Op::EMPTY_TUPLE));
  CHECK(empty.kind(empty.root()) == Kind::tuple);
  CHECK(empty.size(empty.root()) == 0);
  auto pair = read_value(PickleBytes().integer(0).integer(1).op(Op::TUPLE2));  // segment_pool_id
  REQUIRE(pair.size(pair.root()) == 2);
  CHECK(pair.as_int(items(pair, pair.root())[1]) == 1);
  auto one = read_value(PickleBytes().integer(1).op(Op::TUPLE1));
  CHECK(one.size(one.root()) == 1);
  auto three = read_value(PickleBytes().integer(1).integer(2).integer(3).op(Op::TUPLE3));
  CHECK(three.size(three.root()) == 3);
  auto four = read_value(PickleBytes().mark().integer(1).integer(2).integer(3).integer(4).op(Op::TUPLE));
  CHECK(four.size(four.root()) == 4);
}

TEST_CASE("dicts: SETITEM, SETITEMS, DICT; insertion order; str, int and tuple keys", "[pickle]") {
  auto tree = read_value(PickleBytes()
                             .op(Op::EMPTY_DICT)
                             .str("b").integer(2).op(Op::SETITEM)
                             .mark().str("a").integer(1).integer(7).str("seven").integer(0).integer(1).op(Op::TUPLE2).str("pool").op(Op::SETITEMS));
  REQUIRE(tree.kind(tree.root()) == Kind::dict);
  REQUIRE(tree.size(tree.root()) == 4);
  std::vector<std::string> order;
  for (auto [key, value] : tree.entries(tree.root())) {
    if (auto text = tree.as_string(key)) order.emplace_back(*text);
    else if (auto number = tree.as_int(key)) order.push_back(std::to_string(*number));
    else order.push_back(std::string(kind_name(tree.kind(key))));
  }
  CHECK(order == std::vector<std::string>{"b", "a", "7", "tuple"});
  CHECK(tree.as_int(*tree.find(tree.root(), "a")) == 1);
  CHECK_FALSE(tree.find(tree.root(), "missing"));

  auto protocol0 = read_value(PickleBytes().mark().str("k").integer(1).op(Op::DICT));
  CHECK(protocol0.as_int(*protocol0.find(protocol0.root(), "k")) == 1);
}

TEST_CASE("a key set twice: find gives the last value, as Python keeps", "[pickle]") {
  auto tree = read_value(PickleBytes().op(Op::EMPTY_DICT).mark().str("k").integer(1).str("k").integer(2).op(Op::SETITEMS));
  CHECK(tree.as_int(*tree.find(tree.root(), "k")) == 2);
}

TEST_CASE("sets and frozensets are read as lists", "[pickle]") {
  auto set = read_value(PickleBytes().op(Op::EMPTY_SET).mark().integer(1).integer(2).op(Op::ADDITEMS));
  CHECK(set.kind(set.root()) == Kind::list);
  CHECK(set.size(set.root()) == 2);
  auto frozen = read_value(PickleBytes().mark().integer(5).op(Op::FROZENSET));
  CHECK(frozen.kind(frozen.root()) == Kind::list);
  CHECK(frozen.size(frozen.root()) == 1);
}

TEST_CASE("MARK, POP, POP_MARK and DUP", "[pickle]") {
  auto popped = read_value(PickleBytes().integer(1).integer(2).op(Op::POP));
  CHECK(popped.as_int(popped.root()) == 1);
  auto pop_marked = read_value(PickleBytes().integer(9).mark().integer(1).integer(2).op(Op::POP_MARK));
  CHECK(pop_marked.as_int(pop_marked.root()) == 9);
  // POP with nothing above the MARK drops the MARK (Python's load_pop).
  auto pop_empty_mark = read_value(PickleBytes().integer(4).mark().op(Op::POP));
  CHECK(pop_empty_mark.as_int(pop_empty_mark.root()) == 4);
  auto dup = read_value(PickleBytes().op(Op::EMPTY_LIST).op(Op::DUP).op(Op::POP));
  CHECK(dup.kind(dup.root()) == Kind::list);
}

TEST_CASE("memo references share one object", "[pickle]") {
  // [frames, frames]: the protocol-4 way (MEMOIZE, BINGET) ...
  auto tree = read_value(PickleBytes()
                             .op(Op::EMPTY_LIST).memoize()
                             .mark()
                             .op(Op::EMPTY_LIST).memoize().str("frame").memoize().op(Op::APPEND)
                             .binget(1)
                             .op(Op::APPENDS));
  auto list = items(tree, tree.root());
  REQUIRE(list.size() == 2);
  CHECK(list[0] == list[1]);
  CHECK(tree.kind(list[0]) == Kind::list);
  // ... and the protocol-2 way, PyTorch's C++ pickler putting BINPUT after the body.
  auto p2 = read_ok(PickleBytes()
                        .proto(2)
                        .op(Op::EMPTY_LIST).mark()
                        .op(Op::EMPTY_DICT).mark().str("line").integer(3).op(Op::SETITEMS).op(Op::BINPUT).u8(0)
                        .op(Op::BINGET).u8(0)
                        .op(Op::LONG_BINGET).le(0, 4)
                        .op(Op::APPENDS)
                        .stop());
  auto three = items(p2, p2.root());
  REQUIRE(three.size() == 3);
  CHECK(three[0] == three[1]);
  CHECK(three[1] == three[2]);
  CHECK(p2.value_count() < 270);  // one dict, one str, the shared None/bools/small ints
}

TEST_CASE("LONG_BINPUT, PUT and GET", "[pickle]") {
  auto tree = read_value(PickleBytes()
                             .mark()
                             .str("x").op(Op::LONG_BINPUT).le(300, 4)
                             .op(Op::LONG_BINGET).le(300, 4)
                             .str("y").op(Op::PUT).line("7")
                             .op(Op::GET).line("7")
                             .op(Op::TUPLE));
  auto tuple = items(tree, tree.root());
  REQUIRE(tuple.size() == 4);
  CHECK(tuple[0] == tuple[1]);
  CHECK(tuple[2] == tuple[3]);
  CHECK(tree.as_string(tuple[3]) == "y");
}

TEST_CASE("MEMOIZE stores at len(memo), as Python does, even after out-of-order PUTs", "[pickle]") {
  auto tree = read_value(PickleBytes().mark().str("a").op(Op::BINPUT).u8(1).str("b").memoize().binget(1).op(Op::TUPLE));
  auto tuple = items(tree, tree.root());
  REQUIRE(tuple.size() == 3);
  CHECK(tree.as_string(tuple[2]) == "b");  // memo = {1: 'a'}; MEMOIZE sets memo[1] = 'b'
}

TEST_CASE("a memo index far out of order costs one entry", "[pickle]") {
  auto tree = read_ok(PickleBytes().proto(2).op(Op::EMPTY_LIST).op(Op::LONG_BINPUT).le(0xFFFFFFF0u, 4)
                          .op(Op::POP).op(Op::LONG_BINGET).le(0xFFFFFFF0u, 4).stop());
  CHECK(tree.kind(tree.root()) == Kind::list);
}

TEST_CASE("PROTO 0 to 5 and FRAME are accepted; bytes after STOP are not read", "[pickle]") {
  for (unsigned version = 0; version <= 5; ++version) CHECK(read_pickle(PickleBytes().proto(version).op(Op::NONE).stop()));
  auto framed = read_ok(PickleBytes().proto(4).op(Op::FRAME).le(3, 8).integer(7).stop().raw("trailing garbage"));
  CHECK(framed.as_int(framed.root()) == 7);
  auto no_proto = read_ok(PickleBytes().integer(1).stop());  // protocol 0/1 have no PROTO
  CHECK(no_proto.as_int(no_proto.root()) == 1);
}

TEST_CASE("read_pickle takes a byte span", "[pickle]") {
  std::string bytes = PickleBytes().proto(2).integer(5).stop().bytes();
  auto tree = read_pickle(std::as_bytes(std::span(bytes.data(), bytes.size())));
  REQUIRE(tree);
  CHECK(tree->as_int(tree->root()) == 5);
}

TEST_CASE("opcode names follow pickletools", "[pickle]") {
  CHECK(opcode_name(0x8c) == "SHORT_BINUNICODE");
  CHECK(opcode_name('c') == "GLOBAL");
  CHECK(opcode_name(0x95) == "FRAME");
  CHECK(opcode_name(0xff).empty());
}
