// Failures that follow another rank's failure in a distributed job: the
// incident logic uses them to tell the first failing rank from the ranks that
// died because it did. Each becomes a `collateral` finding whose detail carries
// key=value pairs (rank=, exitcode=, signal=, ...) for that logic to read:
//
//   NCCL watchdog   "[PG 0 Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=..,
//                    OpType=ALLREDUCE, ..., Timeout(ms)=600000) ran for 600123 milliseconds before timing out."
//   torchrun        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:" and its
//                   summary block up to the closing "=====" rule (Root Cause: rank, exitcode, signal);
//                   "failed (exitcode: -9) local_rank: 0 (pid: ..) of binary: ..";
//                   "Sending process {pid} closing signal SIGTERM"; "SignalException: Process {pid} got signal: 15"
//   launchers       "died with <Signals.SIGKILL: 9>", "Received Signals.SIGTERM death signal"
#include <re2/re2.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/text.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

constexpr std::size_t kSummaryLines = 400;  // a summary lists every failed rank; keep bounded

LogFinding collateral_at(const Line& line, std::string detail, std::optional<int> stated_rank = std::nullopt) {
  LogFinding f = finding_at(line, FindingKind::collateral, std::move(detail));
  if (!f.rank) f.rank = stated_rank;  // the launcher prefix wins over what the text says
  return f;
}

// Exit codes -N mean "killed by signal N" (torch.distributed.elastic).
std::string signal_name(int number) {
  switch (number) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 15: return "SIGTERM";
    default: return fmt::format("signal {}", number);
  }
}

std::string exit_detail(std::string_view exitcode) {
  auto code = exact_int(exitcode);
  std::string detail = fmt::format("exitcode={}", exitcode);
  if (code && *code < 0 && *code > -128) detail += fmt::format(" signal={}", signal_name(-*code));
  return detail;
}

// -- torchrun's ChildFailedError summary -------------------------------------

struct RootCause {
  std::optional<int> rank;
  std::string exitcode;
  std::string signal;  // from "traceback : Signal 9 (SIGKILL) received by PID ..."
};

std::optional<std::size_t> child_failed(const Region& region, std::size_t at, Parsed& out) {
  // "raise ChildFailedError(" in the traceback above is source, not the error.
  static const RE2 anchor(R"((?:^|[\s.])ChildFailedError:)", RE2::Latin1);
  static const RE2 rule(R"(^\s*={5,}\s*$)", RE2::Latin1);
  static const RE2 structure(
      R"(^\s*(?:-{5,}|\S.* FAILED|Failures:|<NO_OTHER_FAILURES>|Root Cause \(first observed failure\):|\[\d+\]:)\s*$)",
      RE2::Latin1);
  static const RE2 root_cause(R"(^\s*Root Cause \(first observed failure\):)", RE2::Latin1);
  static const RE2 rank_field(R"(^\s*rank\s*:\s*(\d+))", RE2::Latin1);
  static const RE2 exit_field(R"(^\s*exitcode\s*:\s*(-?\d+))", RE2::Latin1);
  static const RE2 signal_field(R"(^\s*traceback\s*:\s*Signal \d+ \((SIG\w+)\))", RE2::Latin1);
  static const RE2 traceback_field(R"(^\s*traceback\s*:\s*Traceback \(most recent call last\))", RE2::Latin1);
  const Line& line = region.lines[at];
  if (!RE2::PartialMatch(line.text, anchor)) return std::nullopt;

  RootCause cause;
  bool in_root_cause = false;
  std::size_t rules = 0, last = at, cursor = at;
  std::optional<std::size_t> embedded_traceback;  // the failing rank's own error text: leave it to its parsers
  for (std::size_t n = 0; n < kSummaryLines && rules < 2; ++n) {
    auto next = next_line_of(region, cursor, line.rank);
    if (!next) break;
    std::string_view text = head(region.lines[*next].text);
    bool indented = !text.empty() && (text[0] == ' ' || text[0] == '\t');
    if (RE2::PartialMatch(text, rule)) ++rules;
    else if (rules == 0) break;  // no summary follows the exception line
    else if (!RE2::PartialMatch(text, structure) && !indented) break;
    cursor = last = *next;
    StringPiece value;
    if (RE2::PartialMatch(text, root_cause)) in_root_cause = true;
    if (RE2::PartialMatch(text, traceback_field) && !embedded_traceback) embedded_traceback = *next;
    if (!in_root_cause) continue;
    if (RE2::PartialMatch(text, rank_field, &value)) cause.rank = exact_int(view(value));
    else if (RE2::PartialMatch(text, exit_field, &value)) cause.exitcode = std::string(view(value));
    else if (RE2::PartialMatch(text, signal_field, &value)) cause.signal = std::string(view(value));
  }

  std::string detail = "ChildFailedError root cause:";
  if (cause.rank) detail += fmt::format(" rank={}", *cause.rank);
  if (!cause.exitcode.empty()) {
    detail += fmt::format(" {}", exit_detail(cause.exitcode));
    if (!cause.signal.empty() && detail.find(" signal=") == std::string::npos)
      detail += fmt::format(" signal={}", cause.signal);
  }
  if (!cause.rank && cause.exitcode.empty()) detail = "ChildFailedError (no summary)";
  out.findings.push_back(collateral_at(line, std::move(detail), cause.rank));
  return embedded_traceback ? std::min(last, *embedded_traceback) : last;
}

// -- single lines ------------------------------------------------------------

std::optional<int> stated_rank(std::string_view text) {
  static const RE2 re(R"(\[(?:PG [^\]]{0,80}?)?Rank (\d+)\])", RE2::Latin1);
  StringPiece n;
  if (!RE2::PartialMatch(text, re, &n)) return std::nullopt;
  return exact_int(view(n));
}

// The fields are read by hand (value_after): a watchdog line is long, and a
// job's ranks print thousands of them.
std::optional<std::string> watchdog(std::string_view text) {
  static const RE2 stuck(R"((?i)watchdog got stuck|watchdog thread terminated with exception)", RE2::Latin1);
  if (text.find("Watchdog caught collective operation timeout") != std::string_view::npos) {
    std::string detail = "NCCL watchdog timeout:";
    if (auto v = value_after(text, "OpType=", is_word_byte)) detail += fmt::format(" op={}", *v);
    if (auto v = value_after(text, "SeqNum=", is_digit_byte)) detail += fmt::format(" seq={}", *v);
    if (auto v = value_after(text, "Timeout(ms)=", is_digit_byte)) detail += fmt::format(" timeout_ms={}", *v);
    if (auto v = value_after(text, "ran for ", is_digit_byte, " milliseconds")) detail += fmt::format(" ran_ms={}", *v);
    return detail;
  }
  if (RE2::PartialMatch(text, stuck)) return std::string("NCCL watchdog failed (stuck, or terminated by an error)");
  return std::nullopt;
}

std::optional<std::string> launcher_signal(std::string_view text) {
  static const RE2 failed(R"(failed \(exitcode: (-?\d+)\) local_rank: (\d+))", RE2::Latin1);
  static const RE2 closing(R"(Sending process (\d+) closing signal (SIG\w+))", RE2::Latin1);
  static const RE2 exception(R"(SignalException: Process (\d+) got signal: (\d+))", RE2::Latin1);
  static const RE2 signals(R"(\bSignals\.(SIG[A-Z]+)\b)", RE2::Latin1);
  StringPiece a, b;
  if (RE2::PartialMatch(text, failed, &a, &b))
    return fmt::format("worker failed: local_rank={} {}", view(b), exit_detail(view(a)));
  if (RE2::PartialMatch(text, closing, &a, &b))
    return fmt::format("launcher stopping workers: pid={} signal={}", view(a), view(b));
  if (RE2::PartialMatch(text, exception, &a, &b)) {
    auto number = exact_int(view(b));
    return fmt::format("launcher got a signal: pid={} signal={}", view(a),
                       number ? signal_name(*number) : std::string(view(b)));
  }
  if (RE2::PartialMatch(text, signals, &a)) {
    if (text.find("died with") != std::string_view::npos)
      return fmt::format("a process died: signal={}", view(a));
    return fmt::format("launcher signal: signal={}", view(a));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> parse_collateral(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  // The patterns below run only where the words they require appear.
  const FoldedText words(line.text);
  if (words.has("childfailederror:"))
    if (auto last = child_failed(region, at, out)) return last;
  std::optional<std::string> detail;
  if (words.has("watchdog")) detail = watchdog(line.text);
  if (!detail && words.has_any({"exitcode:", "closing signal", "signalexception", "signals.sig"}))
    detail = launcher_signal(line.text);
  if (!detail) return std::nullopt;
  out.findings.push_back(collateral_at(line, std::move(*detail), stated_rank(line.text)));
  return at;
}

}  // namespace oomlens::analyzer::parse
