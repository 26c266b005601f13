// Pickle opcodes by their pickletools names (CPython Lib/pickletools.py).
#pragma once

#include <string_view>

namespace oomlens::analyzer::snapshot {

enum class Op : unsigned char {
  // stack and memo
  MARK = '(', STOP = '.', POP = '0', POP_MARK = '1', DUP = '2',
  PROTO = 0x80, FRAME = 0x95, MEMOIZE = 0x94,
  PUT = 'p', BINPUT = 'q', LONG_BINPUT = 'r', GET = 'g', BINGET = 'h', LONG_BINGET = 'j',
  // scalars
  NONE = 'N', NEWTRUE = 0x88, NEWFALSE = 0x89,
  INT = 'I', BININT = 'J', BININT1 = 'K', BININT2 = 'M', LONG = 'L', LONG1 = 0x8a, LONG4 = 0x8b,
  FLOAT = 'F', BINFLOAT = 'G',
  STRING = 'S', BINSTRING = 'T', SHORT_BINSTRING = 'U',
  UNICODE = 'V', BINUNICODE = 'X', SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d,
  BINBYTES = 'B', SHORT_BINBYTES = 'C', BINBYTES8 = 0x8e, BYTEARRAY8 = 0x96,
  // containers
  EMPTY_LIST = ']', APPEND = 'a', APPENDS = 'e', LIST = 'l',
  EMPTY_TUPLE = ')', TUPLE = 't', TUPLE1 = 0x85, TUPLE2 = 0x86, TUPLE3 = 0x87,
  EMPTY_DICT = '}', DICT = 'd', SETITEM = 's', SETITEMS = 'u',
  EMPTY_SET = 0x8f, ADDITEMS = 0x90, FROZENSET = 0x91,
  // code and the outside world: always refused
  GLOBAL = 'c', STACK_GLOBAL = 0x93, INST = 'i', OBJ = 'o', REDUCE = 'R', BUILD = 'b',
  NEWOBJ = 0x81, NEWOBJ_EX = 0x92, EXT1 = 0x82, EXT2 = 0x83, EXT4 = 0x84,
  PERSID = 'P', BINPERSID = 'Q', NEXT_BUFFER = 0x97, READONLY_BUFFER = 0x98,
};

// Why an opcode is refused, for the message; empty for opcodes that build data.
std::string_view refusal_reason(Op op);

}  // namespace oomlens::analyzer::snapshot
