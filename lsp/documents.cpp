#include "lsp/documents.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "rules/source/config_lint.hpp"

namespace oomlens::lsp {
namespace {

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
  return out;
}

// The extension of the URI's last path segment, lowercased, without the dot.
std::string extension_of(std::string_view uri) {
  uri = uri.substr(0, uri.find_first_of("?#"));
  std::size_t segment = uri.find_last_of("/:");
  std::string_view name = segment == std::string_view::npos ? uri : uri.substr(segment + 1);
  std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  return lowercase(name.substr(dot + 1));
}

struct Edited {
  std::string text;
  std::optional<LineStarts> lines;  // of `text`, when known
  std::optional<analyzer::LogEdit> edit;  // log documents: all the changes as one replacement
  std::string error;  // empty on success
};

// Where a change's range boundary lies in `index`'s text. Lines past the end
// are an error rather than clamped: they mean client and server disagree on
// the text, and guessing would corrupt it silently. One exception: the line
// just past the end at character 0, which some clients use for "the end".
std::optional<std::size_t> resolve(const LineIndex& index, Position position, PositionEncoding encoding,
                                   std::string_view which, std::string& error) {
  std::size_t lines = index.line_count();
  if (position.line > lines || (position.line == lines && position.character != 0)) {
    error = fmt::format("range {} {}:{} is past the end of the document ({} lines)", which, position.line,
                        position.character, lines);
    return std::nullopt;
  }
  auto offset = index.offset_of(position, encoding);
  if (!offset) {
    error = fmt::format("range {} {}:{} falls inside a character in {}", which, position.line,
                        position.character, to_string(encoding));
  }
  return offset;
}

Edited apply_changes(const Document& base, std::vector<TextChange>& changes, PositionEncoding encoding) {
  Edited edited;
  // Until a change lands, the text is base's and its cached index serves.
  bool text_is_base = true;
  // A log's analysis re-reads only around what changed (analyzer/log/segmented_log.hpp).
  const bool track = base.kind == DocumentKind::log;
  auto record = [&](const analyzer::LogEdit& e) { edited.edit = edited.edit ? analyzer::compose(*edited.edit, e) : e; };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    TextChange& change = changes[i];
    if (!change.range) {
      if (track) record(analyzer::edit_between(text_is_base ? std::string_view(base.text) : edited.text, change.text));
      edited.text = std::move(change.text);
      edited.lines = std::move(change.lines);
      text_is_base = false;
      continue;
    }
    std::optional<LineIndex> fresh;
    if (!text_is_base) fresh.emplace(edited.text);
    const LineIndex& index = text_is_base ? base.lines() : *fresh;

    auto fail = [&](std::string_view why) {
      edited.error = fmt::format("change {} of {}: {}", i + 1, changes.size(), why);
      edited.text.clear();
      return std::move(edited);
    };
    std::string why;
    auto begin = resolve(index, change.range->start, encoding, "start", why);
    if (!begin) return fail(why);
    auto end = resolve(index, change.range->end, encoding, "end", why);
    if (!end) return fail(why);
    if (*begin > *end) return fail("range start is after its end");
    if (text_is_base) {
      edited.text = base.text;
      text_is_base = false;
    }
    edited.text.replace(*begin, *end - *begin, change.text);
    edited.lines.reset();
    if (track) record(analyzer::LogEdit{*begin, *end - *begin, change.text.size()});
  }
  if (text_is_base) edited.text = base.text;
  return edited;
}

}  // namespace

DocumentKind classify_document(std::string_view uri, std::string_view language_id) {
  std::string language = lowercase(language_id);
  if (language == "python") return DocumentKind::python;
  if (language == "log" || language == "plaintext" || language == "text") return DocumentKind::log;
  if (language == "shellscript" || language == "dotenv" || language == "dockerfile" || language == "yaml" ||
      rules::config_file_kind(uri))
    return DocumentKind::config;
  std::string extension = extension_of(uri);
  if (extension == "py") return DocumentKind::python;
  constexpr std::array<std::string_view, 4> kLogExtensions = {"log", "out", "err", "txt"};
  if (std::find(kLogExtensions.begin(), kLogExtensions.end(), extension) != kLogExtensions.end()) {
    return DocumentKind::log;
  }
  return DocumentKind::other;
}

Document::Document(std::string uri_, std::string language_id_, std::int64_t version_, std::string text_,
                   std::optional<LineStarts> lines)
    : uri(std::move(uri_)),
      language_id(std::move(language_id_)),
      version(version_),
      text(std::move(text_)),
      kind(classify_document(uri, language_id)) {
  if (lines) std::call_once(lines_once_, [&] { lines_ = std::make_unique<LineIndex>(text, std::move(*lines)); });
}

const LineIndex& Document::lines() const {
  std::call_once(lines_once_, [this] { lines_ = std::make_unique<LineIndex>(text); });
  return *lines_;
}

DocumentStore::DocumentStore(PositionEncoding encoding) : encoding_(encoding) {}

void DocumentStore::set_position_encoding(PositionEncoding encoding) {
  std::lock_guard lock(map_mutex_);
  encoding_ = encoding;
}

PositionEncoding DocumentStore::position_encoding() const {
  std::lock_guard lock(map_mutex_);
  return encoding_;
}

DocumentSnapshot DocumentStore::open(std::string uri, std::string language_id, std::int64_t version,
                                     std::string text, std::optional<LineStarts> lines) {
  std::lock_guard writer(write_mutex_);
  auto document = std::make_shared<Document>(uri, std::move(language_id), version, std::move(text), std::move(lines));
  std::lock_guard lock(map_mutex_);
  documents_.insert_or_assign(std::move(uri), document);
  return document;
}

ChangeResult DocumentStore::change(std::string_view uri, std::int64_t version, std::vector<TextChange> changes) {
  std::lock_guard writer(write_mutex_);
  std::shared_ptr<Document> base;
  PositionEncoding encoding;
  {
    std::lock_guard lock(map_mutex_);
    if (auto it = documents_.find(uri); it != documents_.end()) base = it->second;
    encoding = encoding_;
  }
  if (!base) return {nullptr, fmt::format("{} is not open", uri), std::nullopt};
  if (version <= base->version) {
    return {nullptr, fmt::format("{}: version {} is not above the current version {}", uri, version, base->version),
            std::nullopt};
  }
  if (changes.size() == 1 && changes[0].range) {
    std::lock_guard lock(map_mutex_);
    InPlace done = change_in_place(base, version, changes[0]);
    if (!done.error.empty())
      return {nullptr, fmt::format("{} (version {}): change 1 of 1: {}", uri, version, done.error), std::nullopt};
    if (done.document) {
      documents_.insert_or_assign(done.document->uri, done.document);
      std::optional<analyzer::LogEdit> edit;
      if (done.document->kind == DocumentKind::log) edit = done.edit;
      return {done.document, "", edit};
    }
  }
  Edited edited = apply_changes(*base, changes, encoding);
  if (!edited.error.empty()) return {nullptr, fmt::format("{} (version {}): {}", uri, version, edited.error), std::nullopt};

  auto document = std::make_shared<Document>(base->uri, base->language_id, version, std::move(edited.text),
                                             std::move(edited.lines));
  std::lock_guard lock(map_mutex_);
  documents_.insert_or_assign(base->uri, document);
  return {document, "", edited.edit};
}

DocumentStore::InPlace DocumentStore::change_in_place(std::shared_ptr<Document>& base, std::int64_t version,
                                                      TextChange& change) {
  // The map's reference and `base`: no snapshot elsewhere, and none can be
  // taken while map_mutex_ is held. Small texts are simply copied.
  if (base.use_count() != 2 || base->text.size() < kInPlaceFromBytes) return {};
  const LineIndex& index = base->lines();
  std::string why;
  auto begin = resolve(index, change.range->start, encoding_, "start", why);
  auto end = begin ? resolve(index, change.range->end, encoding_, "end", why) : std::nullopt;
  if (!begin || !end) return {nullptr, {}, why};
  if (*begin > *end) return {nullptr, {}, "range start is after its end"};
  analyzer::LogEdit edit{*begin, *end - *begin, change.text.size()};
  std::string text = std::move(base->text);
  LineStarts starts = std::move(*base->lines_).take_starts();
  text.replace(*begin, *end - *begin, change.text);
  starts.replace(text, *begin, *end - *begin, change.text.size());
  auto document = std::make_shared<Document>(base->uri, base->language_id, version, std::move(text), std::move(starts));
  base.reset();  // emptied: nothing may read it again
  return {std::move(document), edit, {}};
}

bool DocumentStore::close(std::string_view uri) {
  std::lock_guard writer(write_mutex_);
  std::lock_guard lock(map_mutex_);
  auto it = documents_.find(uri);
  if (it == documents_.end()) return false;
  documents_.erase(it);
  return true;
}

DocumentSnapshot DocumentStore::get(std::string_view uri) const {
  std::lock_guard lock(map_mutex_);
  auto it = documents_.find(uri);
  return it == documents_.end() ? nullptr : it->second;
}

std::vector<DocumentSnapshot> DocumentStore::all() const {
  std::lock_guard lock(map_mutex_);
  std::vector<DocumentSnapshot> snapshots;
  snapshots.reserve(documents_.size());
  for (const auto& [uri, document] : documents_) snapshots.push_back(document);
  return snapshots;
}

}  // namespace oomlens::lsp
