// Builds a value and its value-byte -> source-byte map (python::StringLiteral)
// while a quoting-aware reader walks the source.
#pragma once

#include <cstdint>
#include <string_view>

#include "analyzer/python/strings.hpp"

namespace oomlens::analyzer::config {

class LiteralBuilder {
 public:
  // Bytes copied from the source as they are.
  void verbatim(std::size_t source_begin, std::string_view bytes) {
    if (bytes.empty()) return;
    auto& pieces = out_.pieces;
    auto b = static_cast<std::uint32_t>(source_begin);
    if (!pieces.empty() && pieces.back().verbatim && pieces.back().source.end == b &&
        pieces.back().value_begin + pieces.back().value_size == out_.value.size()) {
      pieces.back().value_size += bytes.size();
      pieces.back().source.end += static_cast<std::uint32_t>(bytes.size());
    } else {
      pieces.push_back({out_.value.size(), bytes.size(), {b, b + static_cast<std::uint32_t>(bytes.size())}, true});
    }
    out_.value += bytes;
  }
  // Bytes that an escape sequence at [begin, end) of the source decodes to.
  void decoded(std::size_t begin, std::size_t end, std::string_view bytes) {
    if (bytes.empty()) return;
    out_.pieces.push_back({out_.value.size(), bytes.size(),
                           {static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end)}, false});
    out_.value += bytes;
  }
  python::StringLiteral finish(std::size_t begin, std::size_t end) {
    out_.range = {static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end)};
    return std::move(out_);
  }

 private:
  python::StringLiteral out_;
};

}  // namespace oomlens::analyzer::config
