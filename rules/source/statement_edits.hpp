// Edits that take a whole statement out of a script and keep it valid Python:
// shared by the fixes that remove a call (OOM301) or move an assignment
// (OOM302, and the fix that sets the allocator configuration).
#pragma once

#include <optional>

#include "analyzer/python/script.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::rules::source {

// The expression statement that is exactly `expression`, in a block or the
// module; null when the expression is part of something larger.
analyzer::python::Node statement_of_expression(const analyzer::python::Script& script, analyzer::python::Node expression);

// The edit removing `statement` (a simple statement of a block or the
// module): its whole line with a trailing comment when it is alone on the
// line, else the statement and one neighbouring `;`. With `replace_by_pass`
// (the block would be left without statements) it becomes `pass` instead.
// Nothing when no exact edit exists.
std::optional<TextEdit> remove_statement_edit(const analyzer::python::Script& script, analyzer::python::Node statement,
                                              bool replace_by_pass);

// Whether `statement` is the only statement (comments aside) of its block.
bool only_statement_of_block(const analyzer::python::Script& script, analyzer::python::Node statement);

// The byte where the line holding `byte` starts.
std::uint32_t line_start(std::string_view source, std::uint32_t byte);

}  // namespace oomlens::rules::source
