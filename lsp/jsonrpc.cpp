#include "lsp/jsonrpc.hpp"

#include <algorithm>
#include <cstdint>
#include <new>

namespace oomlens::lsp {
namespace {

using nlohmann::json;

bool valid_id(const json& id) { return id.is_number_integer() || id.is_string(); }

// Explicit null params are accepted as absent: some clients send
// "params": null for shutdown and exit.
bool valid_params(const json& message) {
  auto it = message.find("params");
  return it == message.end() || it->is_object() || it->is_array() || it->is_null();
}

json params_of(json& message) {
  auto it = message.find("params");
  return it == message.end() ? json() : std::move(*it);
}

// nlohmann's description without its "[json.exception...] " tag and the
// "; last read: '...'" tail, which echoes the offending (possibly invalid
// UTF-8) bytes back.
std::string describe(const json::parse_error& error) {
  std::string text = error.what();
  if (auto tail = text.find("; last read:"); tail != std::string::npos) text.erase(tail);
  if (text.starts_with("[json.exception")) {
    if (auto tag_end = text.find("] "); tag_end != std::string::npos) text.erase(0, tag_end + 2);
  }
  return text;
}

Message parse_response(json& message, const json& id, bool id_ok) {
  auto invalid = [&](std::string why) {
    return Invalid{id_ok ? id : json(), InvalidRequest, std::move(why), /*reply_owed=*/false};
  };
  bool has_result = message.contains("result");
  auto error_it = message.find("error");
  if (has_result == (error_it != message.end())) {
    return invalid("a response must have exactly one of \"result\" and \"error\"");
  }
  // An error response may carry a null id (the client could not read ours).
  bool null_id_ok = !has_result && message.contains("id") && message["id"].is_null();
  if (!id_ok && !null_id_ok) return invalid("a response needs an integer or string \"id\"");

  Response response{id_ok ? id : json(), nullptr, std::nullopt};
  if (has_result) {
    response.result = std::move(message["result"]);
    return response;
  }
  const json& error = *error_it;
  if (!error.is_object()) return invalid("\"error\" must be an object");
  auto code = error.find("code");
  auto text = error.find("message");
  if (code == error.end() || !code->is_number_integer()) return invalid("\"error.code\" must be an integer");
  if (text == error.end() || !text->is_string()) return invalid("\"error.message\" must be a string");
  // Codes are 32-bit in LSP; a wider one is kept saturated rather than rejected.
  auto wide = code->is_number_unsigned() ? static_cast<std::int64_t>(std::min<std::uint64_t>(code->get<std::uint64_t>(), INT32_MAX))
                                         : code->get<std::int64_t>();
  ResponseError parsed;
  parsed.code = static_cast<int>(std::clamp<std::int64_t>(wide, INT32_MIN, INT32_MAX));
  parsed.message = text->get<std::string>();
  if (auto data = error.find("data"); data != error.end()) parsed.data = *data;
  response.error = std::move(parsed);
  return response;
}

Message parse_unchecked(std::string_view body) {
  json message;
  try {
    message = json::parse(body.begin(), body.end());
  } catch (const json::parse_error& error) {
    return Invalid{nullptr, ParseError, describe(error)};
  }
  if (!message.is_object()) {
    return Invalid{nullptr, InvalidRequest,
                   message.is_array() ? "batches are not supported by LSP" : "message is not a JSON object"};
  }

  json id;
  bool id_ok = false;
  if (auto it = message.find("id"); it != message.end() && valid_id(*it)) {
    id = *it;
    id_ok = true;
  }
  bool has_id = message.contains("id");
  auto method = message.find("method");
  bool is_response = method == message.end() && (message.contains("result") || message.contains("error"));

  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return Invalid{id_ok ? id : json(), InvalidRequest, "\"jsonrpc\" must be \"2.0\"", !is_response};
  }
  if (is_response) return parse_response(message, id, id_ok);
  if (method == message.end()) {
    return Invalid{id_ok ? id : json(), InvalidRequest, "message has no \"method\" (and is not a response)"};
  }
  if (!method->is_string()) return Invalid{id_ok ? id : json(), InvalidRequest, "\"method\" must be a string"};
  if (has_id && !id_ok) return Invalid{nullptr, InvalidRequest, "\"id\" must be an integer or a string"};
  if (!valid_params(message)) {
    return Invalid{id_ok ? id : json(), InvalidRequest, "\"params\" must be an object or an array"};
  }

  std::string name = method->get<std::string>();
  if (has_id) return Request{std::move(id), std::move(name), params_of(message)};
  return Notification{std::move(name), params_of(message)};
}

}  // namespace

Message parse_message(std::string_view body) noexcept {
  try {
    return parse_unchecked(body);
  } catch (const std::bad_alloc&) {
    return Invalid{nullptr, InternalError, "out of memory while reading the message"};
  } catch (const std::exception& error) {
    return Invalid{nullptr, InternalError, std::string("could not read the message: ") + error.what()};
  }
}

json make_result(const RequestId& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error(const RequestId& id, int code, std::string_view message, std::optional<json> data) {
  json error{{"code", code}, {"message", message}};
  if (data) error["data"] = std::move(*data);
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

json make_notification(std::string_view method, json params) {
  json message{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return message;
}

json make_request(const RequestId& id, std::string_view method, json params) {
  json message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return message;
}

std::string serialize(const json& message) {
  return message.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace oomlens::lsp
