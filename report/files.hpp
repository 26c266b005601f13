// Reading files for both front ends: one place that opens a file (or
// standard input), refuses a directory, reads with read(2) and says why it
// could not, so `oomlens` and the language server refuse the same files with
// the same words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace oomlens::report {

// Why a file could not be read.
struct FileError {
  std::string path;    // as it was given ("-": standard input)
  std::string reason;  // strerror's text, or "is a directory"
  // "PATH: REASON", standard input named <stdin>.
  std::string message() const;
};

// A file open for reading; closed when it goes (standard input is left open).
class OpenFile {
 public:
  // Opens `path`; "-" is standard input when `dash_is_stdin`. A directory is
  // refused with "is a directory".
  static std::optional<OpenFile> open(const std::string& path, FileError& error, bool dash_is_stdin = false);

  OpenFile(OpenFile&& other) noexcept;
  OpenFile& operator=(OpenFile&&) = delete;
  OpenFile(const OpenFile&) = delete;
  ~OpenFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  bool regular() const { return regular_; }  // a regular file (mappable, its size known)
  std::size_t size() const { return size_; }  // for a regular file

  // read(2) into `buffer`, again after a signal: the bytes read, 0 at the
  // end, nothing on an error (then `error` says why).
  std::optional<std::size_t> read(std::span<char> buffer, FileError& error);
  // Everything from here to the end, appended to `out`; more than `limit`
  // bytes is an error that names the limit (a pipe that never ends).
  bool read_rest(std::string& out, FileError& error, std::size_t limit = static_cast<std::size_t>(-1));

 private:
  OpenFile(int fd, std::string path, bool regular, std::size_t size);
  int fd_;
  std::string path_;
  bool regular_;
  std::size_t size_;
};

// pread(2) of `n` bytes at `offset` into `into`, again after a signal: the
// bytes read (0 at the end), nothing on an error.
std::optional<std::size_t> read_at(int fd, char* into, std::size_t n, std::uint64_t offset);

// The whole file ("-" standard input when `dash_is_stdin`), or nothing with
// the reason in `error`.
std::optional<std::string> read_file(const std::string& path, FileError& error, bool dash_is_stdin = false);

}  // namespace oomlens::report
