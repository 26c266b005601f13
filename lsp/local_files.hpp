// Files on this machine: file:// URIs and local paths, both ways (RFC 8089,
// as editors write them). Reading them is report/files.hpp's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace oomlens::lsp {

// file:///a%20b.py -> "/a b.py"; file://localhost/x -> "/x"; nothing for
// another scheme, a remote host or a relative path.
std::optional<std::string> path_from_file_uri(std::string_view uri);

// "/a b.py" -> file:///a%20b.py; "C:\x\y.py" -> file:///C:/x/y.py; nothing for
// a relative path (paths from a traceback of another machine are kept as they
// are: clients handle URIs of files that do not exist here).
std::optional<std::string> file_uri_from_path(std::string_view path);

}  // namespace oomlens::lsp
