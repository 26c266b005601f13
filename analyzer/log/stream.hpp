// Streaming over a log of any size with bounded memory: the scanner finds
// anchors in the raw bytes, and only the lines around them (a Region) are
// cleaned and handed on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/log/line.hpp"
#include "analyzer/log/scan.hpp"

namespace oomlens::analyzer {

// What the stream does with a hit of one scanner literal. Ordinary training
// output hits some literals now and then ("Killed 3 zombie workers", a
// config dump naming PYTORCH_CUDA_ALLOC_CONF); the gate drops those on the
// raw bytes, and the budgets keep the lines cleaned around a kept hit to what
// its parser reads. Together they make the cost follow the failures in a
// log, not its chatter.
// How far around a kept hit its parsers read.
struct Reach {
  bool deep_lookback = true;  // the lines above may be a Python traceback to walk
  // Lines after the anchor's line that its parser may read (wrapped and
  // multi-line messages, summaries, dumps, what follows a message).
  std::uint32_t lookahead_lines = 200;
  // False: the piece is a form of its literal that never states a GPU
  // out-of-memory (the kernel's OOM killer: "Out of memory: Killed process").
  // The hit keeps its region, but its line skips the OOM parsers, whose
  // patterns would otherwise all run over every such line.
  bool may_state_oom = true;
};

struct AnchorPolicy {
  // Cheap test on the raw text around the hit: `piece` is the '\r'/'\n'-free
  // run of bytes holding it (at most a few hundred bytes each side), `at`
  // where the literal starts in it. False drops the hit before any line is
  // cleaned. Null: every hit is kept. Pieces with ANSI escapes skip the gate.
  bool (*gate)(std::string_view piece, std::size_t at) = nullptr;
  Reach reach;
  // When set, decides the reach of a kept hit from its piece instead (one
  // literal covers messages that need a line and messages followed by a
  // 4000-line dump).
  Reach (*refine)(std::string_view piece, std::size_t at) = nullptr;
};

struct StreamLimits {
  std::size_t lookback_lines = 1500;         // a deep traceback of 8 interleaved ranks
  std::size_t lookback_bytes = 256 * 1024;
  // Deep anchors first look back only this far: most messages that match an
  // anchor have no long traceback above them, and cleaning 1500 lines for
  // each cost most of the time on logs full of look-alikes. A region whose
  // consumer finds a traceback running into its first line is built again
  // with the full lookback above.
  std::size_t first_lookback_lines = 64;
  std::size_t first_lookback_bytes = 16 * 1024;
  // Anchors that never need a traceback (signals, settings, warnings) look
  // back only this far: most anchors in a long log are of that kind.
  std::size_t shallow_lookback_lines = 1;
  std::size_t shallow_lookback_bytes = 2 * 1024;
  // For each scanner literal, by index. A literal without one gets the
  // default policy (no gate, deep lookback, 200 lines ahead).
  std::vector<AnchorPolicy> anchors;
  std::size_t lookahead_bytes = 256 * 1024;   // whatever the lines, never more than this
  std::size_t max_region_bytes = 2 * 1024 * 1024;  // then the region is cut and a new one starts
  std::size_t max_line_bytes = 64 * 1024;     // longer raw lines keep windows around anchors
  std::size_t max_unbroken_bytes = 4 * 1024 * 1024;  // scan a line without '\n' in pieces past this
};

namespace detail {
// Frees a LogStream's own buffer as it was allocated (see owned_buffer in
// stream.cpp).
struct StreamBufferRelease {
  std::size_t mapped = 0;  // bytes mapped for it; 0: from new[]
  void operator()(char* p) const;
};
}  // namespace detail

class LogStream {
 public:
  // Gets each region; returns true to have it again with the full lookback
  // (only ever asked when region.can_look_further_back), after discarding
  // what it read from this one.
  using RegionSink = std::function<bool(Region&&)>;
  // Called with (offset, length) of input bytes the stream will not read again.
  using ReleaseFn = std::function<void(std::uint64_t, std::uint64_t)>;

  LogStream(const LiteralScanner& scanner, RegionSink sink, StreamLimits limits = {});
  ~LogStream();

  // Zero-copy feeding: write up to `n` bytes into prepare(n), then commit them.
  std::span<char> prepare(std::size_t n);
  void commit(std::size_t n);
  void feed(std::string_view bytes);
  // The whole input at once, read in place (a mapped file); use instead of
  // prepare/commit/feed, then call finish().
  // `step`, when given, is called after each megabyte read with the bytes
  // read so far; returning false stops the reading there (the rest unread).
  using StepFn = std::function<bool(std::uint64_t)>;
  void feed_contiguous(std::string_view input, ReleaseFn release, const StepFn& step = {});
  // End of input: scans what is left and emits the last region.
  void finish();

  // A region its sink is done with: its lines' texts and its vectors' room
  // serve the regions built after it, instead of fresh allocations (a log
  // full of look-alikes builds a quarter of a million lines a GiB, each a
  // malloc and a free). Optional: a region never given back is just freed.
  void recycle(Region&& region);

  std::uint64_t bytes_seen() const { return end_offset(); }
  // Lines in the input so far, counted by '\n' (a last line without one counts).
  std::uint64_t lines_seen() const;

 private:
  std::uint64_t end_offset() const { return base_ + size_; }
  const char* at(std::uint64_t offset) const { return bytes_ + (offset - base_); }
  std::uint64_t offset_of(const void* p) const { return static_cast<std::uint64_t>(static_cast<const char*>(p) - bytes_) + base_; }
  void scan_available(bool at_end);
  // `line` is the hit's 1-based line number.
  void on_hit(std::uint64_t offset, std::uint32_t literal, std::uint64_t line);
  // The reach of a hit, or nothing when its gate drops it.
  std::optional<Reach> reach_of(std::uint64_t offset, const AnchorPolicy& policy) const;
  const AnchorPolicy& policy_of(std::uint32_t literal) const;
  void close_region_if_done(bool at_end);
  // Where the open region's lookahead ends (after its until_line, or its
  // byte cap), looking no further than `limit`; nothing if not yet known.
  std::optional<std::uint64_t> lookahead_end(std::uint64_t limit) const;
  void emit_region(std::uint64_t end);
  // Where a look back of at most `back_lines` lines and `back_bytes` bytes
  // from the anchor at `offset` (on line `line`) starts, and that line's number.
  std::pair<std::uint64_t, std::uint64_t> lookback_start(std::uint64_t offset, std::uint64_t line,
                                                         std::size_t back_lines, std::size_t back_bytes) const;
  // Notes which bytes no region needs any more (or releases them, when borrowed).
  void trim();
  // Moves the bytes after those down to the buffer's start.
  void drop_unneeded();
  std::uint64_t line_end(std::uint64_t offset) const;

  const LiteralScanner& scanner_;
  RegionSink sink_;
  StreamLimits limits_;

  // Bytes from base_ on. Not a std::string/vector: those zero-fill on growth,
  // a whole extra pass over a multi-gigabyte log.
  std::unique_ptr<char[], detail::StreamBufferRelease> owned_;
  const char* bytes_ = nullptr;  // the byte at base_: owned_, or the borrowed input
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  bool borrowed_ = false;
  ReleaseFn release_;
  std::uint64_t released_ = 0;
  std::uint64_t droppable_until_ = 0;  // bytes before this offset are needed no more (owned buffer)
  std::uint64_t base_ = 0;     // absolute offset of buf_[0]
  std::uint64_t scanned_ = 0;  // absolute offset up to which bytes were scanned
  std::uint64_t newlines_before_scanned_ = 0;
  std::uint64_t dedupe_below_ = 0;  // hits ending at or before this were reported by a previous piece
  std::size_t carry_ = 0;           // bytes before scanned_ to rescan after a hard cut
  std::vector<ScanHit> hits_;

  struct OpenRegion {
    std::uint64_t start = 0;          // first byte (a line start, or a cut in a huge line)
    std::uint64_t start_line = 1;     // the line number of that byte
    std::uint64_t last_anchor_end = 0;  // end of the last anchor's line...
    std::uint64_t last_anchor_line = 0;  // ...and its number
    std::uint64_t until_line = 0;       // the last line any anchor's parser may read
    bool deep = false;                  // an anchor that may sit under a traceback
    std::uint64_t first_anchor = 0;     // where a longer look back starts from...
    std::uint64_t first_anchor_line = 0;
    std::vector<std::uint64_t> anchors;
    // The bits each anchor adds to its line's Region::anchor_literals: its
    // scanner literal's, or none when its reach says it states no OOM.
    std::vector<std::uint64_t> literal_bits;
  };
  std::unique_ptr<OpenRegion> open_;
  std::unique_ptr<OpenRegion> spare_;  // an emitted region's, emptied, for the next one
  // Builds the region (again, with a longer look back, when its consumer asks) and hands it on.
  void hand_over(const OpenRegion& region_bytes, std::uint64_t end);
  Region build_region(const OpenRegion& region_bytes, std::uint64_t start, std::uint64_t start_line,
                      std::uint64_t end);
  // `text` in a recycled string when there is one.
  std::string pooled_text(std::string_view text);
  void keep_text(std::string&& text);
  std::vector<std::string> text_pool_;
  std::optional<Region> spare_region_;  // a recycled region, emptied, its vectors' room kept
  bool last_byte_newline_ = true;
  bool finishing_ = false;  // finish() was called: regions emitted now may reach the end
};

}  // namespace oomlens::analyzer
