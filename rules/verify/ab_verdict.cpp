#include "rules/verify/ab_verdict.hpp"

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "rules/verify/setting_in_effect.hpp"

namespace oomlens::rules::verify {
namespace {

std::string how_it_ended(const RunMeasure& run) {
  if (run.interrupted) return "was stopped by Ctrl-C";
  if (run.timed_out) return fmt::format("was stopped by --max-seconds after {:.1f} s", run.wall_seconds);
  if (run.signal) return fmt::format("was killed by signal {}", run.signal);
  return fmt::format("exited with status {}", run.exit_code);
}

std::string oom_words(const RunMeasure& run) {
  if (run.oom) return fmt::format("{}, {}", analyzer::to_string(run.oom->cls), run.oom->rule);
  return "counted by PyTorch";
}

// When run A failed: the probe's first OOM, else the end of the run (a job
// that runs out of memory ends there).
double failure_time(const RunMeasure& run) {
  auto t = totals_of(run);
  return t.first_oom_seconds ? *t.first_oom_seconds : run.wall_seconds;
}

// B finished the work A failed at: it exited cleanly, or ran past the moment
// A failed before --max-seconds stopped it.
std::optional<std::string> why_b_did_not_reach(const RunMeasure& b, const RunMeasure& a) {
  if (b.interrupted) return "run B was stopped by Ctrl-C before it finished";
  if (b.timed_out) {
    double failed_at = failure_time(a);
    if (b.wall_seconds < failed_at)
      return fmt::format("run B was stopped by --max-seconds after {:.1f} s, before the point where A failed "
                         "({:.1f} s in)",
                         b.wall_seconds, failed_at);
    return std::nullopt;
  }
  if (b.signal || b.exit_code != 0) return fmt::format("run B {} without an OOM: read its log", how_it_ended(b));
  return std::nullopt;
}

std::string setting_words(const std::vector<Setting>& settings) {
  std::string s;
  for (const auto& x : settings) s += (s.empty() ? "" : " ") + x.variable + "=" + x.value;
  return s;
}

// Peak reserved and retries, A against B: the improvement, when there is one.
std::optional<std::string> improvement(const RunMeasure& b, const RunMeasure& a) {
  auto tb = totals_of(b), ta = totals_of(a);
  if (!ta.measured || !tb.measured || ta.peak_reserved == 0) return std::nullopt;
  double share = 1.0 - static_cast<double>(tb.peak_reserved) / static_cast<double>(ta.peak_reserved);
  bool fewer_retries = tb.num_alloc_retries < ta.num_alloc_retries;
  if (share < kImprovedShare && !fewer_retries) return std::nullopt;
  return fmt::format("peak reserved {} -> {} ({:+.0f}%), allocator retries {} -> {}",
                     analyzer::format_size(ta.peak_reserved), analyzer::format_size(tb.peak_reserved), -share * 100,
                     ta.num_alloc_retries, tb.num_alloc_retries);
}

AbVerdict inconclusive(std::string summary, std::vector<std::string> reasons = {}) {
  return {VerdictKind::inconclusive, std::move(summary), std::move(reasons)};
}

}  // namespace

const char* to_string(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::fixed: return "fixed";
    case VerdictKind::improved: return "improved";
    case VerdictKind::passed: return "passed";
    case VerdictKind::not_fixed: return "not fixed";
    case VerdictKind::inconclusive: return "inconclusive";
  }
  return "inconclusive";
}

int exit_status(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::fixed:
    case VerdictKind::improved:
    case VerdictKind::passed: return 0;
    case VerdictKind::not_fixed: return 1;
    case VerdictKind::inconclusive: return 3;
  }
  return 3;
}

AbVerdict decide(const RunMeasure& b, const std::optional<RunMeasure>& a, const std::vector<Setting>& settings) {
  std::vector<std::string> notes;
  const std::string named = setting_words(settings);

  // A setting that never reached the allocator proves nothing either way.
  for (const auto& s : settings) {
    auto check = check_setting(b, s.variable, s.value);
    if (!check.in_effect)
      return inconclusive(fmt::format("{} was not in effect in run B", s.variable + "=" + s.value), check.reasons);
    notes.insert(notes.end(), check.reasons.begin(), check.reasons.end());
  }
  if (a && a->interrupted) return inconclusive("run A was stopped by Ctrl-C", notes);

  bool b_oom = ran_out_of_memory(b);
  if (b_oom) {
    std::string summary = settings.empty() ? fmt::format("the run ran out of memory ({})", oom_words(b))
                                           : fmt::format("run B, with {}, still ran out of memory ({})", named,
                                                         oom_words(b));
    if (a && !ran_out_of_memory(*a)) notes.push_back("run A, without the setting, did not run out of memory");
    return {VerdictKind::not_fixed, summary, notes};
  }

  bool saw_torch = !b.processes.empty();
  bool used_cuda = totals_of(b).measured;
  if (!saw_torch)
    notes.push_back("the probe never saw torch: no Python process of the job imported it where the probe could load "
                    "(python -I or -S, an interpreter that ignores PYTHONPATH, or a job without PyTorch)");
  else if (!used_cuda)
    notes.push_back("the job imported torch but never used CUDA");

  if (!a) {
    if (b.interrupted || b.timed_out)
      return inconclusive(fmt::format("the run {} without an OOM; with no baseline there is no telling whether it "
                                      "reached the step that failed",
                                      how_it_ended(b)),
                          notes);
    if (b.signal || b.exit_code != 0)
      return inconclusive(fmt::format("the run {} without an OOM: read its log", how_it_ended(b)), notes);
    if (!saw_torch) return inconclusive("the run finished, but the probe never saw torch", notes);
    notes.push_back("add --baseline to compare with a run without the setting");
    return {VerdictKind::passed, "the run finished without running out of memory", notes};
  }

  bool a_oom = ran_out_of_memory(*a);
  if (a_oom) {
    if (auto why = why_b_did_not_reach(b, *a)) return inconclusive(*why, notes);
    return {VerdictKind::fixed,
            fmt::format("run A ran out of memory ({}); run B, with {}, {}", oom_words(*a), named,
                        b.timed_out ? fmt::format("ran past that point without one ({:.1f} s against {:.1f} s)",
                                                  b.wall_seconds, failure_time(*a))
                                    : "finished without one"),
            notes};
  }
  if (auto better = improvement(b, *a)) return {VerdictKind::improved, *better, notes};
  if (a->signal || (a->exit_code != 0 && !a->timed_out && !a->interrupted))
    return inconclusive(fmt::format("run A {} without an OOM: read its log", how_it_ended(*a)), notes);
  return inconclusive("neither run ran out of memory, and the setting changed neither the peak reserved memory nor "
                      "the allocator retries",
                      notes);
}

}  // namespace oomlens::rules::verify
