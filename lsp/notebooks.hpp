// Notebooks synchronised by LSP 3.17's notebookDocument/* messages: their
// cells' texts, and the code cells in order as one Python script (a virtual
// document under the notebook's URI, analysed like any script). Positions
// and edits move between a cell and that script line by line: a cell's lines
// are the script's, shifted (magics are blanked in place, never removed).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lsp/documents.hpp"
#include "lsp/protocol.hpp"

namespace oomlens::lsp {

class Notebooks {
 public:
  struct Cell {
    std::string uri;
    bool code = false;
  };
  // Where a code cell sits in the notebook's script.
  struct Placement {
    std::string notebook;      // the notebook's URI (the script's)
    std::uint32_t first_line;  // the script line (0-based) of the cell's first line
    std::uint32_t lines;       // the cell's line count
  };

  void set_position_encoding(PositionEncoding encoding) { texts_.set_position_encoding(encoding); }

  // Each returns the notebook's script, as it now reads (nothing when the
  // notebook is unknown), or throws ParamsError for a malformed change.
  std::string open(NotebookOpenParams params);
  std::optional<std::string> change(NotebookChangeParams params);
  // The cells the notebook had; forgets it.
  std::vector<Cell> close(const std::string& notebook);

  bool is_notebook(const std::string& uri) const { return notebooks_.count(uri) != 0; }
  // A code cell's place in its notebook's script, as last built.
  std::optional<Placement> placement(const std::string& cell_uri) const;
  // The code cell holding a script line, and that line in it.
  std::optional<std::pair<std::string, std::uint32_t>> cell_at(const std::string& notebook, std::uint32_t line) const;
  std::vector<Cell> cells(const std::string& notebook) const;
  std::vector<std::string> uris() const;  // the open notebooks
  // The version of a cell's text document (for versioned edits).
  std::optional<std::int64_t> cell_version(const std::string& cell_uri) const;

 private:
  struct Notebook {
    std::vector<Cell> cells;
    std::map<std::string, Placement> placements;  // code cells, by URI
  };
  std::string build(const std::string& uri, Notebook& notebook);

  DocumentStore texts_;  // every cell's text, edited as LSP edits documents
  std::map<std::string, Notebook, std::less<>> notebooks_;
};

}  // namespace oomlens::lsp
