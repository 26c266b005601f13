// Analyses of scripts made for computing fixes, not the server's own: a
// log's quick fixes edit the script its traceback starts in, open in the
// client or read from disk.
#include "lsp/source_features.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <mutex>

#include "lsp/local_files.hpp"
#include "report/files.hpp"

namespace oomlens::lsp {
namespace {

// The last few analyses made for fixes: a log's quick fixes are asked for on
// every cursor move over its OOM line, and each would otherwise read and
// parse the script again. Keyed by what they were made from; a script edited
// on disk or in the editor has another key.
class FixAnalysisCache {
 public:
  std::shared_ptr<const DocumentAnalysis> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    for (const auto& [k, a] : entries_)
      if (k == key) return a;
    return nullptr;
  }
  void add(std::string key, std::shared_ptr<const DocumentAnalysis> analysis) {
    std::lock_guard lock(mutex_);
    if (entries_.size() >= kSize) entries_.erase(entries_.begin());
    entries_.emplace_back(std::move(key), std::move(analysis));
  }

 private:
  static constexpr std::size_t kSize = 4;
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::shared_ptr<const DocumentAnalysis>>> entries_;
};

FixAnalysisCache& fix_cache() {
  static FixAnalysisCache cache;
  return cache;
}

std::string settings_key(const Settings& settings, PositionEncoding encoding) {
  return fmt::format("{}|{}", settings.rules.fragmentation_option, static_cast<int>(encoding));
}

}  // namespace

std::shared_ptr<const DocumentAnalysis> analyze_file_for_fixes(const std::string& uri, const std::string& path,
                                                               const ClientCapabilities& client,
                                                               const Settings& settings, std::string& error) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  auto mtime = ec ? std::filesystem::file_time_type{} : std::filesystem::last_write_time(path, ec);
  std::string key = ec ? std::string()
                       : fmt::format("file|{}|{}|{}|{}", uri, size, mtime.time_since_epoch().count(),
                                     settings_key(settings, client.encoding));
  if (!key.empty())
    if (auto cached = fix_cache().find(key)) return cached;
  report::FileError read_error;
  auto text = report::read_file(path, read_error);
  if (!text) {
    error = read_error.reason;
    return nullptr;
  }
  // Kind from the name (.sh, .env, launch.json); anything else is taken for a script.
  bool config = classify_document(uri, "") == DocumentKind::config;
  std::atomic<bool> never{false};
  auto a = analyze_document(std::make_shared<const Document>(uri, config ? "" : "python", 0, std::move(*text)), settings,
                            client.encoding, never, {});
  if (!key.empty()) fix_cache().add(std::move(key), a);
  return a;
}

std::shared_ptr<const DocumentAnalysis> analyze_for_fixes(const DocumentSnapshot& doc, const ClientCapabilities& client,
                                                          const Settings& settings) {
  // A snapshot is immutable: its address and version name its text.
  std::string key = fmt::format("open|{}|{}|{}|{}", doc->uri, doc->version, static_cast<const void*>(doc.get()),
                                settings_key(settings, client.encoding));
  if (auto cached = fix_cache().find(key)) return cached;
  std::atomic<bool> never{false};
  auto a = analyze_document(doc, settings, client.encoding, never, {});
  fix_cache().add(std::move(key), a);
  return a;
}

}  // namespace oomlens::lsp
