// Open files of one job see each other's text: a change to one is a change
// to the job, so the others are analysed again (and pull clients told).
#include <algorithm>
#include <fmt/format.h>

#include "lsp/job_analysis.hpp"
#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::reanalyse_job_of(const std::string& uri) {
  std::string key = job_key_of_uri(uri);
  if (key.empty()) return;
  bool any = false;
  for (const auto& doc : documents_.all()) {
    if (doc->uri == uri || doc->kind != DocumentKind::log || job_key_of_uri(doc->uri) != key) continue;
    schedule_analysis(doc);
    any = true;
  }
  if (any && client_.pull_diagnostics && client_.diagnostic_refresh)
    send_request("workspace/diagnostic/refresh", nullptr, nullptr);
}

void Server::log_job_messages(AnalysisSlot& slot, const DocumentAnalysis& analysis) {
  // Every keystroke analyses the job again: say each thing once, not on
  // every analysis, and again only after it went away and came back.
  for (const auto& message : analysis.job_messages)
    if (std::find(slot.job_messages.begin(), slot.job_messages.end(), message) == slot.job_messages.end())
      notify("window/logMessage", MessageParams{2, fmt::format("oomlens: {}", message)});
  slot.job_messages = analysis.job_messages;
}

}  // namespace oomlens::lsp
