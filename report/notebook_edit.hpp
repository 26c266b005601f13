// Fixes applied to a notebook: the edits (made on the notebook's code script,
// analyzer/notebook.hpp) go into the cells they fall in, and only those cells'
// "source" values are rewritten in the file's own text. Outputs, metadata,
// the other cells and the file's layout stay byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "analyzer/notebook.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::report {

// The notebook file's text with the edits applied. An edit that crosses
// from one cell into another, or touches a blanked IPython line, is left
// out (the script only stands for Python there).
std::string apply_notebook_edits(std::string_view file, const analyzer::notebook::Notebook& notebook,
                                 const analyzer::notebook::Script& script, const std::vector<rules::TextEdit>& edits);

// A cell's new source as the JSON value that replaces the old one, in the
// old one's form (one string, or a list of lines laid out as it was).
std::string cell_source_json(const analyzer::notebook::Cell& cell, std::string_view text);

// A message about the notebook's script with every "line N" in it told as
// the cell's: "line 6" -> "cell 3, line 1" (cells counted from 1).
std::string cell_lines_in_message(std::string_view message, const analyzer::notebook::Script& script);

// The same for any place that knows its cells: `cell_of(line)` names the
// cell holding the script's 1-based line N as (cell index from 0, the line's
// 1-based number in the cell); a line it cannot place stays "line N".
using CellOfLine = std::function<std::optional<std::pair<std::size_t, std::uint32_t>>(std::uint32_t)>;
std::string cell_lines_in_message(std::string_view message, const CellOfLine& cell_of);

}  // namespace oomlens::report
