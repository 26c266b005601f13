// A log held in an editor, analysed so that an edit costs the bytes around
// it, not the whole log again. The log is cut at line starts into segments of
// about kSegmentBytes; each keeps the events and findings whose lines start
// in it. An edit re-reads only the segments that lie within kMarginBytes of
// it — everything a region of the analyzer can read around an anchor (its
// lookback, lookahead and the cap on a region's size) — with that margin on
// either side; the segments after it keep their results, moved by the
// edit's change of bytes and lines. The merged result is the analysis of the
// whole text (a test edits big logs at random and compares).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "analyzer/log/analyzer.hpp"

namespace oomlens::analyzer {

struct TextLines;  // segmented_log.cpp

// One replacement, in the offsets of the text before it.
struct LogEdit {
  std::uint64_t offset = 0;
  std::uint64_t removed = 0;   // bytes of the old text replaced
  std::uint64_t inserted = 0;  // bytes of the new text in their place
  bool operator==(const LogEdit&) const = default;
};

// `first`, then `then` (in the offsets of the text `first` left), as one
// replacement of the span both touched: edits made one after another (the
// changes of one didChange, or of several versions) become one.
LogEdit compose(const LogEdit& first, const LogEdit& then);

// The smallest replacement that turns `before` into `after`: what differs
// between their longest common prefix and suffix (a client that sends the
// whole text on every change).
LogEdit edit_between(std::string_view before, std::string_view after);

class SegmentedLog {
 public:
  static constexpr std::uint64_t kSegmentBytes = 8u << 20;
  // More than a region can reach: 256 KiB of lookback and of lookahead, and a
  // region cut at 2 MiB.
  static constexpr std::uint64_t kMarginBytes = 3u << 20;

  SegmentedLog() = default;
  // Analyses `text` whole; a long one in two halves side by side, on two
  // threads: cut at the first line start after its middle, each half read
  // with its margins as any run of segments is, the second numbered from
  // the first's line count. `stop`, when given, stops the reading early (a
  // newer version of the text arrived): the result is then incomplete()
  // and must not be used. `progress` gets the fraction read, now and then.
  // `newline_starts`, when not empty, are where the text's '\n' lines start
  // (0, then the offset after each '\n'), known to the caller: lines are
  // then looked up instead of counted.
  explicit SegmentedLog(std::string_view text, const std::atomic<bool>* stop = nullptr,
                        const std::function<void(double)>& progress = {},
                        std::span<const std::size_t> newline_starts = {});

  bool incomplete() const { return incomplete_; }

  // `text` is the new whole text: the old one with `edit` applied. Re-reads
  // the segments the edit may change and returns how many bytes it read.
  std::uint64_t apply(std::string_view text, const LogEdit& edit);

  // The whole log's events and findings, as LogAnalyzer::finish_parsed() on the text.
  ParsedLog parsed() const;

 private:
  struct Segment {
    std::uint64_t begin = 0;       // a line start
    std::uint64_t first_line = 1;  // the '\n' line `begin` is on
    ParsedSegment results;
  };

  // Analyses text[begin, end) — both line starts, `first_line` at begin —
  // reading kMarginBytes more on either side, into segments of about
  // kSegmentBytes. `half`: the other half is analysed at the same time.
  std::vector<Segment> analyse(const TextLines& lines, std::uint64_t begin, std::uint64_t end,
                               std::uint64_t first_line, const std::atomic<bool>* stop = nullptr,
                               const std::function<void(double)>& progress = {}, bool half = false) const;

  std::vector<Segment> segments_;  // in order; empty for an empty log
  std::uint64_t bytes_ = 0;
  std::uint64_t lines_ = 0;
  bool incomplete_ = false;
};

}  // namespace oomlens::analyzer
