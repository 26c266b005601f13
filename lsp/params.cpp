#include "lsp/params.hpp"

#include <fmt/format.h>

namespace oomlens::lsp {

const nlohmann::json& member(const nlohmann::json& object, const char* key, nlohmann::json::value_t type) {
  if (!object.is_object()) throw ParamsError(fmt::format("expected an object with '{}'", key));
  auto it = object.find(key);
  if (it == object.end()) throw ParamsError(fmt::format("missing '{}'", key));
  bool ok = it->type() == type ||
            (type == nlohmann::json::value_t::number_integer && it->is_number_integer()) ||
            (type == nlohmann::json::value_t::number_unsigned && it->is_number_unsigned());
  if (!ok) throw ParamsError(fmt::format("'{}' has the wrong type", key));
  return *it;
}

nlohmann::json& member(nlohmann::json& object, const char* key, nlohmann::json::value_t type) {
  return const_cast<nlohmann::json&>(member(static_cast<const nlohmann::json&>(object), key, type));
}

std::string document_uri(const nlohmann::json& params) {
  const auto& doc = member(params, "textDocument", nlohmann::json::value_t::object);
  return member(doc, "uri", nlohmann::json::value_t::string).get<std::string>();
}

}  // namespace oomlens::lsp
