// The `#SBATCH --export=` options of a SLURM batch script's header. sbatch
// reads `#SBATCH` lines only until the first line that is neither blank nor
// a comment; the rest of the script is shell (shell_assignments()).
#include <cctype>

#include "analyzer/config/env_assignments.hpp"
#include "analyzer/config/literal_builder.hpp"

namespace oomlens::analyzer::config {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::size_t line_end(std::string_view t, std::size_t i) {
  auto nl = t.find('\n', i);
  return nl == std::string_view::npos ? t.size() : nl;
}

// An item that starts a new variable: `NAME` or `NAME=...`. Anything else
// after a comma continues the value before it (`a:1,b:2`).
bool starts_item(std::string_view t, std::size_t i, std::size_t end) {
  if (i >= end || !name_start(t[i])) return false;
  while (i < end && name_char(t[i])) ++i;
  return i == end || t[i] == ',' || t[i] == '=';
}

// The items of the option's value [b, e) as assignments.
void export_items(std::string_view t, std::size_t b, std::size_t e, std::size_t line_begin,
                  std::vector<EnvAssignment>& out) {
  std::size_t i = b;
  while (i < e) {
    std::size_t n = i;
    while (n < e && name_char(t[n])) ++n;
    bool assignment = n > i && name_start(t[i]) && n < e && t[n] == '=';
    if (!assignment) {  // ALL, NONE, NAME (propagated as it is): no value here
      while (i < e && t[i] != ',') ++i;
      ++i;
      continue;
    }
    EnvAssignment a;
    a.form = AssignmentForm::sbatch_export;
    a.statement_begin = line_begin;
    a.name_begin = i;
    a.name = std::string(t.substr(i, n - i));
    std::size_t v = n + 1, stop = v;
    LiteralBuilder lit;
    if (v < e && (t[v] == '"' || t[v] == '\'')) {
      auto close = t.substr(v + 1, e - v - 1).find(t[v]);
      stop = close == std::string_view::npos ? e : v + 1 + close + 1;
      lit.verbatim(v + 1, t.substr(v + 1, (close == std::string_view::npos ? e : v + 1 + close) - v - 1));
    } else {
      while (stop < e) {
        auto comma = t.substr(stop, e - stop).find(',');
        if (comma == std::string_view::npos) {
          stop = e;
          break;
        }
        stop += comma;
        if (starts_item(t, stop + 1, e)) break;
        ++stop;
      }
      lit.verbatim(v, t.substr(v, stop - v));
    }
    a.value = lit.finish(v, stop);
    if (a.value.value.find('$') != std::string::npos) a.constant = false;
    out.push_back(std::move(a));
    i = stop + 1;
  }
}

}  // namespace

std::vector<EnvAssignment> sbatch_export_assignments(std::string_view t) {
  std::vector<EnvAssignment> out;
  std::size_t i = 0;
  while (i < t.size()) {
    std::size_t le = line_end(t, i);
    std::size_t p = i;
    while (p < le && blank(t[p])) ++p;
    if (p < le && t[p] != '#') break;  // the first command ends the header
    constexpr std::string_view kDirective = "#SBATCH";
    if (t.substr(p, kDirective.size()) == kDirective) {
      std::size_t q = p + kDirective.size();
      while (q < le) {
        while (q < le && blank(t[q])) ++q;
        if (q >= le || t[q] == '#') break;  // a comment after the options
        std::size_t w = q;
        while (w < le && !blank(t[w])) ++w;
        std::string_view word = t.substr(q, w - q);
        std::size_t value_begin = 0, value_end = 0;
        if (word.rfind("--export=", 0) == 0) {
          value_begin = q + 9, value_end = w;
        } else if (word == "--export") {
          std::size_t v = w;
          while (v < le && blank(t[v])) ++v;
          std::size_t ve = v;
          while (ve < le && !blank(t[ve])) ++ve;
          value_begin = v, value_end = ve, w = ve;
        }
        if (value_end > value_begin) {
          // The whole option value quoted: "ALL,X=a:1,b:2".
          if (value_end - value_begin >= 2 && (t[value_begin] == '"' || t[value_begin] == '\'') &&
              t[value_end - 1] == t[value_begin])
            ++value_begin, --value_end;
          export_items(t, value_begin, value_end, i, out);
        }
        q = w;
      }
    }
    i = le + 1;
  }
  return out;
}

}  // namespace oomlens::analyzer::config
