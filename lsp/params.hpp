// Reading request parameters: a missing or mistyped field is the client's
// error (-32602), never a crash.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace oomlens::lsp {

struct ParamsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// params.textDocument.uri
std::string document_uri(const nlohmann::json& params);
// A member of an object, required to have the given type.
const nlohmann::json& member(const nlohmann::json& object, const char* key, nlohmann::json::value_t type);
// The same, to move a value out (a document's text).
nlohmann::json& member(nlohmann::json& object, const char* key, nlohmann::json::value_t type);

}  // namespace oomlens::lsp
