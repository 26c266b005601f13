#include "lsp/job_analysis.hpp"

#include <map>
#include <fmt/format.h>

#include "analyzer/log/job.hpp"
#include "lsp/file_lines.hpp"
#include "lsp/job_siblings.hpp"
#include "lsp/local_files.hpp"
#include "lsp/log_diagnostics.hpp"
#include "report/log_file.hpp"

namespace oomlens::lsp {
namespace {

// One file of the job as it was read.
struct JobFile {
  std::string path;
  std::string uri;             // the editor's spelling when it is open
  DocumentSnapshot open;       // null: read from disk
};

std::optional<analyzer::ParsedLog> parse_text(std::string_view text, const std::atomic<bool>& cancelled) {
  analyzer::LogAnalyzer analyzer;
  constexpr std::size_t kPiece = 1 << 20;
  for (std::size_t at = 0; at < text.size(); at += kPiece) {
    if (cancelled.load(std::memory_order_relaxed)) return std::nullopt;
    analyzer.feed(text.substr(at, kPiece));
  }
  return analyzer.finish_parsed();
}

// How messages name a file: its path below the directory the job's files
// share ("3/stderr.log" of torchrun's attempt_0/, "rank3.log").
std::vector<std::string> labels_of(const std::vector<JobFile>& files) {
  std::string common = files.front().path;
  for (const auto& f : files) {
    std::size_t n = 0;
    while (n < common.size() && n < f.path.size() && common[n] == f.path[n]) ++n;
    common.resize(n);
  }
  std::size_t cut = common.rfind('/');
  cut = cut == std::string::npos ? 0 : cut + 1;
  std::vector<std::string> labels;
  for (const auto& f : files) labels.push_back(f.path.substr(cut));
  return labels;
}

using Located = std::map<std::pair<std::uint32_t, NewlineSpan>, Range>;

// The ranges of the other files' lines the diagnostics point at: open files
// from their text, the others from disk in one pass each.
Located locate_asked(const std::map<std::uint32_t, std::vector<NewlineSpan>>& asked, const std::vector<JobFile>& files,
                     PositionEncoding encoding, const std::atomic<bool>& cancelled) {
  Located found;
  for (const auto& [file, spans] : asked) {
    const JobFile& f = files[file];
    std::vector<std::optional<Range>> ranges;
    if (f.open) {
      const LineIndex& lines = f.open->lines();
      for (const auto& s : spans) ranges.push_back(lines.range_of(lines.newline_lines_bytes(s.first, s.last), encoding));
    } else {
      ranges = locate_file_lines(f.path, spans, encoding, cancelled);
    }
    for (std::size_t k = 0; k < spans.size(); ++k)
      if (ranges[k]) found[{file, spans[k]}] = *ranges[k];
  }
  return found;
}

}  // namespace

std::string job_key_of_uri(std::string_view uri) {
  auto path = path_from_file_uri(uri);
  return path ? job_key_of(*path) : std::string();
}

std::vector<DocumentSnapshot> open_job_documents(const Document& doc, const DocumentStore& open) {
  std::vector<DocumentSnapshot> out;
  if (doc.kind != DocumentKind::log) return out;
  std::string key = job_key_of_uri(doc.uri);
  if (key.empty()) return out;
  for (const auto& other : open.all())
    if (other->uri != doc.uri && other->kind == DocumentKind::log && job_key_of_uri(other->uri) == key)
      out.push_back(other);
  return out;
}

std::shared_ptr<const DocumentAnalysis> analyze_job_document(const DocumentSnapshot& doc,
                                                             const std::vector<DocumentSnapshot>& open,
                                                             const Settings& settings, PositionEncoding encoding,
                                                             const std::atomic<bool>& cancelled,
                                                             const std::function<void(double)>& progress) {
  if (doc->kind != DocumentKind::log) return nullptr;
  auto path = path_from_file_uri(doc->uri);
  if (!path || job_key_of(*path).empty()) return nullptr;
  std::map<std::string, DocumentSnapshot> open_by_path{{*path, doc}};
  std::vector<std::string> open_paths;
  for (const auto& o : open)
    if (auto p = path_from_file_uri(o->uri)) {
      open_by_path.emplace(*p, o);
      open_paths.push_back(*p);
    }
  auto siblings = find_job_siblings(*path, open_paths);
  if (!siblings) return nullptr;

  auto a = std::make_shared<DocumentAnalysis>();
  a->doc = doc;
  a->encoding = encoding;
  a->options = settings.rules;
  if (siblings->truncated)
    a->job_messages.push_back(fmt::format("the job of {} has more files than are read together ({} at most); the rest are left out",
                                          *path, kMaxJobFiles));
  std::vector<JobFile> files;
  std::vector<analyzer::JobInput> inputs;
  for (std::size_t k = 0; k < siblings->paths.size(); ++k) {
    const std::string& p = siblings->paths[k];
    auto held = open_by_path.find(p);
    std::optional<analyzer::ParsedLog> log;
    if (held != open_by_path.end()) {
      log = parse_text(held->second->text, cancelled);
    } else {
      auto read = report::read_log(p, /*skip_binary=*/true, &cancelled);
      if (!read.log && !read.binary && !cancelled.load())
        a->job_messages.push_back(fmt::format("cannot read {}, a file of the job of {}: {}", p, *path, read.error));
      log = std::move(read.log);
    }
    if (cancelled.load()) {
      a->cancelled = true;
      return a;
    }
    if (!log) continue;  // binary or unreadable: the job is what can be read
    if (k == siblings->self) a->file = static_cast<std::uint32_t>(files.size());
    auto uri = held != open_by_path.end() ? std::optional(held->second->uri) : file_uri_from_path(p);
    files.push_back({p, uri.value_or(p), held != open_by_path.end() ? held->second : nullptr});
    inputs.push_back({std::move(*log), p, siblings->ranks[k]});
    if (progress) progress(static_cast<double>(k + 1) / static_cast<double>(siblings->paths.size() + 1));
  }
  a->report = rules::diagnose_log(analyzer::analyze_job(std::move(inputs)), settings.rules);

  // Two passes: the first learns which lines of the other files the
  // diagnostics point at, so that each file on disk is read once more at
  // most; the second builds them with those lines located.
  OtherFiles others{labels_of(files), nullptr};
  std::map<std::uint32_t, std::vector<NewlineSpan>> asked;
  others.locate = [&](std::uint32_t file, std::uint64_t first, std::uint64_t last) -> std::optional<Location> {
    if (file < files.size()) asked[file].push_back({first, last});
    return std::nullopt;
  };
  log_diagnostics(*a, &others);
  Located found = locate_asked(asked, files, encoding, cancelled);
  others.locate = [&](std::uint32_t file, std::uint64_t first, std::uint64_t last) -> std::optional<Location> {
    auto it = found.find({file, NewlineSpan{first, last}});
    if (it == found.end()) return std::nullopt;
    return Location{files[file].uri, it->second};
  };
  a->diagnostics = log_diagnostics(*a, &others);
  a->cancelled = cancelled.load();
  return a;
}

}  // namespace oomlens::lsp
