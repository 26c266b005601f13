// Sizes are exact integers in bytes. Keys are only ever added (the contract
// in docs/snapshot-json.md); a figure the snapshot does not record is null.
#include "report/snapshot_json.hpp"

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

json oom_json(const snap::OomAnalysis& o) {
  return {{"device", o.device},
          {"requested_bytes", o.requested},
          {"device_free_bytes", o.device_free_known ? json(o.device_free) : json(nullptr)},
          {"largest_free_block_bytes", o.largest_free_block},
          {"cached_free_bytes", o.cached_free},
          {"reserved_bytes", o.reserved},
          {"allocated_bytes", o.allocated},
          {"class", analyzer::to_string(o.verdict.cls)},
          {"arithmetic", o.verdict.arithmetic},
          {"notes", o.verdict.notes},
          {"time_us", o.time_us},
          {"oom_events", o.oom_events},
          {"frames", snapshot_frames_json(o.frames)}};
}

}  // namespace

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

json snapshot_json(const snap::Snapshot& snapshot, const snap::Analysis& a) {
  json devices = json::array();
  for (const auto& d : a.devices) devices.push_back(device_json(d));
  json sites = json::array();
  for (const auto& s : a.top_sites)
    sites.push_back({{"bytes", s.bytes}, {"count", s.count}, {"frames", snapshot_frames_json(s.frames)}});
  return {{"devices", devices},
          {"oom", a.oom ? oom_json(*a.oom) : json(nullptr)},
          {"top_sites", sites},
          {"sites_total", a.sites_total},
          {"settings", snapshot_settings_json(snapshot.settings)},
          {"legacy", snapshot.legacy}};
}

std::string snapshot_json_text(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

}  // namespace oomlens::report
