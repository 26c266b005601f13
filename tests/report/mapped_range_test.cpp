// A mapped range of a file (report/mapped_range.hpp): its bytes, its release,
// and a file that shrinks under it.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "report/mapped_range.hpp"
#include "tests/temp_tree.hpp"

using oomlens::report::MappedRange;

// Under AddressSanitizer its own SIGBUS handler was installed first.
#if defined(__SANITIZE_ADDRESS__)
#define OOMLENS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOMLENS_TEST_ASAN 1
#endif
#endif

namespace {

// Bytes that tell every offset apart (no run of one byte longer than 255).
std::string numbered_bytes(std::size_t n) {
  std::string text(n, '\0');
  for (std::size_t i = 0; i < n; ++i) text[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return text;
}

struct Fd {
  int fd;
  explicit Fd(const std::string& path, int flags = O_RDONLY) : fd(::open(path.c_str(), flags)) { REQUIRE(fd >= 0); }
  ~Fd() { ::close(fd); }
};

// `text` written to a file, open for writing, and a range mapping all of it.
struct MappedTemp {
  oomlens::testing::TempTree tree;
  Fd file;
  MappedRange range;
  MappedTemp(const std::string& name, const std::string& text)
      : file(tree.write(name, text), O_RDWR), range(file.fd, 0, text.size()) {
    REQUIRE(range.ok());
  }
};

}  // namespace

TEST_CASE("a mapped range holds the file's bytes from any offset, also after it releases them") {
  oomlens::testing::TempTree tree;
  // Larger than two huge pages: releases go by whole huge pages where they can.
  const std::string text = numbered_bytes(3 * (2 << 20) + 123);
  tree.file("a.log", text);
  Fd file(tree.path("a.log"));
  for (std::uint64_t offset : {0ull, 1ull, 4095ull, 4096ull, 70001ull, (2ull << 20) + 1}) {
    INFO("offset " << offset);
    const std::string_view want = std::string_view(text).substr(offset, text.size() - offset - 5);
    MappedRange range(file.fd, offset, want.size());
    REQUIRE(range.ok());
    CHECK(range.bytes() == want);
    range.release_before(200000);  // the pages wholly before go, and come back when read
    range.release_before(100);
    range.release_before((3 << 20) + 5);
    CHECK(range.bytes().substr(0, 3 << 20) == want.substr(0, 3 << 20));
    range.release_before(range.bytes().size());
    CHECK(range.bytes() == want);
    CHECK_FALSE(range.faulted());
    CHECK_FALSE(range.vanished());
  }
}

TEST_CASE("a file cut short under a mapped range reads as zeros past its new end, and says so") {
  oomlens::testing::TempTree tree;
  const std::string text = numbered_bytes(64 * 4096);
  tree.file("moving.log", text);
  Fd file(tree.path("moving.log"), O_RDWR);
  const MappedRange range(file.fd, 100, text.size() - 100);
  REQUIRE(range.ok());
  CHECK(range.bytes().substr(0, 5000) == std::string_view(text).substr(100, 5000));  // pages now mapped
  REQUIRE(::ftruncate(file.fd, 10 * 4096 + 17) == 0);
  // Every byte read, without a SIGBUS: the file's own up to its last page,
  // zeros after it (the kernel zero-fills the last page past the end).
  std::size_t zeros_from = range.bytes().size();
  while (zeros_from > 0 && range.bytes()[zeros_from - 1] == '\0') --zeros_from;
  CHECK(zeros_from == 10 * 4096 + 17 - 100);
  CHECK(range.bytes().substr(0, zeros_from) == std::string_view(text).substr(100, zeros_from));
  CHECK(range.faulted());  // the pages past the new last one were gone
  CHECK(range.vanished());

  // Another range of another file is not touched by it.
  tree.file("still.log", text);
  Fd still(tree.path("still.log"));
  const MappedRange other(still.fd, 0, text.size());
  CHECK(other.bytes() == text);
  CHECK_FALSE(other.vanished());
}

TEST_CASE("a file cut short under a mapped range says so before any page past its end is read") {
  // The kernel fills the rest of the new last page with zeros and raises no
  // fault there: only the file's size tells a reader that stopped in that
  // page that it read zeros.
  const std::string text = numbered_bytes(16 * 4096);
  MappedTemp mapped("rotated.log", text);
  CHECK_FALSE(mapped.range.vanished());
  REQUIRE(::ftruncate(mapped.file.fd, 4096 + 17) == 0);
  CHECK(mapped.range.bytes().substr(0, 4096 + 17) == std::string_view(text).substr(0, 4096 + 17));
  CHECK(mapped.range.bytes()[4096 + 17] == '\0');
  CHECK_FALSE(mapped.range.faulted());  // no page was gone when read...
  CHECK(mapped.range.vanished());       // ...but the file is shorter than the range
}

TEST_CASE("a file that grows under a mapped range has not vanished") {
  const std::string text = numbered_bytes(8 * 4096);
  MappedTemp mapped("growing.log", text);
  REQUIRE(::ftruncate(mapped.file.fd, static_cast<off_t>(2 * text.size())) == 0);
  CHECK(mapped.range.bytes() == text);
  CHECK_FALSE(mapped.range.vanished());
}

TEST_CASE("a SIGBUS outside every mapped range still ends the process") {
  oomlens::testing::TempTree tree;
  const std::string text = numbered_bytes(16 * 4096);
  tree.file("a.log", text);
  tree.file("b.log", text);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::alarm(20);  // a handler that swallowed the fault would spin on it
    Fd a(tree.path("a.log"));
    const MappedRange guarded(a.fd, 0, text.size());  // installs the handler
    Fd b(tree.path("b.log"), O_RDWR);
    void* raw = ::mmap(nullptr, text.size(), PROT_READ, MAP_PRIVATE, b.fd, 0);
    if (raw == MAP_FAILED || ::ftruncate(b.fd, 0) != 0) ::_exit(3);
    volatile char c = static_cast<const char*>(raw)[8 * 4096];
    (void)c;
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
#if defined(OOMLENS_TEST_ASAN)
  // AddressSanitizer's handler was there first: it reports the fault and exits.
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3));
#else
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGBUS);
#endif
}
