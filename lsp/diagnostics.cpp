// Diagnostics, pulled (textDocument/diagnostic) when the client declares it,
// else pushed (publishDiagnostics) as each analysis finishes: never both for
// one document. Notebook cells are pushed until the client pulls one (see
// Server::cells_pulled_).
#include <fmt/format.h>

#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::pull_diagnostics(DocumentDiagnosticParams params, const Reply<DocumentDiagnosticReport>& reply) {
  const std::string& uri = params.text_document.uri;
  if (!documents_.get(uri) && pull_cell_diagnostics(uri, reply)) return;
  if (!documents_.get(uri)) {
    // Not open (or closed meanwhile): nothing to report, and nothing stale.
    reply(DocumentDiagnosticReport{});
    return;
  }
  with_analysis(reply.request(), uri, [this, reply, previous = std::move(params.previous_result_id), uri](const DocumentAnalysis& a) {
    // Version and analysis serial: after a settings change the same version
    // has other diagnostics (fix titles in data), and a resultId of the
    // version alone would have answered "unchanged" to the client's old id.
    // The callback runs while the slot holds exactly this analysis.
    std::string result_id = fmt::format("{}.{}", a.doc->version, analyses_.at(uri).serial);
    if (!previous.empty() && previous == result_id)
      reply(DocumentDiagnosticReport{true, result_id, {}});
    else
      reply(DocumentDiagnosticReport{false, result_id, a.diagnostics});
  });
}

void Server::publish(const DocumentAnalysis& analysis) {
  if (notebooks_.is_notebook(analysis.doc->uri)) {
    publish_notebook(analysis);
    return;
  }
  notify("textDocument/publishDiagnostics",
         PublishDiagnosticsParams{analysis.doc->uri, analysis.doc->version, analysis.diagnostics});
}

}  // namespace oomlens::lsp
