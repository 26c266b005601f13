// textDocument/hover: what the features of the document's kind say at the
// position, as Markdown when the client shows it.
#include "lsp/document_features.hpp"
#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::hover(HoverParams params, Reply<std::optional<Hover>> reply) {
  with_analysis(reply.request(), params.text_document.uri, [this, reply, position = params.position](const DocumentAnalysis& a) {
    if (!position) return reply(std::nullopt);  // not a position: nothing there
    reply(features_for(a.doc->kind).hover(a, *position, client_.markdown_hover));
  });
}

}  // namespace oomlens::lsp
