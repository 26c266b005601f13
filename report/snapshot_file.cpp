#include "report/snapshot_file.hpp"

#include <algorithm>
#include <filesystem>

#include "analyzer/snapshot/ranks.hpp"
#include "report/files.hpp"
#include "report/mapped_range.hpp"
#include "report/snapshot_encodings.hpp"

namespace oomlens::report {
namespace {

namespace snap = analyzer::snapshot;
using Result = snap::Expected<snap::Snapshot, SnapshotFileError>;

SnapshotFileError unreadable(std::string reason) { return {SnapshotFileError::Kind::unreadable, std::move(reason)}; }

// The front ends show the analysis, which replays the whole trace (its
// peaks, and which blocks are older than it): every entry is kept as a
// compact event, and whole only the oom entries the verdict reads.
snap::ReadOptions read_options() {
  snap::ReadOptions options;
  options.keep_full_trace = false;
  options.keep_trace_events = true;
  return options;
}

Result parsed(snap::Expected<snap::Snapshot, snap::SnapshotError> result) {
  if (!result) return SnapshotFileError{SnapshotFileError::Kind::refused, result.error().message};
  return std::move(*result);
}

SnapshotFileError refused(std::string reason) { return {SnapshotFileError::Kind::refused, std::move(reason)}; }

// A gzip or JSON snapshot: its pickle, then parsed. A .json.gz is both.
Result parse_encoded(std::string_view bytes) {
  std::string pickle, error;
  switch (detect_encoding(bytes.substr(0, 64))) {
    case SnapshotEncoding::pickle: return parsed(snap::parse_snapshot(bytes, read_options()));
    case SnapshotEncoding::gzip: {
      std::string inflated;
      if (!gunzip(bytes, inflated, error)) return refused(error);
      if (detect_encoding(std::string_view(inflated).substr(0, 64)) != SnapshotEncoding::json)
        return parsed(snap::parse_snapshot(std::string_view(inflated), read_options()));
      if (!json_to_pickle(inflated, pickle, error)) return refused(error);
      break;
    }
    case SnapshotEncoding::json:
      if (!json_to_pickle(bytes, pickle, error)) return refused(error);
      break;
  }
  return parsed(snap::parse_snapshot(std::string_view(pickle), read_options()));
}

// Pipes and other unmappable files: read whole, as there is nothing to map.
Result read_whole(OpenFile& file) {
  std::string bytes;
  FileError error;
  // Bounded by the largest pickle the reader takes: a pipe that never ends
  // is refused once past it, not read until memory runs out.
  if (!file.read_rest(bytes, error, snap::kMaxPickleBytes)) return unreadable(error.reason);
  return parse_encoded(bytes);
}

// A mapped snapshot's bytes, parsed.
Result parse_mapped(MappedRange& mapped) {
  const std::string_view bytes = mapped.bytes();
  if (detect_encoding(bytes.substr(0, 64)) != SnapshotEncoding::pickle) return parse_encoded(bytes);
  snap::ReadOptions options = read_options();
  // The reader copies what it keeps, so the bytes behind it are never
  // read again: drop those pages from this process.
  options.progress = [&](std::size_t consumed) { mapped.release_before(consumed); };
  return parsed(snap::parse_snapshot(bytes, options));
}

Result read_mapped(OpenFile& file) {
  MappedRange mapped(file.fd(), 0, file.size());
  if (!mapped.ok()) return read_whole(file);
  return read_mapped_snapshot(mapped);
}

bool is_snapshot_name(const std::string& name) {
  if (name.starts_with('.')) return false;
  std::string_view n = name;
  if (n.ends_with(".gz")) n.remove_suffix(3);
  return n.ends_with(".pickle") || n.ends_with(".pkl") || n.ends_with(".json");
}

// Sorted entries of `dir` that `keep` accepts; none when it cannot be listed.
template <class Keep>
std::vector<std::filesystem::path> entries(const std::filesystem::path& dir, Keep&& keep) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (keep(*it)) found.push_back(it->path());
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<RankFile> numbered(std::vector<RankFile> files) {
  for (std::size_t i = 0; i < files.size(); ++i)
    if (files[i].rank < 0) files[i].rank = static_cast<std::int64_t>(i);
  return files;
}

}  // namespace

Result read_mapped_snapshot(MappedRange& mapped) {
  Result result = parse_mapped(mapped);
  // Cut short while read: what was parsed after the cut was zeros, not the file.
  if (mapped.vanished()) return unreadable("the file was cut short while it was read");
  return result;
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

std::vector<RankFile> rank_snapshot_files(const std::string& dir) {
  namespace fs = std::filesystem;
  auto snapshot_file = [](const fs::directory_entry& e) {
    std::error_code ec;
    return e.is_regular_file(ec) && is_snapshot_name(e.path().filename().string());
  };
  std::vector<RankFile> files;
  for (const auto& path : entries(dir, snapshot_file)) {
    const std::string name = path.filename().string();
    files.push_back({analyzer::snapshot::rank_from_name(name), path.string(), name});
  }
  if (!files.empty()) return numbered(std::move(files));
  auto folder = [](const fs::directory_entry& e) {
    std::error_code ec;
    return e.is_directory(ec) && !e.path().filename().string().starts_with('.');
  };
  for (const auto& sub : entries(dir, folder)) {
    auto inside = entries(sub, snapshot_file);
    if (inside.empty()) continue;
    const std::string name = sub.filename().string();
    files.push_back({analyzer::snapshot::rank_from_name(name), inside.front().string(),
                     name + "/" + inside.front().filename().string()});
  }
  return numbered(std::move(files));
}

Result read_snapshot_file(const std::string& path) {
  FileError error;
  auto file = OpenFile::open(path, error);
  if (!file) return unreadable(error.reason);
  return file->regular() && file->size() > 0 ? read_mapped(*file) : read_whole(*file);
}

}  // namespace oomlens::report
