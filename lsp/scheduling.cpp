// The analyses of documents: every version is analysed off the protocol
// thread, one at a time per document; a newer version cancels the older
// analysis and the requests that waited for it are answered as superseded
// (a pull: ServerCancelled with retriggerRequest; others: ContentModified);
// after a settings change, the same text's new analysis answers them.
#include <utility>

#include <fmt/format.h>

#include "lsp/document_features.hpp"
#include "lsp/job_analysis.hpp"
#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::schedule_analysis(const DocumentSnapshot& doc) {
  AnalysisSlot& slot = analyses_[doc->uri];
  if (slot.cancel) slot.cancel->store(true);
  // Requests waiting for an older version will never get it. The same text
  // analysed again (the settings changed) answers them instead: a pull
  // failed here would leave a client that does not re-pull on refresh with
  // no diagnostics at all, and the newer analysis is the better answer.
  const bool same_text = slot.version == doc->version && slot.serial != 0;
  if (!same_text) {
    for (auto& [p, then] : slot.waiting) reply_superseded(p);
    slot.waiting.clear();
  }
  slot.version = doc->version;
  slot.serial = ++analysis_serial_;
  slot.ready.reset();
  slot.cancel = std::make_shared<std::atomic<bool>>(false);

  // One analysis of a document at a time. A version that arrives while one
  // runs waits for it (the running one, cancelled, stops at its next check)
  // and then the latest is analysed: a burst of keystrokes queues no
  // analysis that holds its own copy of a large text, and a large log's
  // first, whole read (which runs to its end: its segments serve every later
  // version) is never started twice.
  if (slot.running) {
    slot.rerun = true;
    return;
  }
  start_analysis(slot, doc);
}

void Server::start_analysis(AnalysisSlot& slot, const DocumentSnapshot& doc) {
  LogBase base = log_base(slot, doc);
  const bool whole = doc->kind == DocumentKind::log && doc->text.size() >= kSegmentedLogBytes && !base.log;
  slot.running = slot.serial;
  auto cancel = slot.cancel;
  Settings settings = settings_;
  PositionEncoding encoding = client_.encoding;
  // Large documents report progress, on a token the client created for us;
  // reports start only once the client has acknowledged the token.
  struct Progress {
    std::string token;
    bool begun = false;
    bool ended = false;  // the analysis finished: a late acknowledgement starts nothing
  };
  std::shared_ptr<Progress> progress_state;
  // An update of a segmented log reads a few megabytes: no progress for it.
  if (client_.work_done_progress && doc->text.size() >= settings.progress_threshold_bytes && !base.log) {
    progress_state = std::make_shared<Progress>();
    progress_state->token = fmt::format("oomlens-analysis-{}", ++progress_tokens_);
    send_request("window/workDoneProgress/create", WorkDoneProgressCreateParams{progress_state->token},
                 [this, progress_state](const Response& r) {
                   if (r.error || progress_state->ended) return;
                   progress_state->begun = true;
                   notify("$/progress", ProgressParams{progress_state->token, "begin", "oomlens: analysing log", 0});
                 });
  }
  auto progress = [this, progress_state](double fraction) {
    if (!progress_state) return;
    io_.run_on_protocol([this, progress_state, fraction] {
      if (!progress_state->begun || progress_state->ended) return;
      notify("$/progress",
             ProgressParams{progress_state->token, "report", std::nullopt, static_cast<int>(fraction * 100)});
    });
  };
  // A file of a job is read with the others (job_analysis.hpp), the open
  // ones as the editor holds them, taken now on this thread.
  auto job_documents = open_job_documents(*doc, documents_);
  std::optional<ProjectMember> project;
  if (projects_ && doc->kind == DocumentKind::python) project = projects_->member_of(doc->uri);
  io_.run_in_background([this, doc, settings, encoding, cancel, progress, progress_state, previous = slot.last,
                         base = std::move(base), opening = slot.opening, whole, serial = slot.serial,
                         job_documents = std::move(job_documents), project = std::move(project)] {
    static const std::atomic<bool> never{false};
    const std::atomic<bool>& stop = whole ? never : *cancel;
    auto analysis = analyze_job_document(doc, job_documents, settings, encoding, stop, progress);
    if (!analysis) analysis = analyze_document(doc, settings, encoding, stop, progress, previous, base, project);
    io_.run_on_protocol([this, analysis, progress_state, cancel, opening, serial] {
      if (progress_state) {
        if (progress_state->begun) notify("$/progress", ProgressParams{progress_state->token, "end"});
        progress_state->ended = true;  // no report may follow the end
      }
      // Even a superseded analysis leaves its version's segments for the next.
      keep_segmented(*analysis, opening);
      // The next version, if one came meanwhile (not after a close and a
      // new open: that slot runs its own).
      if (auto it = analyses_.find(analysis->doc->uri); it != analyses_.end() && it->second.running == serial) {
        it->second.running = 0;
        if (std::exchange(it->second.rerun, false))
          if (auto current = documents_.get(analysis->doc->uri)) start_analysis(it->second, current);
      }
      // Superseded, closed or shut down after its last cancellation check:
      // drop it. The version check in on_analysis_done is not enough, since a
      // settings change re-analyses the same version and the old-settings
      // result could otherwise be taken for the new one.
      if (cancel->load()) return;
      on_analysis_done(analysis);
    });
  });
}

LogBase Server::log_base(const AnalysisSlot& slot, const DocumentSnapshot& doc) const {
  if (doc->kind != DocumentKind::log || !slot.segmented || slot.segmented_version > doc->version) return {};
  LogBase base{slot.segmented, std::nullopt};
  for (const auto& [version, edit] : slot.edits) {
    if (version <= slot.segmented_version || version > doc->version) continue;
    base.edit = base.edit ? analyzer::compose(*base.edit, edit) : edit;
  }
  // Changed but no edit recorded for it: the text cannot be matched up.
  if (!base.edit && slot.segmented_version != doc->version) return {};
  return base;
}

void Server::keep_segmented(const DocumentAnalysis& analysis, std::uint64_t opening) {
  auto it = analyses_.find(analysis.doc->uri);
  if (!analysis.segmented || it == analyses_.end()) return;
  AnalysisSlot& slot = it->second;
  if (slot.opening != opening || analysis.segmented->incomplete()) return;
  if (slot.segmented && slot.segmented_version >= analysis.doc->version) return;
  slot.segmented = analysis.segmented;
  slot.segmented_version = analysis.doc->version;
  std::erase_if(slot.edits, [&](const auto& e) { return e.first <= slot.segmented_version; });
}

void Server::on_analysis_done(const std::shared_ptr<const DocumentAnalysis>& analysis) {
  auto it = analyses_.find(analysis->doc->uri);
  // Superseded or closed while it ran: drop it.
  if (analysis->cancelled || it == analyses_.end() || it->second.version != analysis->doc->version) return;
  AnalysisSlot& slot = it->second;
  slot.ready = analysis;
  // Kept for the next version's incremental parse; a log's analysis is not
  // kept (it would hold a second copy of a large text while the next runs).
  slot.last = analysis->script ? analysis : nullptr;
  log_job_messages(slot, *analysis);
  if (!client_.pull_diagnostics || (notebooks_.is_notebook(analysis->doc->uri) && push_cell_diagnostics()))
    publish(*analysis);
  auto waiting = std::move(slot.waiting);
  slot.waiting.clear();
  for (auto& [p, then] : waiting) {
    if (p->answered) continue;
    try {
      then(*analysis);
    } catch (const std::exception& e) {
      reply_error(p, InternalError, e.what());
    }
  }
}

void Server::with_analysis(const PendingPtr& p, const std::string& uri, std::function<void(const DocumentAnalysis&)> then) {
  auto it = analyses_.find(uri);
  if (it == analyses_.end()) {
    reply_error(p, InvalidParams, fmt::format("document not open: {}", uri));
    return;
  }
  if (it->second.ready) {
    then(*it->second.ready);
    return;
  }
  it->second.waiting.emplace_back(p, std::move(then));
}

}  // namespace oomlens::lsp
