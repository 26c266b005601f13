#include "report/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace oomlens::report {
namespace {

bool is_null_device(const struct stat& st) {
  struct stat null {};
  return S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode) && null.st_rdev == st.st_rdev;
}

}  // namespace

std::string FileError::message() const { return (path == "-" ? std::string("<stdin>") : path) + ": " + reason; }

OpenFile::OpenFile(int fd, std::string path, bool regular, std::size_t size)
    : fd_(fd), path_(std::move(path)), regular_(regular), size_(size) {}

OpenFile::OpenFile(OpenFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), regular_(other.regular_), size_(other.size_) {}

OpenFile::~OpenFile() {
  if (fd_ >= 0 && fd_ != STDIN_FILENO) ::close(fd_);
}

std::optional<OpenFile> OpenFile::open(const std::string& path, FileError& error, bool dash_is_stdin) {
  error = {path, {}};
  int fd = dash_is_stdin && path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error.reason = std::strerror(errno);
    return std::nullopt;
  }
  OpenFile file(fd, path, false, 0);  // closes fd on the way out below
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error.reason = std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    error.reason = "is a directory";
    return std::nullopt;
  }
  // A device other than a terminal or the null device (/dev/zero,
  // /dev/urandom, a disk) never ends: reading it would not either.
  if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !::isatty(fd) && !is_null_device(st)) {
    error.reason = "is a device, not a file or a pipe";
    return std::nullopt;
  }
  file.regular_ = S_ISREG(st.st_mode);
  file.size_ = file.regular_ ? static_cast<std::size_t>(st.st_size) : 0;
  return file;
}

std::optional<std::size_t> OpenFile::read(std::span<char> buffer, FileError& error) {
  for (;;) {
    ssize_t n = ::read(fd_, buffer.data(), buffer.size());
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    error = {path_, std::strerror(errno)};
    return std::nullopt;
  }
}

bool OpenFile::read_rest(std::string& out, FileError& error, std::size_t limit) {
  if (regular_) out.reserve(out.size() + std::min(size_, limit));
  char buffer[1 << 16];
  std::size_t total = 0;
  for (;;) {
    auto n = read(buffer, error);
    if (!n) return false;
    if (*n == 0) return true;
    total += *n;
    if (total > limit) {  // a pipe has no size to check first; a file may grow while read
      error = {path_, fmt::format("larger than the {} bytes oomlens reads whole", limit)};
      return false;
    }
    out.append(buffer, *n);
  }
}

std::optional<std::string> read_file(const std::string& path, FileError& error, bool dash_is_stdin) {
  auto file = OpenFile::open(path, error, dash_is_stdin);
  if (!file) return std::nullopt;
  std::string text;
  if (!file->read_rest(text, error)) return std::nullopt;
  return text;
}

std::optional<std::size_t> read_at(int fd, char* into, std::size_t n, std::uint64_t offset) {
  for (;;) {
    const ssize_t got = ::pread(fd, into, n, static_cast<off_t>(offset));
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) return std::nullopt;
  }
}

}  // namespace oomlens::report
