// Which files `oomlens diagnose` reads for its arguments: files as named,
// directories walked as ripgrep walks them.
#pragma once

#include <string>
#include <vector>

namespace oomlens::cli {

struct LogFile {
  std::string path;     // as named on the command line, or the directory argument joined with the walk
  bool walked = false;  // found in a directory: binary files are skipped, as ripgrep skips them
};

struct UnreadablePath {
  std::string path;
  std::string reason;  // strerror text, or "a symbolic link loop"
};

struct LogFiles {
  std::vector<LogFile> files;
  std::vector<UnreadablePath> errors;
  std::vector<std::string> empty_dirs;  // directory arguments under which nothing was left to read
};

// Expands the arguments in order. A directory is walked recursively, in byte
// order of names (deterministic), skipping hidden entries (a leading '.'),
// what the .gitignore and .ignore files along the way exclude, symbolic links
// (not followed, so no loop is possible) and anything that is not a regular
// file. A missing or unreadable path, file or directory, is reported in
// `errors` and the walk goes on. "-" stays "-" (standard input).
LogFiles expand_log_files(const std::vector<std::string>& args);

}  // namespace oomlens::cli
