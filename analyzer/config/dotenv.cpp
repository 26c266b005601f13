// .env files as python-dotenv and docker compose read them: one `NAME=value`
// per line, optionally after `export`; '...' literal, "..." with backslash
// escapes, unquoted values up to a ` #` comment, trailing blanks dropped.
#include <cctype>

#include "analyzer/config/env_assignments.hpp"
#include "analyzer/config/literal_builder.hpp"

namespace oomlens::analyzer::config {
namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; }

std::size_t line_end(std::string_view t, std::size_t i) {
  auto nl = t.find('\n', i);
  return nl == std::string_view::npos ? t.size() : nl;
}

char unescape(char c) {
  switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'a': return '\a';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'v': return '\v';
    default: return c;  // \\ \' \" and anything else: the character itself
  }
}

// Reads the value at `i`; returns where reading stopped.
std::size_t read_value(std::string_view t, std::size_t i, EnvAssignment& a) {
  LiteralBuilder b;
  std::size_t begin = i, end = i;
  if (i < t.size() && (t[i] == '\'' || t[i] == '"')) {
    char q = t[i];
    std::size_t j = i + 1;
    while (j < t.size() && t[j] != q) {
      if (q == '"' && t[j] == '\\' && j + 1 < t.size()) {
        char c = unescape(t[j + 1]);
        b.decoded(j, j + 2, std::string_view(&c, 1));
        j += 2;
        continue;
      }
      if (q == '"' && t[j] == '$' && j + 1 < t.size() && t[j + 1] == '{') a.constant = false;
      b.verbatim(j, t.substr(j, 1));
      ++j;
    }
    end = j < t.size() ? j + 1 : j;
    a.value = b.finish(begin, end);
    return end;
  }
  std::size_t le = line_end(t, i);
  std::size_t stop = le;
  for (std::size_t j = i; j < le; ++j)
    if (t[j] == '#' && j > i && blank(t[j - 1])) {
      stop = j;
      break;
    }
  while (stop > i && (blank(t[stop - 1]) || t[stop - 1] == '\r')) --stop;
  std::string_view v = t.substr(i, stop - i);
  if (v.find("${") != std::string_view::npos) a.constant = false;
  b.verbatim(i, v);
  a.value = b.finish(i, stop);
  return le;
}

}  // namespace

std::vector<EnvAssignment> dotenv_assignments(std::string_view t) {
  std::vector<EnvAssignment> out;
  std::size_t i = 0;
  while (i < t.size()) {
    std::size_t le = line_end(t, i);
    std::size_t p = i;
    while (p < le && blank(t[p])) ++p;
    EnvAssignment a;
    a.statement_begin = p;
    if (t.substr(p, 7) == "export " || t.substr(p, 7) == "export\t") {
      a.form = AssignmentForm::exported;
      p += 7;
      while (p < le && blank(t[p])) ++p;
    }
    std::size_t n = p;
    while (n < le && name_char(t[n])) ++n;
    std::size_t eq = n;
    while (eq < le && blank(t[eq])) ++eq;
    if (n == p || eq >= le || t[eq] != '=' || t[p] == '#') {
      i = le + 1;
      continue;
    }
    a.name = std::string(t.substr(p, n - p));
    a.name_begin = p;
    std::size_t v = eq + 1;
    while (v < le && blank(t[v])) ++v;
    std::size_t stop = read_value(t, v, a);
    out.push_back(std::move(a));
    i = line_end(t, stop) + 1;  // a quoted value may span lines
  }
  return out;
}

}  // namespace oomlens::analyzer::config
