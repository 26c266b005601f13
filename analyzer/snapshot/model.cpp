#include "analyzer/snapshot/model.hpp"

#include <charconv>
#include <unordered_map>

#include <fmt/format.h>

#include "analyzer/snapshot/key_path.hpp"

namespace oomlens::analyzer::snapshot {
namespace {

// The scalar as Python would print it, for settings this reader does not know.
std::string scalar_text(const ValueTree& tree, ValueRef value) {
  switch (tree.kind(value)) {
    case Kind::none: return "None";
    case Kind::boolean: return *tree.as_bool(value) ? "True" : "False";
    case Kind::integer: return std::to_string(*tree.as_int(value));
    case Kind::floating: return fmt::format("{}", *tree.as_float(value));
    case Kind::string: return std::string(*tree.as_string(value));
    default: return fmt::format("<{}>", kind_name(tree.kind(value)));
  }
}

// "per_process_memory_fraction:0.5,expandable_segments:True" -> the value of
// one option. Lists ("[256:1,>:4]") are skipped whole; spaces are dropped as
// PyTorch's own lexer drops them.
std::optional<std::string> conf_option(std::string_view conf, std::string_view key) {
  std::string compact;
  for (char c : conf)
    if (c != ' ' && c != '\t' && c != '\n') compact += c;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= compact.size(); ++i) {
    char c = i < compact.size() ? compact[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c != ',' || depth > 0) continue;
    std::string_view option = std::string_view(compact).substr(start, i - start);
    start = i + 1;
    std::size_t colon = option.find(':');
    if (colon != std::string_view::npos && option.substr(0, colon) == key)
      return std::string(option.substr(colon + 1));
  }
  return std::nullopt;
}

// Reads the model from a value tree; as a TraceSink, it also takes the trace
// entries while the pickle is read, so that they never enter the tree.
class ModelReader : public TraceSink {
 public:
  ModelReader(bool keep_full_trace, bool keep_trace_events)
      : empty_frames_(std::make_shared<const std::vector<Frame>>()),
        keep_full_trace_(keep_full_trace),
        keep_trace_events_(keep_trace_events) {
    if (keep_trace_events_) trace_stacks_.push_back(empty_frames_);
  }

  Expected<Snapshot, SnapshotError> read(const ValueTree& tree);

  bool take(const ValueTree& tree, ValueRef list, std::size_t device, std::span<const ValueRef> items,
            std::size_t bytes_left) override;
  bool holds_from(std::uint32_t first) const override { return cached_any_ && cached_highest_ >= first; }

 private:
  bool fail(std::string_view why) {
    std::string where = path_.str();
    error_ = SnapshotError{where.empty() ? std::string(why) : fmt::format("{}: {}", where, why), std::nullopt};
    return false;
  }
  // A snapshot never shares segments, blocks or trace entries, so the model
  // has at most as many items as the pickle has item slots. A file that
  // references one block list from a million segments would expand to far
  // more (a decompression bomb): it runs out of budget instead of memory.
  bool spend(std::size_t items) {
    spent_ += items;
    if (spent_ <= budget_) return true;
    return fail(fmt::format("the same data is referenced over and over, expanding past {} items "
                            "(the item slots in the file): refused",
                            tree_->child_count()));
  }
  bool wrong_type(ValueRef value, std::string_view expected) {
    return fail(fmt::format("expected {}, found {}", expected, kind_name(tree_->kind(value))));
  }

  // -- scalars ----------------------------------------------------------------
  bool read(ValueRef value, std::int64_t& out);
  bool read(ValueRef value, std::uint64_t& out);  // non-negative
  bool read_bits(ValueRef value, std::uint64_t& out);
  // Calls on_field(key, value) for each string-keyed entry of a dict, with
  // the key on the error path; stops at the first false.
  template <class OnField>
  bool for_each_field(ValueRef dict, OnField&& on_field) {
    for (auto [key, field] : tree_->entries(dict)) {
      auto name = tree_->as_string(key);
      if (!name) continue;
      KeyPath::Step at_key(path_, *name);
      if (!on_field(std::string_view(*name), field)) return false;
    }
    return true;
  }  // any int in [-2^63, 2^64): streams, SIZE_MAX
  bool read(ValueRef value, bool& out);
  bool read(ValueRef value, double& out);
  bool read(ValueRef value, std::string& out);
  template <typename T>
  bool read(ValueRef value, std::optional<T>& out) {
    T parsed{};
    if (!read(value, parsed)) return false;
    out = std::move(parsed);
    return true;
  }

  // -- structure --------------------------------------------------------------
  bool expect_list(ValueRef value) {
    Kind kind = tree_->kind(value);
    return kind == Kind::list || kind == Kind::tuple || wrong_type(value, "a list");
  }
  bool expect_dict(ValueRef value) { return tree_->kind(value) == Kind::dict || wrong_type(value, "a dict"); }
  bool read_frames(ValueRef value, FrameList& out);
  bool read_segments(ValueRef value, std::vector<Segment>& out);
  bool read_segment(ValueRef value, Segment& out);
  bool read_block(ValueRef value, Block& out);
  bool read_legacy_history(ValueRef value, Block& out, bool has_frames);
  bool read_traces(ValueRef value, Snapshot& snapshot);
  bool read_trace_entry(ValueRef value, TraceEntry& out);
  bool read_settings(ValueRef value, AllocatorSettings& out);
  bool read_annotations(ValueRef value, std::vector<Annotation>& out);

  // Entries of one trace taken while the pickle was read (see take).
  struct TakenTrace {
    std::size_t count = 0;
    ChunkedArray<TraceEvent> events;
    std::vector<TraceEntry> entries;
  };
  void keep_entry(TraceEntry& entry, ChunkedArray<TraceEvent>* events, std::vector<TraceEntry>& entries);

  const ValueTree* tree_ = nullptr;
  KeyPath path_;
  std::optional<SnapshotError> error_;
  FrameList empty_frames_;
  std::unordered_map<std::uint32_t, FrameList> frame_lists_;  // by the list's ValueRef: shared stays shared
  // Items the model created, and the most it may (see spend); no limit while
  // the pickle is read, when the tree's size is not known yet.
  std::size_t spent_ = 0;
  std::size_t budget_ = SIZE_MAX;
  std::unordered_map<std::uint32_t, TakenTrace> taken_;  // by the trace list's ValueRef
  bool cached_any_ = false;
  std::uint32_t cached_highest_ = 0;  // of frame_lists_' keys
  bool keep_full_trace_;
  bool keep_trace_events_;
  std::unordered_map<const std::vector<Frame>*, std::uint32_t> stack_index_;  // into Snapshot::trace_stacks
  std::vector<FrameList> trace_stacks_;  // Snapshot::trace_stacks, once the traces are read
  std::uint32_t stack_of(const FrameList& frames);
};

std::uint32_t ModelReader::stack_of(const FrameList& frames) {
  if (!frames || frames->empty()) return 0;
  auto [it, inserted] = stack_index_.try_emplace(frames.get(), static_cast<std::uint32_t>(trace_stacks_.size()));
  if (inserted) trace_stacks_.push_back(frames);
  return it->second;
}

bool ModelReader::read(ValueRef value, std::int64_t& out) {
  auto parsed = tree_->as_int(value);
  if (!parsed) {
    if (tree_->kind(value) == Kind::big_integer) return fail("expected an int that fits in 64 bits, found a larger one");
    return wrong_type(value, "an int");
  }
  out = *parsed;
  return true;
}

bool ModelReader::read(ValueRef value, std::uint64_t& out) {
  auto parsed = tree_->as_uint64(value);
  if (parsed) {
    out = *parsed;
    return true;
  }
  if (auto negative = tree_->as_int(value)) return fail(fmt::format("expected a non-negative int, found {}", *negative));
  if (tree_->kind(value) == Kind::big_integer) return fail("expected an int below 2^64, found a larger one");
  return wrong_type(value, "an int");
}

bool ModelReader::read_bits(ValueRef value, std::uint64_t& out) {
  if (auto parsed = tree_->as_int(value)) {
    out = static_cast<std::uint64_t>(*parsed);
    return true;
  }
  return read(value, out);
}

bool ModelReader::read(ValueRef value, bool& out) {
  auto parsed = tree_->as_bool(value);
  if (!parsed) return wrong_type(value, "a bool");
  out = *parsed;
  return true;
}

bool ModelReader::read(ValueRef value, double& out) {
  auto parsed = tree_->as_float(value);
  if (!parsed) return wrong_type(value, "a float");
  out = *parsed;
  return true;
}

bool ModelReader::read(ValueRef value, std::string& out) {
  auto parsed = tree_->as_string(value);
  if (!parsed) return wrong_type(value, "a str");
  out.assign(*parsed);
  return true;
}

bool ModelReader::read_frames(ValueRef value, FrameList& out) {
  if (!expect_list(value)) return false;
  if (tree_->size(value) == 0) {
    out = empty_frames_;
    return true;
  }
  if (auto cached = frame_lists_.find(value.index); cached != frame_lists_.end()) {
    out = cached->second;
    return true;
  }
  if (!spend(tree_->size(value))) return false;
  auto frames = std::make_shared<std::vector<Frame>>();
  frames->reserve(tree_->size(value));
  std::size_t i = 0;
  for (ValueRef item : tree_->children(value)) {
    KeyPath::Step at_index(path_, i++);
    if (!expect_dict(item)) return false;
    Frame& frame = frames->emplace_back();
    for (auto [key, field] : tree_->entries(item)) {
      auto name = tree_->as_string(key);
      if (!name) continue;
      KeyPath::Step at_key(path_, *name);
      bool ok = true;
      if (*name == "filename") ok = read(field, frame.filename);
      else if (*name == "line") ok = read(field, frame.line);
      else if (*name == "name") ok = read(field, frame.name);
      if (!ok) return false;
    }
  }
  out = frames;
  frame_lists_.emplace(value.index, std::move(frames));
  cached_any_ = true;
  cached_highest_ = std::max(cached_highest_, value.index);
  return true;
}

bool ModelReader::read_segments(ValueRef value, std::vector<Segment>& out) {
  if (!expect_list(value)) return false;
  out.reserve(tree_->size(value));
  std::size_t i = 0;
  for (ValueRef item : tree_->children(value)) {
    KeyPath::Step at_index(path_, i++);
    if (!spend(1) || !read_segment(item, out.emplace_back())) return false;
  }
  return true;
}

bool ModelReader::read_segment(ValueRef value, Segment& out) {
  if (!expect_dict(value)) return false;
  bool has_address = false, has_total = false, has_allocated = false, has_active = false;
  std::optional<ValueRef> blocks;
  out.frames = empty_frames_;
  bool fields_ok = for_each_field(value, [&](std::string_view key, ValueRef field) {
    bool ok = true;
    if (key == "device") ok = read(field, out.device);
    else if (key == "address") ok = has_address = read(field, out.address);
    else if (key == "total_size") ok = has_total = read(field, out.total_size);
    else if (key == "allocated_size") ok = has_allocated = read(field, out.allocated_size);
    else if (key == "active_size") ok = has_active = read(field, out.active_size);
    else if (key == "requested_size") ok = read(field, out.requested_size);
    else if (key == "stream") ok = read_bits(field, out.stream);
    else if (key == "is_expandable") ok = read(field, out.is_expandable);
    else if (key == "frames") ok = read_frames(field, out.frames);
    else if (key == "blocks") blocks = field;
    else if (key == "segment_type") {
      std::string type;
      ok = read(field, type);
      out.segment_type = type == "large" ? SegmentType::large : type == "small" ? SegmentType::small : SegmentType::unknown;
    } else if (key == "segment_pool_id") {
      Kind kind = tree_->kind(field);
      if ((kind != Kind::tuple && kind != Kind::list) || tree_->size(field) != 2)
        return fail(fmt::format("expected a pair of ints, found a {} of {} items", kind_name(kind), tree_->size(field)));
      auto items = tree_->children(field).begin();
      ok = read(*items, out.pool_id.first) && read(*++items, out.pool_id.second);
    }
    return ok;
  });
  if (!fields_ok) return false;
  if (!has_address) return fail("missing key 'address'");
  if (!has_total) return fail("missing key 'total_size'");
  if (!blocks) return fail("missing key 'blocks'");

  KeyPath::Step at_blocks(path_, "blocks");
  if (!expect_list(*blocks)) return false;
  out.blocks.reserve(tree_->size(*blocks));
  std::uint64_t address = out.address;  // blocks are contiguous, in address order
  std::uint64_t allocated = 0, active = 0;
  std::size_t i = 0;
  for (ValueRef item : tree_->children(*blocks)) {
    KeyPath::Step at_index(path_, i++);
    if (!spend(1)) return false;
    Block& block = out.blocks.emplace_back();
    block.address = address;
    if (!read_block(item, block)) return false;
    address = block.address + block.size;
    if (block.state == BlockState::active_allocated) allocated += block.size;
    if (block.state == BlockState::active_allocated || block.state == BlockState::active_pending_free)
      active += block.size;
  }
  if (!has_allocated) out.allocated_size = allocated;
  if (!has_active) out.active_size = active;
  return true;
}

bool ModelReader::read_block(ValueRef value, Block& out) {
  if (!expect_dict(value)) return false;
  bool has_size = false, has_frames = false;
  std::optional<ValueRef> history;
  out.frames = empty_frames_;
  bool fields_ok = for_each_field(value, [&](std::string_view key, ValueRef field) {
    bool ok = true;
    if (key == "address") ok = read(field, out.address);
    else if (key == "size") ok = has_size = read(field, out.size);
    else if (key == "requested_size") ok = read(field, out.requested_size);
    else if (key == "frames") ok = has_frames = read_frames(field, out.frames);
    else if (key == "history") history = field;
    else if (key == "state") {
      std::string state;
      ok = read(field, state);
      if (state == "active_allocated") out.state = BlockState::active_allocated;
      // 2.x documents 'active_awaiting_free'; the code writes 'active_pending_free'.
      else if (state == "active_pending_free" || state == "active_awaiting_free") out.state = BlockState::active_pending_free;
      else if (state == "inactive") out.state = BlockState::inactive;
      else out.state = BlockState::unknown;
    }
    return ok;
  });
  if (!fields_ok) return false;
  if (!has_size) return fail("missing key 'size'");
  if (history) {
    KeyPath::Step at_history(path_, "history");
    return read_legacy_history(*history, out, has_frames);
  }
  return true;
}

// PyTorch 1.13 blocks: frames and request size live in history[0], as
// memory_viz's _block_extra_legacy reads them.
bool ModelReader::read_legacy_history(ValueRef value, Block& out, bool has_frames) {
  if (!expect_list(value)) return false;
  if (tree_->size(value) == 0) return true;
  ValueRef first = *tree_->children(value).begin();
  KeyPath::Step at_index(path_, 0);
  if (!expect_dict(first)) return false;
  if (auto real_size = tree_->find(first, "real_size"); real_size && !out.requested_size) {
    KeyPath::Step at_key(path_, "real_size");
    if (!read(*real_size, out.requested_size)) return false;
  }
  if (auto frames = tree_->find(first, "frames"); frames && !has_frames) {
    KeyPath::Step at_key(path_, "frames");
    if (!read_frames(*frames, out.frames)) return false;
  }
  return true;
}

bool ModelReader::read_traces(ValueRef value, Snapshot& snapshot) {
  auto& out = snapshot.device_traces;
  auto& lengths = snapshot.trace_lengths;
  if (!expect_list(value)) return false;
  out.reserve(tree_->size(value));
  std::size_t device = 0;
  for (ValueRef trace : tree_->children(value)) {
    KeyPath::Step at_device(path_, device++);
    if (!expect_list(trace)) return false;
    std::vector<TraceEntry>& entries = out.emplace_back();
    ChunkedArray<TraceEvent>* events = keep_trace_events_ ? &snapshot.trace_events.emplace_back() : nullptr;
    std::size_t i = 0;
    if (auto taken = taken_.find(trace.index); taken != taken_.end()) {  // the entries taken while reading
      i = taken->second.count;
      entries = std::move(taken->second.entries);
      if (events) *events = std::move(taken->second.events);
      taken_.erase(taken);
    }
    lengths.push_back(i + tree_->size(trace));
    if (keep_full_trace_) entries.reserve(i + tree_->size(trace));
    TraceEntry entry;
    for (ValueRef item : tree_->children(trace)) {
      KeyPath::Step at_index(path_, i++);
      if (!spend(1) || !read_trace_entry(item, entry)) return false;
      keep_entry(entry, events, entries);
      entry = TraceEntry();
    }
  }
  snapshot.trace_stacks = std::move(trace_stacks_);
  return true;
}

void ModelReader::keep_entry(TraceEntry& entry, ChunkedArray<TraceEvent>* events, std::vector<TraceEntry>& entries) {
  if (events) events->push_back({entry.addr, entry.size, entry.time_us, stack_of(entry.frames), entry.action});
  if (keep_full_trace_ || entry.action == TraceAction::oom) entries.push_back(std::move(entry));
}

// Entries are read exactly as read_traces would read them. One that does not
// read (a wrong type, say) is left to the tree, and to read_traces, whose
// message names its place; so are all after it.
bool ModelReader::take(const ValueTree& tree, ValueRef list, std::size_t, std::span<const ValueRef> items,
                       std::size_t) {
  tree_ = &tree;
  TakenTrace& trace = taken_[list.index];
  const std::size_t events_before = trace.events.size(), entries_before = trace.entries.size();
  TraceEntry entry;
  for (ValueRef item : items) {
    if (!read_trace_entry(item, entry)) {
      trace.events.truncate(events_before);
      trace.entries.resize(entries_before);
      error_.reset();
      return false;
    }
    keep_entry(entry, keep_trace_events_ ? &trace.events : nullptr, trace.entries);
    entry = TraceEntry();
  }
  trace.count += items.size();
  return true;
}

TraceAction action_from(std::string_view text) {
  static constexpr std::pair<std::string_view, TraceAction> kActions[] = {
      {"alloc", TraceAction::alloc},
      {"free_requested", TraceAction::free_requested},
      {"free_completed", TraceAction::free_completed},
      {"segment_alloc", TraceAction::segment_alloc},
      {"segment_free", TraceAction::segment_free},
      {"segment_map", TraceAction::segment_map},
      {"segment_unmap", TraceAction::segment_unmap},
      {"snapshot", TraceAction::snapshot},
      {"oom", TraceAction::oom},
  };
  for (auto [name, action] : kActions)
    if (name == text) return action;
  return TraceAction::unknown;
}

bool ModelReader::read_trace_entry(ValueRef value, TraceEntry& out) {
  if (!expect_dict(value)) return false;
  out.frames = empty_frames_;
  std::optional<ValueRef> frames;  // read last: only for kept entries
  bool fields_ok = for_each_field(value, [&](std::string_view key, ValueRef field) {
    bool ok = true;
    if (key == "addr") ok = read(field, out.addr);
    else if (key == "size") ok = read(field, out.size);
    else if (key == "stream") ok = read_bits(field, out.stream);
    else if (key == "time_us") ok = read(field, out.time_us);
    else if (key == "device_free") ok = read(field, out.device_free);
    else if (key == "frames") frames = field;
    else if (key == "action") {
      auto action = tree_->as_string(field);
      if (!action) return wrong_type(field, "a str");
      out.action = action_from(*action);
    }
    return ok;
  });
  if (!fields_ok) return false;
  if (frames && (keep_full_trace_ || keep_trace_events_ || out.action == TraceAction::oom)) {
    KeyPath::Step at_key(path_, "frames");
    return read_frames(*frames, out.frames);
  }
  return true;
}

bool ModelReader::read_settings(ValueRef value, AllocatorSettings& out) {
  if (!expect_dict(value)) return false;
  out.present = true;
  bool fields_ok = for_each_field(value, [&](std::string_view key, ValueRef field) {
    bool ok = true;
    if (key == "PYTORCH_CUDA_ALLOC_CONF") ok = read(field, out.alloc_conf);
    else if (key == "expandable_segments") ok = read(field, out.expandable_segments);
    else if (key == "garbage_collection_threshold") ok = read(field, out.garbage_collection_threshold);
    else if (key == "pinned_num_register_threads") ok = read(field, out.pinned_num_register_threads);
    else if (key == "release_lock_on_cudamalloc") ok = read(field, out.release_lock_on_cudamalloc);
    else if (key == "pinned_use_cuda_host_register") ok = read(field, out.pinned_use_cuda_host_register);
    else if (key == "max_split_size") {
      std::uint64_t bits = 0;  // SIZE_MAX written as int64 is -1; as an unsigned big int, 2^64-1
      ok = read_bits(field, bits);
      out.max_split_size = static_cast<std::int64_t>(bits);
    } else if (key == "roundup_power2_divisions") {
      if (tree_->kind(field) == Kind::integer) {  // a single value for every size
        out.roundup_power2_divisions.emplace_back("", *tree_->as_int(field));
      } else {
        if (!expect_dict(field)) return false;
        for (auto [interval, divisions] : tree_->entries(field)) {
          std::string interval_text = scalar_text(*tree_, interval);
          KeyPath::Step at_interval(path_, interval_text);
          std::int64_t n = 0;
          if (!read(divisions, n)) return false;
          out.roundup_power2_divisions.emplace_back(interval_text, n);  // copied: the path still views it
        }
      }
    } else {
      out.other.emplace_back(std::string(key), scalar_text(*tree_, field));
    }
    return ok;
  });
  if (!fields_ok) return false;
  if (out.alloc_conf) {
    if (auto fraction = conf_option(*out.alloc_conf, "per_process_memory_fraction")) {
      double parsed = 0;
      auto [end, ec] = std::from_chars(fraction->data(), fraction->data() + fraction->size(), parsed);
      if (ec == std::errc() && end == fraction->data() + fraction->size()) out.per_process_memory_fraction = parsed;
    }
  }
  return true;
}

bool ModelReader::read_annotations(ValueRef value, std::vector<Annotation>& out) {
  if (!expect_list(value)) return false;
  out.reserve(tree_->size(value));
  std::size_t i = 0;
  for (ValueRef item : tree_->children(value)) {
    KeyPath::Step at_index(path_, i++);
    if (!spend(1) || !expect_dict(item)) return false;
    Annotation& annotation = out.emplace_back();
    for (auto [key, field] : tree_->entries(item)) {
      auto name = tree_->as_string(key);
      if (!name) continue;
      KeyPath::Step at_key(path_, *name);
      bool ok = true;
      if (*name == "name") ok = read(field, annotation.name);
      else if (*name == "stage") ok = read(field, annotation.stage);
      else if (*name == "device") ok = read(field, annotation.device);
      else if (*name == "time_us") ok = read(field, annotation.time_us);
      if (!ok) return false;
    }
  }
  return true;
}

Expected<Snapshot, SnapshotError> ModelReader::read(const ValueTree& tree) {
  tree_ = &tree;
  budget_ = tree.child_count();
  Snapshot snapshot;
  ValueRef root = tree_->root();
  bool ok = true;
  if (tree_->kind(root) == Kind::list) {  // PyTorch 1.13: _snapshot() returned the segment list itself
    snapshot.legacy = true;
    KeyPath::Step at(path_, "segments");
    ok = read_segments(root, snapshot.segments);
  } else if (tree_->kind(root) == Kind::dict) {
    auto segments = tree_->find(root, "segments");
    if (!segments) return SnapshotError{"not a memory snapshot: the top-level dict has no 'segments' key", std::nullopt};
    {
      KeyPath::Step at(path_, "segments");
      ok = read_segments(*segments, snapshot.segments);
    }
    if (auto traces = tree_->find(root, "device_traces"); ok && traces) {
      KeyPath::Step at(path_, "device_traces");
      ok = read_traces(*traces, snapshot);
    }
    if (auto settings = tree_->find(root, "allocator_settings"); ok && settings) {
      KeyPath::Step at(path_, "allocator_settings");
      ok = read_settings(*settings, snapshot.settings);
    }
    if (auto annotations = tree_->find(root, "external_annotations"); ok && annotations) {
      KeyPath::Step at(path_, "external_annotations");
      ok = read_annotations(*annotations, snapshot.external_annotations);
    }
  } else {
    return SnapshotError{fmt::format("not a memory snapshot: the pickle holds a {}, expected a dict (PyTorch 2.x) or "
                                     "a list of segments (1.13)",
                                     kind_name(tree_->kind(root))),
                         std::nullopt};
  }
  if (!ok) return std::move(*error_);
  return snapshot;
}

}  // namespace

Expected<Snapshot, SnapshotError> snapshot_from_values(const ValueTree& tree, bool keep_full_trace,
                                                      bool keep_trace_events) {
  return ModelReader(keep_full_trace, keep_trace_events).read(tree);
}

Expected<Snapshot, SnapshotError> parse_snapshot(std::string_view bytes, const ReadOptions& options) {
  ModelReader reader(options.keep_full_trace, options.keep_trace_events);
  auto tree = read_pickle(bytes, options.limits, options.progress, &reader);
  if (!tree) return SnapshotError{tree.error().message, tree.error().offset};
  return reader.read(*tree);
}

Expected<Snapshot, SnapshotError> parse_snapshot(std::string_view bytes, const PickleLimits& limits) {
  ReadOptions options;
  options.limits = limits;
  return parse_snapshot(bytes, options);
}

Expected<Snapshot, SnapshotError> parse_snapshot(std::span<const std::byte> bytes, const PickleLimits& limits) {
  return parse_snapshot(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), limits);
}

std::string_view to_string(BlockState state) {
  switch (state) {
    case BlockState::active_allocated: return "active_allocated";
    case BlockState::active_pending_free: return "active_pending_free";
    case BlockState::inactive: return "inactive";
    case BlockState::unknown: return "unknown";
  }
  return "unknown";
}

std::string_view to_string(SegmentType type) {
  switch (type) {
    case SegmentType::large: return "large";
    case SegmentType::small: return "small";
    case SegmentType::unknown: return "unknown";
  }
  return "unknown";
}

std::string_view to_string(TraceAction action) {
  switch (action) {
    case TraceAction::alloc: return "alloc";
    case TraceAction::free_requested: return "free_requested";
    case TraceAction::free_completed: return "free_completed";
    case TraceAction::segment_alloc: return "segment_alloc";
    case TraceAction::segment_free: return "segment_free";
    case TraceAction::segment_map: return "segment_map";
    case TraceAction::segment_unmap: return "segment_unmap";
    case TraceAction::snapshot: return "snapshot";
    case TraceAction::oom: return "oom";
    case TraceAction::unknown: return "unknown";
  }
  return "unknown";
}

}  // namespace oomlens::analyzer::snapshot
