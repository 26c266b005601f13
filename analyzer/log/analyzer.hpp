// The analyzer's front door: bytes of a log in, incidents and findings out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "analyzer/log/event.hpp"
#include "analyzer/log/incident.hpp"

namespace oomlens::analyzer {

struct Analysis {
  std::vector<Incident> incidents;
  std::vector<LogFinding> findings;  // not part of an incident: warnings, look-alikes, stray collateral
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  bool findings_capped = false;  // a hostile log produced more findings than we keep
  // GPU OOM messages past AnalyzerOptions::max_events: counted, not analysed
  // (none of their incidents is reported).
  std::uint64_t ooms_not_analysed = 0;
};

// What one input yields before its events are grouped into incidents: the
// form in which several files of one job are merged (analyzer/log/job.hpp).
struct ParsedLog {
  std::vector<OomEvent> events;
  std::vector<LogFinding> findings;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  bool capped = false;
  std::uint64_t ooms_not_analysed = 0;  // as Analysis::ooms_not_analysed
};

struct AnalyzerOptions {
  // Once this many bytes were read, regions are parsed on a second thread
  // while the caller's thread reads on (UINT64_MAX: never). The result is the
  // same either way.
  std::uint64_t parse_beside_from = 4 << 20;
  // Offsets at which the input's segments start, ascending (the first is 0;
  // empty: one segment). Events and findings are kept per segment, by their
  // line's offset, and findings grouped within their segment, so that a
  // segment's results can be replaced alone (analyzer/log/segmented_log.hpp).
  std::vector<std::uint64_t> segment_starts;
  // OOM messages kept for grouping, at most (each costs about 2 KiB until the
  // report is made); those past it are counted in ooms_not_analysed. A log
  // read in pieces has its share of the whole file's bound a piece.
  std::size_t max_events = 100000;
};

// One segment's results: events in log order, findings grouped within the
// segment, each group with the number of the segment's events before it.
struct ParsedSegment {
  std::vector<OomEvent> events;
  std::vector<LogFinding> findings;
  std::vector<std::size_t> finding_epochs;
  bool capped = false;
  std::uint64_t ooms_not_analysed = 0;
};

// The segments' results as one input's: events concatenated, groups of one
// cause between the same two OOMs merged across segments.
ParsedLog merge_segments(std::vector<ParsedSegment> segments, std::uint64_t bytes, std::uint64_t lines);

// Moves what a segment found by `bytes` and `lines`: from the coordinates of
// the window it was read in to the whole text's, or past an edit.
void shift(ParsedSegment& segment, std::int64_t bytes, std::int64_t lines);

// Streams a log through the scanner and parsers with bounded memory. Feed it
// in any pieces; call finish() (or finish_parsed()) once.
class LogAnalyzer {
 public:
  explicit LogAnalyzer(AnalyzerOptions options = {});
  ~LogAnalyzer();
  LogAnalyzer(const LogAnalyzer&) = delete;
  LogAnalyzer& operator=(const LogAnalyzer&) = delete;

  // Zero-copy: read() straight into prepare(n), then commit the count read.
  std::span<char> prepare(std::size_t n);
  void commit(std::size_t n);
  void feed(std::string_view bytes);
  // The whole input in memory at once (a mapped file), read in place;
  // `release(offset, length)` is told which bytes are no longer needed.
  // `step` as in LogStream::feed_contiguous: called after each megabyte with
  // the bytes read; false stops the reading.
  void feed_contiguous(std::string_view input, std::function<void(std::uint64_t, std::uint64_t)> release,
                       const std::function<bool(std::uint64_t)>& step = {});
  Analysis finish();
  // The events and findings, not yet grouped (for analyze_job).
  ParsedLog finish_parsed();
  // The same, per segment (AnalyzerOptions::segment_starts); bytes and lines
  // of the whole input in `bytes` and `lines`.
  std::vector<ParsedSegment> finish_segments(std::uint64_t* bytes = nullptr, std::uint64_t* lines = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One input's events grouped into incidents, findings attached.
Analysis analysis_of(ParsedLog parsed);

// Convenience for text already in memory (a selection, a test).
Analysis analyze_text(std::string_view text);

}  // namespace oomlens::analyzer
