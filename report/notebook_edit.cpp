#include "report/notebook_edit.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "rules/source/lint.hpp"

namespace oomlens::report {
namespace {

std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string cell_source_json(const analyzer::notebook::Cell& cell, std::string_view text) {
  if (!cell.source_is_list) return json_string(text);
  // nbformat's lines: each keeps its "\n", the last may have none.
  std::vector<std::string> items;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t e = text.find('\n', i);
    e = e == std::string_view::npos ? text.size() : e + 1;
    items.push_back(json_string(text.substr(i, e - i)));
    i = e;
  }
  std::string separator = !cell.list_separator.empty() ? cell.list_separator
                          : !cell.list_open.empty()    ? "," + cell.list_open
                                                       : ", ";
  std::string out = "[";
  if (!items.empty()) out += cell.list_open;
  for (std::size_t k = 0; k < items.size(); ++k) out += (k ? separator : "") + items[k];
  if (!items.empty()) out += cell.list_close;
  return out + "]";
}

std::string apply_notebook_edits(std::string_view file, const analyzer::notebook::Notebook& notebook,
                                 const analyzer::notebook::Script& script, const std::vector<rules::TextEdit>& edits) {
  std::map<std::size_t, std::vector<rules::TextEdit>> by_cell;  // Cell::index -> edits in the cell's text
  for (const auto& e : edits) {
    const auto* span = script.span_at(e.begin);
    if (!span || e.end > span->end) continue;
    const auto& cell = *std::find_if(notebook.cells.begin(), notebook.cells.end(),
                                     [&](const auto& c) { return c.index == span->cell; });
    std::size_t b = e.begin - span->begin, n = e.end - e.begin;
    if (cell.text.compare(b, n, script.text, e.begin, n) != 0) continue;  // a blanked IPython line
    by_cell[span->cell].push_back({b, b + n, e.replacement});
  }
  std::string out(file);
  // From the last cell back, so earlier offsets stay valid.
  for (auto it = notebook.cells.rbegin(); it != notebook.cells.rend(); ++it) {
    auto found = by_cell.find(it->index);
    if (it->source_end == 0) continue;  // a cell without "source": nothing to write into
    if (found == by_cell.end()) continue;
    std::string text = rules::apply_edits(it->text, found->second);
    out.replace(it->source_begin, it->source_end - it->source_begin, cell_source_json(*it, text));
  }
  return out;
}

std::string cell_lines_in_message(std::string_view message, const analyzer::notebook::Script& script) {
  return cell_lines_in_message(message, [&script](std::uint32_t line) -> std::optional<std::pair<std::size_t, std::uint32_t>> {
    const analyzer::notebook::CellSpan* span = nullptr;
    for (const auto& s : script.spans)
      if (s.first_line <= line) span = &s;
    if (!span) return std::nullopt;
    return std::pair{static_cast<std::size_t>(span->cell), line - span->first_line + 1};
  });
}

std::string cell_lines_in_message(std::string_view message, const CellOfLine& cell_of) {
  std::string out;
  constexpr std::string_view kLine = "line ";
  std::size_t i = 0;
  while (i < message.size()) {
    auto at = message.find(kLine, i);
    std::size_t digits = at == std::string_view::npos ? 0 : at + kLine.size();
    std::size_t end = digits;
    while (end < message.size() && end - digits < 9 && message[end] >= '0' && message[end] <= '9') ++end;
    if (at == std::string_view::npos || end == digits) {
      std::size_t stop = at == std::string_view::npos ? message.size() : digits;
      out.append(message.substr(i, stop - i));
      i = stop;
      continue;
    }
    auto line = static_cast<std::uint32_t>(std::stoul(std::string(message.substr(digits, end - digits))));
    out.append(message.substr(i, at - i));
    if (auto cell = cell_of(line))
      out += "cell " + std::to_string(cell->first + 1) + ", line " + std::to_string(cell->second);
    else
      out.append(message.substr(at, end - at));
    i = end;
  }
  return out;
}

}  // namespace oomlens::report
