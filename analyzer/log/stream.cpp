#include "analyzer/log/stream.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include <sys/mman.h>

#include "analyzer/log/text.hpp"
#include "analyzer/log/unwrap.hpp"

namespace oomlens::analyzer {
namespace {

// An anchor's bit in its line's mask of literals (Region::anchor_literals).
std::uint64_t literal_bits(std::uint32_t literal, const Reach& reach) {
  return reach.may_state_oom && literal < 64 ? std::uint64_t{1} << literal : 0;
}

const char* find_last(const char* p, std::size_t n, char c) {
  return static_cast<const char*>(memrchr(p, c, n));
}

// An owned buffer holds several reads of the usual size (1 MiB) before its
// tail is moved down to make room: each move copies the lookback kept behind
// the scan (about 320 KiB), which after every read was a third more copying
// than the read itself.
constexpr std::size_t kUsualRead = 1 << 20;
constexpr std::size_t kMinCapacity = 4 * kUsualRead;

constexpr std::size_t kHugePage = 2 << 20;

}  // namespace

void detail::StreamBufferRelease::operator()(char* p) const {
  if (mapped) ::munmap(p, mapped);
  else delete[] p;
}

namespace {

// AddressSanitizer checks the bounds of new[]'s room, not a mapping's (GCC
// says it is on with a macro, clang with __has_feature).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// Room for `bytes`, for reads of `read` bytes at a time. A reader of long
// input (a MiB a read) gets it in 2 MiB pages where the system gives them on
// request (transparent huge pages in "madvise" mode, Debian's default): each
// read copies into fresh room first, and in 4 KiB pages a long log's pieces
// took about 4,000 page faults a GiB, a trap each in a virtual machine (an
// eighth of a run's CPU, bench/README.md); in 2 MiB pages, two a buffer. A
// short input (a document the editor sent, fed whole) touches a few pages of
// its room and would pay for zeroing a whole 2 MiB one: it gets new[].
std::unique_ptr<char[], detail::StreamBufferRelease> owned_buffer(std::size_t bytes, std::size_t read) {
  if (!kAddressSanitizer && read >= kUsualRead && bytes >= kHugePage) {
    const std::size_t mapped = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = ::mmap(nullptr, mapped + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      // Aligned to a huge page, the rest given back.
      auto* base = static_cast<char*>(p);
      const auto skew = reinterpret_cast<std::uintptr_t>(base) % kHugePage;
      const std::size_t head = skew ? kHugePage - skew : 0;
      if (head) ::munmap(base, head);
      if (kHugePage - head) ::munmap(base + head + mapped, kHugePage - head);
      (void)::madvise(base + head, mapped, MADV_HUGEPAGE);  // a hint: without it, 4 KiB pages
      return {base + head, detail::StreamBufferRelease{mapped}};
    }
  }
  return {new char[bytes], detail::StreamBufferRelease{}};
}

}  // namespace

LogStream::LogStream(const LiteralScanner& scanner, RegionSink sink, StreamLimits limits)
    : scanner_(scanner), sink_(std::move(sink)), limits_(std::move(limits)) {
  // The full look back reads more lines than either first one (hand_over
  // decides from that alone whether it would reach further).
  limits_.lookback_lines =
      std::max({limits_.lookback_lines, limits_.first_lookback_lines + 1, limits_.shallow_lookback_lines + 1});
}

LogStream::~LogStream() = default;

std::span<char> LogStream::prepare(std::size_t n) {
  // The bytes no region needs any more are moved out of the way only when
  // the read does not fit behind them (see kMinCapacity).
  if (size_ + n > capacity_) drop_unneeded();
  if (size_ + n > capacity_) {
    std::size_t cap = std::max<std::size_t>({capacity_ * 2, size_ + n, kMinCapacity});
    auto bigger = owned_buffer(cap, n);
    if (size_) std::memcpy(bigger.get(), owned_.get(), size_);
    owned_ = std::move(bigger);
    bytes_ = owned_.get();
    capacity_ = cap;
  }
  return {owned_.get() + size_, n};
}

void LogStream::commit(std::size_t n) {
  if (n == 0) return;
  size_ += n;
  last_byte_newline_ = bytes_[size_ - 1] == '\n';
  scan_available(false);
}

void LogStream::feed_contiguous(std::string_view input, ReleaseFn release, const StepFn& step) {
  // The input stays where it is (a memory-mapped file): no copy at all. Bytes
  // behind what a region may still need are handed to `release`, so the
  // caller can drop them from memory.
  borrowed_ = true;
  bytes_ = input.data();
  base_ = 0;
  size_ = 0;
  release_ = std::move(release);
  constexpr std::size_t kStep = 1 << 20;  // cache-sized steps for the scanner
  while (size_ < input.size()) {
    size_ = std::min(input.size(), size_ + kStep);
    last_byte_newline_ = bytes_[size_ - 1] == '\n';
    scan_available(false);
    if (step && !step(size_)) break;
  }
}

void LogStream::feed(std::string_view bytes) {
  // Feed in pieces so a caller handing us a whole file keeps memory bounded.
  constexpr std::size_t kPiece = 1 << 20;
  while (!bytes.empty()) {
    std::size_t n = std::min(bytes.size(), kPiece);
    std::memcpy(prepare(n).data(), bytes.data(), n);
    commit(n);
    bytes.remove_prefix(n);
  }
}

void LogStream::finish() {
  finishing_ = true;
  scan_available(true);
  close_region_if_done(true);
}

std::uint64_t LogStream::lines_seen() const {
  return newlines_before_scanned_ + (end_offset() > 0 && !last_byte_newline_ ? 1 : 0);
}

void LogStream::scan_available(bool at_end) {
  std::uint64_t end = end_offset();
  if (scanned_ >= end) return;
  std::uint64_t limit = end;
  bool hard_cut = false;
  if (!at_end) {
    // Scan whole lines only: no anchor contains '\n', so none is cut in two.
    const char* nl = find_last(at(scanned_), end - scanned_, '\n');
    if (nl) {
      limit = offset_of(nl) + 1;
    } else if (end - scanned_ >= limits_.max_unbroken_bytes) {
      // A line without '\n' this long is a progress bar redrawn with '\r'
      // (cut there) or hostile input (cut anywhere, rescanning an overlap).
      const char* cr = find_last(at(scanned_), end - scanned_, '\r');
      if (cr) {
        limit = offset_of(cr) + 1;
      } else {
        hard_cut = true;
      }
    } else {
      return;
    }
  }
  std::uint64_t start = scanned_ - carry_;
  hits_.clear();
  const std::uint64_t newlines_before_start = newlines_before_scanned_;
  const std::size_t newlines = scanner_.scan(std::string_view(at(start), limit - start), hits_);
  for (const ScanHit& h : hits_) {
    std::uint64_t abs = start + h.offset;
    if (abs + scanner_.literals()[h.literal].size() <= dedupe_below_) continue;
    on_hit(abs, h.literal, newlines_before_start + h.newlines_before + 1);
  }
  // Counted only now: regions emitted while the hits were handled number
  // their lines from their anchors, never from this running total.
  newlines_before_scanned_ += newlines;
  scanned_ = limit;
  if (hard_cut) {
    carry_ = std::min<std::size_t>(scanner_.longest() - 1, limit - base_);
    dedupe_below_ = limit;
  } else {
    carry_ = 0;
  }
  close_region_if_done(at_end);
  trim();
}

std::uint64_t LogStream::line_end(std::uint64_t offset) const {
  std::uint64_t end = std::min(scanned_ > offset ? scanned_ : end_offset(), end_offset());
  if (offset >= end) return end;
  const void* nl = std::memchr(at(offset), '\n', end - offset);
  return nl ? offset_of(nl) : end;
}

const AnchorPolicy& LogStream::policy_of(std::uint32_t literal) const {
  static const AnchorPolicy kDefault;
  return literal < limits_.anchors.size() ? limits_.anchors[literal] : kDefault;
}

std::optional<Reach> LogStream::reach_of(std::uint64_t offset, const AnchorPolicy& policy) const {
  if (!policy.gate && !policy.refine) return policy.reach;
  constexpr std::uint64_t kReach = 512;
  const std::uint64_t lo = std::max<std::uint64_t>(base_, offset > kReach ? offset - kReach : 0);
  const std::uint64_t hi = std::min<std::uint64_t>(end_offset(), offset + kReach);
  std::uint64_t begin = lo, end = hi;
  for (char stop : {'\n', '\r'}) {
    if (const char* p = offset > begin ? find_last(at(begin), offset - begin, stop) : nullptr) begin = offset_of(p) + 1;
    if (const void* p = std::memchr(at(offset), stop, end - offset)) end = offset_of(p);
  }
  std::string_view piece(at(begin), end - begin);
  // Escapes may hide words: let the parser judge, from as far as it may need.
  if (piece.find('\x1b') != std::string_view::npos) return policy.reach;
  if (policy.gate && !policy.gate(piece, offset - begin)) return std::nullopt;
  return policy.refine ? policy.refine(piece, offset - begin) : policy.reach;
}

void LogStream::on_hit(std::uint64_t offset, std::uint32_t literal, std::uint64_t line) {
  const std::optional<Reach> reach = reach_of(offset, policy_of(literal));
  if (!reach) return;
  // A hit past what the open region's parsers read starts a region of its
  // own: the lines between are nobody's and are never cleaned.
  if (open_ && line > open_->until_line) {
    auto end = lookahead_end(offset);
    const char* nl = offset > base_ ? find_last(at(base_), offset - base_, '\n') : nullptr;
    const std::uint64_t line_start = nl ? offset_of(nl) + 1 : base_;
    emit_region(end ? std::min(*end, line_start) : line_start);
  }
  // The lookback may reach into regions already emitted: their anchors were
  // handled there, and a traceback above this anchor is read again here.
  std::uint64_t floor = base_;
  std::uint64_t le = line_end(offset);
  const bool deep_anchor = reach->deep_lookback;
  if (open_) {
    if (le - open_->start <= limits_.max_region_bytes) {
      if (open_->anchors.empty() || open_->anchors.back() != offset) {
        open_->anchors.push_back(offset);
        open_->literal_bits.push_back(literal_bits(literal, *reach));
      }
      if (le > open_->last_anchor_end) {
        open_->last_anchor_end = le;
        open_->last_anchor_line = line;
      }
      open_->until_line = std::max(open_->until_line, line + reach->lookahead_lines);
      open_->deep = open_->deep || deep_anchor;
      return;
    }
    // The open region is full: it ends where the new anchor's line begins.
    std::uint64_t lo = std::max(open_->last_anchor_end, floor);
    const char* nl = offset > lo ? find_last(at(lo), offset - lo, '\n') : nullptr;
    emit_region(nl ? offset_of(nl) + 1 : lo);
  }
  // Walk back over the lines before the anchor: that is where a traceback
  // is. Deep anchors look a short way first; a parser that needs more asks
  // for the region again (emit_region).
  const bool deep = reach->deep_lookback;
  auto [start, start_line] = lookback_start(offset, line, deep ? limits_.first_lookback_lines : limits_.shallow_lookback_lines,
                                            deep ? limits_.first_lookback_bytes : limits_.shallow_lookback_bytes);
  open_ = spare_ ? std::move(spare_) : std::make_unique<OpenRegion>();
  open_->start = start;
  open_->start_line = start_line;
  open_->deep = deep;
  open_->first_anchor = offset;
  open_->first_anchor_line = line;
  open_->anchors.push_back(offset);
  open_->literal_bits.push_back(literal_bits(literal, *reach));
  open_->last_anchor_end = le;
  open_->last_anchor_line = line;
  open_->until_line = line + reach->lookahead_lines;
}

std::pair<std::uint64_t, std::uint64_t> LogStream::lookback_start(std::uint64_t offset, std::uint64_t line,
                                                                  std::size_t back_lines, std::size_t back_bytes) const {
  const std::uint64_t floor = base_;
  std::uint64_t start = offset;
  std::uint64_t min_start = offset > floor + back_bytes ? offset - back_bytes : floor;
  std::size_t lines = 0;
  while (start > min_start) {
    const char* nl = find_last(at(min_start), start - min_start, '\n');
    if (!nl) {
      start = min_start;
      break;
    }
    std::uint64_t nl_off = offset_of(nl);
    if (lines++ > back_lines) {
      start = nl_off + 1;
      break;
    }
    start = nl_off;  // continue before this newline
  }
  if (start < offset && *at(start) == '\n') ++start;
  return {start, line - count_newlines(std::string_view(at(start), offset - start))};
}

std::optional<std::uint64_t> LogStream::lookahead_end(std::uint64_t limit) const {
  const std::uint64_t from = open_->last_anchor_end;
  const std::uint64_t cap = from + limits_.lookahead_bytes;
  const std::uint64_t bound = std::min(limit, cap);
  std::uint64_t pos = from, line = open_->last_anchor_line;
  while (pos < bound) {
    const void* nl = std::memchr(at(pos), '\n', bound - pos);
    if (!nl) {
      pos = bound;
      break;
    }
    pos = offset_of(nl) + 1;
    if (++line > open_->until_line) return pos;
  }
  if (limit >= cap) return pos;
  return std::nullopt;
}

void LogStream::close_region_if_done(bool at_end) {
  if (!open_) return;
  if (auto end = lookahead_end(scanned_)) emit_region(*end);
  else if (at_end) emit_region(end_offset());
}

Region LogStream::build_region(const OpenRegion& region_bytes, std::uint64_t start, std::uint64_t start_line,
                               std::uint64_t end) {
  end = std::max(end, start);
  Region region;
  if (spare_region_) {
    region = std::move(*spare_region_);
    spare_region_.reset();
  }
  // Most regions are a few lines: room for them at once, not by doubling.
  region.lines.reserve(8);
  std::uint64_t number = start_line;
  std::size_t next_anchor = 0;
  const auto& anchors = region_bytes.anchors;

  auto add_segment = [&](std::uint64_t line_start, std::uint64_t a, std::uint64_t b) {
    if (a >= b) return;
    // Most lines have no colour codes: read them in place, copy once.
    std::string_view raw(at(a), b - a);
    std::string stripped;
    if (std::memchr(raw.data(), '\x1b', raw.size())) raw = stripped = strip_ansi(raw);
    LinePrefix prefix = read_prefix(raw);
    Line line{number, line_start, pooled_text(raw.substr(prefix.length)), prefix.rank, prefix.time_ms,
              display_columns(raw), static_cast<std::uint32_t>(std::min<std::size_t>(raw.size(), UINT32_MAX))};
    line.redrawn = a != line_start;
    bool anchored = false;
    std::uint64_t mask = 0;
    while (next_anchor < anchors.size() && anchors[next_anchor] < b) {
      if (anchors[next_anchor] >= a) {
        anchored = true;
        mask |= region_bytes.literal_bits[next_anchor];
      }
      ++next_anchor;
    }
    if (line.text.empty() && !anchored) {
      keep_text(std::move(line.text));
      return;
    }
    region.lines.push_back(std::move(line));
    if (anchored) {
      region.anchors.push_back(region.lines.size() - 1);
      region.anchor_literals.push_back(mask);
    }
  };
  // A raw line splits into one Line per '\r' redraw segment.
  auto add_piece = [&](std::uint64_t line_start, std::uint64_t a, std::uint64_t b) {
    while (a < b) {
      const void* cr = std::memchr(at(a), '\r', b - a);
      std::uint64_t seg_end = cr ? offset_of(cr) : b;
      add_segment(line_start, a, seg_end);
      a = seg_end + 1;
    }
  };

  std::uint64_t pos = start;
  while (pos < end) {
    const void* nl = std::memchr(at(pos), '\n', end - pos);
    std::uint64_t le = nl ? offset_of(nl) : end;
    if (le - pos <= limits_.max_line_bytes) {
      add_piece(pos, pos, le);
    } else {
      // A huge raw line: keep windows around its anchors, else only its tail
      // (the last redraw of a progress bar is what the terminal showed).
      std::uint64_t half = limits_.max_line_bytes / 2;
      std::uint64_t covered = pos;
      bool any = false;
      for (std::size_t k = next_anchor; k < anchors.size() && anchors[k] < le; ++k) {
        std::uint64_t a = std::max({pos, covered, anchors[k] > half ? anchors[k] - half : 0});
        std::uint64_t b = std::min(le, anchors[k] + half);
        if (b > a) add_piece(pos, a, b);
        covered = std::max(covered, b);
        any = true;
      }
      if (!any) add_piece(pos, std::max(pos, le - std::min<std::uint64_t>(le - pos, 4096)), le);
      while (next_anchor < anchors.size() && anchors[next_anchor] < le) ++next_anchor;
    }
    ++number;
    pos = le + 1;
  }
  region.reaches_end = finishing_ && end >= end_offset();
  join_hard_wraps(region);
  return region;
}

namespace {
// Enough texts for the regions of most anchors (a few lines each; a deep one's
// lines beyond these are allocated as before), and no text longer than most
// lines: the pool stays under 256 KiB a stream.
constexpr std::size_t kPooledTexts = 256;
constexpr std::size_t kPooledCapacity = 1024;
}  // namespace

void LogStream::recycle(Region&& region) {
  for (Line& line : region.lines) keep_text(std::move(line.text));
  Region emptied;  // fresh fields, the vectors' room kept
  emptied.lines = std::move(region.lines);
  emptied.lines.clear();
  emptied.anchors = std::move(region.anchors);
  emptied.anchors.clear();
  emptied.anchor_literals = std::move(region.anchor_literals);
  emptied.anchor_literals.clear();
  spare_region_ = std::move(emptied);
}

void LogStream::keep_text(std::string&& text) {
  // A short text lives inside its string (no allocation to save).
  static const std::size_t inline_capacity = std::string().capacity();
  if (text.capacity() > inline_capacity && text.capacity() <= kPooledCapacity && text_pool_.size() < kPooledTexts)
    text_pool_.push_back(std::move(text));
}

std::string LogStream::pooled_text(std::string_view text) {
  if (text_pool_.empty()) return std::string(text);
  std::string pooled = std::move(text_pool_.back());
  text_pool_.pop_back();
  pooled.assign(text);
  return pooled;
}

void LogStream::emit_region(std::uint64_t end) {
  // The open region's buffers serve the next one: a log full of look-alikes
  // opens tens of thousands of regions.
  std::unique_ptr<OpenRegion> region_bytes = std::move(open_);
  hand_over(*region_bytes, end);
  region_bytes->anchors.clear();
  region_bytes->literal_bits.clear();
  spare_ = std::move(region_bytes);
}

void LogStream::hand_over(const OpenRegion& region_bytes, std::uint64_t end) {
  Region region = build_region(region_bytes, region_bytes.start, region_bytes.start_line, end);
  if (region.anchors.empty()) return;
  // The full look back has more lines than the first (see the constructor):
  // it starts further back exactly when the first stopped short of the bytes
  // the full one may read. Walked only when asked for: walking it for every
  // deep region (up to 256 KiB back) cost more than parsing most of them.
  const std::uint64_t deepest = region_bytes.first_anchor > base_ + limits_.lookback_bytes
                                    ? region_bytes.first_anchor - limits_.lookback_bytes
                                    : base_;
  const bool further = region_bytes.deep && region_bytes.start > deepest;
  region.can_look_further_back = further;
  if (!sink_(std::move(region)) || !further) return;
  const auto [start, start_line] = lookback_start(region_bytes.first_anchor, region_bytes.first_anchor_line,
                                                  limits_.lookback_lines, limits_.lookback_bytes);
  sink_(build_region(region_bytes, start, start_line, end));
}

void LogStream::trim() {
  // Keep what a future region may look back at, and the open region.
  std::uint64_t keep = scanned_ - std::min<std::uint64_t>(scanned_ - base_, limits_.lookback_bytes + limits_.max_line_bytes);
  keep = std::min<std::uint64_t>(keep, scanned_ - std::min<std::uint64_t>(carry_, scanned_ - base_));
  if (open_) {
    keep = std::min(keep, open_->start);
    // What a longer look back from the region's first anchor would read.
    const std::uint64_t back = open_->first_anchor > limits_.lookback_bytes ? open_->first_anchor - limits_.lookback_bytes : 0;
    keep = std::min(keep, std::max(back, base_));
  }
  if (borrowed_) {
    // Release in steps: each call costs the caller a system call, and the
    // bytes not yet released count in its memory (a mapped file's pages).
    constexpr std::uint64_t kReleaseStep = 4 << 20;
    if (release_ && keep >= released_ + kReleaseStep) {
      release_(released_, keep - released_);
      released_ = keep;
    }
    return;
  }
  // Dropped when the next read needs the room (prepare).
  droppable_until_ = keep;
}

void LogStream::drop_unneeded() {
  const std::size_t drop = droppable_until_ > base_ ? static_cast<std::size_t>(droppable_until_ - base_) : 0;
  // Only when that frees a good share (else the buffer grows): amortised O(1)
  // per byte. Nothing to drop (the first read, before any buffer) is no move.
  if (drop == 0 || (drop < kUsualRead && drop < size_ / 2)) return;
  std::memmove(owned_.get(), owned_.get() + drop, size_ - drop);
  size_ -= drop;
  base_ += drop;
  bytes_ = owned_.get();
}

}  // namespace oomlens::analyzer
