// Dockerfiles as the builder reads them, for the part that sets the image's
// environment: instructions joined across escaped line ends (comment lines
// inside them dropped), and the words of `ENV` with their quoting removed.
// Each logical character keeps the source byte it came from, so a value maps
// back to the file through the joins.
#include <cctype>

#include "analyzer/config/env_assignments.hpp"
#include "analyzer/config/literal_builder.hpp"

namespace oomlens::analyzer::config {
namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }
bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

std::size_t line_end(std::string_view t, std::size_t i) {
  auto nl = t.find('\n', i);
  return nl == std::string_view::npos ? t.size() : nl;
}

// One instruction with its continuation lines joined.
struct Logical {
  std::string text;
  std::vector<std::size_t> source;  // source byte of each character of text
  std::size_t line_begin = 0;
};

// `# escape=`` ` among the parser directives at the top of the file.
char escape_of(std::string_view t) {
  std::size_t i = 0;
  while (i < t.size()) {
    std::size_t le = line_end(t, i);
    std::string_view line = t.substr(i, le - i);
    if (line.empty() || line[0] != '#') break;  // directives end at the first other line
    std::string compact;
    for (char c : line.substr(1))
      if (!blank(c) && c != '\r') compact += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto eq = compact.find('=');
    if (eq == std::string::npos || eq == 0) break;  // a plain comment ends the directives
    if (compact.substr(0, eq) == "escape") return compact.substr(eq + 1) == "`" ? '`' : '\\';
    i = le + 1;
  }
  return '\\';
}

template <class Visit>
void for_each_instruction(std::string_view t, char escape, Visit&& visit) {
  std::size_t i = 0;
  while (i < t.size()) {
    std::size_t le = line_end(t, i);
    std::size_t p = i;
    while (p < le && (blank(t[p]) || t[p] == '\r')) ++p;
    if (p == le || t[p] == '#') {  // blank line or comment
      i = le + 1;
      continue;
    }
    Logical l;
    l.line_begin = i;
    while (true) {
      std::size_t stop = le;
      while (stop > p && (blank(t[stop - 1]) || t[stop - 1] == '\r')) --stop;
      bool continued = stop > p && t[stop - 1] == escape;
      std::size_t copy_end = continued ? stop - 1 : stop;
      for (std::size_t j = p; j < copy_end; ++j) {
        l.text += t[j];
        l.source.push_back(j);
      }
      i = le + 1;
      if (!continued || i >= t.size()) break;
      // The next line that is neither blank nor a comment continues it.
      while (i < t.size()) {
        le = line_end(t, i);
        p = i;
        while (p < le && (blank(t[p]) || t[p] == '\r')) ++p;
        if (p < le && t[p] != '#') break;
        i = le + 1;
      }
      if (i >= t.size()) break;
      p = i;  // leading blanks of a continuation line belong to the value
    }
    visit(l);
  }
}

// Reads one value of `l` from `j`: up to unquoted blank (or to the end when
// `to_end`, the legacy form). Returns where it stopped.
std::size_t read_value(const Logical& l, std::size_t j, char escape, bool to_end, EnvAssignment& a) {
  LiteralBuilder b;
  const std::string& s = l.text;
  std::size_t begin = j;
  std::size_t end = s.size();
  if (to_end)
    while (end > j && blank(s[end - 1])) --end;
  auto verbatim = [&](std::size_t k) { b.verbatim(l.source[k], std::string_view(&s[k], 1)); };
  auto expansion = [&](std::size_t k) {
    return s[k] == '$' && k + 1 < end && (s[k + 1] == '{' || name_start(s[k + 1]));
  };
  while (j < end && (to_end || !blank(s[j]))) {
    char c = s[j];
    if (c == escape && j + 1 < end) {
      b.decoded(l.source[j], l.source[j + 1] + 1, std::string_view(&s[j + 1], 1));
      j += 2;
    } else if (c == '\'') {
      ++j;
      while (j < end && s[j] != '\'') verbatim(j++);
      j = std::min(end, j + 1);
    } else if (c == '"') {
      ++j;
      while (j < end && s[j] != '"') {
        if (s[j] == escape && j + 1 < end && (s[j + 1] == '"' || s[j + 1] == '$' || s[j + 1] == escape)) {
          b.decoded(l.source[j], l.source[j + 1] + 1, std::string_view(&s[j + 1], 1));
          j += 2;
          continue;
        }
        if (expansion(j)) a.constant = false;
        verbatim(j++);
      }
      j = std::min(end, j + 1);
    } else {
      if (expansion(j)) a.constant = false;
      verbatim(j++);
    }
  }
  std::size_t src_begin = begin < l.source.size() ? l.source[begin] : l.source.back() + 1;
  std::size_t src_end = j > begin ? l.source[j - 1] + 1 : src_begin;
  a.value = b.finish(src_begin, src_end);
  return j;
}

void env_instruction(const Logical& l, std::size_t args, char escape, std::vector<EnvAssignment>& out) {
  const std::string& s = l.text;
  std::size_t j = args;
  bool first = true;
  while (j < s.size()) {
    while (j < s.size() && blank(s[j])) ++j;
    if (j >= s.size()) break;
    std::size_t n = j;
    while (n < s.size() && !blank(s[n]) && s[n] != '=') ++n;
    if (n == j) break;
    EnvAssignment a;
    a.form = AssignmentForm::dockerfile_env;
    a.statement_begin = l.line_begin;
    a.name_begin = l.source[j];
    a.name = s.substr(j, n - j);
    if (n < s.size() && s[n] == '=') {
      j = read_value(l, n + 1, escape, false, a);
    } else if (first) {  // ENV NAME value...: the rest of the line is the value
      std::size_t v = n;
      while (v < s.size() && blank(s[v])) ++v;
      if (v >= s.size()) break;  // `ENV NAME` alone is not valid
      read_value(l, v, escape, true, a);
      out.push_back(std::move(a));
      break;
    } else {
      break;  // a word without `=` after K=V words: not an ENV the builder accepts
    }
    out.push_back(std::move(a));
    first = false;
  }
}

std::string keyword_of(const Logical& l, std::size_t& args) {
  std::size_t k = 0;
  while (k < l.text.size() && !blank(l.text[k])) ++k;
  std::string keyword;
  for (std::size_t i = 0; i < k; ++i) keyword += static_cast<char>(std::toupper(static_cast<unsigned char>(l.text[i])));
  args = k;
  return keyword;
}

}  // namespace

std::vector<EnvAssignment> dockerfile_env_assignments(std::string_view text) {
  std::vector<EnvAssignment> out;
  char escape = escape_of(text);
  for_each_instruction(text, escape, [&](const Logical& l) {
    std::size_t args = 0;
    if (keyword_of(l, args) == "ENV") env_instruction(l, args, escape, out);
  });
  return out;
}

std::vector<DockerInstruction> dockerfile_instructions(std::string_view text) {
  std::vector<DockerInstruction> out;
  for_each_instruction(text, escape_of(text), [&](const Logical& l) {
    std::size_t args = 0;
    out.push_back({keyword_of(l, args), l.line_begin});
  });
  return out;
}

}  // namespace oomlens::analyzer::config
