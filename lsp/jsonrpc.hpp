// JSON-RPC 2.0 as LSP uses it: one message per frame (no batches), ids that
// are integers or strings.
//
// parse_message() sorts a body into request, notification, response, or an
// Invalid that says which error reply is owed; it never throws, whatever the
// bytes. The make_* helpers build outgoing messages; serialize() turns them
// into text without throwing on invalid UTF-8 (log text copied into a
// message may hold some).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "lsp/framing.hpp"
#include "lsp/positions.hpp"

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
  ServerCancelled = -32802,
  RequestFailed = -32803,
};

// An integer, a string, or null (only in error replies to unreadable messages).
using RequestId = nlohmann::json;

struct Request {
  RequestId id;
  std::string method;
  nlohmann::json params;  // object, array, or null when absent
};

// Where the lines of a large string start, found while the reader unescaped
// it: a document made of that string (its bytes, moved) needs no pass over
// its text to index its lines. `data` and `size` say which string it is.
struct StringLines {
  const char* data = nullptr;
  std::size_t size = 0;
  LineStarts starts;
};

struct Notification {
  std::string method;
  nlohmann::json params;  // object, array, or null when absent
  std::vector<StringLines> string_lines;  // of its large strings, when the fast path read them
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

// Strings whose JSON text (the bytes between the quotes) is at least this
// long skip nlohmann's lexer, which reads a byte at a time: a document's text
// is validated and unescaped by unescape_json_string's fast routine instead,
// and spliced into the tree. Nothing else changes: the result, and the error
// of a body that is not JSON, are the same as nlohmann's.
inline constexpr std::size_t kLargeStringBytes = 4096;
// parse_message looks for large strings only in bodies at least this large:
// below, nlohmann reads the whole body in well under a millisecond, and a
// request (a code action carries its diagnostics back) should not pay for
// the look. An IncrementalMessage always looks.
inline constexpr std::size_t kFastPathBodyBytes = 64 * 1024;

// The value of a JSON string from its text between the quotes, or nullopt
// where strict JSON refuses it (as nlohmann does): an escape other than
// \" \\ \/ \b \f \n \r \t \uXXXX, a \u surrogate that is not half of a
// pair, a raw control character (below U+0020), an unescaped quote, or
// bytes that are not well-formed UTF-8.
std::optional<std::string> unescape_json_string(std::string_view raw);

// A message body read while it arrives (FrameReader hands large bodies to
// it): its large strings are validated and unescaped a piece at a time,
// while the rest of the body is still on its way, so that little is left to
// do once the last byte is in, and the body itself is never held whole.
class IncrementalMessage final : public BodySink {
 public:
  explicit IncrementalMessage(std::size_t length);
  ~IncrementalMessage() override;
  IncrementalMessage(const IncrementalMessage&) = delete;
  IncrementalMessage& operator=(const IncrementalMessage&) = delete;

  std::span<char> space(std::size_t max) override;
  void commit(std::size_t n) override;

  // The body's length.
  std::size_t size() const { return length_; }
  // The message, exactly as parse_message() reads the whole body. Call once,
  // after the whole body was committed.
  Message finish() noexcept;

  class Scanner;  // the fast path's state (jsonrpc.cpp); parse_message uses it too

 private:
  std::size_t length_;
  std::size_t received_ = 0;
  // The body passes through this window: its bytes are no longer needed
  // once the scanner has read them.
  std::unique_ptr<char[]> window_;
  std::size_t held_ = 0;  // bytes at its start the scanner left for later
  std::unique_ptr<Scanner> scanner_;
};

nlohmann::json make_result(const RequestId& id, nlohmann::json result);
nlohmann::json make_error(const RequestId& id, int code, std::string_view message,
                          std::optional<nlohmann::json> data = std::nullopt);
// Params that are null are left out, as for "exit" or "workspace/diagnostic/refresh".
nlohmann::json make_notification(std::string_view method, nlohmann::json params = nullptr);
nlohmann::json make_request(const RequestId& id, std::string_view method, nlohmann::json params = nullptr);

// Compact JSON text; invalid UTF-8 in strings becomes U+FFFD instead of
// throwing.
std::string serialize(const nlohmann::json& message);
// The same, appended to `out` (whose room can then serve many messages).
void serialize_to(const nlohmann::json& message, std::string& out);

}  // namespace oomlens::lsp
