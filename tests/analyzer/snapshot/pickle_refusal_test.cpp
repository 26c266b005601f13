// What the pickle reader refuses: code, unknown bytes, truncation, shapes
// Python itself would reject, and every limit - each with its message.
#include <catch2/catch.hpp>

#include <string>

#include "analyzer/snapshot/pickle.hpp"
#include "tests/analyzer/snapshot/pickle_bytes.hpp"

using namespace oomlens::analyzer::snapshot;
using Catch::Matchers::Contains;
using oomlens::analyzer::snapshot::testing::PickleBytes;

namespace {

PickleError read_error(std::string_view bytes, const PickleLimits& limits = {}) {
  auto tree = read_pickle(bytes, limits);
  if (tree) FAIL("the reader accepted the bytes");
  return tree.error();
}

}  // namespace

TEST_CASE("every opcode that names or calls code is refused with its name and offset", "[pickle][hostile]") {
  struct Case {
    Op op;
    const char* text;
  };
  const Case cases[] = {
      {Op::GLOBAL, "refused opcode GLOBAL (0x63) at byte 2: it imports a Python object by name"},
      {Op::STACK_GLOBAL, "refused opcode STACK_GLOBAL (0x93) at byte 2: it imports a Python object by name"},
      {Op::INST, "refused opcode INST (0x69) at byte 2"},
      {Op::OBJ, "refused opcode OBJ (0x6f) at byte 2: it calls Python code"},
      {Op::REDUCE, "refused opcode REDUCE (0x52) at byte 2: it calls Python code"},
      {Op::BUILD, "refused opcode BUILD (0x62) at byte 2: it calls an object's __setstate__"},
      {Op::NEWOBJ, "refused opcode NEWOBJ (0x81) at byte 2"},
      {Op::NEWOBJ_EX, "refused opcode NEWOBJ_EX (0x92) at byte 2"},
      {Op::EXT1, "refused opcode EXT1 (0x82) at byte 2: it imports an object from the copyreg extension registry"},
      {Op::EXT2, "refused opcode EXT2 (0x83) at byte 2"},
      {Op::EXT4, "refused opcode EXT4 (0x84) at byte 2"},
      {Op::PERSID, "refused opcode PERSID (0x50) at byte 2: it asks the loader for an object outside the file"},
      {Op::BINPERSID, "refused opcode BINPERSID (0x51) at byte 2"},
      {Op::NEXT_BUFFER, "refused opcode NEXT_BUFFER (0x97) at byte 2: it reads an out-of-band buffer"},
      {Op::READONLY_BUFFER, "refused opcode READONLY_BUFFER (0x98) at byte 2"},
  };
  for (const Case& c : cases) {
    INFO(opcode_name(static_cast<unsigned char>(c.op)));
    // Whatever the stack holds: the opcode is refused before it is looked at.
    PickleError error = read_error(PickleBytes().proto(2).op(c.op).raw("os\nsystem\n").stop());
    CHECK(error.offset == 2);
    CHECK_THAT(error.message, Contains(c.text));
    CHECK_THAT(error.message, Contains("a memory snapshot holds only plain data"));
  }
}

TEST_CASE("a refused opcode deep in a file is reported at its own offset", "[pickle][hostile]") {
  // [1, 2, os.system('echo')]: the reader builds the data, then meets GLOBAL.
  PickleBytes p;
  p.proto(2).op(Op::EMPTY_LIST).mark().integer(1).integer(2);
  std::size_t at = p.bytes().size();
  p.op(Op::GLOBAL).line("os").line("system").str("echo").op(Op::TUPLE1).op(Op::REDUCE).op(Op::APPENDS).stop();
  PickleError error = read_error(p);
  CHECK(error.offset == at);
  CHECK_THAT(error.message, Contains("refused opcode GLOBAL (0x63) at byte " + std::to_string(at)));
}

TEST_CASE("unknown opcodes and protocol-0 STRING are refused", "[pickle][hostile]") {
  for (unsigned byte : {0x00u, 0xFFu, 0x99u, unsigned{'z'}}) {
    PickleError error = read_error(PickleBytes().proto(4).u8(byte).stop());
    CHECK(error.offset == 2);
    CHECK_THAT(error.message, Contains("unknown opcode 0x"));
    CHECK_THAT(error.message, Contains("at byte 2"));
  }
  CHECK_THAT(read_error(PickleBytes().proto(4).u8(0xFF)).message, Contains("unknown opcode 0xff at byte 2"));
  CHECK_THAT(read_error(PickleBytes().op(Op::STRING).line("'abc'").stop()).message,
             Contains("STRING (0x53) at byte 0: protocol 0's quoted strings are not read"));
  CHECK_THAT(read_error(PickleBytes().proto(6).op(Op::NONE).stop()).message,
             Contains("PROTO (0x80) at byte 0: protocol 6 is newer than 5"));
}

TEST_CASE("truncated input: the error says where", "[pickle][truncated]") {
  CHECK(read_error("").message == "empty input: not a pickle");
  PickleError no_stop = read_error(PickleBytes().proto(4).op(Op::NONE));
  CHECK(no_stop.offset == 3);
  CHECK(no_stop.message == "the pickle ends at byte 3 without STOP: truncated");
  CHECK_THAT(read_error(PickleBytes().proto(4).op(Op::BININT).u8(1)).message,
             Contains("BININT (0x4a) at byte 2: the file ends inside its argument (4 bytes needed, 1 left)"));
  CHECK_THAT(read_error(PickleBytes().proto(4).op(Op::SHORT_BINUNICODE).u8(10).raw("abc")).message,
             Contains("SHORT_BINUNICODE (0x8c) at byte 2: it declares 10 bytes but only 3 remain"));
  CHECK_THAT(read_error(PickleBytes().proto(4).op(Op::LONG1).u8(9).u8(1)).message,
             Contains("LONG1 (0x8a) at byte 2: it declares 9 bytes but only 1 remain"));
  CHECK_THAT(read_error(PickleBytes().proto(4).op(Op::FRAME).le(1000, 8).op(Op::NONE).stop()).message,
             Contains("FRAME (0x95) at byte 2: it declares 1000 bytes but only 2 remain"));
  CHECK_THAT(read_error(PickleBytes().op(Op::INT).raw("123")).message,
             Contains("INT (0x49) at byte 0: the file ends before its text argument's newline"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::PROTO)).message, Contains("PROTO (0x80) at byte 2"));
}

TEST_CASE("a declared length of 2^60 fails at once, without allocating", "[pickle][hostile]") {
  for (Op op : {Op::BINUNICODE8, Op::BINBYTES8, Op::BYTEARRAY8}) {
    PickleError error = read_error(PickleBytes().proto(5).op(op).le(std::uint64_t{1} << 60, 8).raw("abc").stop());
    CHECK(error.offset == 2);
    CHECK_THAT(error.message, Contains("it declares 1152921504606846976 bytes but only 4 remain"));
  }
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::BINSTRING).le(0xFFFFFFFF, 4).stop()).message,
             Contains("BINSTRING (0x54) at byte 2: a negative length"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::LONG4).le(0xFFFFFFFF, 4).stop()).message,
             Contains("LONG4 (0x8b) at byte 2: a negative byte count"));
}

TEST_CASE("shapes Python's pickle.loads would also reject", "[pickle]") {
  CHECK_THAT(read_error(PickleBytes().proto(2).stop()).message,
             Contains("STOP (0x2e) at byte 2: needs 1 value(s) on the stack above the last MARK, finds 0"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::POP).stop()).message, Contains("POP (0x30) at byte 2: the stack is empty"));
  CHECK_THAT(read_error(PickleBytes().proto(2).integer(1).op(Op::APPENDS).stop()).message,
             Contains("APPENDS (0x65) at byte 4: no MARK is open"));
  CHECK_THAT(read_error(PickleBytes().proto(2).integer(1).op(Op::TUPLE2).stop()).message,
             Contains("TUPLE2 (0x86) at byte 4: needs 2 value(s)"));
  // APPEND cannot reach below a MARK (Python starts a fresh stack there).
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::EMPTY_LIST).mark().integer(1).op(Op::APPEND).stop()).message,
             Contains("APPEND (0x61) at byte 6: needs 2 value(s) on the stack above the last MARK, finds 1"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::EMPTY_TUPLE).integer(1).op(Op::APPEND).stop()).message,
             Contains("APPEND (0x61) at byte 5: its target is a tuple, not a list"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::EMPTY_LIST).str("k").integer(1).op(Op::SETITEM).stop()).message,
             Contains("its target is a list, not a dict"));
  CHECK_THAT(read_error(PickleBytes().proto(4).op(Op::EMPTY_SET).integer(1).op(Op::APPEND).stop()).message,
             Contains("its target is a set, not a list"));
  CHECK_THAT(read_error(PickleBytes().proto(4).op(Op::EMPTY_LIST).mark().integer(1).op(Op::ADDITEMS).stop()).message,
             Contains("its target is a list, not a set"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::EMPTY_DICT).op(Op::EMPTY_LIST).integer(1).op(Op::SETITEM).stop()).message,
             Contains("a dict key of unhashable type list"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::EMPTY_DICT).mark().str("k").op(Op::SETITEMS).stop()).message,
             Contains("an odd number of values for key/value pairs"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::BINGET).u8(3).stop()).message,
             Contains("BINGET (0x68) at byte 2: memo index 3 was never stored"));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::MEMOIZE).stop()).message, Contains("MEMOIZE (0x94) at byte 2: needs 1 value(s)"));
  CHECK_THAT(read_error(PickleBytes().op(Op::INT).line("12x").stop()).message, Contains("not a decimal integer"));
  CHECK_THAT(read_error(PickleBytes().op(Op::INT).line(std::string(4301, '9')).stop()).message,
             Contains("more than 4300 digits"));
  CHECK_THAT(read_error(PickleBytes().op(Op::FLOAT).line("one").stop()).message, Contains("its text is not a float"));
  CHECK_THAT(read_error(PickleBytes().op(Op::GET).line("-1").stop()).message, Contains("its memo index is not a number"));
  CHECK_THAT(read_error(PickleBytes().op(Op::UNICODE).line("\\u12").stop()).message,
             Contains("a \\u or \\U escape is cut short"));
}

TEST_CASE("recursive structures are refused, so the tree has no cycles", "[pickle][hostile]") {
  // l = []; l.append(l)
  CHECK_THAT(read_error(PickleBytes().proto(4).op(Op::EMPTY_LIST).memoize().binget(0).op(Op::APPEND).stop()).message,
             Contains("APPEND (0x61) at byte 6: it changes a container already placed inside another one"));
  // a = []; b = [a]; then a.append(b): a is sealed inside b.
  CHECK_THAT(read_error(PickleBytes()
                            .proto(4)
                            .op(Op::EMPTY_LIST).memoize()
                            .op(Op::EMPTY_LIST).memoize().binget(0).op(Op::APPEND)
                            .op(Op::APPEND).stop())
                 .message,
             Contains("recursive structures are not read"));
}

TEST_CASE("nesting is bounded, for containers and for MARKs", "[pickle][limits]") {
  auto nested = [](int depth) {
    PickleBytes p;
    p.proto(2);
    for (int i = 0; i < depth; ++i) p.op(Op::EMPTY_LIST);
    for (int i = 1; i < depth; ++i) p.op(Op::APPEND);
    return p.stop();
  };
  auto ok = read_pickle(nested(512));
  REQUIRE(ok);
  CHECK(ok->depth(ok->root()) == 512);
  PickleError deep = read_error(nested(513));
  CHECK(deep.offset == 2 + 513 + 511);
  CHECK_THAT(deep.message, Contains("APPEND (0x61) at byte 1026: containers nested more than 512 deep (limit)"));

  PickleBytes marks;
  marks.proto(2);
  for (int i = 0; i < 600; ++i) marks.mark();
  CHECK_THAT(read_error(marks).message, Contains("MARK (0x28) at byte 514: more than 512 MARKs open (limit)"));

  PickleLimits shallow;
  shallow.max_depth = 2;
  CHECK_THAT(read_error(nested(3), shallow).message, Contains("containers nested more than 2 deep"));
}

TEST_CASE("values, container items, memo entries and the stack are bounded", "[pickle][limits]") {
  PickleLimits limits;
  limits.max_values = 262;  // None, False, True, 256 small ints, then three of ours
  PickleBytes many;
  many.proto(2).mark();
  for (int i = 0; i < 4; ++i) many.str("s");
  CHECK_THAT(read_error(many.op(Op::TUPLE).stop(), limits).message, Contains("SHORT_BINUNICODE (0x8c) at byte 12: more than 262 values (limit)"));

  limits = {};
  limits.max_items = 3;
  CHECK(read_pickle(PickleBytes().proto(2).mark().integer(1).integer(2).integer(3).op(Op::TUPLE).stop(), limits));
  CHECK_THAT(read_error(PickleBytes().proto(2).op(Op::EMPTY_LIST).mark().integer(1).integer(2).op(Op::APPENDS)
                            .mark().integer(3).integer(4).op(Op::APPENDS).stop(),
                        limits).message,
             Contains("APPENDS (0x65) at byte 14: a container with more than 3 items (limit)"));

  limits = {};
  limits.max_memo = 2;
  CHECK_THAT(read_error(PickleBytes().proto(4).integer(1).memoize().memoize().memoize().stop(), limits).message,
             Contains("MEMOIZE (0x94) at byte 6: more than 2 memo entries (limit)"));

  limits = {};
  limits.max_stack = 4;
  CHECK_THAT(read_error(PickleBytes().proto(2).integer(1).op(Op::DUP).op(Op::DUP).op(Op::DUP).op(Op::DUP).stop(), limits).message,
             Contains("DUP (0x32) at byte 7: more than 4 values on the stack (limit)"));
}
