// Jupyter notebooks (.ipynb, nbformat 4) as oomlens reads them: the cells,
// where each cell's source sits in the file (to rewrite one cell and leave
// every other byte alone), and the code cells joined into one script.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oomlens::analyzer::notebook {

struct Cell {
  std::size_t index = 0;  // in the notebook's cells array, from 0
  bool code = false;      // cell_type "code"
  std::string text;       // the source, its strings joined
  // The "source" value in the file: a string, or a list of strings.
  std::size_t source_begin = 0, source_end = 0;
  bool source_is_list = false;
  // A list's layout, to write one back the same way: the text after `[`
  // before the first item, between two items, and after the last before `]`.
  std::string list_open, list_separator, list_close;
};

struct Notebook {
  bool valid = false;  // a JSON object with a "cells" list
  std::vector<Cell> cells;
};

Notebook parse(std::string_view text);

// The code cells in order as one script. Lines that are IPython syntax, not
// Python (`%magic`, `!shell`, and every line of a `%%cell_magic` cell), are
// blanked with spaces: lines and byte offsets stay those of the cell, so a
// script position is a cell position. Each cell ends with a newline.
struct CellSpan {
  std::size_t cell = 0;            // Cell::index
  std::size_t begin = 0, end = 0;  // the cell's text in the script
  std::uint32_t first_line = 1;    // the script line of the cell's first line
};
struct Script {
  std::string text;
  std::vector<CellSpan> spans;
  // The span of the cell that holds script byte `at`: the last that starts at or before it.
  const CellSpan* span_at(std::size_t at) const;
};
Script code_script(const Notebook& notebook);

}  // namespace oomlens::analyzer::notebook
