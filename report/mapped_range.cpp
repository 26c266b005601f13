#include "report/mapped_range.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace oomlens::report {
namespace {

// The mapped ranges the handler may repair, as [begin, end) addresses. A slot
// is claimed by storing its end last and freed by clearing its begin first,
// so the handler never sees a half-written range.
struct GuardSlot {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<bool> taken{false};
  std::atomic<bool> vanished{false};
};
constexpr std::size_t kSlots = 16;
std::array<GuardSlot, kSlots> g_slots;
std::uintptr_t g_page = 4096;
struct sigaction g_previous {};

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (GuardSlot& slot : g_slots) {
    const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    const std::uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= end) continue;
    // Zeros from the faulting page to the range's end, in one mapping: a file
    // cut to nothing would otherwise raise one signal per page.
    char* page = static_cast<char*>(info->si_addr) - (address & (g_page - 1));
    void* zeros = ::mmap(page, end - reinterpret_cast<std::uintptr_t>(page), PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zeros == MAP_FAILED) break;
    slot.vanished.store(true, std::memory_order_release);
    return;  // the access is made again, and reads zeros
  }
  // Not one of ours: what would have happened without this handler.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) return g_previous.sa_sigaction(signal, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    return g_previous.sa_handler(signal);
  }
  ::sigaction(SIGBUS, &g_previous, nullptr);  // the fault repeats with the old action
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous);
  });
}

int claim_slot(std::uintptr_t begin, std::uintptr_t end) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].taken.compare_exchange_strong(expected, true)) continue;
    g_slots[i].vanished.store(false);
    g_slots[i].end.store(end, std::memory_order_release);
    g_slots[i].begin.store(begin, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

MappedRange::MappedRange(int fd, std::uint64_t offset, std::uint64_t length) {
  install_handler();
  const std::uint64_t start = offset / g_page * g_page;
  mapped_ = length + (offset - start);
  if (length == 0) return;
  void* m = ::mmap(nullptr, mapped_, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
  if (m == MAP_FAILED) return;
  mapping_ = static_cast<char*>(m);
  slot_ = claim_slot(reinterpret_cast<std::uintptr_t>(mapping_), reinterpret_cast<std::uintptr_t>(mapping_) + mapped_);
  if (slot_ < 0) {  // more ranges than slots: not safe to read
    ::munmap(mapping_, mapped_);
    mapping_ = nullptr;
    return;
  }
  ::madvise(mapping_, mapped_, MADV_SEQUENTIAL);
  bytes_ = mapping_ + (offset - start);
  length_ = length;
  fd_ = fd;
  end_ = offset + length;
}

MappedRange::~MappedRange() {
  if (!mapping_) return;
  GuardSlot& slot = g_slots[static_cast<std::size_t>(slot_)];
  slot.begin.store(0, std::memory_order_release);
  slot.end.store(0, std::memory_order_release);
  ::munmap(mapping_, mapped_);
  slot.taken.store(false, std::memory_order_release);
}

// The page cache can hold a file in 2 MiB folios, which the kernel maps with
// one page-table entry each. Dropping part of one splits that entry first
// (a TLB flush on every core the process runs on), so releases stop at the
// last such boundary instead: at most 2 MiB more stays mapped.
constexpr std::uint64_t kHugePage = 2 << 20;

void MappedRange::release_before(std::uint64_t end) {
  if (!mapping_) return;
  const auto skew = static_cast<std::uint64_t>(bytes_ - mapping_);
  std::uint64_t to = std::min(mapped_, (skew + end) / g_page * g_page);
  if (to < mapped_) {
    const auto at = reinterpret_cast<std::uintptr_t>(mapping_) + to;
    const std::uint64_t cut = at % kHugePage;
    to = to > cut ? to - cut : 0;
  }
  if (to <= released_) return;
  ::madvise(mapping_ + released_, to - released_, MADV_DONTNEED);
  released_ = to;
}

bool MappedRange::faulted() const {
  return mapping_ && g_slots[static_cast<std::size_t>(slot_)].vanished.load(std::memory_order_acquire);
}

bool MappedRange::vanished() const {
  if (!mapping_) return false;
  if (faulted()) return true;
  struct stat now {};
  return ::fstat(fd_, &now) != 0 || static_cast<std::uint64_t>(now.st_size) < end_;
}

}  // namespace oomlens::report
