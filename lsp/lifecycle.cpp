// Lifecycle: initialize first, shutdown then exit (the spec's order), and
// cancellation of requests in flight.
#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::initialize(InitializeParams params, const Reply<InitializeResult>& reply) {
  // A second initialize never gets here (on_request answers it).
  client_ = params.capabilities;
  workspace_folders_ = std::move(params.workspace_folders);
  projects_ = std::make_unique<WorkspaceProjects>(workspace_folders_);
  documents_.set_position_encoding(client_.encoding);
  notebooks_.set_position_encoding(client_.encoding);
  if (params.settings) apply_settings(*params.settings);
  phase_ = Phase::running;
  reply(InitializeResult{client_, OOMLENS_VERSION});
}

void Server::initialized(NoParams) {
  if (client_.configuration) request_configuration();
  register_file_watchers();
}

void Server::shutdown(NoParams, const Reply<std::nullptr_t>& reply) {
  const PendingPtr& p = reply.request();
  shutdown_requested_ = true;
  phase_ = Phase::shut_down;
  for (auto& [uri, slot] : analyses_)
    if (slot.cancel) slot.cancel->store(true);
  // The cancelled analyses will never run their waiting requests (nor will a
  // background diagnoseText be wanted): answer everything still owed now,
  // before the shutdown reply, so every request is answered exactly once.
  auto owed = pending_;  // reply_error erases from pending_
  for (auto& [key, other] : owed) {
    if (other == p) continue;
    other->cancelled->store(true);
    reply_error(other, RequestFailed, "the server is shutting down");
  }
  for (auto& [uri, slot] : analyses_) slot.waiting.clear();
  reply(nullptr);
}

void Server::exit_notification(NoParams) { finished_ = true; }

void Server::cancel_request(CancelParams params) {
  if (!params.id) return;
  auto it = pending_.find(params.id->dump());
  if (it == pending_.end()) return;  // already answered: nothing to do
  auto p = it->second;
  p->cancelled->store(true);
  reply_error(p, RequestCancelled, "request cancelled");
}

void Server::set_trace(NoParams) {}

}  // namespace oomlens::lsp
