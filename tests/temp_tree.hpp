// A directory tree under /tmp for one test, removed afterwards (also when
// the test made part of it unreadable).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace oomlens::testing {

struct TempTree {
  std::filesystem::path root;
  TempTree() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "oomlens-walk-XXXXXX").string();
    root = ::mkdtemp(tmpl.data());
  }
  ~TempTree() {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::permissions(root, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  void file(const std::string& rel, const std::string& text = "x\n") const {
    std::filesystem::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
  std::string path(const std::string& rel) const { return (root / rel).string(); }
  // file() and path() in one: `text` written at `rel`, and where it is.
  std::string write(const std::string& rel, const std::string& text) const {
    file(rel, text);
    return path(rel);
  }
};

}  // namespace oomlens::testing
