#include "report/line_start.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "report/files.hpp"

namespace oomlens::report {
namespace {

// Lines are rarely longer: the searches read this much at a time, into
// room that is not zeroed, and most stop after the first read.
constexpr std::size_t kSearchStep = 64 * 1024;

}  // namespace

std::optional<std::uint64_t> line_start_after(int fd, std::uint64_t at) {
  const std::unique_ptr<char[]> block(new char[kSearchStep]);
  const std::uint64_t from = at - 1;  // a '\n' right before `at` makes `at` a line start
  for (std::uint64_t done = 0; done < kLineSearch + 1;) {
    const std::size_t want = std::min<std::uint64_t>(kSearchStep, kLineSearch + 1 - done);
    const std::optional<std::size_t> got = read_at(fd, block.get(), want, from + done);
    if (!got || *got == 0) return std::nullopt;
    if (const void* nl = std::memchr(block.get(), '\n', *got))
      return from + done + static_cast<std::uint64_t>(static_cast<const char*>(nl) - block.get()) + 1;
    done += *got;
  }
  return std::nullopt;
}

// `at` itself is safe to give: the bytes before a half's cut are its margin,
// whose results are dropped (only their count of lines matters).
std::uint64_t line_start_before(int fd, std::uint64_t at) {
  const std::uint64_t from = at > kLineSearch ? at - kLineSearch : 0;
  const std::unique_ptr<char[]> block(new char[kSearchStep]);
  for (std::uint64_t hi = at; hi > from;) {
    const std::uint64_t lo = hi - std::min<std::uint64_t>(kSearchStep, hi - from);
    const std::optional<std::size_t> got = read_at(fd, block.get(), static_cast<std::size_t>(hi - lo), lo);
    if (got != hi - lo) return at;
    if (const void* nl = memrchr(block.get(), '\n', *got))
      return lo + static_cast<std::uint64_t>(static_cast<const char*>(nl) - block.get()) + 1;
    hi = lo;
  }
  return from == 0 ? 0 : at;
}

}  // namespace oomlens::report
