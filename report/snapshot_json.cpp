// Sizes are exact integers in bytes. Keys are only ever added (the contract
// in docs/snapshot-json.md); a figure the snapshot does not record is null.
#include "report/snapshot_json.hpp"

#include <optional>

#include "report/json_text.hpp"

namespace oomlens::report {
namespace {

namespace snap = analyzer::snapshot;
using nlohmann::json;

json device_json(const snap::DeviceSummary& d) {
  json pools = json::array();
  for (const auto& p : d.pools)
    pools.push_back({{"pool", p.pool},
                     {"pool_id", {p.pool_id.first, p.pool_id.second}},
                     {"segments", p.segments},
                     {"free_bytes", p.free_bytes},
                     {"largest_free_block_bytes", p.largest_free_block}});
  return {{"device", d.device},
          {"reserved_bytes", d.reserved},
          {"allocated_bytes", d.allocated},
          {"active_bytes", d.active},
          {"inactive_bytes", d.inactive},
          {"inactive_split_bytes", d.inactive_split},
          {"largest_free_block_bytes", d.largest_free_block},
          {"segments", d.segments},
          {"blocks", d.blocks},
          {"fragmentation_ratio", d.fragmentation},
          {"pools", pools}};
}

json frame_json(const snap::Frame& f) { return {{"filename", f.filename}, {"line", f.line}, {"name", f.name}}; }

json cause_json(snap::MissingStack m) { return m == snap::MissingStack::none ? json(nullptr) : json(snap::key_of(m)); }

// The innermost frame in the user's own code; null without one.
json user_frame_json(const snap::FoldedStack& folded) {
  return folded.in_user_code && !folded.lead.empty() ? frame_json(folded.lead.front()) : json(nullptr);
}

json site_json(const snap::SiteFrames& s) {
  json lead = json::array();
  for (const auto& f : s.folded.lead) lead.push_back(frame_json(f));
  return {{"bytes", s.bytes},
          {"count", s.count},
          {"frames", snapshot_frames_json(s.frames)},
          {"user_frame", user_frame_json(s.folded)},
          {"lead_frames", lead},
          {"in_user_code", s.folded.in_user_code},
          {"folded_frames", {{"native", s.folded.folded_native}, {"framework", s.folded.folded_framework}}},
          {"no_stack_cause", cause_json(s.missing)}};
}

json sites_json(const std::vector<snap::SiteFrames>& sites) {
  json list = json::array();
  for (const auto& s : sites) list.push_back(site_json(s));
  return list;
}

json moment_json(const snap::TraceMoment& m) {
  json largest = json::array();
  for (const auto& b : m.largest) {
    const auto folded = b.frames ? snap::fold_stack(*b.frames) : snap::FoldedStack{};
    largest.push_back({{"address", b.address},
                       {"bytes", b.size},
                       {"before_trace", b.before_trace},
                       {"time_us", b.time_us},
                       {"user_frame", user_frame_json(folded)},
                       {"frames", snapshot_frames_json(b.frames)}});
  }
  return {{"entries", m.entries},           {"time_us", m.time_us},
          {"allocated_bytes", m.allocated}, {"reserved_bytes", m.reserved},
          {"live_blocks", m.live_blocks},   {"top_sites", sites_json(m.top_sites)},
          {"sites_total", m.sites_total},   {"largest_blocks", largest}};
}

// The curve's points as drawn (at most ReplayOptions::curve_points); with
// `times`, each point's last entry's time too, to place it on a time axis.
json curve_json(const snap::DeviceTimeline& t, bool times) {
  json allocated = json::array(), reserved = json::array(), time_us = json::array();
  for (const auto& p : t.curve) {
    allocated.push_back(p.allocated);
    reserved.push_back(p.reserved);
    time_us.push_back(p.time_us);
  }
  json curve = {{"entries_per_point", t.entries_per_point}, {"allocated_bytes", allocated}, {"reserved_bytes", reserved}};
  if (times) curve["time_us"] = std::move(time_us);
  return curve;
}

json timeline_json(const snap::DeviceTimeline& t) {
  return {{"device", t.device},
          {"entries", t.entries},
          {"overflow_suspected", t.overflow_suspected},
          {"before_trace_bytes", t.before_trace_bytes},
          {"before_trace_blocks", t.before_trace_blocks},
          {"unaccounted_bytes", t.unaccounted_bytes},
          {"start", {{"allocated_bytes", t.start.allocated}, {"reserved_bytes", t.start.reserved}, {"time_us", t.start.time_us}}},
          {"peak_allocated", moment_json(t.peak_allocated)},
          {"peak_reserved", moment_json(t.peak_reserved)},
          {"at_oom", t.at_oom ? moment_json(*t.at_oom) : json(nullptr)},
          {"curve", curve_json(t, false)}};
}

// The verdict's figures are its evidence, under the same names; a figure the
// oom entry did not record is null.
json oom_json(const rules::Diagnosis& d, const snap::OomAnalysis& o) {
  json j = {{"device", o.device},
            {"device_free_bytes", nullptr},
            {"class", analyzer::to_string(o.verdict.cls)},
            {"arithmetic", o.verdict.arithmetic},
            {"notes", o.verdict.notes},
            {"time_us", o.time_us},
            {"oom_events", o.oom_events},
            {"frames", snapshot_frames_json(o.frames)},
            {"user_frame", o.frames ? user_frame_json(snap::fold_stack(*o.frames)) : json(nullptr)},
            {"no_stack_cause", cause_json(o.missing)}};
  for (const auto& e : d.evidence) j[e.name] = e.value;
  return j;
}

// A moment of a run's curve, without what was alive then.
json curve_moment_json(const snap::TraceMoment& m) {
  return {{"entries", m.entries}, {"time_us", m.time_us}, {"allocated_bytes", m.allocated}, {"reserved_bytes", m.reserved}};
}

// The curve a page of several runs draws for this run: the device with the
// highest peak, its points and its moments.
json peak_timeline_json(const std::optional<snap::DeviceTimeline>& t) {
  if (!t) return nullptr;
  return {{"device", t->device},
          {"entries", t->entries},
          {"timed", t->timed},
          {"start_time_us", t->start.time_us},
          {"peak_allocated", curve_moment_json(t->peak_allocated)},
          {"peak_reserved", curve_moment_json(t->peak_reserved)},
          {"at_oom", t->at_oom ? curve_moment_json(*t->at_oom) : json(nullptr)},
          {"curve", curve_json(*t, true)}};
}

json run_json(const std::string& path, const snap::RunFigures& r) {
  return {{"path", path},
          {"reserved_bytes", r.reserved},
          {"allocated_bytes", r.allocated},
          {"inactive_split_bytes", r.inactive_split},
          {"fragmentation_ratio", r.fragmentation},
          {"peak_allocated_bytes", r.peak_allocated},
          {"peak_reserved_bytes", r.peak_reserved},
          {"peak_from_trace", r.peak_from_trace},
          {"oom_class", r.oom ? json(analyzer::to_string(*r.oom)) : json(nullptr)},
          {"peak_timeline", peak_timeline_json(r.peak_timeline)}};
}

json changes_json(const std::vector<snap::SiteChange>& list) {
  json out = json::array();
  for (const auto& c : list) {
    json site = site_json(c.site);
    site.erase("bytes");
    site.erase("count");
    site["bytes_a"] = c.bytes_a;
    site["bytes_b"] = c.bytes_b;
    site["count_a"] = c.count_a;
    site["count_b"] = c.count_b;
    site["change_bytes"] = c.change();
    out.push_back(std::move(site));
  }
  return out;
}

}  // namespace

json snapshot_compare_json(const std::string& path_a, const std::string& path_b, const snap::Comparison& c) {
  return {{"a", run_json(path_a, c.a)},
          {"b", run_json(path_b, c.b)},
          {"top_sites", changes_json(c.top)},
          {"grew", changes_json(c.grew)},
          {"shrank", changes_json(c.shrank)},
          {"sites_total", c.sites_total}};
}

json snapshot_job_json(const std::string& dir, const snap::JobSummary& job, const snap::Analysis& highest) {
  json ranks = json::array();
  for (const auto& r : job.ranks) {
    json entry = run_json(r.name, r.figures);
    entry["rank"] = r.rank;
    ranks.push_back(std::move(entry));
  }
  return {{"directory", dir},
          {"ranks", ranks},
          {"highest_rank", job.ranks.empty() ? json(nullptr) : json(job.ranks[job.highest].rank)},
          {"peak_max_bytes", job.peak_max},
          {"peak_mean_bytes", job.peak_mean},
          {"peak_min_bytes", job.peak_min},
          {"imbalance", job.imbalance},
          {"highest_top_sites", sites_json(highest.top_sites)}};
}

json snapshot_settings_json(const snap::AllocatorSettings& s) {
  json j = json::object();
  if (!s.present) return j;
  if (s.alloc_conf) j["PYTORCH_CUDA_ALLOC_CONF"] = *s.alloc_conf;
  if (s.expandable_segments) j["expandable_segments"] = *s.expandable_segments;
  if (s.max_split_size) j["max_split_size"] = *s.max_split_size;
  if (s.garbage_collection_threshold) j["garbage_collection_threshold"] = *s.garbage_collection_threshold;
  if (!s.roundup_power2_divisions.empty()) {
    json r = json::object();
    for (const auto& [k, v] : s.roundup_power2_divisions) r[k] = v;
    j["roundup_power2_divisions"] = r;
  }
  if (s.pinned_num_register_threads) j["pinned_num_register_threads"] = *s.pinned_num_register_threads;
  if (s.release_lock_on_cudamalloc) j["release_lock_on_cudamalloc"] = *s.release_lock_on_cudamalloc;
  if (s.pinned_use_cuda_host_register) j["pinned_use_cuda_host_register"] = *s.pinned_use_cuda_host_register;
  if (s.per_process_memory_fraction) j["per_process_memory_fraction"] = *s.per_process_memory_fraction;
  for (const auto& [k, v] : s.other) j[k] = v;
  return j;
}


json snapshot_frames_json(const snap::FrameList& frames) {
  json list = json::array();
  if (frames)
    for (const auto& f : *frames) list.push_back({{"filename", f.filename}, {"line", f.line}, {"name", f.name}});
  return list;
}

json snapshot_json(const snap::Snapshot& snapshot, const rules::SnapshotReport& report) {
  const snap::Analysis& a = report.analysis;
  json devices = json::array();
  for (const auto& d : a.devices) devices.push_back(device_json(d));
  json timelines = json::array();
  for (const auto& t : a.timelines) timelines.push_back(timeline_json(t));
  return {{"devices", devices},
          {"oom", report.oom ? oom_json(*report.oom, report.oom_entry()) : json(nullptr)},
          {"top_sites", sites_json(a.top_sites)},
          {"timelines", timelines},
          {"sites_total", a.sites_total},
          {"settings", snapshot_settings_json(snapshot.settings)},
          {"legacy", snapshot.legacy}};
}

std::string snapshot_json_text(const json& j) { return json_text(j, 2); }

}  // namespace oomlens::report
