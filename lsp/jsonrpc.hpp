// JSON-RPC 2.0 as LSP uses it: one message per frame (no batches), ids that
// are integers or strings.
//
// parse_message() sorts a body into request, notification, response, or an
// Invalid that says which error reply is owed; it never throws, whatever the
// bytes. The make_* helpers build outgoing messages; serialize() turns them
// into text without throwing on invalid UTF-8 (log text copied into a
// message may hold some).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace oomlens::lsp {

enum ErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerNotInitialized = -32002,
  RequestCancelled = -32800,
  ContentModified = -32801,
  RequestFailed = -32803,
};

// An integer, a string, or null (only in error replies to unreadable messages).
using RequestId = nlohmann::json;

struct Request {
  RequestId id;
  std::string method;
  nlohmann::json params;  // object, array, or null when absent
};

struct Notification {
  std::string method;
  nlohmann::json params;  // object, array, or null when absent
};

struct ResponseError {
  int code = 0;
  std::string message;
  nlohmann::json data;  // null when absent
};

// A reply from the client to a request the server sent.
struct Response {
  RequestId id;  // null only in an error response
  nlohmann::json result;               // meaningful when !error
  std::optional<ResponseError> error;  // set for an error response
};

// A message that is not valid JSON-RPC: reply with make_error(id, code,
// message) when reply_owed.
struct Invalid {
  RequestId id;  // the message's id when one was readable, else null
  ErrorCode code = InvalidRequest;
  std::string message;
  // False for a malformed response: answering a response would start a
  // ping-pong with the client, so it is only logged.
  bool reply_owed = true;
};

using Message = std::variant<Request, Notification, Response, Invalid>;

Message parse_message(std::string_view body) noexcept;

nlohmann::json make_result(const RequestId& id, nlohmann::json result);
nlohmann::json make_error(const RequestId& id, int code, std::string_view message,
                          std::optional<nlohmann::json> data = std::nullopt);
// Params that are null are left out, as for "exit" or "workspace/diagnostic/refresh".
nlohmann::json make_notification(std::string_view method, nlohmann::json params = nullptr);
nlohmann::json make_request(const RequestId& id, std::string_view method, nlohmann::json params = nullptr);

// Compact JSON text; invalid UTF-8 in strings becomes U+FFFD instead of
// throwing.
std::string serialize(const nlohmann::json& message);

}  // namespace oomlens::lsp
