// The module's layout: its top-level statements and where new module-level
// code may go (after shebang, encoding line, docstring and __future__ imports).
#include <cctype>

#include "analyzer/python/script.hpp"

namespace oomlens::analyzer::python {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// PEP 263: a comment line matching ^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+
bool is_encoding_declaration(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f')) ++i;
  if (i >= line.size() || line[i] != '#') return false;
  for (std::size_t at = line.find("coding", i); at != std::string_view::npos; at = line.find("coding", at + 1)) {
    std::size_t j = at + 6;
    if (j >= line.size() || (line[j] != ':' && line[j] != '=')) continue;
    ++j;
    while (j < line.size() && (line[j] == ' ' || line[j] == '\t')) ++j;
    if (j < line.size() && (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '-' ||
                            line[j] == '_' || line[j] == '.'))
      return true;
  }
  return false;
}

bool is_comment_line(std::string_view line) {
  std::size_t i = line.find_first_not_of(" \t\f");
  return i != std::string_view::npos && line[i] == '#';
}

// A docstring is a plain (not f-, not bytes) string literal as the first statement.
bool is_docstring(Node statement, const Script& script) {
  if (!statement.is("expression_statement")) return false;
  std::vector<Node> children = statement.named_children();
  if (children.size() != 1) return false;
  Node literal = children.front();
  std::vector<Node> parts;
  if (literal.is("string")) parts.push_back(literal);
  else if (literal.is("concatenated_string")) parts = literal.named_children();
  else return false;
  for (const Node& part : parts) {
    std::string_view text = script.text(part);
    for (char c : text) {
      if (c == '"' || c == '\'') break;
      if (c == 'f' || c == 'F' || c == 'b' || c == 'B') return false;
    }
  }
  return true;
}

}  // namespace

std::vector<Node> Script::module_statements() const { return root().named_children(); }

InsertionPoint Script::insertion_point() const {
  std::string_view src = source_;
  std::uint32_t start = src.substr(0, kBom.size()) == kBom ? static_cast<std::uint32_t>(kBom.size()) : 0;

  // The first two lines may hold the shebang and the encoding declaration.
  auto line_at = [&](std::uint32_t begin) -> std::pair<std::string_view, std::uint32_t> {
    std::size_t newline = src.find('\n', begin);
    std::uint32_t next = newline == std::string_view::npos ? static_cast<std::uint32_t>(src.size())
                                                           : static_cast<std::uint32_t>(newline + 1);
    return {src.substr(begin, next - begin), next};
  };
  std::uint32_t after = start;
  auto [first, second_begin] = line_at(start);
  bool first_is_comment = is_comment_line(first);
  if (first.substr(0, 2) == "#!" || is_encoding_declaration(first)) after = second_begin;
  if (first_is_comment && second_begin < src.size()) {
    auto [second, third_begin] = line_at(second_begin);
    if (is_encoding_declaration(second)) after = third_begin;
  }

  // Then the docstring and the __future__ imports, which must stay first.
  Node last;
  std::vector<Node> statements = module_statements();
  std::size_t i = 0;
  if (i < statements.size() && is_docstring(statements[i], *this)) last = statements[i++];
  while (i < statements.size() && statements[i].is("future_import_statement")) last = statements[i++];

  InsertionPoint point;
  point.byte = after;
  if (last) {
    std::size_t newline = src.find('\n', last.end_byte());
    if (newline == std::string_view::npos) {
      point.byte = static_cast<std::uint32_t>(src.size());
      point.needs_newline = true;
    } else {
      point.byte = std::max(after, static_cast<std::uint32_t>(newline + 1));
    }
  } else if (after == src.size() && after > start && src.back() != '\n') {
    point.needs_newline = true;  // a lone shebang line without its newline
  }
  point.position = this->point(point.byte);
  return point;
}

}  // namespace oomlens::analyzer::python
