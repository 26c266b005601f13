// Dispatch: every request is answered exactly once; nothing but errors goes
// out before initialize. The method table is the binder's (bind_methods).
#include "lsp/server.hpp"

#include <fmt/format.h>

namespace oomlens::lsp {

using nlohmann::json;

Server::Server(ServerIo io)
    : io_(std::move(io)),
      binder_(ReplySink{[this](const PendingPtr& p, nlohmann::json result) { reply(p, std::move(result)); },
                        [this](const PendingPtr& p, int code, std::string_view message) {
                          reply_error(p, code, message);
                        }}) {
  bind_methods();
}
Server::~Server() = default;

namespace {

// Only a document's text (didOpen, a full didChange) may take the framing's
// whole limit; anything else this large is not handled: a request gets an
// error naming the limit (its id was read), a notification is dropped.
constexpr std::size_t kMaxMessageBytes = 64 * 1024 * 1024;

bool may_be_large(const Message& message) {
  const auto* n = std::get_if<Notification>(&message);
  return n && (n->method == "textDocument/didOpen" || n->method == "textDocument/didChange");
}

}  // namespace

void Server::on_message(std::string_view body) { dispatch(parse_message(body), body.size()); }

void Server::on_message(IncrementalMessage& body) { dispatch(body.finish(), body.size()); }

void Server::dispatch(Message message, std::size_t body_bytes) {
  if (body_bytes > kMaxMessageBytes && !may_be_large(message)) {
    std::string why = fmt::format("message of {} bytes not handled: only a document's text may be larger than {} MiB",
                                  body_bytes, kMaxMessageBytes >> 20);
    io_.log(why);
    // The client would otherwise wait for the answer forever.
    if (auto* r = std::get_if<Request>(&message)) io_.send(make_error(r->id, RequestFailed, why));
    return;
  }
  if (auto* r = std::get_if<Request>(&message)) {
    on_request(std::move(*r));
  } else if (auto* n = std::get_if<Notification>(&message)) {
    on_notification(*n);
  } else if (auto* resp = std::get_if<Response>(&message)) {
    on_response(*resp);
  } else if (auto* bad = std::get_if<Invalid>(&message)) {
    io_.log(fmt::format("invalid message: {}", bad->message));
    if (bad->reply_owed) io_.send(make_error(bad->id, bad->code, bad->message));
  }
}

void Server::on_framing_error(std::string_view description, const std::optional<std::string>& skipped_request_id) {
  io_.log(fmt::format("framing error, skipped: {}", description));
  // A broken frame has no id to answer; a body skipped for its size may.
  if (!skipped_request_id) return;
  auto id = nlohmann::json::parse(*skipped_request_id, nullptr, /*allow_exceptions=*/false);
  if (id.is_number_integer() || id.is_string()) io_.send(make_error(id, RequestFailed, description));
}

void Server::on_input_end() {
  // The client went away: stop, with the status that says whether it asked
  // for a shutdown first.
  for (auto& [uri, slot] : analyses_)
    if (slot.cancel) slot.cancel->store(true);
  finished_ = true;
}

void Server::bind_methods() {
  binder_.request("initialize", this, &Server::initialize);
  binder_.request("shutdown", this, &Server::shutdown);
  binder_.request("textDocument/diagnostic", this, &Server::pull_diagnostics);
  binder_.request("textDocument/hover", this, &Server::hover);
  binder_.request("textDocument/inlayHint", this, &Server::inlay_hint);
  binder_.request("textDocument/codeAction", this, &Server::code_action);
  binder_.request("codeAction/resolve", this, &Server::code_action_resolve);
  binder_.request("workspace/executeCommand", this, &Server::execute_command);

  binder_.notification("initialized", this, &Server::initialized);
  binder_.notification("exit", this, &Server::exit_notification);
  binder_.notification("$/cancelRequest", this, &Server::cancel_request);
  binder_.notification("$/setTrace", this, &Server::set_trace);
  binder_.notification("textDocument/didOpen", this, &Server::did_open);
  binder_.notification("textDocument/didChange", this, &Server::did_change);
  binder_.notification("textDocument/didClose", this, &Server::did_close);
  binder_.notification("textDocument/didSave", this, &Server::did_save);
  binder_.notification("notebookDocument/didOpen", this, &Server::notebook_did_open);
  binder_.notification("notebookDocument/didChange", this, &Server::notebook_did_change);
  binder_.notification("notebookDocument/didClose", this, &Server::notebook_did_close);
  binder_.notification("workspace/didChangeConfiguration", this, &Server::did_change_configuration);
  binder_.notification("workspace/didChangeWatchedFiles", this, &Server::did_change_watched_files);
}

void Server::on_request(Request request) {
  auto p = std::make_shared<PendingRequest>();
  p->id = request.id;
  p->method = request.method;
  std::string key = request.id.dump();
  if (pending_.count(key)) {
    reply_error(p, InvalidRequest, "a request with this id is still in progress");
    return;
  }
  if (phase_ == Phase::uninitialized && request.method != "initialize") {
    reply_error(p, ServerNotInitialized, "the server has not been initialized");
    return;
  }
  if (phase_ != Phase::uninitialized && request.method == "initialize") {
    reply_error(p, InvalidRequest, "initialize was already received");
    return;
  }
  if (phase_ == Phase::shut_down) {
    reply_error(p, InvalidRequest, "the server is shutting down");
    return;
  }
  if (!binder_.has_request(request.method)) {
    reply_error(p, MethodNotFound, fmt::format("unknown method '{}'", request.method));
    return;
  }
  pending_[key] = p;
  try {
    binder_.call(request.method, request.params, p);
  } catch (const ParamsError& e) {
    reply_error(p, InvalidParams, e.what());
  } catch (const std::exception& e) {
    reply_error(p, InternalError, fmt::format("internal error in {}: {}", request.method, e.what()));
  }
}

void Server::on_notification(Notification& n) {
  // Before initialize only "exit" counts; unknown notifications are ignored.
  if (phase_ == Phase::uninitialized && n.method != "exit") return;
  string_lines_ = &n.string_lines;
  try {
    binder_.notify(n.method, n.params);
  } catch (const std::exception& e) {
    io_.log(fmt::format("{} ignored: {}", n.method, e.what()));
  }
  string_lines_ = nullptr;
}

void Server::on_response(const Response& r) {
  auto it = outgoing_.find(r.id.dump());
  if (it == outgoing_.end()) return;
  auto callback = std::move(it->second);
  outgoing_.erase(it);
  if (callback) callback(r);
}

void Server::reply(const PendingPtr& p, json result) {
  if (p->answered) return;
  p->answered = true;
  pending_.erase(p->id.dump());
  io_.send(make_result(p->id, std::move(result)));
}

void Server::reply_error(const PendingPtr& p, int code, std::string_view message) {
  if (p->answered) return;
  p->answered = true;
  pending_.erase(p->id.dump());
  io_.send(make_error(p->id, code, message));
}

void Server::reply_superseded(const PendingPtr& p) {
  if (p->answered) return;
  if (p->method != "textDocument/diagnostic") {
    reply_error(p, ContentModified, "the document changed");
    return;
  }
  p->answered = true;
  pending_.erase(p->id.dump());
  io_.send(make_error(p->id, ServerCancelled, "the document changed: pull again", json(DiagnosticServerCancellationData{})));
}

void Server::send_request(std::string_view method, json params, std::function<void(const Response&)> on_reply) {
  json id = fmt::format("oomlens-{}", next_outgoing_id_++);
  outgoing_[id.dump()] = std::move(on_reply);
  io_.send(make_request(id, method, std::move(params)));
}

void Server::notify(std::string_view method, json params) { io_.send(make_notification(method, std::move(params))); }

}  // namespace oomlens::lsp
