// The judgement of one OOM event, in the order PyTorch's caching allocator
// itself decides before it raises: a size no device has; a message without
// the figures to judge; a cap crossed before the device was asked; figures that
// say the device had room; and then which holder of the memory - live
// tensors, the cache, or something outside the allocator - squeezed the
// request. MPS has an allocator of its own (classify_mps.cpp).
#include "analyzer/log/classify.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "analyzer/size.hpp"

namespace oomlens::analyzer {
namespace {

using u64 = std::uint64_t;

u64 minus(u64 a, u64 b) { return a > b ? a - b : 0; }
std::string sz(u64 b) { return format_size(b); }
std::string pct(u64 part, u64 whole) {
  return whole ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "?";
}

bool is_library_failure(OomFamily f) {
  return f == OomFamily::cuda_runtime || f == OomFamily::cublas || f == OomFamily::cudnn || f == OomFamily::nccl ||
         f == OomFamily::generic;
}

std::string family_hint(OomFamily f) {
  switch (f) {
    case OomFamily::cuda_runtime:
      return "A CUDA call outside PyTorch's caching allocator failed (context creation, a stream, a kernel's local "
             "memory, a library): the message carries no sizes. It usually means the device was already full, often "
             "held by another process.";
    case OomFamily::cublas:
      return "cuBLAS could not allocate its handle or workspace. That memory lives outside PyTorch's caching "
             "allocator, so the cache may be holding what cuBLAS needed.";
    case OomFamily::cudnn:
      return "cuDNN could not allocate its own memory or a convolution workspace; it lives outside PyTorch's "
             "caching allocator.";
    case OomFamily::nccl:
      return "NCCL could not allocate its buffers. They live outside PyTorch's allocator (invisible to memory "
             "snapshots) and count as non-PyTorch memory.";
    case OomFamily::generic:
      return "A GPU runtime or library reported out of memory in words of its own, without PyTorch's accounting: "
             "what held the device is not in the message.";
    case OomFamily::memory_summary:
      return "torch.cuda.memory_summary() counts out-of-memory errors, but does not say what the failed request "
             "was or how much the device had free.";
    default:
      return "The message gives no device figures.";
  }
}

struct Context {
  const OomEvent& e;
  const ClassifyThresholds& t;
  u64 req = 0;  // 0 when the text does not give the request

  const MemoryNumbers& n() const { return e.numbers; }
  u64 share_floor() const {
    if (n().total && *n().total) return static_cast<u64>(t.significant_share * static_cast<double>(*n().total));
    if (n().reserved && *n().reserved)
      return static_cast<u64>(t.significant_share_of_reserved * static_cast<double>(*n().reserved));
    return 0;
  }
  // Could have served the request and is a substantial share of the device.
  bool significant(u64 amount) const { return amount >= req && amount >= share_floor(); }
  std::string req_text() const { return req ? sz(req) : std::string("(not in the text)"); }
  std::string share_line(u64 amount) const {
    const auto& m = n();
    if (m.total) return fmt::format("{} is {} of the {} device (threshold {:.0f}%)", sz(amount), pct(amount, *m.total),
                                    sz(*m.total), t.significant_share * 100);
    if (m.reserved) return fmt::format("{} is {} of the {} reserved (threshold {:.0f}%)", sz(amount),
                                       pct(amount, *m.reserved), sz(*m.reserved), t.significant_share_of_reserved * 100);
    return {};
  }
  u64 external_floor() const { return std::max(t.external_min_bytes, share_floor()); }
};

u64 other_processes_bytes(const MemoryNumbers& n) {
  u64 sum = 0;
  for (const auto& p : n.other_processes) sum += p.bytes;
  return sum;
}

std::string other_processes_list(const MemoryNumbers& n) {
  std::string s;
  for (std::size_t i = 0; i < n.other_processes.size() && i < 4; ++i)
    s += fmt::format("{}process {} has {}", i ? ", " : "", n.other_processes[i].pid, sz(n.other_processes[i].bytes));
  if (n.other_processes.size() > 4) s += fmt::format(", and {} more", n.other_processes.size() - 4);
  return s;
}

// -- before any arithmetic ---------------------------------------------------

void common_notes(const OomEvent& e, Verdict& v) {
  const auto& n = e.numbers;
  if (n.self_process)
    v.notes.push_back(fmt::format(
        "Process {} ({}) is taken to be this process: the message has no \"Including non-PyTorch memory\" line (a PID "
        "namespace hides our PID from NVML) and its size matches the {} reserved plus {} of non-PyTorch memory.",
        n.self_process->pid, sz(n.self_process->bytes), sz(*n.reserved), sz(n.non_pytorch.value_or(0))));
  if (e.placeholder_limit)
    v.notes.push_back("The printed limit (17179869184.00 GiB) is a placeholder: no memory fraction is set.");
}

// A request of at least 1 EiB is no shortage: a size went wrong.
bool size_overflow(const OomEvent& e, Verdict& v) {
  if (!e.numbers.requested || *e.numbers.requested < kPlaceholderSize) return false;
  v.cls = OomClass::unquantified;
  v.reason = "size-overflow";
  v.notes.push_back("The request is at least 1 EiB, a size no device has: a bug in the program, not a memory "
                    "shortage. A negative or overflowing dimension, an uninitialised size, or ranks that disagree "
                    "about a tensor's shape after a collective went out of step (a desynchronised all-gather) all "
                    "produce it. Check the shape of the tensor created at the failing line, on every rank.");
  return true;
}

// Messages without the figures to judge.
bool without_figures(const OomEvent& e, Verdict& v) {
  const auto& n = e.numbers;
  // What this process holds, and what the device had: without both, any
  // class would be a guess.
  const bool accounting = (n.reserved || n.allocated) && (n.total || n.free);
  if (e.truncated && !accounting) {
    v.cls = OomClass::unquantified;
    v.reason = "truncated";
    v.notes.push_back("The message was cut short after \"GPU\": PyTorch 2.3 printed the device index as a character "
                      "(a NUL for GPU 0), which ended the message. PyTorch 2.4 fixed it.");
    if (n.requested) v.arithmetic.push_back(fmt::format("requested {}; no device figures to compare it with", sz(*n.requested)));
    return true;
  }
  if (is_library_failure(e.family) || e.family == OomFamily::memory_summary || !accounting) {
    v.cls = OomClass::unquantified;
    v.reason = is_library_failure(e.family) && e.family != OomFamily::generic ? "library-allocation" : "no-numbers";
    v.notes.push_back(family_hint(e.family));
    if (n.requested && n.free)
      v.arithmetic.push_back(fmt::format("requested {}, {} free on the device; no accounting of who held the rest",
                                         sz(*n.requested), sz(*n.free)));
    else if (n.requested)
      v.arithmetic.push_back(fmt::format("requested {}; no device figures to compare it with", sz(*n.requested)));
    if (e.family == OomFamily::memory_summary && (n.allocated || n.reserved))
      v.arithmetic.push_back(fmt::format("memory_summary: allocated {}, reserved {}{}", sz(n.allocated.value_or(0)),
                                         sz(n.reserved.value_or(0)),
                                         n.reserved_unallocated
                                             ? fmt::format(", non-releasable {}", sz(*n.reserved_unallocated))
                                             : std::string()));
    return true;
  }
  if (!n.requested && !(n.total && (n.free || n.reserved_unallocated))) {
    v.cls = OomClass::unquantified;
    v.reason = "no-request";
    v.notes.push_back("The text does not say how much was requested, nor enough of the device's figures to judge "
                      "without it (a selection or a message cut short).");
    return true;
  }
  return false;
}

// -- the cap -------------------------------------------------------------------

// `allowed;` (set_per_process_memory_fraction) or the cudaMallocAsync
// "PyTorch limit": binding when the request crosses it while the device had
// the memory (free, or cached and unallocated; by the total when no free
// figure is printed), or when reserved already sits at the cap - the cap is
// what stopped the cache from growing.
bool binding_cap(const Context& c, Verdict& v) {
  const auto& n = c.n();
  if (!n.limit || (n.total && *n.limit >= *n.total)) return false;
  const u64 used = n.reserved ? *n.reserved : n.allocated.value_or(0);
  const u64 cap = *n.limit;
  const bool crosses = used + c.req > cap + rounding_slack(cap);
  const bool at_cap = used + static_cast<u64>(c.t.at_cap_share * static_cast<double>(cap)) >= cap;
  const u64 room = n.free.value_or(0) + n.reserved_unallocated.value_or(0);
  const bool fits_device = n.free ? c.req <= room + rounding_slack(room)
                                  : !n.total || used + c.req <= *n.total + rounding_slack(*n.total);
  if (!(crosses && fits_device) && !at_cap) return false;
  v.cls = OomClass::limit;
  if (crosses)
    v.arithmetic.push_back(fmt::format("{} {} + requested {} = {} > allowed {}", n.reserved ? "reserved" : "allocated",
                                       sz(used), c.req_text(), sz(used + c.req), sz(cap)));
  else
    v.arithmetic.push_back(fmt::format("{} {} is at the allowed {}: the cap stopped the cache from growing",
                                       n.reserved ? "reserved" : "allocated", sz(used), sz(cap)));
  if (n.total)
    v.arithmetic.push_back(fmt::format("the cap is {} of the {} device: set_per_process_memory_fraction({:.2f}) or "
                                       "per_process_memory_fraction in the allocator settings",
                                       pct(cap, *n.total), sz(*n.total),
                                       static_cast<double>(cap) / static_cast<double>(*n.total)));
  if (n.free && *n.free >= c.req)
    v.arithmetic.push_back(fmt::format("the device still had {} free ≥ requested {}", sz(*n.free), c.req_text()));
  else if (n.free && fits_device)
    v.arithmetic.push_back(fmt::format("free {} + cached-unallocated {} = {} ≥ requested {}: the device had room",
                                       sz(*n.free), sz(n.reserved_unallocated.value_or(0)), sz(room), c.req_text()));
  else if (n.free)
    v.notes.push_back(fmt::format("The device had only {} free besides: raising the cap alone may not be enough.",
                                  sz(*n.free)));
  return true;
}

// -- figures that do not explain the failure ------------------------------------

// The device said it had at least the request free and no cap was printed:
// the allocator would have got the memory. Something the message does not
// show decided; calling it capacity would be a guess presented as a fact.
bool contradiction(const Context& c, Verdict& v) {
  const auto& n = c.n();
  if (!c.req || !n.free || n.limit) return false;
  if (*n.free <= c.req + rounding_slack(*n.free) + rounding_slack(c.req)) return false;
  v.cls = OomClass::unquantified;
  v.reason = "numbers-contradict";
  v.arithmetic.push_back(fmt::format("free on the device {} > requested {}: by these figures the allocation fits",
                                     sz(*n.free), sz(c.req)));
  if (n.reserved_unallocated)
    v.arithmetic.push_back(fmt::format("and {} was cached but unallocated besides", sz(*n.reserved_unallocated)));
  v.notes.push_back(
      "The printed numbers do not explain the failure. Cases that do: a cap this PyTorch version does not print "
      "(set_per_process_memory_fraction on 2.1–2.4); a per-allocation limit of the driver or of a virtualised GPU "
      "(vGPU, MIG slices, WSL); Windows WDDM, which reports shared system memory as free; a message from another "
      "device than the one that failed; a free figure read after PyTorch released its cache, when the memory had "
      "already been taken again by another process. Capture torch.cuda.mem_get_info() and "
      "torch.cuda.memory_summary() in an except handler at the failing line, and nvidia-smi at the same moment.");
  return true;
}

// -- who held the memory -------------------------------------------------------

struct Outside {
  u64 bytes = 0;  // all memory outside this process's caching allocator
  std::vector<Cause> parts;
};

Outside outside_memory(const Context& c) {
  const auto& n = c.n();
  Outside o;
  if (!n.other_processes.empty()) {
    u64 others = other_processes_bytes(n);
    o.parts.push_back({OomClass::external, others, "held by other processes (" + other_processes_list(n) + ")"});
    o.bytes += others;
  }
  if (n.non_pytorch) {
    o.parts.push_back({OomClass::external, *n.non_pytorch,
                       "non-PyTorch memory in this process (CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers)"});
    o.bytes += *n.non_pytorch;
  }
  const bool no_process_info = n.other_processes.empty() && !n.process_in_use && !n.non_pytorch;
  const u64 own = n.reserved ? *n.reserved : n.allocated.value_or(0);
  if (no_process_info && n.total && n.free && own) {
    // No NVML lines (ROCm, Windows, old PyTorch): what the device uses beyond
    // our reservation belongs to someone else, though we cannot say whom.
    u64 beyond = minus(minus(*n.total, *n.free), own);
    if (beyond) {
      o.parts.push_back({OomClass::external, beyond, "in use on the device outside this process's reservation"});
      o.bytes += beyond;
    }
  }
  return o;
}

std::vector<Cause> candidate_causes(const Context& c, const Outside& outside) {
  const auto& n = c.n();
  std::vector<Cause> causes;
  if (n.reserved_unallocated)
    causes.push_back({OomClass::fragmentation, *n.reserved_unallocated, "reserved by PyTorch but unallocated"});
  if (!n.reserved_unallocated && n.total && n.allocated && n.largest_free_block && *n.largest_free_block < c.req) {
    // BFC summaries (TensorFlow, XLA): free pool memory exists, but in pieces.
    causes.push_back({OomClass::fragmentation, minus(*n.total, *n.allocated), "free in the allocator's pool, but split"});
  }
  if (outside.parts.size() == 1) causes.push_back(outside.parts.front());
  else if (outside.parts.size() > 1)
    causes.push_back({OomClass::external, outside.bytes, "outside PyTorch's allocator in all"});
  std::stable_sort(causes.begin(), causes.end(), [](const Cause& a, const Cause& b) { return a.bytes > b.bytes; });
  return causes;
}

bool counts(const Context& c, const Cause& cause) {
  if (!c.significant(cause.bytes)) return false;
  if (cause.cls != OomClass::external) return true;
  // Outside memory is another holder only above the floor and when it
  // squeezes more than the live tensors do.
  return cause.bytes >= c.external_floor() && cause.bytes > c.n().allocated.value_or(0);
}

void explain_fragmentation(const Context& c, Verdict& v, const Cause& top) {
  const auto& n = c.n();
  if (n.reserved && n.allocated && n.reserved_unallocated)
    v.arithmetic.push_back(fmt::format("reserved {} − allocated {} = {} cached but unallocated ≥ requested {}",
                                       sz(*n.reserved), sz(*n.allocated + n.private_pools.value_or(0)),
                                       sz(*n.reserved_unallocated), c.req_text()));
  else
    v.arithmetic.push_back(fmt::format("{} {} ≥ requested {}", sz(top.bytes), top.what, c.req_text()));
  v.arithmetic.push_back(c.share_line(top.bytes));
  if (n.largest_free_block)
    v.arithmetic.push_back(fmt::format("largest free block {} < requested {}", sz(*n.largest_free_block), c.req_text()));
  else
    v.arithmetic.push_back("no single cached block was large enough, so the cache could not serve the request");
  if (n.free)
    v.arithmetic.push_back(fmt::format("free on the device {} {} requested {}: the driver could not supply a new segment",
                                       sz(*n.free), *n.free < c.req ? "<" : "≥", c.req_text()));
}

void explain_capacity(const Context& c, Verdict& v) {
  const auto& n = c.n();
  u64 live = n.allocated.value_or(0);
  if (n.total && n.allocated)
    v.arithmetic.push_back(fmt::format("allocated {} of the {} device ({}) is held by live tensors", sz(live),
                                       sz(*n.total), pct(live, *n.total)));
  u64 avail = n.free.value_or(0) + n.reserved_unallocated.value_or(0);
  if (n.free && n.reserved_unallocated)
    v.arithmetic.push_back(fmt::format("free {} + cached-unallocated {} = {} {} requested {}", sz(*n.free),
                                       sz(*n.reserved_unallocated), sz(avail), avail < c.req ? "<" : "≥", c.req_text()));
  else if (n.free)
    v.arithmetic.push_back(fmt::format("free {} {} requested {}", sz(*n.free), *n.free < c.req ? "<" : "≥", c.req_text()));
  if (n.total && n.allocated && n.largest_free_block)
    v.arithmetic.push_back(fmt::format("in use {} of pool {}; largest free block {}", sz(live), sz(*n.total),
                                       sz(*n.largest_free_block)));
}

void explain_external(const Context& c, Verdict& v, const Cause& top, const Outside& outside) {
  const auto& n = c.n();
  v.arithmetic.push_back(fmt::format("{} {} ≥ requested {}", sz(top.bytes), top.what, c.req_text()));
  if (outside.parts.size() > 1)
    for (const auto& part : outside.parts) v.arithmetic.push_back(fmt::format("of which {} {}", sz(part.bytes), part.what));
  v.arithmetic.push_back(c.share_line(top.bytes));
  v.arithmetic.push_back(fmt::format("{} outside the allocator > {} of live tensors, and ≥ max(1 GiB, 10% of the "
                                     "device) = {}",
                                     sz(top.bytes), sz(n.allocated.value_or(0)), sz(c.external_floor())));
  if (n.process_in_use && n.reserved && n.non_pytorch)
    v.arithmetic.push_back(fmt::format("this process uses {} − reserved {} = {} outside PyTorch's allocator",
                                       sz(*n.process_in_use), sz(*n.reserved), sz(*n.non_pytorch)));
}

// This process's own overhead, when it is not the verdict: named, so the
// arithmetic adds up, and said to be below what would make it a holder.
void name_overhead(const Context& c, Verdict& v, const Outside& outside) {
  const auto& n = c.n();
  if (!n.non_pytorch || !*n.non_pytorch || v.cls == OomClass::external) return;
  if (outside.bytes >= c.external_floor() && outside.bytes >= c.req) {
    v.arithmetic.push_back(fmt::format("{} outside PyTorch's allocator{} is less than the {} of live tensors: a "
                                       "squeeze, named below, but not the main one",
                                       sz(outside.bytes),
                                       outside.bytes == *n.non_pytorch
                                           ? std::string(" in this process")
                                           : fmt::format(" ({} of it this process's own)", sz(*n.non_pytorch)),
                                       sz(n.allocated.value_or(0))));
    return;
  }
  v.arithmetic.push_back(fmt::format("this process also holds {} outside PyTorch's allocator (CUDA context, "
                                     "cuBLAS/cuDNN workspaces, NCCL buffers): its own overhead, below max(1 GiB, 10% "
                                     "of the device) = {}",
                                     sz(*n.non_pytorch), sz(c.external_floor())));
}

void add_unaccounted(const Context& c, Verdict& v) {
  const auto& n = c.n();
  if (!n.total || !n.free) return;
  const u64 used_by_us = n.reserved ? *n.reserved : n.allocated.value_or(0);
  u64 in_use = minus(*n.total, *n.free);
  u64 named = n.process_in_use.value_or(used_by_us) + other_processes_bytes(n);
  // Rounding of two-decimal figures leaves small remainders; report a gap of
  // at least 1% of the device only.
  if (in_use > named && (in_use - named) * 100 >= *n.total && (n.process_in_use || !n.other_processes.empty()))
    v.unaccounted = in_use - named;
}

}  // namespace

void identify_self_process(MemoryNumbers& n, const ClassifyThresholds& t) {
  if (n.self_process || n.process_in_use || !n.reserved || n.other_processes.empty()) return;
  u64 reserved = *n.reserved;
  u64 slack = t.self_overhead_max_bytes;
  if (n.total) slack = std::max<u64>(slack, static_cast<u64>(t.self_overhead_max_share * static_cast<double>(*n.total)));
  constexpr u64 kRounding = u64{16} << 20;  // two-decimal sizes are approximate
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < n.other_processes.size(); ++i) {
    u64 x = n.other_processes[i].bytes;
    if (x + kRounding < reserved || minus(x, reserved) > slack) continue;
    if (!best || minus(x, reserved) < minus(n.other_processes[*best].bytes, reserved)) best = i;
  }
  if (!best) return;
  n.self_process = n.other_processes[*best];
  n.other_processes.erase(n.other_processes.begin() + static_cast<std::ptrdiff_t>(*best));
  n.process_in_use = n.self_process->bytes;
  n.non_pytorch = minus(n.self_process->bytes, reserved);
}

Verdict classify(OomEvent& e, const ClassifyThresholds& t) {
  identify_self_process(e.numbers, t);
  Verdict v;
  common_notes(e, v);
  if (size_overflow(e, v)) return v;
  if (e.family == OomFamily::mps) {
    Verdict m = detail::classify_mps(e, t);
    m.notes.insert(m.notes.begin(), v.notes.begin(), v.notes.end());
    return m;
  }
  if (without_figures(e, v)) return v;

  const auto& n = e.numbers;
  Context c{e, t, n.requested.value_or(0)};
  if (!n.requested)
    v.notes.push_back("The text does not give the request (a selection that starts after \"Tried to allocate\", or a "
                      "message cut short): the judgement uses the device's figures alone.");

  bool over_capacity = n.total && ((n.allocated && *n.allocated > *n.total) || (n.reserved && *n.reserved > *n.total));
  if (over_capacity)
    v.notes.push_back(fmt::format(
        "PyTorch reports more memory in use than the device has ({}): on Windows and WSL the driver spills into shared "
        "system memory when the device is full. The job needs more than the device holds; the spill only made it slow "
        "before it failed.",
        sz(*n.total)));

  if (binding_cap(c, v)) {
    add_unaccounted(c, v);
    return v;
  }
  if (!over_capacity && contradiction(c, v)) return v;

  const Outside outside = outside_memory(c);
  std::vector<Cause> causes = candidate_causes(c, outside);
  if (n.limit) {
    // A cap crossed while the device was full too is not the binding
    // constraint: raising it would not help. It stays a secondary cause.
    const u64 used = n.reserved ? *n.reserved : n.allocated.value_or(0);
    if (used + c.req > *n.limit)
      causes.push_back({OomClass::limit, n.total ? minus(*n.total, *n.limit) : 0,
                        fmt::format("withheld by the {} cap", sz(*n.limit))});
  }

  const Cause* top = nullptr;
  if (!over_capacity)
    for (const Cause& cause : causes)
      if (cause.cls != OomClass::limit && counts(c, cause)) {
        top = &cause;
        break;
      }
  v.cls = top ? top->cls : OomClass::capacity;

  for (const Cause& cause : causes) {
    if (&cause == top) continue;
    // Outside memory below the floor is this process's overhead: named in
    // the arithmetic, not blamed as a holder.
    if (cause.cls == OomClass::external && cause.bytes < c.external_floor()) continue;
    if (cause.bytes >= c.req || cause.cls == OomClass::limit) v.secondary.push_back(cause);
  }
  if (v.cls == OomClass::capacity)
    for (const Cause& cause : v.secondary)
      if (cause.cls == OomClass::fragmentation)
        v.notes.push_back(fmt::format("{} {} would have covered the request, but {}: too small a share to blame; "
                                      "fragmentation is secondary here.",
                                      sz(cause.bytes), cause.what, c.share_line(cause.bytes)));

  switch (v.cls) {
    case OomClass::fragmentation: explain_fragmentation(c, v, *top); break;
    case OomClass::external: explain_external(c, v, *top, outside); break;
    default: explain_capacity(c, v); break;
  }
  name_overhead(c, v, outside);
  add_unaccounted(c, v);
  return v;
}

}  // namespace oomlens::analyzer
