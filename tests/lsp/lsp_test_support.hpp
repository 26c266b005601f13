// Catch2 printers for the LSP position types, so failed checks show values.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "lsp/positions.hpp"

namespace Catch {

template <>
struct StringMaker<oomlens::lsp::Position> {
  static std::string convert(const oomlens::lsp::Position& p) {
    return std::to_string(p.line) + ":" + std::to_string(p.character);
  }
};

template <>
struct StringMaker<oomlens::lsp::Range> {
  static std::string convert(const oomlens::lsp::Range& r) {
    return StringMaker<oomlens::lsp::Position>::convert(r.start) + "-" +
           StringMaker<oomlens::lsp::Position>::convert(r.end);
  }
};

template <>
struct StringMaker<oomlens::lsp::ByteRange> {
  static std::string convert(const oomlens::lsp::ByteRange& r) {
    // Built by appending: GCC 12 at -O3 warns (-Wrestrict, a false positive)
    // on "literal" + std::string temporaries.
    std::string s = "[";
    s += std::to_string(r.begin);
    s += ", ";
    s += std::to_string(r.end);
    s += ")";
    return s;
  }
};

}  // namespace Catch
