#include "analyzer/snapshot/replay.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <unordered_map>

namespace oomlens::analyzer::snapshot {
namespace {

using u64 = std::uint64_t;
using i64 = std::int64_t;

// The trace records the size the caller asked for (PyTorch's trace entries
// carry the request, not the rounded block): the end state is read in the
// same currency so the two ends can be compared.
u64 traced_size(const Block& block) { return block.requested_size.value_or(block.size); }

// Sums that wrap instead of overflowing: a hostile trace may hold sizes near
// 2^64, and its figures may then be wrong but never undefined.
i64 plus(i64 a, std::uint64_t b) { return static_cast<i64>(static_cast<u64>(a) + b); }
i64 minus(i64 a, std::uint64_t b) { return static_cast<i64>(static_cast<u64>(a) - b); }
i64 plus(i64 a, i64 b) { return plus(a, static_cast<u64>(b)); }

bool adds_segment(TraceAction a) { return a == TraceAction::segment_alloc || a == TraceAction::segment_map; }
bool drops_segment(TraceAction a) { return a == TraceAction::segment_free || a == TraceAction::segment_unmap; }

// One device's trace and end state, replayed.
class DeviceReplay {
 public:
  DeviceReplay(const Snapshot& snapshot, std::int64_t device, const ChunkedArray<TraceEvent>& trace,
               const std::vector<FrameList>& stacks, const ReplayOptions& options, bool any_frames)
      : snapshot_(snapshot), trace_(trace), stacks_(stacks), options_(options) {
    timeline_.device = device;
    timeline_.entries = trace_.size();
    recording_.any_frames = any_frames;
    recording_.trace_recorded = true;
  }

  DeviceTimeline run() {
    first_pass();
    end_state();
    timeline_.start = moment(0, trace_[0].time_us, false);
    timeline_.peak_allocated = moment(peak_allocated_at_, time_at(peak_allocated_at_), true, options_.all_peak_sites);
    timeline_.peak_reserved = moment(peak_reserved_at_, time_at(peak_reserved_at_), true);
    if (last_oom_) timeline_.at_oom = moment(*last_oom_, trace_[*last_oom_].time_us, true);
    return std::move(timeline_);
  }

 private:
  const FrameList& frames_of(std::size_t i) const { return stacks_[trace_[i].stack]; }
  std::int64_t time_at(std::size_t entries) const { return trace_[entries ? entries - 1 : 0].time_us; }

  // Allocated and reserved relative to the start, their peaks, the curve,
  // and the blocks freed that the trace never saw allocated.
  void first_pass() {
    const std::size_t n = trace_.size();
    const std::size_t points = std::max<std::size_t>(1, std::min(options_.curve_points, n));
    step_ = (n + points - 1) / points;
    timeline_.entries_per_point = step_;
    curve_.assign((n + step_ - 1) / step_, {std::numeric_limits<i64>::min(), std::numeric_limits<i64>::min()});
    times_.assign(curve_.size(), 0);
    curve_[0] = {0, 0};  // the start, before the first entry
    i64 allocated = 0, reserved = 0, best_allocated = 0, best_reserved = 0;
    bool timed = trace_[0].time_us > 0;
    for (std::size_t i = 0; i < n; ++i) {
      const TraceEvent& e = trace_[i];
      if (i > 0 && e.time_us < trace_[i - 1].time_us) timed = false;
      times_[i / step_] = e.time_us;
      apply(i, allocated, reserved, live_, &freed_unseen_);
      if (e.action == TraceAction::oom) last_oom_ = i;
      if (allocated > best_allocated) best_allocated = allocated, peak_allocated_at_ = i + 1;
      if (reserved > best_reserved) best_reserved = reserved, peak_reserved_at_ = i + 1;
      auto& point = curve_[i / step_];
      point.first = std::max(point.first, allocated);
      point.second = std::max(point.second, reserved);
    }
    delta_allocated_ = allocated;
    delta_reserved_ = reserved;
    timeline_.timed = timed && trace_[n - 1].time_us > trace_[0].time_us;
  }

  // Applies entry i. A free of an address not in `live` is a block older
  // than the trace: its entry's size leaves allocated memory all the same.
  void apply(std::size_t i, i64& allocated, i64& reserved, std::unordered_map<u64, std::size_t>& live,
             std::vector<std::size_t>* freed_unseen) const {
    const TraceEvent& e = trace_[i];
    if (e.action == TraceAction::alloc) {
      auto [it, inserted] = live.try_emplace(e.addr, i);
      if (!inserted) {  // allocated twice without a free between: the entry freeing it was lost
        allocated = minus(allocated, trace_[it->second].size);
        it->second = i;
      }
      allocated = plus(allocated, e.size);
    } else if (e.action == TraceAction::free_requested) {
      if (auto it = live.find(e.addr); it != live.end()) {
        allocated = minus(allocated, trace_[it->second].size);
        live.erase(it);
      } else {
        if (freed_unseen) freed_unseen->push_back(i);
        allocated = minus(allocated, e.size);
      }
    } else if (adds_segment(e.action)) {
      reserved = plus(reserved, e.size);
    } else if (drops_segment(e.action)) {
      reserved = minus(reserved, e.size);
    }
  }

  // The dump-time segments are the end of the trace: what they hold that the
  // trace never allocated was there before it began.
  void end_state() {
    u64 end_allocated = 0, end_reserved = 0, rebuilt_end = 0;
    for (const Segment& segment : snapshot_.segments) {
      if (segment.device != timeline_.device) continue;
      end_reserved += segment.total_size;
      for (const Block& block : segment.blocks) {
        if (block.state != BlockState::active_allocated) continue;
        end_allocated += traced_size(block);
        if (live_.contains(block.address)) continue;
        older_.push_back(&block);
        timeline_.older_than_trace.push_back(block.address);
        timeline_.before_trace_bytes += traced_size(block);
      }
    }
    for (std::size_t i : freed_unseen_) timeline_.before_trace_bytes += trace_[i].size;
    timeline_.before_trace_blocks = older_.size() + freed_unseen_.size();
    std::sort(timeline_.older_than_trace.begin(), timeline_.older_than_trace.end());
    rebuilt_end = timeline_.before_trace_bytes + static_cast<u64>(delta_allocated_);
    timeline_.unaccounted_bytes = static_cast<i64>(end_allocated - rebuilt_end);
    start_reserved_ = static_cast<i64>(end_reserved - static_cast<u64>(delta_reserved_));
    timeline_.overflow_suspected = timeline_.before_trace_blocks > 0 && looks_like_ring_limit(trace_.size());
    recording_.overflow_suspected = timeline_.overflow_suspected;
    for (std::size_t p = 0; p < curve_.size(); ++p)
      timeline_.curve.push_back({clamp(plus(curve_[p].first, timeline_.before_trace_bytes)),
                                 clamp(plus(start_reserved_, curve_[p].second)), times_[p]});
  }

  static u64 clamp(i64 v) { return v > 0 ? static_cast<u64>(v) : 0; }

  // The state after the first `entries` entries: the trace's live blocks,
  // and the older ones not yet freed.
  TraceMoment moment(std::size_t entries, std::int64_t time_us, bool with_sites, bool all_sites = false) const {
    std::unordered_map<u64, std::size_t> live;
    i64 allocated = 0, reserved = 0;
    for (std::size_t i = 0; i < entries; ++i) apply(i, allocated, reserved, live, nullptr);
    std::vector<LiveBlock> blocks;
    blocks.reserve(live.size());
    for (const auto& [address, i] : live) blocks.push_back({address, trace_[i].size, frames_of(i), trace_[i].time_us, false});
    for (std::size_t i : freed_unseen_)
      if (i >= entries) blocks.push_back({trace_[i].addr, trace_[i].size, frames_of(i), 0, true});
    for (const Block* b : older_) blocks.push_back({b->address, traced_size(*b), b->frames, 0, true});

    TraceMoment m;
    m.entries = entries;
    m.time_us = time_us;
    m.reserved = clamp(plus(start_reserved_, reserved));
    m.live_blocks = blocks.size();
    for (const LiveBlock& b : blocks) m.allocated += b.size;
    if (!with_sites) return m;
    SiteGrouper sites;
    for (const LiveBlock& b : blocks) sites.add(b.frames, b.size, missing_stack_cause(recording_, !b.before_trace));
    if (all_sites) {  // the top ones are the first of all (take sorts stably)
      m.all_sites = sites.take(SIZE_MAX, m.sites_total);
      const auto top = m.all_sites.begin() + static_cast<std::ptrdiff_t>(std::min(options_.top_sites, m.all_sites.size()));
      m.top_sites.assign(m.all_sites.begin(), top);
    } else {
      m.top_sites = sites.take(options_.top_sites, m.sites_total);
    }
    const std::size_t keep = std::min(options_.largest_blocks, blocks.size());
    std::partial_sort(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(keep), blocks.end(),
                      [](const LiveBlock& x, const LiveBlock& y) {
                        return x.size != y.size ? x.size > y.size : x.address < y.address;
                      });
    blocks.resize(keep);
    m.largest = std::move(blocks);
    return m;
  }

  const Snapshot& snapshot_;
  const ChunkedArray<TraceEvent>& trace_;
  const std::vector<FrameList>& stacks_;
  const ReplayOptions& options_;
  DeviceTimeline timeline_;
  StackRecording recording_;
  std::unordered_map<u64, std::size_t> live_;  // at the end of the trace: address -> its alloc entry
  std::vector<std::size_t> freed_unseen_;      // free_requested entries of blocks older than the trace
  std::vector<const Block*> older_;            // blocks alive at dump time, older than the trace
  std::vector<std::pair<i64, i64>> curve_;     // allocated and reserved relative to the start, per point
  std::vector<i64> times_;                     // per point: the time of its last entry
  std::size_t step_ = 1;
  std::size_t peak_allocated_at_ = 0, peak_reserved_at_ = 0;
  std::optional<std::size_t> last_oom_;
  i64 delta_allocated_ = 0, delta_reserved_ = 0, start_reserved_ = 0;
};

}  // namespace

bool looks_like_ring_limit(std::size_t entries) {
  if (entries < 1000) return false;
  return entries % 1000 == 0 || (entries >= 1024 && (entries & (entries - 1)) == 0);
}

std::vector<DeviceTimeline> replay_traces(const Snapshot& snapshot, const ReplayOptions& options) {
  std::vector<DeviceTimeline> timelines;
  const bool frames = any_frames(snapshot);
  auto length = [&](std::size_t d, std::size_t kept) {
    return d < snapshot.trace_lengths.size() ? snapshot.trace_lengths[d] : kept;
  };
  for (std::size_t d = 0; d < std::max(snapshot.device_traces.size(), snapshot.trace_events.size()); ++d) {
    const auto device = static_cast<std::int64_t>(d);
    if (d < snapshot.trace_events.size() && !snapshot.trace_events[d].empty() &&
        snapshot.trace_events[d].size() == length(d, snapshot.trace_events[d].size())) {
      timelines.push_back(
          DeviceReplay(snapshot, device, snapshot.trace_events[d], snapshot.trace_stacks, options, frames).run());
      continue;
    }
    // A trace read whole as TraceEntry: made compact for the replay.
    if (d >= snapshot.device_traces.size()) continue;
    const auto& trace = snapshot.device_traces[d];
    if (trace.empty() || length(d, trace.size()) != trace.size()) continue;
    std::vector<FrameList> stacks{std::make_shared<const std::vector<Frame>>()};
    std::unordered_map<const std::vector<Frame>*, std::uint32_t> index;
    ChunkedArray<TraceEvent> events;
    for (const TraceEntry& e : trace) {
      std::uint32_t stack = 0;
      if (e.frames && !e.frames->empty()) {
        auto [it, inserted] = index.try_emplace(e.frames.get(), static_cast<std::uint32_t>(stacks.size()));
        if (inserted) stacks.push_back(e.frames);
        stack = it->second;
      }
      events.push_back({e.addr, e.size, e.time_us, stack, e.action});
    }
    timelines.push_back(DeviceReplay(snapshot, device, events, stacks, options, frames).run());
  }
  return timelines;
}

}  // namespace oomlens::analyzer::snapshot
