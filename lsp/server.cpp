// Dispatch and lifecycle: every request is answered exactly once; nothing but
// errors goes out before initialize; shutdown/exit per the spec.
#include "lsp/server.hpp"

#include <fmt/format.h>

#include "lsp/params.hpp"

namespace oomlens::lsp {

using nlohmann::json;

Server::Server(ServerIo io) : io_(std::move(io)) {}
Server::~Server() = default;

namespace {

// Only a document's text (didOpen, a full didChange) may take the framing's
// whole limit; anything else this large is skipped as an oversized frame
// always was, unanswered.
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
    io_.log(fmt::format("message of {} bytes skipped: only a document's text may be larger than {} MiB", body_bytes,
                        kMaxMessageBytes >> 20));
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

void Server::on_framing_error(std::string_view description) {
  // No id can be read from a broken frame, so there is no one to answer.
  io_.log(fmt::format("framing error, skipped: {}", description));
}

void Server::on_input_end() {
  // The client went away: stop, with the status that says whether it asked
  // for a shutdown first.
  for (auto& [uri, slot] : analyses_)
    if (slot.cancel) slot.cancel->store(true);
  finished_ = true;
}

void Server::on_request(Request request) {
  static const std::map<std::string, Handler, std::less<>> handlers = {
      {"initialize", &Server::initialize},
      {"shutdown", &Server::shutdown},
      {"textDocument/diagnostic", &Server::pull_diagnostics},
      {"textDocument/hover", &Server::hover},
      {"textDocument/codeAction", &Server::code_action},
      {"codeAction/resolve", &Server::code_action_resolve},
      {"workspace/executeCommand", &Server::execute_command},
  };
  auto p = std::make_shared<Pending>();
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
  if (phase_ == Phase::shut_down) {
    reply_error(p, InvalidRequest, "the server is shutting down");
    return;
  }
  auto it = handlers.find(request.method);
  if (it == handlers.end()) {
    reply_error(p, MethodNotFound, fmt::format("unknown method '{}'", request.method));
    return;
  }
  pending_[key] = p;
  try {
    (this->*(it->second))(p, request.params);
  } catch (const ParamsError& e) {
    reply_error(p, InvalidParams, e.what());
  } catch (const std::exception& e) {
    reply_error(p, InternalError, fmt::format("internal error in {}: {}", request.method, e.what()));
  }
}

void Server::on_notification(Notification& n) {
  static const std::map<std::string, NotificationHandler, std::less<>> handlers = {
      {"initialized", &Server::initialized},
      {"exit", &Server::exit_notification},
      {"$/cancelRequest", &Server::cancel_request},
      {"$/setTrace", &Server::set_trace},
      {"textDocument/didOpen", &Server::did_open},
      {"textDocument/didChange", &Server::did_change},
      {"textDocument/didClose", &Server::did_close},
      {"textDocument/didSave", &Server::did_save},
      {"workspace/didChangeConfiguration", &Server::did_change_configuration},
  };
  // Before initialize only "exit" counts; unknown notifications are ignored.
  if (phase_ == Phase::uninitialized && n.method != "exit") return;
  auto it = handlers.find(n.method);
  if (it == handlers.end()) return;
  string_lines_ = &n.string_lines;
  try {
    (this->*(it->second))(n.params);
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

void Server::send_request(std::string_view method, json params, std::function<void(const Response&)> on_reply) {
  json id = fmt::format("oomlens-{}", next_outgoing_id_++);
  outgoing_[id.dump()] = std::move(on_reply);
  io_.send(make_request(id, method, std::move(params)));
}

void Server::notify(std::string_view method, json params) { io_.send(make_notification(method, std::move(params))); }

void Server::initialize(const PendingPtr& p, json& params) {
  if (phase_ != Phase::uninitialized) {
    reply_error(p, InvalidRequest, "initialize was already received");
    return;
  }
  if (!params.is_object()) throw ParamsError("initialize expects an object");
  client_ = read_client_capabilities(params);
  documents_.set_position_encoding(client_.encoding);
  if (params.contains("initializationOptions")) {
    const json& opts = params["initializationOptions"];
    apply_settings(opts.is_object() && opts.contains("oomlens") ? opts["oomlens"] : opts);
  }
  phase_ = Phase::running;
  reply(p, {{"capabilities", server_capabilities(client_)},
            {"serverInfo", {{"name", "oomlens"}, {"version", OOMLENS_VERSION}}}});
}

void Server::initialized(json&) {
  if (client_.configuration) request_configuration();
}

void Server::shutdown(const PendingPtr& p, json&) {
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
  reply(p, nullptr);
}

void Server::exit_notification(json&) { finished_ = true; }

void Server::cancel_request(json& params) {
  if (!params.is_object() || !params.contains("id")) return;
  auto it = pending_.find(params["id"].dump());
  if (it == pending_.end()) return;  // already answered: nothing to do
  auto p = it->second;
  p->cancelled->store(true);
  reply_error(p, RequestCancelled, "request cancelled");
}

void Server::set_trace(json&) {}

}  // namespace oomlens::lsp
