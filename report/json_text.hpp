// JSON text of a value, as nlohmann's dump(indent, ' ', false, replace)
// writes it, byte for byte, faster: strings (the bulk of a report or a
// language-server reply) go out in blocks instead of a byte at a time
// through a UTF-8 decoder. Shared by the command line's --format json and
// the language server's messages.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace oomlens::report {

// Appends `value` to `out`: compact for a negative `indent`, else one
// member or element a line, nested `indent` spaces deeper per level.
void append_json_text(const nlohmann::json& value, std::string& out, int indent = -1);

// The same written to `out` a block at a time (a long report, to standard
// output): the text is never whole in memory.
void write_json_text(std::ostream& out, const nlohmann::json& value, int indent = -1);

// The text alone.
std::string json_text(const nlohmann::json& value, int indent = -1);

}  // namespace oomlens::report
