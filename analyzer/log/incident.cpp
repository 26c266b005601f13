#include "analyzer/log/incident.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <fmt/format.h>

#include "analyzer/log/finding_groups.hpp"
#include "analyzer/log/text.hpp"
#include "analyzer/size.hpp"
#include "analyzer/log/traceback.hpp"

namespace oomlens::analyzer {

const char* to_string(RankSource s) {
  switch (s) {
    case RankSource::prefix: return "prefix";
    case RankSource::path: return "path";
    case RankSource::launcher: return "launcher";
    case RankSource::device_index: return "device-index";
  }
  return "prefix";
}

const char* to_string(FailureOrder o) {
  switch (o) {
    case FailureOrder::single: return "single";
    case FailureOrder::timestamps: return "timestamps";
    case FailureOrder::launcher: return "launcher";
    case FailureOrder::print_order: return "print-order";
    case FailureOrder::unknown: return "unknown";
  }
  return "unknown";
}

namespace {

// An event with what the grouping learns about it.
struct Tagged {
  OomEvent* e;  // in group_incidents' events, which outlive the grouping
  std::optional<RankSource> from;
  std::uint64_t sig = 0;  // signature(e)
  Verdict verdict;
};

using Members = std::vector<std::size_t>;  // indexes into the tagged events, in (file, line) order

// The part of a message that identifies one failure: the text without the
// exception prefix and whitespace differences. Kept as a 64-bit hash, not as
// text: a log can hold 100 000 messages, and a copy of each cost as much
// memory as the events themselves. Two different messages sharing a hash
// (odds under one in a billion over 100 000 messages) would read as echoes.
std::uint64_t signature(const OomEvent& e) {
  std::string s = fmt::format("{}|", static_cast<int>(e.family));
  for (char c : e.message)
    if (c != ' ' && c != '\t') s.push_back(c);
  return std::hash<std::string>{}(s);
}

bool comparable(const std::optional<std::int64_t>& a, const std::optional<std::int64_t>& b) {
  return a && b && same_clock(*a, *b);
}

bool related_families(OomFamily a, OomFamily b) {
  auto bfc = [](OomFamily f) { return f == OomFamily::tensorflow || f == OomFamily::xla; };
  // A runtime's own words (generic) sit beside the framework's exception for
  // the same failure: CNRT's line, then "RuntimeError: MLU out of memory".
  auto cuda_lib = [](OomFamily f) {
    return f == OomFamily::cuda_runtime || f == OomFamily::nccl || f == OomFamily::cublas || f == OomFamily::cudnn ||
           f == OomFamily::generic;
  };
  return (bfc(a) && bfc(b)) || (cuda_lib(a) && cuda_lib(b)) || (bfc(a) && b == OomFamily::generic) ||
         (a == OomFamily::generic && bfc(b));
}

// Ranks that print without a prefix still fail together: a burst of messages
// with different figures, each under a traceback through the same call in
// the user's code, close together, is the job's one failure (as is a loop
// that retries the same call). Different calls, or output in between beyond
// a burst's reach, are separate failures.
constexpr std::uint64_t kBurstLines = 600;
bool same_failing_call(const OomEvent& a, const OomEvent& b) {
  auto fa = user_frame(a.traceback), fb = user_frame(b.traceback);
  return fa && fb && fa->file == fb->file && fa->line == fb->line;
}

// Without prefixes, the device the message names tells processes apart: a
// burst of messages from GPU 1, GPU 2 and GPU 7 is ranks failing together,
// even when their tracebacks interleave past reading.
bool other_device(const OomEvent& a, const OomEvent& b) { return a.gpu && b.gpu && *a.gpu != *b.gpu; }

// Or the messages carry times within a few seconds of the burst's first: the
// processes of a job failing together, whichever GPU index each names (a
// node's GPU 4 and the next node's GPU 4 look alike) and however their
// tracebacks interleave.
constexpr std::int64_t kBurstMs = 5000;
bool same_moment(const OomEvent& e, const OomEvent& first) {
  return comparable(e.time_ms, first.time_ms) && *e.time_ms >= *first.time_ms - kBurstMs &&
         *e.time_ms <= *first.time_ms + kBurstMs;
}

// A memory_summary() table is the evidence of an OOM of the same process:
// handlers print it right before re-raising, or right after the message.
constexpr std::uint64_t kSummaryReachLines = 60;
bool summary_beside(const OomEvent& e, const OomEvent& last) {
  return (e.family == OomFamily::memory_summary || last.family == OomFamily::memory_summary) && e.rank == last.rank &&
         e.line - last.end_line <= kSummaryReachLines;
}

// Events of one file that make one failure, with what `belongs` asks of them
// kept at hand (a hostile log can put 100 000 events in one cluster).
struct Cluster {
  Members m;
  std::unordered_set<std::uint64_t> sigs;
  std::set<int> ranks;

  void add(const std::vector<Tagged>& all, std::size_t i) {
    m.push_back(i);
    sigs.insert(all[i].sig);
    if (all[i].e->rank) ranks.insert(*all[i].e->rank);
  }
};

// Within one file: does event `t` continue the cluster `c`?
bool belongs(const std::vector<Tagged>& all, const Cluster& c, const Tagged& t, const IncidentLimits& l) {
  const OomEvent& first = *all[c.m.front()].e;
  const OomEvent& last = *all[c.m.back()].e;
  const OomEvent& e = *t.e;
  bool echo = c.sigs.count(t.sig) > 0;
  if (echo && e.line - last.line <= l.echo_max_lines) return true;
  // Another rank failing at the same moment is the same failure of the job.
  if (e.rank && !c.ranks.count(*e.rank) && first.rank) {
    bool same_moment = comparable(e.time_ms, first.time_ms)
                           ? *e.time_ms - *first.time_ms <= l.multirank_max_ms &&
                                 *e.time_ms >= *first.time_ms - l.multirank_max_ms
                           : e.line - last.line <= l.multirank_max_lines;
    if (same_moment) return true;
  }
  // Libraries report one failure in several messages: TensorFlow's BFC
  // warning then the op's error, XLA's allocator then the runtime error,
  // NCCL's WARN lines then PyTorch's DistBackendError.
  if (summary_beside(e, last)) return true;
  if (!e.rank && !last.rank &&
      (same_failing_call(e, last) || other_device(e, last) || (!first.rank && same_moment(e, first))) &&
      e.line - last.end_line <= kBurstLines)
    return true;
  return e.rank == last.rank && related_families(e.family, last.family) && e.line - last.end_line <= 400;
}

std::size_t richness(const OomEvent& e) {
  const auto& n = e.numbers;
  return !!n.requested + !!n.total + !!n.free + !!n.allocated + !!n.reserved + !!n.largest_free_block +
         !n.other_processes.empty() + !!n.limit;
}

// The earliest time among the members, on the clock most of a log uses: dated
// times win over year-less ones.
std::optional<std::int64_t> earliest(const std::vector<Tagged>& all, const Members& m) {
  std::optional<std::int64_t> dated, yearless;
  for (std::size_t i : m) {
    const auto& t = all[i].e->time_ms;
    if (!t) continue;
    auto& slot = is_yearless(*t) ? yearless : dated;
    if (!slot || *t < *slot) slot = *t;
  }
  return dated ? dated : yearless;
}

// Where a group of events sits: the first line it has in each file, and when it began.
struct Shape {
  std::map<std::uint32_t, std::uint64_t> first_line;
  std::optional<std::int64_t> start;
};

Shape shape_of(const std::vector<Tagged>& all, const Members& m) {
  Shape s;
  for (std::size_t i : m) {
    auto [it, fresh] = s.first_line.emplace(all[i].e->file, all[i].e->line);
    if (!fresh) it->second = std::min(it->second, all[i].e->line);
  }
  s.start = earliest(all, m);
  return s;
}

// What the launcher's own lines say about which rank failed first: the
// ChildFailedError root cause, else the one worker that exited with an error
// code (not a signal).
struct LauncherWord {
  std::optional<int> root_cause;
  std::optional<int> failed_worker;
  const LogFinding* where = nullptr;
};

std::optional<int> detail_int(const std::string& detail, std::string_view key) {
  auto at = detail.find(key);
  if (at == std::string::npos) return std::nullopt;
  at += key.size();
  bool negative = at < detail.size() && detail[at] == '-';
  if (negative) ++at;
  long v = 0;
  std::size_t start = at;
  while (at < detail.size() && at - start < 9 && detail[at] >= '0' && detail[at] <= '9') v = v * 10 + (detail[at++] - '0');
  if (at == start) return std::nullopt;
  return static_cast<int>(negative ? -v : v);
}

LauncherWord launcher_word(const std::vector<LogFinding>& collateral) {
  LauncherWord w;
  std::set<int> failed;
  const LogFinding* failed_at = nullptr;
  for (const auto& f : collateral) {
    if (f.detail.starts_with("ChildFailedError root cause:")) {
      if (auto r = detail_int(f.detail, " rank="); r && !w.root_cause) {
        w.root_cause = r;
        w.where = &f;
      }
    } else if (f.detail.starts_with("worker failed:")) {
      auto r = detail_int(f.detail, "local_rank=");
      auto code = detail_int(f.detail, "exitcode=");
      if (r && code && *code > 0) {
        failed.insert(*r);
        if (!failed_at) failed_at = &f;
      }
    }
  }
  if (failed.size() == 1) w.failed_worker = *failed.begin();
  if (!w.root_cause && w.failed_worker) w.where = failed_at;
  return w;
}

bool is_root_cause(const LogFinding& f) { return f.detail.starts_with("ChildFailedError root cause:"); }

std::string join_ranks(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += fmt::format("{}{}", i == 0 ? "" : i + 1 == v.size() ? " and " : ", ", v[i]);
  return s;
}

class Finisher {
 public:
  Finisher(std::vector<Tagged>& all, const std::vector<InputInfo>& inputs) : all_(all), inputs_(inputs) {}

  void finish(Incident& inc, const Members& m) {
    attribute_unranked(inc, m);
    order_ranks(inc, m);
    representatives(m);
    std::size_t pick = pick_primary(inc, m);
    build_per_rank(inc, m);
    write_notes_about_ranks(inc, m, pick);

    inc.verdict = verdict_of(pick);
    inc.primary = *all_[pick].e;
    inc.echoes.clear();
    for (std::size_t i : m) {
      if (i == pick) continue;
      const OomEvent& e = *all_[i].e;
      inc.echoes.push_back({e.file, e.line, e.end_line, e.rank});
    }

    std::set<int> oom;
    for (std::size_t i : m)
      if (all_[i].e->rank) oom.insert(*all_[i].e->rank);
    inc.oom_ranks.assign(oom.begin(), oom.end());

    inc.collateral_ranks.clear();
    for (const auto& f : inc.collateral) {
      if (!f.rank || is_root_cause(f) || f.rank == inc.first_failing_rank) continue;
      if (std::find(inc.oom_ranks.begin(), inc.oom_ranks.end(), *f.rank) != inc.oom_ranks.end()) continue;
      if (std::find(inc.collateral_ranks.begin(), inc.collateral_ranks.end(), *f.rank) == inc.collateral_ranks.end())
        inc.collateral_ranks.push_back(*f.rank);
    }
    std::sort(inc.collateral_ranks.begin(), inc.collateral_ranks.end());

    // Where it happened in the user's code: the primary's traceback, else the
    // first echo that has one.
    inc.location = user_frame(inc.primary.traceback);
    inc.entry = entry_frame(inc.primary.traceback);
    for (std::size_t i : m) {
      if (inc.location) break;
      if (i == pick) continue;
      inc.location = user_frame(all_[i].e->traceback);
      inc.entry = entry_frame(all_[i].e->traceback);
    }
  }

 private:
  std::string where(std::uint32_t file, std::uint64_t line) const {
    if (inputs_.size() > 1 && file < inputs_.size() && !inputs_[file].name.empty())
      return fmt::format("{}:{}", inputs_[file].name, line);
    return fmt::format("line {}", line);
  }

  bool one_file(const Members& m) const {
    return std::all_of(m.begin(), m.end(), [&](std::size_t i) { return all_[i].e->file == all_[m.front()].e->file; });
  }

  // Echoes without a rank (a launcher's summary repeating the message) belong
  // to the rank whose message they repeat; with no rank anywhere, the
  // launcher's summary may name the one that failed.
  void attribute_unranked(Incident& inc, const Members& m) {
    std::unordered_map<std::uint64_t, std::size_t> ranked;  // signature -> its first ranked message
    for (std::size_t i : m)
      if (all_[i].e->rank) ranked.emplace(all_[i].sig, i);
    for (std::size_t i : m) {
      if (all_[i].e->rank) continue;
      if (auto it = ranked.find(all_[i].sig); it != ranked.end()) {
        all_[i].e->rank = all_[it->second].e->rank;
        all_[i].from = all_[it->second].from;
      }
    }
    word_ = launcher_word(inc.collateral);
    bool any_rank = std::any_of(m.begin(), m.end(), [&](std::size_t i) { return all_[i].e->rank.has_value(); });
    if (any_rank) return;
    if (std::optional<int> named = word_.root_cause ? word_.root_cause : word_.failed_worker) {
      const std::uint64_t sig = all_[m.front()].sig;
      for (std::size_t i : m)
        if (all_[i].sig == sig) {
          all_[i].e->rank = named;
          all_[i].from = RankSource::launcher;
        }
      return;
    }
    // Last resort: NCCL's "host:pid:tid [N]" device index. One device among
    // the messages also claims the library's other messages of the failure
    // (PyTorch's DistBackendError after NCCL's WARN lines).
    std::set<int> devices;
    for (std::size_t i : m)
      if (all_[i].e->family == OomFamily::nccl && all_[i].e->gpu) devices.insert(*all_[i].e->gpu);
    if (devices.empty()) return;
    for (std::size_t i : m) {
      const OomEvent& e = *all_[i].e;
      if (e.family == OomFamily::nccl && e.gpu) all_[i].e->rank = e.gpu;
      else if (devices.size() == 1 && related_families(e.family, OomFamily::nccl)) all_[i].e->rank = *devices.begin();
      if (all_[i].e->rank) all_[i].from = RankSource::device_index;
    }
  }

  struct RankTimes {
    int rank;
    std::optional<std::int64_t> time;
    std::size_t first;  // position of its first event among the members
  };

  void order_ranks(Incident& inc, const Members& m) {
    ranks_.clear();
    std::unordered_map<int, std::size_t> slot;
    for (std::size_t k = 0; k < m.size(); ++k) {
      const OomEvent& e = *all_[m[k]].e;
      if (!e.rank) continue;
      auto [where, fresh] = slot.emplace(*e.rank, ranks_.size());
      if (fresh) ranks_.push_back({*e.rank, std::nullopt, k});
      auto it = ranks_.begin() + static_cast<std::ptrdiff_t>(where->second);
      if (e.time_ms && (!it->time || (same_clock(*e.time_ms, *it->time) && *e.time_ms < *it->time) ||
                        (!is_yearless(*e.time_ms) && is_yearless(*it->time))))
        it->time = e.time_ms;
    }
    inc.same_second.clear();
    inc.first_failing_rank.reset();
    inc.order = FailureOrder::single;
    tie_broken_by_.clear();
    if (ranks_.size() <= 1) {
      if (!ranks_.empty()) inc.first_failing_rank = ranks_[0].rank;
      finish_source(inc, m);
      return;
    }
    bool timed = std::all_of(ranks_.begin(), ranks_.end(),
                             [&](const RankTimes& r) { return comparable(r.time, ranks_[0].time); });
    bool single_file = one_file(m);
    std::optional<int> root = word_.root_cause;
    auto has_rank = [&](std::optional<int> r) {
      return r && std::any_of(ranks_.begin(), ranks_.end(), [&](const RankTimes& x) { return x.rank == *r; });
    };
    if (timed) {
      std::stable_sort(ranks_.begin(), ranks_.end(), [](const RankTimes& a, const RankTimes& b) {
        return *a.time != *b.time ? *a.time < *b.time : a.first < b.first;
      });
      const std::int64_t t0 = *ranks_[0].time;
      auto second_of = [](std::int64_t t) { return t >= 0 ? t / 1000 : (t - 999) / 1000; };
      for (const auto& r : ranks_)
        if (second_of(*r.time) == second_of(t0)) inc.same_second.push_back(r.rank);
      if (inc.same_second.size() < 2) inc.same_second.clear();
      std::vector<int> tied;
      for (const auto& r : ranks_)
        if (*r.time == t0) tied.push_back(r.rank);
      inc.order = FailureOrder::timestamps;
      if (tied.size() == 1) {
        inc.first_failing_rank = ranks_[0].rank;
      } else if (root && std::find(tied.begin(), tied.end(), *root) != tied.end()) {
        inc.first_failing_rank = root;
        tie_broken_by_ = "the launcher's summary";
        move_first(*root);
      } else if (single_file) {
        inc.first_failing_rank = ranks_[0].rank;  // stable sort: printed first
        tie_broken_by_ = "the order the lines were printed in";
      } else {
        inc.order = FailureOrder::unknown;
        tie_broken_by_ = "nothing";
      }
    } else if (has_rank(root)) {
      inc.order = FailureOrder::launcher;
      inc.first_failing_rank = root;
      std::stable_sort(ranks_.begin(), ranks_.end(), [](const RankTimes& a, const RankTimes& b) { return a.first < b.first; });
      move_first(*root);
    } else if (single_file) {
      inc.order = FailureOrder::print_order;
      std::stable_sort(ranks_.begin(), ranks_.end(), [](const RankTimes& a, const RankTimes& b) { return a.first < b.first; });
      inc.first_failing_rank = ranks_[0].rank;
    } else {
      inc.order = FailureOrder::unknown;
      std::sort(ranks_.begin(), ranks_.end(), [](const RankTimes& a, const RankTimes& b) { return a.rank < b.rank; });
    }
    finish_source(inc, m);
  }

  void move_first(int rank) {
    auto it = std::find_if(ranks_.begin(), ranks_.end(), [&](const RankTimes& r) { return r.rank == rank; });
    if (it != ranks_.end()) std::rotate(ranks_.begin(), it, it + 1);
  }

  void finish_source(Incident& inc, const Members& m) {
    inc.first_failing_source.reset();
    if (!inc.first_failing_rank) return;
    for (std::size_t i : m)
      if (all_[i].e->rank == inc.first_failing_rank && all_[i].from) {
        inc.first_failing_source = all_[i].from;
        break;
      }
  }

  // The richest of `candidates`, the earliest (time, then print order) among equals.
  std::size_t richest(const std::vector<std::size_t>& candidates) const {
    std::size_t best = candidates.front();
    for (std::size_t i : candidates) {
      std::size_t ri = richness(*all_[i].e), rb = richness(*all_[best].e);
      if (ri > rb) best = i;
      else if (ri == rb && comparable(all_[i].e->time_ms, all_[best].e->time_ms) && *all_[i].e->time_ms < *all_[best].e->time_ms)
        best = i;
    }
    return best;
  }

  // Classifies on demand: a hostile log can put 100 000 messages in one
  // incident, and only each rank's fullest one is judged.
  const Verdict& verdict_of(std::size_t i) {
    if (classified_.size() < all_.size()) classified_.resize(all_.size(), 0);
    if (!classified_[i]) {
      all_[i].verdict = classify(*all_[i].e);
      classified_[i] = 1;
    }
    return all_[i].verdict;
  }

  // Each rank's fullest message (and the fullest without a rank), keyed by rank.
  void representatives(const Members& m) {
    std::map<std::optional<int>, std::vector<std::size_t>> by_rank;
    for (std::size_t i : m) by_rank[all_[i].e->rank].push_back(i);
    rep_.clear();
    for (const auto& [rank, events] : by_rank) rep_[rank] = richest(events);
  }

  std::size_t pick_primary(const Incident& inc, const Members& m) {
    // The first failing rank's messages (all of them when it is unknown).
    std::vector<std::size_t> first;
    for (std::size_t i : m)
      if (!inc.first_failing_rank || all_[i].e->rank == inc.first_failing_rank) first.push_back(i);
    if (first.empty()) first = m;
    // Single rank: its first message, then a richer one of the same rank can
    // stand in (TensorFlow's BFC summary carries more than the op error).
    std::size_t pick = *std::min_element(first.begin(), first.end(), [&](std::size_t a, std::size_t b) {
      const auto& ta = all_[a].e->time_ms;
      const auto& tb = all_[b].e->time_ms;
      if (comparable(ta, tb) && *ta != *tb) return *ta < *tb;
      return a < b;  // the members are in (file, line) order
    });
    for (std::size_t i : first)
      if (all_[i].e->rank == all_[pick].e->rank && richness(*all_[i].e) > richness(*all_[pick].e)) pick = i;
    from_other_rank_ = false;
    if (verdict_of(pick).cls != OomClass::unquantified) return pick;
    // Its messages carry no numbers: the class comes from the fullest message
    // that does, of any rank.
    std::vector<std::size_t> quantified;
    for (const auto& [rank, i] : rep_)
      if (verdict_of(i).cls != OomClass::unquantified) quantified.push_back(i);
    if (quantified.empty()) return pick;
    std::sort(quantified.begin(), quantified.end());  // (file, line) order among equals
    unquantified_first_ = pick;
    from_other_rank_ = true;
    return richest(quantified);
  }

  void build_per_rank(Incident& inc, const Members& m) {
    inc.per_rank.clear();
    auto entry = [&](std::size_t r, std::optional<std::int64_t> time) {
      const Verdict& v = verdict_of(r);
      const Tagged& t = all_[r];
      RankFailure f;
      f.rank = t.e->rank;
      f.source = t.from;
      f.file = t.e->file;
      f.line = t.e->line;
      f.end_line = t.e->end_line;
      f.time_ms = time;
      f.family = t.e->family;
      f.gpu = t.e->gpu;
      f.cls = v.cls;
      f.reason = v.reason;
      f.numbers = t.e->numbers;
      inc.per_rank.push_back(std::move(f));
    };
    for (const auto& r : ranks_) entry(rep_.at(r.rank), r.time);
    // An incident without any rank needs no per-rank list: the incident is it.
    auto unranked = rep_.find(std::nullopt);
    if (unranked != rep_.end() && !ranks_.empty()) {
      Members none;
      for (std::size_t i : m)
        if (!all_[i].e->rank) none.push_back(i);
      entry(unranked->second, earliest(all_, none));
    }
  }

  void write_notes_about_ranks(Incident& inc, const Members& m, std::size_t pick) {
    if (inc.first_failing_source == RankSource::device_index)
      inc.notes.push_back(fmt::format(
          "Rank {} is NCCL's CUDA device index (\"[{}]\" after host:pid:tid): nothing else in the log names a rank, "
          "and the device index usually equals the local rank.",
          *inc.first_failing_rank, *inc.first_failing_rank));
    if (inc.first_failing_source == RankSource::launcher && word_.where)
      inc.notes.push_back(fmt::format(
          "No line of the failure names its rank; the launcher's {} ({}) names {} {}.",
          word_.root_cause ? "summary" : "report", where(word_.where->file, word_.where->line),
          word_.root_cause ? "rank" : "the worker that failed as local rank", *inc.first_failing_rank));
    else if (inc.order == FailureOrder::launcher && word_.where)
      inc.notes.push_back(fmt::format(
          "The ranks' messages carry no timestamps; rank {} is the first failing rank by the launcher's summary ({}).",
          *inc.first_failing_rank, where(word_.where->file, word_.where->line)));
    if (!inc.same_second.empty()) {
      std::string when = format_time(*ranks_[0].time);
      when = when.substr(when.starts_with("--") ? 2 : 0, when.size() - 4 - (when.starts_with("--") ? 2 : 0));
      std::replace(when.begin(), when.end(), 'T', ' ');
      if (inc.first_failing_rank && tie_broken_by_.empty())
        inc.notes.push_back(fmt::format("Ranks {} failed in the same second ({}); rank {} is first by its timestamp's "
                                        "milliseconds.",
                                        join_ranks(inc.same_second), when, *inc.first_failing_rank));
      else if (inc.first_failing_rank)
        inc.notes.push_back(fmt::format("Ranks {} failed in the same second ({}), at the same printed time; rank {} is "
                                        "named first by {}.",
                                        join_ranks(inc.same_second), when, *inc.first_failing_rank, tie_broken_by_));
      else
        inc.notes.push_back(fmt::format("Ranks {} failed in the same second ({}), at the same printed time, in "
                                        "different files: which failed first is not known.",
                                        join_ranks(inc.same_second), when));
    }
    if (inc.order == FailureOrder::unknown && inc.same_second.empty()) {
      std::vector<int> ranks;
      for (const auto& r : ranks_) ranks.push_back(r.rank);
      inc.notes.push_back(fmt::format("Ranks {} ran out of memory in different files without timestamps: the order "
                                      "across files is unknown, so no first failing rank is named.",
                                      join_ranks(ranks)));
    }
    if (from_other_rank_) {
      const OomEvent& bare = *all_[unquantified_first_].e;
      const OomEvent& rich = *all_[pick].e;
      std::string who = bare.rank ? fmt::format("Rank {}", *bare.rank) : std::string("The first failure");
      std::string whose = rich.rank ? fmt::format("rank {}'s", *rich.rank) : std::string("another");
      inc.notes.push_back(fmt::format("{} failed first ({}) with a message that carries no numbers; the class comes "
                                      "from {} message ({}).",
                                      who, where(bare.file, bare.line), whose, where(rich.file, rich.line)));
    }
    // Each rank keeps its own class: say so when they differ.
    std::set<OomClass> classes;
    for (const auto& f : inc.per_rank)
      if (f.rank && f.cls != OomClass::unquantified) classes.insert(f.cls);
    if (classes.size() > 1) {
      std::string list;
      for (const auto& f : inc.per_rank)
        if (f.rank && f.cls != OomClass::unquantified)
          list += fmt::format("{}rank {} {}", list.empty() ? "" : ", ", *f.rank, to_string(f.cls));
      inc.notes.push_back(fmt::format("The ranks' messages give different classes ({}); each rank keeps its own numbers.",
                                      list));
    }
    (void)m;
  }

  std::vector<Tagged>& all_;
  const std::vector<InputInfo>& inputs_;
  std::vector<char> classified_;
  std::map<std::optional<int>, std::size_t> rep_;
  LauncherWord word_;
  std::vector<RankTimes> ranks_;
  std::string tie_broken_by_;
  bool from_other_rank_ = false;
  std::size_t unquantified_first_ = 0;
};

// Does the finding belong to the group of events shaped `s`? Within a file by
// line; across files by time when both are timestamped, else only the job's
// last incident takes it (`last`).
bool within(const LogFinding& f, const Shape& s, std::uint64_t max_lines, std::int64_t max_ms, bool last,
            std::int64_t slack_ms) {
  auto in_file = s.first_line.find(f.file);
  if (in_file != s.first_line.end()) {
    if (f.line < in_file->second) return false;
    if (comparable(f.time_ms, s.start)) return *f.time_ms - *s.start <= max_ms;
    return f.line - in_file->second <= max_lines;
  }
  if (comparable(f.time_ms, s.start)) return *f.time_ms >= *s.start - slack_ms && *f.time_ms - *s.start <= max_ms;
  return last;
}

// A program that catches the error and goes on (a retry loop, a skipped
// batch, a batch-size search) prints the same failure again and again as it
// runs: many messages of one process, far apart. The echoes of a single
// failure (chained exceptions, launcher summaries, other ranks) are a few
// per process, close together. Told apart per process (file and rank):
//  - five messages at least;
//  - one device: messages naming different GPUs are several processes
//    sharing one stream, the ranks of a job failing together;
//  - far apart: over more than multirank_max_ms when every message is
//    timed, else over more lines than an echo's reach (echo_max_lines), which
//    the burst of a large job's ranks, tracebacks and all, does not span.
// The run of the process that repeats most, when one does.
struct RecurringRun {
  std::uint32_t file = 0;
  std::optional<int> rank;
  std::uint64_t first_line = 0, last_line = 0;
  std::size_t messages = 0;
};
constexpr std::size_t kRecurringMessages = 5;

std::optional<RecurringRun> recurring_run(const std::vector<Tagged>& all, const Members& m,
                                          const IncidentLimits& limits) {
  struct Stream {
    RecurringRun run;
    std::set<int> gpus;
    std::optional<std::int64_t> first_ms, last_ms;
    bool timed = true;
  };
  std::map<std::pair<std::uint32_t, std::optional<int>>, Stream> streams;
  for (std::size_t i : m) {
    const OomEvent& e = *all[i].e;
    auto [it, created] = streams.try_emplace({e.file, e.rank});
    Stream& s = it->second;
    RecurringRun& r = s.run;
    if (created) {
      r.file = e.file;
      r.rank = e.rank;
      r.first_line = e.line;
    }
    r.first_line = std::min(r.first_line, e.line);
    r.last_line = std::max(r.last_line, e.line);
    ++r.messages;
    if (e.gpu) s.gpus.insert(*e.gpu);
    if (!e.time_ms || (s.first_ms && !same_clock(*e.time_ms, *s.first_ms))) {
      s.timed = false;
    } else {
      s.first_ms = s.first_ms ? std::min(*s.first_ms, *e.time_ms) : *e.time_ms;
      s.last_ms = s.last_ms ? std::max(*s.last_ms, *e.time_ms) : *e.time_ms;
    }
  }
  std::optional<RecurringRun> most;
  for (const auto& [key, s] : streams) {
    if (s.run.messages < kRecurringMessages || s.gpus.size() > 1) continue;
    const bool far_apart = s.timed ? *s.last_ms - *s.first_ms > limits.multirank_max_ms
                                   : s.run.last_line - s.run.first_line > limits.echo_max_lines;
    if (far_apart && (!most || s.run.messages > most->messages)) most = s.run;
  }
  return most;
}

// torch.cuda._use_uvm's "[_use_uvm] FAILED to allocate ... You can ignore
// free-memory numbers reported by PyTorch": after it, the message's free and
// total figures describe the device, not the unified memory that failed.
void discount_uvm_figures(Incident& inc) {
  auto uvm = std::find_if(inc.warnings_before.begin(), inc.warnings_before.end(),
                          [](const LogFinding& f) { return f.detail.starts_with("uvm:"); });
  if (uvm == inc.warnings_before.end()) return;
  Verdict v;
  v.cls = OomClass::unquantified;
  v.reason = "uvm";
  v.notes.push_back(fmt::format(
      "Line {} says the allocation went through CUDA unified memory (torch.cuda._use_uvm) and failed there{}: the "
      "device figures in this message (free, total) are not what ran out, so they decide nothing. Check the host's "
      "memory and the unified-memory limit.",
      uvm->line, uvm->bytes ? fmt::format(" ({} bytes)", *uvm->bytes) : std::string()));
  if (inc.primary.numbers.requested)
    v.arithmetic.push_back(fmt::format("requested {} through unified memory", format_size(*inc.primary.numbers.requested)));
  inc.verdict = std::move(v);
}

// The allocator-pressure warnings that came before the failure, as evidence:
// the job ran at the edge (cache flushes, retries, BFC garbage collection)
// before it fell over.
void note_pressure_before(Incident& inc) {
  std::uint64_t count = 0, first = 0, last = 0;
  const LogFinding* example = nullptr;
  for (const auto& f : inc.warnings_before) {
    if (f.detail.starts_with("uvm:")) continue;  // said by discount_uvm_figures
    count += f.count;
    if (!example || f.line < first) first = f.line, example = &f;
    last = std::max(last, f.count > 1 ? f.last_line : f.line);
  }
  if (!example) return;
  inc.notes.push_back(count == 1 ? fmt::format("An allocator-pressure warning came before it (line {}): {}.", first,
                                               example->detail)
                                 : fmt::format("{} allocator-pressure warnings came before it (lines {} to {}), such "
                                               "as: {}. The job ran at the edge of memory before it failed.",
                                               count, first, last, example->detail));
}

}  // namespace

const LogFinding* allocator_conf_setting(const Incident& inc) {
  // PYTORCH_ALLOC_CONF, when present, shadows the older names entirely.
  const LogFinding* found = nullptr;
  for (const auto& s : inc.settings) {
    std::string name = s.detail.substr(0, s.detail.find('='));
    if (name == "PYTORCH_ALLOC_CONF") return &s;
    if (name.find("ALLOC_CONF") != std::string::npos) found = &s;
  }
  return found;
}

std::vector<Incident> group_incidents(std::vector<OomEvent> events, std::vector<LogFinding>& findings,
                                      const IncidentLimits& limits, const std::vector<InputInfo>& inputs) {
  auto path_rank = [&](std::uint32_t file) -> std::optional<int> {
    return file < inputs.size() ? inputs[file].rank : std::nullopt;
  };
  // Ranks where the lines carry none: the file's path, else NCCL's device index.
  std::vector<Tagged> all;
  all.reserve(events.size());
  for (auto& e : events) {
    Tagged t;
    if (e.rank) t.from = RankSource::prefix;
    else if (auto r = path_rank(e.file)) {
      e.rank = r;
      t.from = RankSource::path;
    }
    t.sig = signature(e);
    t.e = &e;  // not moved: tens of MiB of events on a log of 100 000 OOMs
    all.push_back(t);
  }
  for (auto& f : findings)
    if (!f.rank) f.rank = path_rank(f.file);
  // Mostly sorted already: one file's events come in line order.
  const auto by_place = [](const Tagged& a, const Tagged& b) {
    return a.e->file != b.e->file ? a.e->file < b.e->file : a.e->line < b.e->line;
  };
  if (!std::is_sorted(all.begin(), all.end(), by_place)) std::stable_sort(all.begin(), all.end(), by_place);

  // Each file on its own: the same failure echoed, other ranks at the same moment.
  std::vector<Members> clusters;
  {
    Cluster open;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!open.m.empty() && all[open.m.front()].e->file == all[i].e->file && belongs(all, open, all[i], limits)) {
        open.add(all, i);
        continue;
      }
      if (!open.m.empty()) clusters.push_back(std::move(open.m));
      open = Cluster{};
      open.add(all, i);
    }
    if (!open.m.empty()) clusters.push_back(std::move(open.m));
  }

  // Across files, one job: ranks failing together are one incident.
  std::vector<Members> groups;
  std::optional<std::size_t> job_final;  // the group the files' last failures joined (untimed)
  std::set<std::uint32_t> files;
  for (const auto& c : clusters) files.insert(all[c.front()].e->file);
  if (files.size() <= 1) {
    groups = std::move(clusters);
  } else {
    std::vector<std::optional<std::int64_t>> start;
    for (const auto& c : clusters) start.push_back(earliest(all, c));
    bool timed = std::all_of(start.begin(), start.end(), [&](const auto& t) { return comparable(t, start[0]); });
    if (timed) {
      std::vector<std::size_t> order(clusters.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return *start[a] < *start[b]; });
      std::optional<std::int64_t> group_start;
      std::set<std::uint32_t> group_files;
      for (std::size_t k : order) {
        std::uint32_t file = all[clusters[k].front()].e->file;
        if (!groups.empty() && !group_files.count(file) && *start[k] - *group_start <= limits.multirank_max_ms) {
          groups.back().insert(groups.back().end(), clusters[k].begin(), clusters[k].end());
          group_files.insert(file);
          continue;
        }
        groups.push_back(clusters[k]);
        group_start = start[k];
        group_files = {file};
      }
    } else {
      // No common clock: a job fails once, so each file's last failure is that
      // failure; earlier ones (caught and retried) stay the file's own.
      Members final_group;
      for (std::size_t k = 0; k < clusters.size(); ++k) {
        bool last_of_file = k + 1 == clusters.size() || all[clusters[k + 1].front()].e->file != all[clusters[k].front()].e->file;
        if (last_of_file) final_group.insert(final_group.end(), clusters[k].begin(), clusters[k].end());
        else groups.push_back(clusters[k]);
      }
      groups.push_back(std::move(final_group));
      job_final = groups.size() - 1;
    }
    for (auto& g : groups)
      std::stable_sort(g.begin(), g.end());  // (file, line) order, as `all` is sorted
  }

  std::vector<Incident> incidents(groups.size());
  std::vector<Shape> shapes;
  for (const auto& g : groups) shapes.push_back(shape_of(all, g));

  // Attach findings: collateral failures after an incident belong to it;
  // pressure warnings and settings before it give it context.
  std::vector<LogFinding> rest;
  for (auto& f : findings) {
    bool kept = false;
    if (f.kind == FindingKind::collateral) {
      for (std::size_t k = incidents.size(); k-- > 0;) {
        bool last = job_final ? k == *job_final : k + 1 == incidents.size();
        if (within(f, shapes[k], limits.collateral_max_lines, limits.collateral_max_ms, last, limits.multirank_max_ms)) {
          incidents[k].collateral.push_back(f);
          kept = true;
          break;
        }
      }
    } else if (f.kind == FindingKind::allocator_setting) {
      // Keep the latest value of each variable seen before each incident. The
      // environment is the job's: a setting another rank's file shows counts
      // unless its time says it came later.
      std::string name = f.detail.substr(0, f.detail.find('='));
      for (std::size_t k = 0; k < incidents.size(); ++k) {
        auto in_file = shapes[k].first_line.find(f.file);
        if (in_file != shapes[k].first_line.end() ? f.line > in_file->second
                                                   : comparable(f.time_ms, shapes[k].start) && *f.time_ms > *shapes[k].start)
          continue;
        auto& settings = incidents[k].settings;
        auto same = std::find_if(settings.begin(), settings.end(), [&](const LogFinding& s) {
          return s.detail.substr(0, s.detail.find('=')) == name;
        });
        if (same != settings.end()) *same = f;
        else settings.push_back(f);
      }
      kept = true;  // a setting is context, not a finding of its own
    } else if (f.kind == FindingKind::allocator_pressure) {
      for (std::size_t k = 0; k < incidents.size(); ++k) {
        auto in_file = shapes[k].first_line.find(f.file);
        if (in_file == shapes[k].first_line.end()) continue;
        if (f.line <= in_file->second && in_file->second - f.line <= limits.warning_lookback_lines) {
          incidents[k].warnings_before.push_back(f);
          kept = true;  // evidence of the incident it preceded, not a finding of its own
          break;
        }
      }
    }
    if (!kept) rest.push_back(std::move(f));
  }

  Finisher finisher(all, inputs);
  for (std::size_t k = 0; k < incidents.size(); ++k) finisher.finish(incidents[k], groups[k]);
  for (auto& inc : incidents) {
    discount_uvm_figures(inc);
    note_pressure_before(inc);
  }

  for (std::size_t k = 0; k < incidents.size(); ++k) {
    Incident& inc = incidents[k];
    const LogFinding* conf = allocator_conf_setting(inc);
    if (inc.primary.expandable_hint && conf && conf->detail.find("expandable_segments:True") != std::string::npos)
      inc.notes.insert(inc.notes.begin(),
                       fmt::format("The message suggests expandable_segments:True, but the log shows it is already "
                                   "set (line {}: {}). PyTorch prints the hint regardless; look elsewhere.",
                                   conf->line, conf->detail));
    if (!inc.echoes.empty()) {
      bool named_any = false;
      std::string lines;
      for (std::size_t i = 0; i < inc.echoes.size() && i < 8; ++i) {
        const EchoPlace& e = inc.echoes[i];
        bool named = inputs.size() > 1 && e.file < inputs.size() && !inputs[e.file].name.empty();
        named_any = named_any || named;
        lines += fmt::format("{}{}", i ? ", " : "", named ? fmt::format("{}:{}", inputs[e.file].name, e.line)
                                                          : std::to_string(e.line));
      }
      if (inc.echoes.size() > 8) lines += ", ...";
      std::string at = named_any ? "at" : inc.echoes.size() == 1 ? "line" : "lines";
      std::string said = fmt::format("The same failure is reported {} more time{} ({} {})", inc.echoes.size(),
                                     inc.echoes.size() == 1 ? "" : "s", at, lines);
      if (auto run = recurring_run(all, groups[k], limits))
        inc.notes.push_back(fmt::format(
            "{}. It recurs through the run: {} ran out of memory {} times, from line {} to line {}{}, the program "
            "catching the error each time and going on (a retry, a skipped batch, a batch-size search). It is one "
            "incident, classified from the message at line {}.",
            said, run->rank ? fmt::format("rank {}", *run->rank) : std::string("the process"), run->messages,
            run->first_line, run->last_line,
            named_any && run->file < inputs.size() ? fmt::format(" of {}", inputs[run->file].name) : std::string(),
            inc.primary.line));
      else
        inc.notes.push_back(fmt::format("{}: other ranks, chained exceptions, launcher summaries or a library's own "
                                        "messages. It is one incident.",
                                        said));
    }
  }
  findings = merge_across_failures(std::move(rest));
  return incidents;
}

}  // namespace oomlens::analyzer
