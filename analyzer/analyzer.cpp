#include "analyzer/analyzer.hpp"

#include <cctype>
#include <string_view>
#include <unordered_map>

#include "analyzer/finding_groups.hpp"
#include "analyzer/parse/parser.hpp"
#include "analyzer/stream.hpp"

namespace oomlens::analyzer {
namespace {

// Bounds on what a hostile log can make us keep.
constexpr std::size_t kMaxEvents = 100000;
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
  std::unordered_map<std::uint64_t, std::size_t> first_of;  // line number -> its first Line
  for (std::size_t i = region.lines.size(); i-- > 0;) first_of[region.lines[i].number] = i;
  for (auto& e : events) {
    if (e.time_ms) continue;
    auto found = first_of.find(e.line);
    if (found == first_of.end()) continue;
    std::size_t at = found->second;
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

struct LogAnalyzer::State {
  parse::Parsed parsed;  // the OOM events; findings go to `findings`
  FindingGroups findings;
  bool capped = false;
  LogStream stream{anchor_scanner(), [this](Region&& region) { return on_region(region); }, stream_limits()};

  static StreamLimits stream_limits() {
    StreamLimits limits;
    limits.anchors = parse::anchor_policies();
    return limits;
  }

  // True (and nothing kept) when a traceback ran into the region's first
  // line and the stream can read further back.
  bool on_region(const Region& region) {
    parse::Parsed local;
    parse::parse_region(region, local);
    if (local.wants_longer_lookback && region.can_look_further_back) return true;
    inherit_times(region, local.ooms);
    for (auto& e : local.ooms) {
      if (parsed.ooms.size() >= kMaxEvents) {
        capped = true;
        break;
      }
      parsed.ooms.push_back(std::move(e));
    }
    for (auto& f : local.findings) {
      if (!findings.add(std::move(f), parsed.ooms.size(), kMaxFindings)) {
        capped = true;
        break;
      }
    }
    return false;
  }
};

LogAnalyzer::LogAnalyzer() : state_(std::make_unique<State>()) {}
LogAnalyzer::~LogAnalyzer() = default;

std::span<char> LogAnalyzer::prepare(std::size_t n) { return state_->stream.prepare(n); }
void LogAnalyzer::commit(std::size_t n) { state_->stream.commit(n); }
void LogAnalyzer::feed(std::string_view bytes) { state_->stream.feed(bytes); }
void LogAnalyzer::feed_contiguous(std::string_view input, std::function<void(std::uint64_t, std::uint64_t)> release) {
  state_->stream.feed_contiguous(input, std::move(release));
}

ParsedLog LogAnalyzer::finish_parsed() {
  state_->stream.finish();
  ParsedLog p;
  p.bytes = state_->stream.bytes_seen();
  p.lines = state_->stream.lines_seen();
  p.events = std::move(state_->parsed.ooms);
  p.findings = state_->findings.take();
  p.capped = state_->capped;
  return p;
}

Analysis LogAnalyzer::finish() {
  ParsedLog p = finish_parsed();
  Analysis a;
  a.bytes = p.bytes;
  a.lines = p.lines;
  a.findings = std::move(p.findings);
  a.incidents = group_incidents(std::move(p.events), a.findings);
  a.findings_capped = p.capped;
  return a;
}

Analysis analyze_text(std::string_view text) {
  LogAnalyzer analyzer;
  analyzer.feed(text);
  return analyzer.finish();
}

}  // namespace oomlens::analyzer
