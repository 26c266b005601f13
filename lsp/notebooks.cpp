#include "lsp/notebooks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/notebook.hpp"

namespace oomlens::lsp {

namespace {

std::vector<Notebooks::Cell> cells_of(const std::vector<NotebookCellItem>& items) {
  std::vector<Notebooks::Cell> out;
  for (const auto& c : items) out.push_back({c.uri, c.code});
  return out;
}

}  // namespace

std::string Notebooks::build(const std::string& uri, Notebook& notebook) {
  // The code cells through the same joiner `oomlens lint` uses on .ipynb
  // files: magics and shell escapes blanked, a newline after each cell.
  analyzer::notebook::Notebook joined;
  joined.valid = true;
  std::vector<const Cell*> code;
  for (const auto& c : notebook.cells) {
    if (!c.code) continue;
    auto doc = texts_.get(c.uri);
    analyzer::notebook::Cell cell;
    cell.index = code.size();
    cell.code = true;
    cell.text = doc ? doc->text : std::string();
    joined.cells.push_back(std::move(cell));
    code.push_back(&c);
  }
  auto script = analyzer::notebook::code_script(joined);
  notebook.placements.clear();
  for (const auto& span : script.spans) {
    std::uint32_t lines = static_cast<std::uint32_t>(
        std::count(script.text.begin() + static_cast<std::ptrdiff_t>(span.begin),
                   script.text.begin() + static_cast<std::ptrdiff_t>(span.end), '\n'));
    notebook.placements[code[span.cell]->uri] = {uri, span.first_line - 1, std::max<std::uint32_t>(lines, 1)};
  }
  return std::move(script.text);
}

std::string Notebooks::open(NotebookOpenParams params) {
  Notebook notebook;
  notebook.cells = cells_of(params.cells);
  for (auto& d : params.cell_documents) texts_.open(d.uri, d.language_id, d.version, std::move(d.text));
  std::string text = build(params.uri, notebook);
  notebooks_[params.uri] = std::move(notebook);
  return text;
}

std::optional<std::string> Notebooks::change(NotebookChangeParams params) {
  auto it = notebooks_.find(params.uri);
  if (it == notebooks_.end()) return std::nullopt;
  Notebook& notebook = it->second;
  if (params.structure) {
    auto& s = *params.structure;
    if (s.start > notebook.cells.size() || s.delete_count > notebook.cells.size() - s.start)
      throw ParamsError(fmt::format("notebookDocument/didChange: cells {}..{} are not in the notebook's {}", s.start,
                                    s.start + s.delete_count, notebook.cells.size()));
    auto at = notebook.cells.begin() + static_cast<std::ptrdiff_t>(s.start);
    at = notebook.cells.erase(at, at + static_cast<std::ptrdiff_t>(s.delete_count));
    auto added = cells_of(s.cells);
    notebook.cells.insert(at, added.begin(), added.end());
  }
  for (const auto& uri : params.closed) texts_.close(uri);
  for (auto& d : params.opened) texts_.open(d.uri, d.language_id, d.version, std::move(d.text));
  for (const auto& c : params.data)
    for (auto& cell : notebook.cells)
      if (cell.uri == c.uri) cell.code = c.code;
  for (auto& t : params.text) {
    std::vector<TextChange> changes;
    for (auto& c : t.changes) changes.push_back({c.range, std::move(c.text), std::nullopt});
    auto result = texts_.change(t.uri, t.version, std::move(changes));
    if (!result) throw ParamsError(fmt::format("notebookDocument/didChange: {}: {}", t.uri, result.error));
  }
  return build(params.uri, notebook);
}

std::vector<Notebooks::Cell> Notebooks::close(const std::string& notebook) {
  auto it = notebooks_.find(notebook);
  if (it == notebooks_.end()) return {};
  auto cells = std::move(it->second.cells);
  for (const auto& c : cells) texts_.close(c.uri);
  notebooks_.erase(it);
  return cells;
}

std::optional<Notebooks::Placement> Notebooks::placement(const std::string& cell_uri) const {
  for (const auto& [uri, notebook] : notebooks_)
    if (auto p = notebook.placements.find(cell_uri); p != notebook.placements.end()) return p->second;
  return std::nullopt;
}

std::optional<std::pair<std::string, std::uint32_t>> Notebooks::cell_at(const std::string& notebook,
                                                                        std::uint32_t line) const {
  auto it = notebooks_.find(notebook);
  if (it == notebooks_.end()) return std::nullopt;
  for (const auto& [uri, p] : it->second.placements)
    if (line >= p.first_line && line < p.first_line + p.lines) return std::pair{uri, line - p.first_line};
  return std::nullopt;
}

std::vector<Notebooks::Cell> Notebooks::cells(const std::string& notebook) const {
  auto it = notebooks_.find(notebook);
  return it == notebooks_.end() ? std::vector<Cell>{} : it->second.cells;
}

std::vector<std::string> Notebooks::uris() const {
  std::vector<std::string> out;
  for (const auto& [uri, notebook] : notebooks_) out.push_back(uri);
  return out;
}

std::optional<std::int64_t> Notebooks::cell_version(const std::string& cell_uri) const {
  auto doc = texts_.get(cell_uri);
  if (!doc) return std::nullopt;
  return doc->version;
}

}  // namespace oomlens::lsp
