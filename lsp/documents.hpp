// The text of the documents the client has open, kept in sync by
// didOpen/didChange/didClose.
//
// Documents are immutable: a change builds a new Document and swaps it in,
// so a snapshot taken by an analysis on another thread stays valid and
// consistent while the user keeps typing. A change that cannot be applied
// whole is rejected whole.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/log/segmented_log.hpp"
#include "lsp/positions.hpp"

namespace oomlens::lsp {

enum class DocumentKind {
  log,     // a training log or pasted terminal output: run the log rules
  python,  // a training script: run the source rules
  config,  // a shell script, .env file or .vscode/launch.json: check the allocator settings it sets
  other,
};

// languageId decides when it is one we know; otherwise the URI's extension
// (.log .out .err .txt -> log, .py -> python); shell scripts (languageId
// shellscript, *.sh, *.bash), .env files and .vscode/launch.json -> config.
DocumentKind classify_document(std::string_view uri, std::string_view language_id);

class Document {
 public:
  // `lines`, when given, are the text's line starts (found while it was
  // read), which spares indexing the text.
  Document(std::string uri, std::string language_id, std::int64_t version, std::string text,
           std::optional<LineStarts> lines = std::nullopt);
  // Not copyable or movable: the line index views `text`.
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  const std::string uri;
  const std::string language_id;
  const std::int64_t version;
  // Not const only so that the store can hand a large text on to the next
  // version when no snapshot of this one is left (DocumentStore::change);
  // everyone else sees documents through DocumentSnapshot.
  std::string text;
  const DocumentKind kind;

  // Built on first use (many documents are never asked for positions);
  // safe to call from several threads.
  const LineIndex& lines() const;

 private:
  friend class DocumentStore;
  mutable std::once_flag lines_once_;
  mutable std::unique_ptr<LineIndex> lines_;
};

using DocumentSnapshot = std::shared_ptr<const Document>;

// One TextDocumentContentChangeEvent: a full replacement when range is
// empty, else the range (in the store's position encoding) and its new text.
struct TextChange {
  std::optional<Range> range;
  std::string text;
  std::optional<LineStarts> lines;  // of `text`, when known (see Document)
};

// The new snapshot, or why nothing was changed.
struct ChangeResult {
  DocumentSnapshot document;  // null on failure
  std::string error;          // empty on success
  // Log documents: the changes as one replacement of the text before them.
  std::optional<analyzer::LogEdit> edit;
  explicit operator bool() const { return document != nullptr; }
};

class DocumentStore {
 public:
  // From this size on, a single ranged change is made in place when it can
  // be (change_in_place); smaller texts are copied.
  static constexpr std::size_t kInPlaceFromBytes = 1 << 20;

  explicit DocumentStore(PositionEncoding encoding = PositionEncoding::utf16);

  // The encoding negotiated in initialize; ranges in changes use it.
  void set_position_encoding(PositionEncoding encoding);
  PositionEncoding position_encoding() const;

  // Opening an open document replaces it: the client's text is the truth.
  DocumentSnapshot open(std::string uri, std::string language_id, std::int64_t version, std::string text,
                        std::optional<LineStarts> lines = std::nullopt);
  // Applies the changes in order, each range read against the text left by
  // the ones before (LSP 3.17 didChange). Fails, changing nothing, for an
  // unknown URI, a version not above the current one, or a range that is
  // inverted, splits a character or starts/ends on a line past the end.
  ChangeResult change(std::string_view uri, std::int64_t version, std::vector<TextChange> changes);

 private:
  // One ranged change applied to the text in place, when nothing but the
  // store holds the document (map_mutex_ held): a keystroke in a 100 MiB log
  // then moves its tail instead of copying it whole, and its line index is
  // updated instead of built again. No document when that cannot be.
  struct InPlace {
    std::shared_ptr<Document> document;
    analyzer::LogEdit edit;
    std::string error;  // the change's range does not fit the text
  };
  InPlace change_in_place(std::shared_ptr<Document>& base, std::int64_t version, TextChange& change);

 public:
  // False when the document was not open.
  bool close(std::string_view uri);

  // Null when not open.
  DocumentSnapshot get(std::string_view uri) const;
  std::vector<DocumentSnapshot> all() const;

 private:
  // Writers (open/change/close) are serialised by write_mutex_ and build the
  // new document without holding map_mutex_, so readers never wait for an
  // edit of a large document.
  std::mutex write_mutex_;
  mutable std::mutex map_mutex_;
  // Not const: see Document::text.
  std::map<std::string, std::shared_ptr<Document>, std::less<>> documents_;
  PositionEncoding encoding_;
};

}  // namespace oomlens::lsp
