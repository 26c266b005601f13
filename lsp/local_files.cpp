#include "lsp/local_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "analyzer/hex.hpp"

namespace oomlens::lsp {

std::optional<std::string> path_from_file_uri(std::string_view uri) {
  if (!uri.starts_with("file://")) return std::nullopt;
  std::string_view rest = uri.substr(7);
  if (rest.starts_with("localhost/")) rest.remove_prefix(9);
  if (!rest.starts_with('/')) return std::nullopt;
  std::string path;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    auto escaped = rest[i] == '%' && i + 2 < rest.size() ? analyzer::parse_hex(rest.substr(i + 1, 2)) : std::nullopt;
    if (escaped) {
      path += static_cast<char>(*escaped);
      i += 2;
    } else {
      path += rest[i];
    }
  }
  if (path.find('\0') != std::string::npos) return std::nullopt;
  return path;
}

std::optional<std::string> file_uri_from_path(std::string_view path) {
  std::string p(path);
  std::replace(p.begin(), p.end(), '\\', '/');
  bool windows_drive = p.size() > 2 && std::isalpha(static_cast<unsigned char>(p[0])) && p[1] == ':' && p[2] == '/';
  if (!p.starts_with("/") && !windows_drive) return std::nullopt;
  std::string uri = windows_drive ? "file:///" : "file://";
  for (unsigned char c : p) {
    if (std::isalnum(c) || std::string_view("/-._~:").find(static_cast<char>(c)) != std::string_view::npos)
      uri.push_back(static_cast<char>(c));
    else
      uri += fmt::format("%{:02X}", c);
  }
  return uri;
}

}  // namespace oomlens::lsp
