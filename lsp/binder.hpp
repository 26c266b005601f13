// Typed handlers bound to JSON-RPC methods (as clangd's LSPBinder): a handler
// takes its params as a protocol struct and answers through a Reply of its
// result type; reading the params (a malformed one throws ParamsError) and
// writing the result happen here, once for every method.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "lsp/protocol.hpp"

namespace oomlens::lsp {

// A request the client sent and the server still owes an answer to.
struct PendingRequest {
  nlohmann::json id;
  std::string method;
  bool answered = false;
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
};
using PendingPtr = std::shared_ptr<PendingRequest>;

// Where answers go: the server sends them and forgets the request. Either
// may be called after the request was answered (cancelled): then nothing
// is sent.
struct ReplySink {
  std::function<void(const PendingPtr&, nlohmann::json)> result;
  std::function<void(const PendingPtr&, int, std::string_view)> error;
};

// The answer owed to one request, of result type R. Copies share the
// request: the first answer counts, later ones are dropped.
template <class R>
class Reply {
 public:
  Reply(PendingPtr request, const ReplySink* sink) : request_(std::move(request)), sink_(sink) {}
  void operator()(const R& result) const {
    sink_->result(request_, nlohmann::json(result));
  }
  void error(int code, std::string_view message) const { sink_->error(request_, code, message); }
  // The request, for waiting on an analysis and for cancellation.
  const PendingPtr& request() const { return request_; }
  bool cancelled() const { return request_->cancelled->load(); }

 private:
  PendingPtr request_;
  const ReplySink* sink_;
};

class Binder {
 public:
  explicit Binder(ReplySink sink) : sink_(std::move(sink)) {}

  // A handler takes its params by value (to keep them) or by const
  // reference, and its reply by const reference (copies share the request).
  template <class P, class Result, class Owner>
  void request(std::string method, Owner* owner, void (Owner::*handler)(P, const Reply<Result>&)) {
    requests_[std::move(method)] = [this, owner, handler](nlohmann::json& raw, const PendingPtr& p) {
      std::remove_cvref_t<P> params;
      read(raw, params);
      (owner->*handler)(std::move(params), Reply<Result>(p, &sink_));
    };
  }

  template <class P, class Owner>
  void notification(std::string method, Owner* owner, void (Owner::*handler)(P)) {
    notifications_[std::move(method)] = [owner, handler](nlohmann::json& raw) {
      std::remove_cvref_t<P> params;
      read(raw, params);
      (owner->*handler)(std::move(params));
    };
  }

  bool has_request(std::string_view method) const { return requests_.find(method) != requests_.end(); }
  // Runs the handler of a bound request; throws what reading or the handler throws.
  void call(std::string_view method, nlohmann::json& params, const PendingPtr& p) const {
    requests_.find(method)->second(params, p);
  }
  // Runs the handler of a notification; false when none is bound (ignored).
  bool notify(std::string_view method, nlohmann::json& params) const {
    auto it = notifications_.find(method);
    if (it == notifications_.end()) return false;
    it->second(params);
    return true;
  }

 private:
  ReplySink sink_;
  std::map<std::string, std::function<void(nlohmann::json&, const PendingPtr&)>, std::less<>> requests_;
  std::map<std::string, std::function<void(nlohmann::json&)>, std::less<>> notifications_;
};

}  // namespace oomlens::lsp
