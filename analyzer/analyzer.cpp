#include "analyzer/analyzer.hpp"

#include "analyzer/parse/parser.hpp"
#include "analyzer/stream.hpp"

namespace oomlens::analyzer {
namespace {

// Bounds on what a hostile log can make us keep.
constexpr std::size_t kMaxEvents = 100000;
constexpr std::size_t kMaxFindings = 10000;

const LiteralScanner& anchor_scanner() {
  static const LiteralScanner scanner(parse::anchor_literals());
  return scanner;
}

}  // namespace

struct LogAnalyzer::State {
  parse::Parsed parsed;
  bool capped = false;
  LogStream stream{anchor_scanner(), [this](Region&& region) { on_region(region); }, stream_limits()};

  static StreamLimits stream_limits() {
    StreamLimits limits;
    limits.anchors = parse::anchor_policies();
    return limits;
  }

  void on_region(const Region& region) {
    parse::Parsed local;
    parse::parse_region(region, local);
    for (auto& e : local.ooms) {
      if (parsed.ooms.size() >= kMaxEvents) {
        capped = true;
        break;
      }
      parsed.ooms.push_back(std::move(e));
    }
    for (auto& f : local.findings) {
      if (parsed.findings.size() >= kMaxFindings) {
        capped = true;
        break;
      }
      parsed.findings.push_back(std::move(f));
    }
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

Analysis LogAnalyzer::finish() {
  state_->stream.finish();
  Analysis a;
  a.bytes = state_->stream.bytes_seen();
  a.lines = state_->stream.lines_seen();
  a.findings = std::move(state_->parsed.findings);
  a.incidents = group_incidents(std::move(state_->parsed.ooms), a.findings);
  a.findings_capped = state_->capped;
  return a;
}

Analysis analyze_text(std::string_view text) {
  LogAnalyzer analyzer;
  analyzer.feed(text);
  return analyzer.finish();
}

}  // namespace oomlens::analyzer
