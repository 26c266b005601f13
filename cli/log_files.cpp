#include "cli/log_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace oomlens::cli {
namespace {

// Deep enough for any log tree; a bound all the same (no links are followed,
// so only a hostile tree gets near it).
constexpr int kMaxDepth = 256;

// One line of a .gitignore or .ignore file (the common subset of gitignore(5)):
// "#" comments, "!" negation, a trailing "/" for directories only, a "/"
// elsewhere anchoring the pattern to the ignore file's directory, "**" as any
// number of directories.
struct IgnoreRule {
  std::string pattern;
  bool negate = false;
  bool dir_only = false;
  bool anchored = false;
  bool any_depth = false;  // contains "**": '*' may cross '/'
};

struct IgnoreFile {
  std::string base;  // the directory it sits in, relative to the walk's root ("" for the root)
  std::vector<IgnoreRule> rules;
};

void read_ignore_file(const std::string& dir, const std::string& rel, const char* name, std::vector<IgnoreFile>& out) {
  std::ifstream in(dir + "/" + name);
  if (!in) return;
  IgnoreFile file;
  file.base = rel;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    IgnoreRule r;
    if (line[0] == '!') {
      r.negate = true;
      line.erase(0, 1);
    } else if (line.starts_with("\\!") || line.starts_with("\\#")) {
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      r.dir_only = true;
      line.pop_back();
    }
    if (line.starts_with("**/")) {
      line.erase(0, 3);
    } else if (line.find('/') != std::string::npos) {
      r.anchored = true;
      if (line[0] == '/') line.erase(0, 1);
    }
    r.any_depth = line.find("**") != std::string::npos;
    if (line.empty()) continue;
    r.pattern = line;
    file.rules.push_back(std::move(r));
  }
  if (!file.rules.empty()) out.push_back(std::move(file));
}

bool matches(const IgnoreRule& r, const std::string& rel_to_base, const std::string& name) {
  int flags = r.any_depth ? 0 : FNM_PATHNAME;
  if (r.anchored) return ::fnmatch(r.pattern.c_str(), rel_to_base.c_str(), flags) == 0;
  return ::fnmatch(r.pattern.c_str(), name.c_str(), flags) == 0;
}

// The last rule that matches decides, deeper ignore files after shallower ones.
bool ignored(const std::vector<IgnoreFile>& files, const std::string& rel, const std::string& name, bool is_dir) {
  bool result = false;
  for (const auto& f : files) {
    if (!f.base.empty() && !rel.starts_with(f.base + "/")) continue;
    std::string rel_to_base = f.base.empty() ? rel : rel.substr(f.base.size() + 1);
    for (const auto& r : f.rules) {
      if (r.dir_only && !is_dir) continue;
      if (matches(r, rel_to_base, name)) result = !r.negate;
    }
  }
  return result;
}

class Walker {
 public:
  explicit Walker(LogFiles& out) : out_(out) {}

  void walk(const std::string& root) {
    root_ = root;
    ignores_.clear();
    walk_dir(root, "", 0);
  }

 private:
  void walk_dir(const std::string& dir, const std::string& rel, int depth) {
    if (depth > kMaxDepth) {
      out_.errors.push_back({dir, "directory tree too deep"});
      return;
    }
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
      out_.errors.push_back({dir, std::strerror(errno)});
      return;
    }
    std::vector<std::string> names;
    errno = 0;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.empty() || name[0] == '.') continue;  // ".", "..", and hidden entries
      names.push_back(std::move(name));
    }
    int read_error = errno;
    int fd = ::dirfd(d);
    std::sort(names.begin(), names.end());
    std::size_t ignores_before = ignores_.size();
    read_ignore_file(dir, rel, ".gitignore", ignores_);
    read_ignore_file(dir, rel, ".ignore", ignores_);
    for (const auto& name : names) {
      std::string path = dir == "/" ? "/" + name : dir + "/" + name;
      std::string child_rel = rel.empty() ? name : rel + "/" + name;
      struct stat st {};
      if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        out_.errors.push_back({path, std::strerror(errno)});
        continue;
      }
      if (S_ISLNK(st.st_mode)) continue;  // not followed, as ripgrep does by default
      bool is_dir = S_ISDIR(st.st_mode);
      if (!is_dir && !S_ISREG(st.st_mode)) continue;  // FIFOs, sockets, devices
      if (ignored(ignores_, child_rel, name, is_dir)) continue;
      if (is_dir) walk_dir(path, child_rel, depth + 1);
      else out_.files.push_back({path, true});
    }
    ignores_.resize(ignores_before);
    ::closedir(d);
    if (read_error != 0) out_.errors.push_back({dir, std::strerror(read_error)});
  }

  LogFiles& out_;
  std::string root_;
  std::vector<IgnoreFile> ignores_;
};

}  // namespace

LogFiles expand_log_files(const std::vector<std::string>& args) {
  LogFiles out;
  Walker walker(out);
  for (const auto& arg : args) {
    if (arg == "-") {
      out.files.push_back({arg, false});
      continue;
    }
    struct stat st {};
    if (::stat(arg.c_str(), &st) != 0) {
      // A dangling link or a loop names its own reason.
      out.errors.push_back({arg, errno == ELOOP ? "a symbolic link loop" : std::strerror(errno)});
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      out.files.push_back({arg, false});
      continue;
    }
    std::string root = arg;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    std::size_t files_before = out.files.size(), errors_before = out.errors.size();
    walker.walk(root);
    if (out.files.size() == files_before && out.errors.size() == errors_before) out.empty_dirs.push_back(arg);
  }
  return out;
}

}  // namespace oomlens::cli
