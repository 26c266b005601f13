#include "analyzer/log/analyzer.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "analyzer/log/finding_groups.hpp"
#include "analyzer/log/ordered_worker.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/stream.hpp"

namespace oomlens::analyzer {
namespace {

// Bounds on what a hostile log can make us keep (events: AnalyzerOptions::max_events).
constexpr std::size_t kMaxFindings = 10000;  // distinct causes: repeats are counted, not kept

const LiteralScanner& anchor_scanner() {
  static const LiteralScanner scanner(parse::anchor_literals());
  return scanner;
}

enum class Material { no, yes, exception };

// Lines of a Python traceback (and of chained exceptions) between an error
// and the line its process printed before it.
Material traceback_material(std::string_view t) {
  if (t.empty() || t[0] == ' ' || t[0] == '\t') return Material::yes;
  if (t.starts_with("Traceback (most recent call last)") || t.starts_with("During handling of the above exception") ||
      t.starts_with("The above exception was the direct cause"))
    return Material::yes;
  // "SomeError: text" of an earlier exception in the chain.
  std::size_t colon = t.find(": ");
  if (colon == std::string_view::npos || colon > 120) return Material::no;
  for (char c : t.substr(0, colon))
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return Material::no;
  return Material::exception;
}

// A Python traceback prints no timestamps; the logger line its process printed
// just before it ("2026-03-01 12:00:05,120 ERROR step failed") tells when the
// failure happened. Only that line: an older one would date it too early.
void inherit_times(const Region& region, std::vector<OomEvent>& events) {
  constexpr std::size_t kMaxWalk = 600;       // lines of one process's traceback
  constexpr std::size_t kMaxExceptions = 4;   // a chain of exceptions, not a wall of them
  // Most regions hold no OOM, or only OOMs that carry their own time.
  if (std::none_of(events.begin(), events.end(), [](const OomEvent& e) { return !e.time_ms; })) return;
  for (auto& e : events) {
    if (e.time_ms) continue;
    // A region's lines are in the log's order (a redrawn line's segments and
    // a joined line keep its number): its first Line by a binary search. A
    // map of every line's number, built for each region, was a sixth of the
    // time of a log dense with OOMs (each region 200 lines).
    const auto first = std::lower_bound(region.lines.begin(), region.lines.end(), e.line,
                                        [](const Line& line, std::uint64_t number) { return line.number < number; });
    std::size_t at = static_cast<std::size_t>(first - region.lines.begin());
    while (at < region.lines.size() && region.lines[at].number == e.line && region.lines[at].rank != e.rank) ++at;
    if (at == region.lines.size() || region.lines[at].number != e.line) continue;
    std::size_t exceptions = 0;
    for (std::size_t k = at, walked = 0; k-- > 0 && walked < kMaxWalk; ++walked) {
      const Line& line = region.lines[k];
      if (line.rank != e.rank) continue;  // other ranks interleave
      if (line.time_ms) {
        e.time_ms = line.time_ms;
        break;
      }
      if (line.number == e.line) continue;
      Material m = traceback_material(line.text);
      if (m == Material::no || (m == Material::exception && ++exceptions > kMaxExceptions)) break;
    }
  }
}

}  // namespace

// Parsing runs beside the reading on long logs. The caller's thread reads,
// scans and cuts regions; a worker parses them and merges each region's
// result in the order of the log, so that findings fall in the right OOM
// epoch. A region whose parse may ask the stream to read further back
// (parse::may_want_longer_lookback) is parsed on the caller's thread, the
// only one that can do that; few are. Short inputs stay on the caller's
// thread alone.
struct LogAnalyzer::State {
  static constexpr std::size_t kQueuedBytes = 8 << 20;   // regions' text waiting for the worker
  // Regions go over in batches: a hand-over per region costs more in thread
  // wake-ups than parsing most regions does.
  static constexpr std::size_t kBatchRegions = 256;
  static constexpr std::size_t kBatchBytes = 512 << 10;

  struct Work {
    Region region;
    std::optional<parse::Parsed> parsed;  // already parsed on the reading thread
  };
  using Batch = std::vector<Work>;

  struct Segment {
    std::vector<OomEvent> events;
    FindingGroups findings;
    bool capped = false;
    std::uint64_t ooms_not_analysed = 0;
  };

  const AnalyzerOptions options;
  std::vector<Segment> segments;  // as many as options.segment_starts, at least one
  std::size_t events_kept = 0;
  Batch batch;
  std::size_t batch_weight = 0;
  // Batches the worker is done with come back to be freed on the reading
  // thread: glibc's malloc takes the arena's lock for a free from another
  // thread, and with the reading thread allocating at full speed that lock
  // cost more than the parsing the worker took over.
  std::mutex handled_mutex;
  std::vector<Batch> handled;
  std::unique_ptr<OrderedWorker<Batch>> worker;  // declared after what it writes to: joined first
  LogStream stream{anchor_scanner(), [this](Region&& region) { return on_region(std::move(region)); },
                   stream_limits()};

  explicit State(AnalyzerOptions o) : options(std::move(o)), segments(std::max<std::size_t>(1, options.segment_starts.size())) {}

  Segment& segment_of(std::uint64_t offset) {
    const auto& starts = options.segment_starts;
    auto after = std::upper_bound(starts.begin(), starts.end(), offset);
    return segments[after == starts.begin() ? 0 : static_cast<std::size_t>(after - starts.begin()) - 1];
  }

  static StreamLimits stream_limits() {
    StreamLimits limits;
    limits.anchors = parse::anchor_policies();
    return limits;
  }

  static std::size_t weight(const Region& region) {
    std::size_t bytes = sizeof(Region);
    for (const Line& line : region.lines) bytes += sizeof(Line) + line.text.size();
    return bytes;
  }

  // True (and nothing kept) when a traceback ran into the region's first
  // line and the stream can read further back.
  bool on_region(Region&& region) {
    Work work{std::move(region), std::nullopt};
    if (parse::may_want_longer_lookback(work.region)) {
      work.parsed.emplace();
      parse::parse_region(work.region, *work.parsed);
      if (work.parsed->wants_longer_lookback) return true;
    }
    if (!worker && stream.bytes_seen() >= options.parse_beside_from) start_worker();
    if (!worker) {
      merge(work);
      stream.recycle(std::move(work.region));
      return false;
    }
    batch_weight += weight(work.region);
    batch.push_back(std::move(work));
    if (batch_weight >= kBatchBytes || batch.size() >= kBatchRegions) hand_over_batch();
    return false;
  }

  void start_worker() {
    worker = std::make_unique<OrderedWorker<Batch>>(
        [this](Batch& done) {
          for (Work& w : done) merge(w);
          std::lock_guard lock(handled_mutex);
          handled.push_back(std::move(done));
        },
        kQueuedBytes);
  }

  void hand_over_batch() {
    if (batch.empty()) return;
    std::vector<Batch> old;
    {
      std::lock_guard lock(handled_mutex);
      old.swap(handled);
    }
    old.clear();  // freed here, on the thread that allocated them
    worker->push(std::exchange(batch, {}), std::exchange(batch_weight, 0));
  }

  void merge(Work& work) {
    if (!work.parsed) {
      work.parsed.emplace();
      parse::parse_region(work.region, *work.parsed);
    }
    inherit_times(work.region, work.parsed->ooms);
    for (auto& e : work.parsed->ooms) {
      Segment& s = segment_of(e.offset);
      if (events_kept >= options.max_events) {
        s.capped = true;
        ++s.ooms_not_analysed;
        continue;
      }
      s.events.push_back(std::move(e));
      ++events_kept;
    }
    for (auto& f : work.parsed->findings) {
      Segment& s = segment_of(f.offset);
      if (!s.findings.add(std::move(f), s.events.size(), kMaxFindings)) {
        s.capped = true;
        break;
      }
    }
  }

  // Waits for the worker; rethrows what it threw.
  void stop_worker() {
    if (!worker) return;
    hand_over_batch();
    auto w = std::move(worker);
    w->finish();
  }
};

LogAnalyzer::LogAnalyzer(AnalyzerOptions options) : state_(std::make_unique<State>(std::move(options))) {}
LogAnalyzer::~LogAnalyzer() = default;

std::span<char> LogAnalyzer::prepare(std::size_t n) { return state_->stream.prepare(n); }
void LogAnalyzer::commit(std::size_t n) { state_->stream.commit(n); }
void LogAnalyzer::feed(std::string_view bytes) { state_->stream.feed(bytes); }
void LogAnalyzer::feed_contiguous(std::string_view input, std::function<void(std::uint64_t, std::uint64_t)> release,
                                  const std::function<bool(std::uint64_t)>& step) {
  state_->stream.feed_contiguous(input, std::move(release), step);
}

std::vector<ParsedSegment> LogAnalyzer::finish_segments(std::uint64_t* bytes, std::uint64_t* lines) {
  state_->stream.finish();
  state_->stop_worker();
  if (bytes) *bytes = state_->stream.bytes_seen();
  if (lines) *lines = state_->stream.lines_seen();
  std::vector<ParsedSegment> out;
  for (auto& s : state_->segments) {
    ParsedSegment p;
    p.events = std::move(s.events);
    p.finding_epochs = s.findings.take_epochs();
    p.findings = s.findings.take();
    p.capped = s.capped;
    p.ooms_not_analysed = s.ooms_not_analysed;
    out.push_back(std::move(p));
  }
  return out;
}

ParsedLog LogAnalyzer::finish_parsed() {
  std::uint64_t bytes = 0, lines = 0;
  auto segments = finish_segments(&bytes, &lines);
  return merge_segments(std::move(segments), bytes, lines);
}

ParsedLog merge_segments(std::vector<ParsedSegment> segments, std::uint64_t bytes, std::uint64_t lines) {
  ParsedLog p;
  p.bytes = bytes;
  p.lines = lines;
  if (segments.size() == 1) {  // nothing to merge
    p.events = std::move(segments[0].events);
    p.findings = std::move(segments[0].findings);
    p.capped = segments[0].capped;
    p.ooms_not_analysed = segments[0].ooms_not_analysed;
    return p;
  }
  FindingGroups findings;
  std::size_t total = 0;
  for (const auto& s : segments) total += s.events.size();
  p.events.reserve(total);
  for (auto& s : segments) {
    const std::size_t before = p.events.size();
    for (std::size_t k = 0; k < s.findings.size(); ++k) {
      const std::size_t epoch = before + (k < s.finding_epochs.size() ? s.finding_epochs[k] : s.events.size());
      if (!findings.add(std::move(s.findings[k]), epoch, std::numeric_limits<std::size_t>::max())) p.capped = true;
    }
    p.events.insert(p.events.end(), std::make_move_iterator(s.events.begin()), std::make_move_iterator(s.events.end()));
    std::vector<OomEvent>().swap(s.events);  // the moved-from shells' room
    p.capped = p.capped || s.capped;
    p.ooms_not_analysed += s.ooms_not_analysed;
  }
  p.findings = findings.take();
  return p;
}

void shift(ParsedSegment& s, std::int64_t bytes, std::int64_t lines) {
  auto by = [](std::uint64_t v, std::int64_t d) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(v) + d); };
  for (auto& e : s.events) {
    e.offset = by(e.offset, bytes);
    e.line = by(e.line, lines);
    e.end_line = by(e.end_line, lines);
  }
  for (auto& f : s.findings) {
    f.offset = by(f.offset, bytes);
    f.line = by(f.line, lines);
    if (f.last_line != 0) f.last_line = by(f.last_line, lines);
    for (auto& l : f.more_lines) l = by(l, lines);
  }
}

Analysis LogAnalyzer::finish() { return analysis_of(finish_parsed()); }

Analysis analysis_of(ParsedLog p) {
  Analysis a;
  a.bytes = p.bytes;
  a.lines = p.lines;
  a.findings = std::move(p.findings);
  a.incidents = group_incidents(std::move(p.events), a.findings);
  a.findings_capped = p.capped;
  a.ooms_not_analysed = p.ooms_not_analysed;
  return a;
}

Analysis analyze_text(std::string_view text) {
  LogAnalyzer analyzer;
  analyzer.feed(text);
  return analyzer.finish();
}

}  // namespace oomlens::analyzer
