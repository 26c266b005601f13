// A range of a regular file mapped read-only, for reading a long file without
// copying it: memory snapshots are parsed in place.
//
// A mapped file can shrink under the reader (a log rotated or truncated while
// it is read). Touching a page past the new end raises SIGBUS, which would
// kill the process. While a range is mapped, a SIGBUS handler maps zeros over
// the rest of the range at the faulting page and notes it: the reader sees
// zeros where bytes vanished, and `vanished()` tells the caller to throw the
// result away. A SIGBUS at any other address keeps its default action.
#pragma once

#include <cstdint>
#include <string_view>

namespace oomlens::report {

class MappedRange {
 public:
  // Maps `length` bytes of `fd` from `offset` (any offset: the mapping starts
  // at the page below it), to be read front to back (the kernel reads ahead).
  // `ok()` is false when the system refused. `fd` stays open while the range
  // is used: vanished() asks it for the file's size.
  MappedRange(int fd, std::uint64_t offset, std::uint64_t length);
  ~MappedRange();
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;

  bool ok() const { return bytes_ != nullptr; }
  // The mapped bytes, from `offset`.
  std::string_view bytes() const { return {bytes_, static_cast<std::size_t>(length_)}; }
  // Drops the pages wholly before `end` (an offset into bytes()), down to a
  // 2 MiB boundary of the mapping (see kHugePage), from memory:
  // they count in the process's memory until then. Read again, they come
  // back from the page cache.
  void release_before(std::uint64_t end);
  // The file shrank below the range's end: what was read past its new end is
  // zeros, not the file. Either a page was gone when read (the fault the
  // handler repaired), or the file is now shorter than the range (the kernel
  // fills the rest of the last page with zeros and raises no fault there).
  bool vanished() const;
  // The first half of vanished(), without the system call: a page was gone
  // when read. Cheap enough to ask at every step of a long read, to stop
  // early; the final verdict is vanished()'s.
  bool faulted() const;

 private:
  char* mapping_ = nullptr;   // page-aligned start
  std::uint64_t mapped_ = 0;  // length of the mapping
  const char* bytes_ = nullptr;
  std::uint64_t length_ = 0;
  int fd_ = -1;
  std::uint64_t end_ = 0;  // the range's end in the file
  int slot_ = -1;  // in the SIGBUS handler's table; -1: not guarded
  std::uint64_t released_ = 0;  // the mapping's pages before this are released
};

}  // namespace oomlens::report
