// Environment entries of Kubernetes manifests and Compose files. There is no
// YAML library in the dependency set, and these files set variables in three
// block shapes only, so this is a small line-oriented reader of exactly those
// shapes under an `env:` or `environment:` key:
//   env:                               environment:          environment:
//     - name: PYTORCH_CUDA_ALLOC_CONF    NAME: value           - NAME=value
//       value: "expandable_segments:True"
// Everything else (flow collections, anchors, tags, block and multi-line
// scalars) is skipped, never guessed at. Each line is looked at a bounded
// number of times, with no recursion: safe on hostile input.
#include <optional>

#include "analyzer/config/env_assignments.hpp"
#include "analyzer/config/literal_builder.hpp"

namespace oomlens::analyzer::config {
namespace {

struct Line {
  std::size_t begin = 0, end = 0;  // end: before `\r\n` / `\n`
  std::size_t content = 0;         // the first byte that is not a space
  std::size_t indent = 0;
  bool empty = true;               // blank or a comment
};

std::vector<Line> split_lines(std::string_view t) {
  std::vector<Line> lines;
  std::size_t i = 0;
  while (i <= t.size()) {
    auto nl = t.find('\n', i);
    std::size_t e = nl == std::string_view::npos ? t.size() : nl;
    Line l{i, e, i, 0, true};
    if (l.end > l.begin && t[l.end - 1] == '\r') --l.end;
    while (l.content < l.end && t[l.content] == ' ') ++l.content;
    l.indent = l.content - i;
    l.empty = l.content == l.end || t[l.content] == '#';
    lines.push_back(l);
    if (nl == std::string_view::npos) break;
    i = nl + 1;
  }
  return lines;
}

struct Scalar {
  python::StringLiteral literal;
  bool constant = true;
};

// A scalar on one line at [b, e): plain up to a ` #` comment, '...' or "...".
std::optional<Scalar> scalar(std::string_view t, std::size_t b, std::size_t e) {
  while (b < e && t[b] == ' ') ++b;
  if (b >= e || t[b] == '#') return std::nullopt;  // no value (null)
  LiteralBuilder lit;
  std::size_t stop = b;
  char c = t[b];
  if (c == '|' || c == '>' || c == '&' || c == '*' || c == '!' || c == '{' || c == '[') return std::nullopt;
  if (c == '\'' || c == '"') {
    std::size_t j = b + 1;
    bool closed = false;
    while (j < e) {
      if (t[j] == c && c == '\'' && j + 1 < e && t[j + 1] == '\'') {
        lit.decoded(j, j + 2, "'");
        j += 2;
      } else if (t[j] == c) {
        closed = true;
        break;
      } else if (c == '"' && t[j] == '\\' && j + 1 < e) {
        char d = t[j + 1];
        char out = d == 'n' ? '\n' : d == 't' ? '\t' : d == '0' ? '\0' : d;
        lit.decoded(j, j + 2, std::string_view(&out, 1));
        j += 2;
      } else {
        lit.verbatim(j, t.substr(j, 1));
        ++j;
      }
    }
    if (!closed) return std::nullopt;  // continues on the next line: not read
    stop = j + 1;
  } else {
    stop = e;
    for (std::size_t j = b + 1; j < e; ++j)
      if (t[j] == '#' && t[j - 1] == ' ') {
        stop = j;
        break;
      }
    while (stop > b && t[stop - 1] == ' ') --stop;
    lit.verbatim(b, t.substr(b, stop - b));
  }
  Scalar s{lit.finish(b, stop), true};
  // Compose interpolates ${X} and $X; Kubernetes expands $(X).
  s.constant = s.literal.value.find('$') == std::string::npos;
  return s;
}

// `key: rest` at [b, e): the key's end (its colon) or nothing.
std::optional<std::size_t> key_colon(std::string_view t, std::size_t b, std::size_t e) {
  if (b < e && (t[b] == '"' || t[b] == '\'')) {
    auto close = t.substr(b + 1, e - b - 1).find(t[b]);
    if (close == std::string_view::npos) return std::nullopt;
    std::size_t c = b + 1 + close + 1;
    return c < e && t[c] == ':' && (c + 1 == e || t[c + 1] == ' ') ? std::optional(c) : std::nullopt;
  }
  for (std::size_t j = b; j < e; ++j) {
    if (t[j] == '#' && j > b && t[j - 1] == ' ') return std::nullopt;
    if (t[j] == ':' && (j + 1 == e || t[j + 1] == ' ')) return j > b ? std::optional(j) : std::nullopt;
  }
  return std::nullopt;
}

std::string key_text(std::string_view t, std::size_t b, std::size_t colon) {
  std::string_view k = t.substr(b, colon - b);
  if (k.size() >= 2 && (k[0] == '"' || k[0] == '\'')) k = k.substr(1, k.size() - 2);
  while (!k.empty() && k.back() == ' ') k.remove_suffix(1);
  return std::string(k);
}

// The literal's value from byte `from` on (a `NAME=value` item's value).
python::StringLiteral value_after(const python::StringLiteral& lit, std::size_t from) {
  python::StringLiteral out;
  out.value = lit.value.substr(from);
  for (auto piece : lit.pieces) {
    std::size_t pb = piece.value_begin, pe = pb + piece.value_size;
    if (pe <= from) continue;
    if (pb < from) {  // a verbatim run cut at `from` (escapes are one byte here)
      std::size_t cut = from - pb;
      piece.source.begin += static_cast<std::uint32_t>(cut);
      piece.value_size -= cut;
      pb = from;
    }
    piece.value_begin = pb - from;
    out.pieces.push_back(piece);
  }
  auto r = lit.source_range(from, lit.value.size());
  out.range = {r.begin, r.end};
  return out;
}

bool env_key(std::string_view k) { return k == "env" || k == "environment"; }

// Skips `- ` list markers: where a line's own content starts.
std::size_t after_dashes(std::string_view t, std::size_t b, std::size_t e) {
  while (b + 1 < e && t[b] == '-' && t[b + 1] == ' ') {
    b += 2;
    while (b < e && t[b] == ' ') ++b;
  }
  return b;
}

class Reader {
 public:
  explicit Reader(std::string_view t) : t_(t), lines_(split_lines(t)) {}

  std::vector<EnvAssignment> read() {
    std::size_t i = 0;
    while (i < lines_.size()) {
      const Line& l = lines_[i];
      if (!l.empty) {
        std::size_t k = after_dashes(t_, l.content, l.end);
        auto colon = key_colon(t_, k, l.end);
        if (colon && env_key(key_text(t_, k, *colon)) && !scalar(t_, *colon + 1, l.end)) {
          i = block(i + 1, k - l.begin);
          continue;
        }
      }
      ++i;
    }
    return std::move(out_);
  }

 private:
  // The entries of the block after an env key at column `key_column`;
  // returns the first line after the block.
  std::size_t block(std::size_t i, std::size_t key_column) {
    while (i < lines_.size()) {
      const Line& l = lines_[i];
      if (l.empty) {
        ++i;
        continue;
      }
      bool dash = t_[l.content] == '-' && (l.content + 1 == l.end || t_[l.content + 1] == ' ');
      if (l.indent < key_column || (l.indent == key_column && !dash)) break;
      if (dash) {
        i = list_item(i);
      } else {
        map_entry(l);
        ++i;
      }
    }
    return i;
  }

  // Compose map form: `NAME: value`.
  void map_entry(const Line& l) {
    auto colon = key_colon(t_, l.content, l.end);
    if (!colon) return;
    auto value = scalar(t_, *colon + 1, l.end);
    if (!value) return;
    add(key_text(t_, l.content, *colon), l.content, l.begin, std::move(*value));
  }

  // `- NAME=value`, or `- name: X` with `value: v` at the item's column.
  std::size_t list_item(std::size_t i) {
    const Line& l = lines_[i];
    std::size_t c = l.content + 1;
    while (c < l.end && t_[c] == ' ') ++c;
    std::size_t column = c - l.begin;
    auto colon = key_colon(t_, c, l.end);
    if (!colon) {
      if (auto item = scalar(t_, c, l.end)) {
        auto eq = item->literal.value.find('=');
        if (eq != std::string::npos && eq > 0) {
          Scalar v{value_after(item->literal, eq + 1), item->constant};
          add(item->literal.value.substr(0, eq), item->literal.source_range(0, 0).begin, l.begin, std::move(v));
        }
      }
      return i + 1;
    }
    std::optional<Scalar> name, value;
    std::size_t name_begin = 0;
    auto take = [&](std::size_t b, std::size_t e) {
      auto kc = key_colon(t_, b, e);
      if (!kc) return;
      std::string key = key_text(t_, b, *kc);
      if (key == "name") {
        name = scalar(t_, *kc + 1, e);
        if (name) name_begin = name->literal.range.begin;
      } else if (key == "value") {
        value = scalar(t_, *kc + 1, e);
      }
    };
    take(c, l.end);
    std::size_t j = i + 1;
    for (; j < lines_.size(); ++j) {
      const Line& m = lines_[j];
      if (m.empty) continue;
      if (m.indent <= l.indent) break;
      if (m.indent == column) take(m.content, m.end);
    }
    if (name && value && name->constant) add(name->literal.value, name_begin, l.begin, std::move(*value));
    return j;
  }

  void add(std::string name, std::size_t name_begin, std::size_t statement, Scalar value) {
    EnvAssignment a;
    a.form = AssignmentForm::yaml;
    a.name = std::move(name);
    a.name_begin = name_begin;
    a.statement_begin = statement;
    a.constant = value.constant;
    a.value = std::move(value.literal);
    out_.push_back(std::move(a));
  }

  std::string_view t_;
  std::vector<Line> lines_;
  std::vector<EnvAssignment> out_;
};

}  // namespace

std::vector<EnvAssignment> yaml_env_assignments(std::string_view text) { return Reader(text).read(); }

}  // namespace oomlens::analyzer::config
