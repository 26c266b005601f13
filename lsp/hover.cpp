// textDocument/hover: what the features of the document's kind say at the
// position, as Markdown when the client shows it.
#include "lsp/document_features.hpp"
#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::hover(const HoverParams& params, const Reply<std::optional<Hover>>& reply) {
  with_analysis(reply.request(), params.text_document.uri,
                [this, reply, position = params.position, uri = params.text_document.uri](const DocumentAnalysis& a) {
    if (!position) return reply(std::nullopt);  // not a position: nothing there
    std::optional<Hover> found = features_for(a.doc->kind).hover(a, *position, client_.markdown_hover);
    // The line's memory at a snapshot's peak, after what the features say.
    if (auto memory = snapshot_line_hover(uri, position->line))
      found = found ? Hover{found->markdown, found->value + "\n\n---\n\n" + memory->value} : memory;
    reply(found);
  });
}

}  // namespace oomlens::lsp
