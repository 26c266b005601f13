// textDocument/codeAction and codeAction/resolve: the actions the features of
// the document's kind offer, and the parts a lazily resolving client asks
// for later.
#include "lsp/document_features.hpp"
#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::code_action(CodeActionParams params, const Reply<std::vector<CodeActionItem>>& reply) {
  if (!documents_.get(params.text_document.uri) && cell_code_action(params, reply)) return;
  std::string uri = params.text_document.uri;
  with_analysis(reply.request(), uri, [this, reply, params = std::move(params)](const DocumentAnalysis& a) {
    ActionContext context{client_, [this](const std::string& uri) { return documents_.get(uri); }};
    reply(features_for(a.doc->kind).code_actions(a, params, context));
  });
}

void Server::code_action_resolve(CodeActionResolveParams params, const Reply<nlohmann::json>& reply) {
  std::string uri = params.uri;
  with_analysis(reply.request(), uri, [this, reply, params = std::move(params)](const DocumentAnalysis& a) mutable {
    auto parts = features_for(a.doc->kind).resolve(a, params, client_);
    if (!parts)
      reply.error(ContentModified, "the document changed since this action was offered");
    else
      reply(resolved_action(std::move(params.action), *parts));
  });
}

}  // namespace oomlens::lsp
