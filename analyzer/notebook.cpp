#include "analyzer/notebook.hpp"

#include <algorithm>
#include <optional>

#include "analyzer/jsonc.hpp"

namespace oomlens::analyzer::notebook {
namespace {

using jsonc::JValue;

std::optional<Cell> cell_of(const JValue& v, std::size_t index, std::string_view t) {
  if (v.kind != JValue::Kind::object) return std::nullopt;
  Cell c;
  c.index = index;
  const JValue* type = v.member("cell_type");
  c.code = type && type->kind == JValue::Kind::string && type->text.value == "code";
  const JValue* source = v.member("source");
  if (!source) return c;
  c.source_begin = source->begin;
  c.source_end = source->end;
  if (source->kind == JValue::Kind::string) {
    c.text = source->text.value;
  } else if (source->kind == JValue::Kind::array) {
    c.source_is_list = true;
    for (const JValue& item : source->items)
      if (item.kind == JValue::Kind::string) c.text += item.text.value;
    const auto& items = source->items;
    if (!items.empty()) {
      c.list_open = std::string(t.substr(source->begin + 1, items.front().begin - source->begin - 1));
      c.list_close = std::string(t.substr(items.back().end, source->end - 1 - items.back().end));
      if (items.size() > 1) c.list_separator = std::string(t.substr(items[0].end, items[1].begin - items[0].end));
    }
  } else {
    return std::nullopt;
  }
  return c;
}

bool blank(char c) { return c == ' ' || c == '\t'; }

// IPython lines blanked to spaces, newlines kept.
std::string python_only(std::string_view cell) {
  std::string out(cell);
  std::size_t first = 0;
  while (first < out.size() && (blank(out[first]) || out[first] == '\n' || out[first] == '\r')) ++first;
  bool cell_magic = out.compare(first, 2, "%%") == 0;
  std::size_t i = 0;
  while (i < out.size()) {
    std::size_t e = out.find('\n', i);
    if (e == std::string::npos) e = out.size();
    std::size_t p = i;
    while (p < e && blank(out[p])) ++p;
    if (cell_magic || (p < e && (out[p] == '%' || out[p] == '!')))
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(i), out.begin() + static_cast<std::ptrdiff_t>(e), ' ');
    i = e + 1;
  }
  return out;
}

}  // namespace

Notebook parse(std::string_view text) {
  Notebook nb;
  auto root = jsonc::parse(text);
  if (!root || root->kind != JValue::Kind::object) return nb;
  const JValue* cells = root->member("cells");
  if (!cells || cells->kind != JValue::Kind::array) return nb;
  nb.valid = true;
  for (std::size_t i = 0; i < cells->items.size(); ++i)
    if (auto c = cell_of(cells->items[i], i, text)) nb.cells.push_back(std::move(*c));
  return nb;
}

Script code_script(const Notebook& notebook) {
  Script s;
  std::uint32_t line = 1;
  for (const Cell& c : notebook.cells) {
    if (!c.code) continue;
    CellSpan span{c.index, s.text.size(), 0, line};
    s.text += python_only(c.text);
    span.end = s.text.size();
    if (s.text.empty() || s.text.back() != '\n') s.text += '\n';
    line += static_cast<std::uint32_t>(std::count(s.text.begin() + static_cast<std::ptrdiff_t>(span.begin),
                                                  s.text.end(), '\n'));
    s.spans.push_back(span);
  }
  return s;
}

const CellSpan* Script::span_at(std::size_t at) const {
  auto after = std::upper_bound(spans.begin(), spans.end(), at,
                                [](std::size_t a, const CellSpan& span) { return a < span.begin; });
  return after == spans.begin() ? nullptr : &*(after - 1);
}

}  // namespace oomlens::analyzer::notebook
