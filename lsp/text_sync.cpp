// Text synchronization: didOpen, didChange, didClose. Each version of a
// document is analysed (scheduling.cpp); the open files of a job see each
// other's text (job_sync.cpp).
#include <utility>

#include <fmt/format.h>

#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::did_open(DidOpenParams params) {
  // The text moves from the message into the document: it can be 100 MiB.
  auto lines = take_string_lines(params.text);
  auto snapshot = documents_.open(std::move(params.uri), std::move(params.language_id), params.version,
                                  std::move(params.text), std::move(lines));
  // Opening replaces the text: nothing of an earlier opening's analysis applies.
  AnalysisSlot& slot = analyses_[snapshot->uri];
  slot.segmented.reset();
  slot.edits.clear();
  ++slot.opening;
  if (projects_ && snapshot->kind == DocumentKind::python) projects_->set_text(snapshot->uri, snapshot->text);
  schedule_analysis(snapshot);
  reanalyse_job_of(snapshot->uri);
  reanalyse_importers_of(snapshot->uri);
}

void Server::did_change(DidChangeParams params) {
  const std::string& uri = params.uri;
  const std::int64_t version = params.version;
  std::vector<TextChange> changes;
  for (auto& c : params.changes) {
    TextChange change;
    change.text = std::move(c.text);  // its buffer, which the line starts found by the reader name
    change.lines = take_string_lines(change.text);
    change.range = c.range;
    changes.push_back(std::move(change));
  }
  // The finished analysis of the version being replaced holds its text; let
  // go of it first so that the store can edit a large text in place.
  bool released = false;
  if (auto it = analyses_.find(uri); it != analyses_.end() && it->second.ready &&
                                     it->second.ready->doc->text.size() >= DocumentStore::kInPlaceFromBytes) {
    it->second.ready.reset();
    released = true;
  }
  auto result = documents_.change(uri, version, std::move(changes));
  if (!result) {
    // Analysed again (from its segments: at once), so that requests on the
    // unchanged text are answered.
    if (auto current = documents_.get(uri); released && current) schedule_analysis(current);
    // Applying part of an edit would silently corrupt the text: the client
    // must resend the document. Say so where the user can see it.
    io_.log(fmt::format("didChange for {} rejected: {}", uri, result.error));
    notify("window/logMessage", MessageParams{1, fmt::format("oomlens: change to {} rejected: {}", uri, result.error)});
    return;
  }
  if (result.edit) {
    AnalysisSlot& slot = analyses_[uri];
    slot.edits.emplace_back(version, *result.edit);
    // A log typed into for hours with no analysis finishing: start over
    // from a whole analysis rather than keep every keystroke.
    constexpr std::size_t kMaxEdits = 4096;
    if (slot.edits.size() > kMaxEdits) {
      slot.segmented.reset();
      slot.edits.clear();
      ++slot.opening;  // and a read under way for an earlier version has no edits to follow it
    }
  }
  if (projects_ && result.document->kind == DocumentKind::python) projects_->set_text(uri, result.document->text);
  schedule_analysis(result.document);
  reanalyse_job_of(uri);
  reanalyse_importers_of(uri);
}

void Server::did_close(const DidCloseParams& params) {
  const std::string& uri = params.text_document.uri;
  documents_.close(uri);
  if (auto it = analyses_.find(uri); it != analyses_.end()) {
    if (it->second.cancel) it->second.cancel->store(true);
    for (auto& [p, then] : it->second.waiting) reply_error(p, ContentModified, "the document was closed");
    analyses_.erase(it);
  }
  // Pushed diagnostics stay in the client until replaced: clear them.
  if (!client_.pull_diagnostics) notify("textDocument/publishDiagnostics", PublishDiagnosticsParams{uri, std::nullopt, {}});
  reanalyse_job_of(uri);  // the others now read it from disk
  if (projects_) projects_->drop_text(uri);
  reanalyse_importers_of(uri);
}

void Server::did_save(NoParams) {}

std::optional<LineStarts> Server::take_string_lines(const std::string& text) {
  if (!string_lines_) return std::nullopt;
  for (auto& found : *string_lines_) {
    if (found.data != text.data() || found.size != text.size() || found.starts.newline.empty()) continue;
    // Cheap checks that these are this text's lines: the ends of the first
    // and last few.
    const auto& starts = found.starts.newline;
    auto ends_a_line = [&](std::size_t start) {
      return start == 0 || (start <= text.size() && text[start - 1] == '\n');
    };
    bool plausible = starts.front() == 0;
    for (std::size_t k = 0; k < starts.size() && k < 8; ++k) plausible = plausible && ends_a_line(starts[k]);
    for (std::size_t k = starts.size() > 8 ? starts.size() - 8 : 0; k < starts.size(); ++k)
      plausible = plausible && ends_a_line(starts[k]);
    found.data = nullptr;  // taken
    if (plausible) return std::move(found.starts);
  }
  return std::nullopt;
}

}  // namespace oomlens::lsp
