// Notebooks (LSP 3.17 notebookDocument/*): the code cells are analysed as one
// script, in order, under the notebook's URI, so that a setting made in one
// cell and CUDA started in another are seen as a script sees them; each
// cell then gets the diagnostics and fixes of its own lines.
#include <algorithm>

#include <fmt/format.h>

#include "lsp/document_features.hpp"
#include "lsp/server.hpp"
#include "report/notebook_edit.hpp"

namespace oomlens::lsp {

namespace {

// A script range moved into the cell that holds its start; a range that
// runs into another cell is cut at its start (nothing of one cell is shown
// in another).
std::optional<std::pair<std::string, Range>> to_cell(const Notebooks& notebooks, const std::string& notebook,
                                                     Range range) {
  auto start = notebooks.cell_at(notebook, range.start.line);
  if (!start) return std::nullopt;
  auto end = notebooks.cell_at(notebook, range.end.line);
  std::uint32_t shift = range.start.line - start->second;
  range.start.line = start->second;
  if (end && end->first == start->first) range.end.line -= shift;
  else range.end = range.start;
  return std::pair{start->first, range};
}

Range to_script(Range range, std::uint32_t first_line) {
  range.start.line += first_line;
  range.end.line += first_line;
  return range;
}

// The script's "line N" in a message told as the cell's ("cell 3, line 1",
// cells counted from 1 as the notebook shows them), as `oomlens lint` does.
std::string cell_message(const Notebooks& notebooks, const std::string& notebook, std::string_view message) {
  auto cells = notebooks.cells(notebook);
  return report::cell_lines_in_message(message, [&](std::uint32_t line) -> std::optional<std::pair<std::size_t, std::uint32_t>> {
    auto at = line == 0 ? std::nullopt : notebooks.cell_at(notebook, line - 1);
    if (!at) return std::nullopt;
    auto it = std::find_if(cells.begin(), cells.end(), [&](const Notebooks::Cell& c) { return c.uri == at->first; });
    if (it == cells.end()) return std::nullopt;
    return std::pair{static_cast<std::size_t>(it - cells.begin()), at->second + 1};
  });
}

std::optional<Diagnostic> cell_diagnostic(const Notebooks& notebooks, const std::string& notebook, Diagnostic d,
                                          const std::string& cell) {
  auto at = to_cell(notebooks, notebook, d.range);
  if (!at || at->first != cell) return std::nullopt;
  d.range = at->second;
  d.message = cell_message(notebooks, notebook, d.message);
  if (d.related_information)
    for (auto& info : *d.related_information)
      if (info.location.uri == notebook)
        if (auto there = to_cell(notebooks, notebook, info.location.range))
          info.location = {there->first, there->second};
  return d;
}

// An action on the script as one on cells: every edit moved into its cell
// (with the cell's version); none when an edit spans cells.
std::optional<CodeActionItem> cell_action(const Notebooks& notebooks, const std::string& notebook,
                                          CodeActionItem item) {
  auto* action = std::get_if<CodeAction>(&item);
  if (!action) return item;
  std::vector<Diagnostic> diagnostics;
  for (auto& d : action->diagnostics)
    if (auto at = to_cell(notebooks, notebook, d.range)) diagnostics.push_back((d.range = at->second, d));
  action->diagnostics = std::move(diagnostics);
  if (action->edit) {
    std::vector<TextDocumentEdit> documents;
    for (auto& doc : action->edit->documents) {
      if (doc.uri != notebook) {
        documents.push_back(std::move(doc));
        continue;
      }
      for (auto& e : doc.edits) {
        auto start = notebooks.cell_at(notebook, e.range.start.line);
        auto end = notebooks.cell_at(notebook, e.range.end.line);
        // An edit ending at the start of the next cell's first line ends its own cell.
        if (start && !(end && end->first == start->first) && e.range.end.character == 0 &&
            e.range.end.line == e.range.start.line + 1)
          end = std::pair{start->first, start->second + 1};
        if (!start || !end || end->first != start->first) return std::nullopt;
        std::uint32_t shift = e.range.start.line - start->second;
        TextEdit moved{{{start->second, e.range.start.character}, {e.range.end.line - shift, e.range.end.character}},
                       std::move(e.new_text)};
        auto it = std::find_if(documents.begin(), documents.end(), [&](const auto& d) { return d.uri == start->first; });
        if (it == documents.end()) {
          documents.push_back({start->first, notebooks.cell_version(start->first), {}});
          it = documents.end() - 1;
        }
        it->edits.push_back(std::move(moved));
      }
    }
    action->edit->documents = std::move(documents);
  }
  return item;
}

}  // namespace

void Server::open_notebook_script(const std::string& uri, std::string text) {
  // The script's versions are the server's own: each change of any cell is one.
  auto snapshot = documents_.open(uri, "python", ++notebook_script_versions_[uri], std::move(text));
  AnalysisSlot& slot = analyses_[uri];
  slot.segmented.reset();
  slot.edits.clear();
  ++slot.opening;
  schedule_analysis(snapshot);
}

void Server::notebook_did_open(NotebookOpenParams params) {
  std::string uri = params.uri;
  open_notebook_script(uri, notebooks_.open(std::move(params)));
}

void Server::notebook_did_change(NotebookChangeParams params) {
  std::string uri = params.uri;
  std::vector<std::string> closed = params.closed;
  auto text = notebooks_.change(std::move(params));
  if (!text) return;
  // Cells deleted: their diagnostics go with them.
  if (push_cell_diagnostics())
    for (const auto& cell : closed) notify("textDocument/publishDiagnostics", PublishDiagnosticsParams{cell, std::nullopt, {}});
  open_notebook_script(uri, std::move(*text));
}

void Server::notebook_did_close(const NotebookCloseParams& params) {
  auto cells = notebooks_.close(params.uri);
  documents_.close(params.uri);
  notebook_script_versions_.erase(params.uri);
  if (auto it = analyses_.find(params.uri); it != analyses_.end()) {
    if (it->second.cancel) it->second.cancel->store(true);
    for (auto& [p, then] : it->second.waiting) reply_error(p, ContentModified, "the notebook was closed");
    analyses_.erase(it);
  }
  if (push_cell_diagnostics())
    for (const auto& c : cells) notify("textDocument/publishDiagnostics", PublishDiagnosticsParams{c.uri, std::nullopt, {}});
}

void Server::publish_notebook(const DocumentAnalysis& a) {
  const std::string& notebook = a.doc->uri;
  for (const auto& cell : notebooks_.cells(notebook)) {
    std::vector<Diagnostic> diagnostics;
    if (cell.code)
      for (const auto& d : a.diagnostics)
        if (auto moved = cell_diagnostic(notebooks_, notebook, d, cell.uri)) diagnostics.push_back(std::move(*moved));
    notify("textDocument/publishDiagnostics",
           PublishDiagnosticsParams{cell.uri, notebooks_.cell_version(cell.uri), std::move(diagnostics)});
  }
}

bool Server::pull_cell_diagnostics(const std::string& cell, const Reply<DocumentDiagnosticReport>& reply) {
  auto place = notebooks_.placement(cell);
  if (!place) return false;
  std::string notebook = place->notebook;
  if (!cells_pulled_ && client_.pull_diagnostics) {
    // The client pulls cells after all: what was pushed to them goes, so
    // that no cell shows its diagnostics twice (pushed and pulled).
    cells_pulled_ = true;
    for (const auto& nb : notebooks_.uris())
      for (const auto& c : notebooks_.cells(nb))
        notify("textDocument/publishDiagnostics", PublishDiagnosticsParams{c.uri, std::nullopt, {}});
  }
  with_analysis(reply.request(), notebook, [this, reply, notebook, cell](const DocumentAnalysis& a) {
    std::vector<Diagnostic> diagnostics;
    for (const auto& d : a.diagnostics)
      if (auto moved = cell_diagnostic(notebooks_, notebook, d, cell)) diagnostics.push_back(std::move(*moved));
    reply(DocumentDiagnosticReport{false, fmt::format("{}.{}", a.doc->version, analyses_.at(notebook).serial),
                                   std::move(diagnostics)});
  });
  return true;
}

bool Server::cell_code_action(CodeActionParams& params, const Reply<std::vector<CodeActionItem>>& reply) {
  auto place = notebooks_.placement(params.text_document.uri);
  if (!place) return false;
  params.text_document.uri = place->notebook;
  // The diagnostics' refs name the script's analysis already (their data came from it).
  if (params.range) params.range = to_script(*params.range, place->first_line);
  with_analysis(reply.request(), place->notebook, [this, reply, params = std::move(params)](const DocumentAnalysis& a) {
    // Edits on cells are made now: a resolve later would name the script.
    ClientCapabilities eager = client_;
    eager.resolve_edit = false;
    ActionContext context{eager, [this](const std::string& uri) { return documents_.get(uri); }};
    std::vector<CodeActionItem> out;
    for (auto& item : features_for(a.doc->kind).code_actions(a, params, context))
      if (auto moved = cell_action(notebooks_, a.doc->uri, std::move(item))) out.push_back(std::move(*moved));
    reply(out);
  });
  return true;
}

}  // namespace oomlens::lsp
