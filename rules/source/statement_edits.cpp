#include "rules/source/statement_edits.hpp"

namespace oomlens::rules::source {

using analyzer::python::Node;
using analyzer::python::Script;

Node statement_of_expression(const Script& s, Node expression) {
  Node stmt = s.parent(expression);
  if (!stmt || !stmt.is("expression_statement") || stmt.range() != expression.range()) return {};
  Node block = s.parent(stmt);
  if (!block || !(block.is("block") || block.is("module"))) return {};
  return stmt;
}

std::uint32_t line_start(std::string_view src, std::uint32_t at) {
  while (at > 0 && src[at - 1] != '\n') --at;
  return at;
}

bool only_statement_of_block(const Script& s, Node statement) {
  Node block = s.parent(statement);
  if (!block || !block.is("block")) return false;
  for (Node child : block.named_children())
    if (!child.is("comment") && child.id() != statement.id()) return false;
  return true;
}

std::optional<TextEdit> remove_statement_edit(const Script& s, Node statement, bool replace_by_pass) {
  auto r = statement.range();
  if (replace_by_pass) return TextEdit{r.begin, r.end, "pass"};
  std::string_view src = s.source();
  std::uint32_t ls = line_start(src, r.begin);
  std::uint32_t le = r.end;
  while (le < src.size() && (src[le] == ' ' || src[le] == '\t')) ++le;
  bool alone_before = src.substr(ls, r.begin - ls).find_first_not_of(" \t") == std::string_view::npos;
  if (le < src.size() && src[le] == '#')  // a trailing comment goes with the statement
    while (le < src.size() && src[le] != '\n' && src[le] != '\r') ++le;
  bool alone_after = le == src.size() || src[le] == '\n' || src[le] == '\r';
  if (alone_before && alone_after) {
    if (le < src.size() && src[le] == '\r') ++le;
    if (le < src.size() && src[le] == '\n') ++le;
    return TextEdit{ls, le, ""};
  }
  // `a(); stmt` or `x(); stmt; y()`: drop the statement and one neighbouring `;`.
  std::uint32_t b = r.begin, en = r.end;
  std::uint32_t k = en;
  while (k < src.size() && (src[k] == ' ' || src[k] == '\t')) ++k;
  if (k < src.size() && src[k] == ';') {
    en = k + 1;
    while (en < src.size() && (src[en] == ' ' || src[en] == '\t')) ++en;
    return TextEdit{b, en, ""};
  }
  std::uint32_t j = b;
  while (j > ls && (src[j - 1] == ' ' || src[j - 1] == '\t')) --j;
  if (j > ls && src[j - 1] == ';') return TextEdit{j - 1, en, ""};
  return std::nullopt;
}

}  // namespace oomlens::rules::source
