#include "analyzer/snapshot/compare.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace oomlens::analyzer::snapshot {
namespace {

// A site's identity across two files: its lead frames (frame lists are not
// shared between files), or the cause of a missing stack.
std::string site_key(const SiteFrames& s) {
  std::string key;
  if (!s.frames || s.frames->empty()) return "missing:" + std::string(key_of(s.missing));
  key = s.folded.in_user_code ? "user" : "other";
  for (const Frame& f : s.folded.lead) {
    key += '\n';
    key += f.filename;
    key += ':';
    key += std::to_string(f.line);
    key += ' ';
    key += f.name;
  }
  return key;
}

TraceMoment bare(const TraceMoment& m) {
  TraceMoment b;
  b.entries = m.entries;
  b.time_us = m.time_us;
  b.allocated = m.allocated;
  b.reserved = m.reserved;
  b.live_blocks = m.live_blocks;
  b.sites_total = m.sites_total;
  return b;
}

// A timeline without what its moments held: a run's figures stay small
// (a job keeps one per rank).
DeviceTimeline curve_only(const DeviceTimeline& t) {
  DeviceTimeline c = t;
  for (TraceMoment* m : {&c.start, &c.peak_allocated, &c.peak_reserved}) *m = bare(*m);
  if (c.at_oom) c.at_oom = bare(*c.at_oom);
  c.older_than_trace.clear();
  return c;
}

}  // namespace

RunFigures run_figures(const Analysis& a) {
  RunFigures r;
  for (const auto& d : a.devices) {
    r.reserved += d.reserved;
    r.allocated += d.allocated;
    r.inactive_split += d.inactive_split;
  }
  r.fragmentation = r.reserved ? static_cast<double>(r.inactive_split) / static_cast<double>(r.reserved) : 0.0;
  if (!a.timelines.empty()) {
    r.peak_from_trace = true;
    const DeviceTimeline* peak = &a.timelines.front();
    for (const auto& t : a.timelines) {
      r.peak_allocated = std::max(r.peak_allocated, t.peak_allocated.allocated);
      r.peak_reserved = std::max(r.peak_reserved, t.peak_reserved.reserved);
      if (t.peak_allocated.allocated > peak->peak_allocated.allocated) peak = &t;
    }
    r.peak_timeline = curve_only(*peak);
  } else {
    for (const auto& d : a.devices) {
      r.peak_allocated = std::max(r.peak_allocated, d.allocated);
      r.peak_reserved = std::max(r.peak_reserved, d.reserved);
    }
  }
  if (a.oom) r.oom = a.oom->verdict.cls;
  return r;
}

Comparison compare_runs(const Analysis& a, const Analysis& b, std::size_t top) {
  Comparison c;
  c.a = run_figures(a);
  c.b = run_figures(b);
  std::vector<SiteChange> changes;
  std::unordered_map<std::string, std::size_t> index;
  auto add = [&](const SiteFrames& s, bool second) {
    auto [it, inserted] = index.try_emplace(site_key(s), changes.size());
    if (inserted) changes.push_back({s, 0, 0, 0, 0});
    SiteChange& change = changes[it->second];
    (second ? change.bytes_b : change.bytes_a) += s.bytes;
    (second ? change.count_b : change.count_a) += s.count;
    if (s.bytes > change.site.bytes) change.site = s;
  };
  for (const auto& s : a.top_sites) add(s, false);
  for (const auto& s : b.top_sites) add(s, true);
  c.sites_total = changes.size();
  auto keep = [top](std::vector<SiteChange> list, auto&& before) {
    std::stable_sort(list.begin(), list.end(), before);
    if (list.size() > top) list.resize(top);
    return list;
  };
  c.top = keep(changes, [](const SiteChange& x, const SiteChange& y) {
    return std::max(x.bytes_a, x.bytes_b) > std::max(y.bytes_a, y.bytes_b);
  });
  std::vector<SiteChange> grew, shrank;
  for (const auto& s : changes) {
    if (s.change() > 0) grew.push_back(s);
    if (s.change() < 0) shrank.push_back(s);
  }
  c.grew = keep(std::move(grew), [](const SiteChange& x, const SiteChange& y) { return x.change() > y.change(); });
  c.shrank = keep(std::move(shrank), [](const SiteChange& x, const SiteChange& y) { return x.change() < y.change(); });
  return c;
}

}  // namespace oomlens::analyzer::snapshot
