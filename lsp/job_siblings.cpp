#include "lsp/job_siblings.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "analyzer/log/job.hpp"

namespace oomlens::lsp {
namespace {

namespace fs = std::filesystem;

// What names one component of the key admits. path_rank writes a key by
// putting '*' where a path component had its rank digits, so the document's
// own component shows where the '*' stands (a '*' that is really in a name
// stays literal), and an empty last component is a rank directory's "any
// file under it".
struct ComponentPattern {
  enum class Kind { exact, digits, any } kind = Kind::exact;
  std::string prefix;  // exact: the whole name
  std::string suffix;

  bool admits(std::string_view name) const {
    if (kind == Kind::exact) return name == prefix;
    if (kind == Kind::any) return true;
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
      return false;
    std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    return digits.size() <= 5 &&  // path_rank takes ranks of at most 5 digits
           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
};

std::optional<ComponentPattern> pattern_of(const std::string& key_part, const std::string& path_part, bool last) {
  if (key_part == path_part) return ComponentPattern{ComponentPattern::Kind::exact, key_part, {}};
  if (key_part.empty() && last) return ComponentPattern{ComponentPattern::Kind::any, {}, {}};
  std::size_t at = 0;
  while (at < key_part.size() && at < path_part.size() && key_part[at] == path_part[at]) ++at;
  if (at >= key_part.size() || key_part[at] != '*') return std::nullopt;
  return ComponentPattern{ComponentPattern::Kind::digits, key_part.substr(0, at), key_part.substr(at + 1)};
}

// Name order of a recursive walk: '/' before every other byte, so that
// "a/x" comes before "a-b/x" as the walk of "a" ends before "a-b" starts.
bool walk_order(const std::string& a, const std::string& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    auto rank = [](char c) { return c == '/' ? 0 : static_cast<int>(static_cast<unsigned char>(c)) + 1; };
    return rank(x) < rank(y);
  });
}

class Walk {
 public:
  explicit Walk(std::vector<ComponentPattern> patterns) : patterns_(std::move(patterns)) {}

  // Lists `dir` (spelled `shown` in the paths it yields) against pattern `level`.
  void run(const std::string& dir, const std::string& shown, std::size_t level) {
    std::error_code ec;
    fs::directory_iterator it(dir.empty() ? "." : dir, ec);
    if (ec) return;  // unreadable or gone: the job is what can be read
    std::vector<std::string> names;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec || ++entries_ > kMaxWalkEntries) {
        truncated_ = truncated_ || !ec;
        break;
      }
      std::string name = it->path().filename().string();
      if (name.starts_with('.') || !patterns_[level].admits(name)) continue;
      names.push_back(std::move(name));
    }
    std::sort(names.begin(), names.end());
    const bool last = level + 1 == patterns_.size();
    for (const auto& name : names) {
      if (files_.size() >= kMaxJobFiles) {
        truncated_ = true;
        return;
      }
      std::string child = shown.empty() && dir.empty() ? name : shown + "/" + name;
      // symlink_status: a link is neither a regular file nor a directory here,
      // so none is followed (no loop, nothing outside the job's directory).
      fs::file_status st = fs::symlink_status(child, ec);
      if (ec) continue;
      if (last && fs::is_regular_file(st)) files_.push_back(std::move(child));
      else if (!last && fs::is_directory(st)) run(child, child, level + 1);
    }
  }

  std::vector<std::string> files_;
  bool truncated_ = false;

 private:
  std::vector<ComponentPattern> patterns_;
  std::size_t entries_ = 0;
};

}  // namespace

std::string job_key_of(const std::string& path) { return analyzer::path_rank(path).job_key; }

std::optional<JobSiblings> find_job_siblings(const std::string& path, const std::vector<std::string>& also) {
  const std::string key = job_key_of(path);
  if (key.empty()) return std::nullopt;
  std::vector<std::string> key_parts = analyzer::path_components(key);
  std::vector<std::string> path_parts = analyzer::path_components(path);
  if (key_parts.size() != path_parts.size()) return std::nullopt;

  // The walk starts in the directory that holds the key's first rank
  // component and goes down only as deep as the key does.
  std::size_t first = 0;
  while (first < key_parts.size() && key_parts[first] == path_parts[first]) ++first;
  if (first == key_parts.size()) return std::nullopt;
  std::vector<ComponentPattern> patterns;
  for (std::size_t i = first; i < key_parts.size(); ++i) {
    auto p = pattern_of(key_parts[i], path_parts[i], i + 1 == key_parts.size());
    if (!p) return std::nullopt;
    patterns.push_back(std::move(*p));
  }
  std::string base;
  for (std::size_t i = 0; i < first; ++i) base += (i ? "/" : "") + path_parts[i];
  // An absolute path's first component is empty: its root is "/".
  const bool at_root = first == 1 && path_parts[0].empty();
  Walk walk(std::move(patterns));
  walk.run(at_root ? "/" : base, base, 0);

  std::vector<std::string> candidates = std::move(walk.files_);
  candidates.push_back(path);
  for (const auto& other : also) candidates.push_back(other);
  std::erase_if(candidates, [&](const std::string& p) { return p != path && job_key_of(p) != key; });
  std::sort(candidates.begin(), candidates.end(), walk_order);
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  // The bound holds with the document and the open ones added: the last
  // others in walk order go, never the document itself.
  bool truncated = walk.truncated_;
  for (std::size_t k = candidates.size(); candidates.size() > kMaxJobFiles && k-- > 0;)
    if (candidates[k] != path) {
      candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(k));
      truncated = true;
    }

  const std::size_t self = static_cast<std::size_t>(
      std::find(candidates.begin(), candidates.end(), path) - candidates.begin());
  // group_job_files decides, as for `oomlens diagnose`: a weak pattern
  // (SLURM's %j-%t) needs a rank 0 among the files to count as a job.
  for (const auto& job : analyzer::group_job_files(candidates)) {
    auto at = std::find(job.inputs.begin(), job.inputs.end(), self);
    if (at == job.inputs.end()) continue;
    if (job.inputs.size() < 2) return std::nullopt;
    JobSiblings out;
    for (std::size_t k = 0; k < job.inputs.size(); ++k) {
      out.paths.push_back(candidates[job.inputs[k]]);
      out.ranks.push_back(job.ranks[k]);
    }
    out.self = static_cast<std::size_t>(at - job.inputs.begin());
    out.truncated = truncated;
    return out;
  }
  return std::nullopt;
}

}  // namespace oomlens::lsp
