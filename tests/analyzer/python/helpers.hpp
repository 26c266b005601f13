// Finding nodes in test scripts by their text, so tests read like the script.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "analyzer/python/script.hpp"

namespace oomlens::analyzer::python::testing {

// The innermost node of `type` covering the `occurrence`-th (0-based) match
// of `snippet` in the source. Throws when there is none, so a typo in a test
// fails loudly instead of testing a null node.
inline Node find(const Script& script, std::string_view snippet, std::string_view type,
                 int occurrence = 0) {
  std::size_t at = script.source().find(snippet);
  for (int i = 0; i < occurrence && at != std::string_view::npos; ++i)
    at = script.source().find(snippet, at + 1);
  if (at == std::string_view::npos) throw std::runtime_error("snippet not found: " + std::string(snippet));
  ByteRange range{static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(at + snippet.size())};
  for (Node node = script.node_at(range); node; node = script.parent(node))
    if (node.is(type) && node.range().contains(range)) return node;
  throw std::runtime_error("no " + std::string(type) + " around: " + std::string(snippet));
}

// The call whose text starts with `snippet`.
inline Call find_call(const Script& script, std::string_view snippet, int occurrence = 0) {
  Node node = find(script, snippet, "call", occurrence);
  for (const Call& call : script.calls())
    if (call.node == node) return call;
  throw std::runtime_error("call not indexed: " + std::string(snippet));
}

inline std::string qualified(const Script& script, std::string_view snippet, int occurrence = 0) {
  return find_call(script, snippet, occurrence).qualified_name.value_or("<none>");
}

}  // namespace oomlens::analyzer::python::testing
