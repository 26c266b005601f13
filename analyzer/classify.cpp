#include "analyzer/classify.hpp"

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
  return f == OomFamily::cuda_runtime || f == OomFamily::cublas || f == OomFamily::cudnn || f == OomFamily::nccl;
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
    default:
      return "The message gives no device figures.";
  }
}

struct Context {
  const OomEvent& e;
  const ClassifyThresholds& t;
  u64 req = 0;
  bool significant(u64 amount) const {
    if (amount < req) return false;
    const auto& n = e.numbers;
    if (n.total && *n.total) return static_cast<double>(amount) >= t.significant_share * static_cast<double>(*n.total);
    if (n.reserved && *n.reserved)
      return static_cast<double>(amount) >= t.significant_share_of_reserved * static_cast<double>(*n.reserved);
    return true;
  }
  std::string share_line(u64 amount) const {
    const auto& n = e.numbers;
    if (n.total) return fmt::format("{} is {} of the {} device (threshold {:.0f}%)", sz(amount), pct(amount, *n.total),
                                    sz(*n.total), t.significant_share * 100);
    if (n.reserved) return fmt::format("{} is {} of the {} reserved (threshold {:.0f}%)", sz(amount),
                                       pct(amount, *n.reserved), sz(*n.reserved), t.significant_share_of_reserved * 100);
    return {};
  }
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

std::vector<Cause> candidate_causes(const Context& c, bool limit_hit) {
  const auto& n = c.e.numbers;
  std::vector<Cause> causes;
  if (n.reserved_unallocated)
    causes.push_back({OomClass::fragmentation, *n.reserved_unallocated, "reserved by PyTorch but unallocated"});
  if (!n.reserved_unallocated && n.total && n.allocated && n.largest_free_block && *n.largest_free_block < c.req) {
    // BFC summaries (TensorFlow, XLA): free pool memory exists, but in pieces.
    causes.push_back({OomClass::fragmentation, minus(*n.total, *n.allocated), "free in the allocator's pool, but split"});
  }
  if (!n.other_processes.empty())
    causes.push_back({OomClass::external, other_processes_bytes(n), "held by other processes (" + other_processes_list(n) + ")"});
  if (n.non_pytorch)
    causes.push_back({OomClass::external, *n.non_pytorch,
                      c.e.family == OomFamily::mps
                          ? "in other allocations on the device, outside PyTorch's MPS heap"
                          : "non-PyTorch memory in this process (CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers)"});
  bool no_process_info = n.other_processes.empty() && !n.process_in_use && !n.non_pytorch;
  u64 own = n.reserved ? *n.reserved : (n.allocated ? *n.allocated : 0);
  if (no_process_info && n.total && n.free && own && c.e.family != OomFamily::mps) {
    // No NVML lines (ROCm, Windows, old PyTorch): what the device uses beyond
    // our reservation belongs to someone else, though we cannot say whom.
    u64 outside = minus(minus(*n.total, *n.free), own);
    if (outside) causes.push_back({OomClass::external, outside, "in use on the device outside this process's reservation"});
  }
  if (limit_hit && n.limit) {
    if (n.total)
      causes.push_back({OomClass::limit, minus(*n.total, *n.limit), fmt::format("withheld by the {} cap", sz(*n.limit))});
    else  // MPS: the device total is not printed; what crosses the cap is the story
      causes.push_back({OomClass::limit, 0, fmt::format("the {} cap would be crossed", sz(*n.limit))});
  }
  std::stable_sort(causes.begin(), causes.end(), [](const Cause& a, const Cause& b) { return a.bytes > b.bytes; });
  return causes;
}

void explain(const Context& c, Verdict& v, const Cause* top) {
  const auto& n = c.e.numbers;
  u64 req = c.req;
  switch (v.cls) {
    case OomClass::fragmentation:
      if (n.reserved && n.allocated && n.reserved_unallocated)
        v.arithmetic.push_back(fmt::format("reserved {} − allocated {} = {} cached but unallocated ≥ requested {}",
                                           sz(*n.reserved), sz(*n.allocated + n.private_pools.value_or(0)),
                                           sz(*n.reserved_unallocated), sz(req)));
      else if (top)
        v.arithmetic.push_back(fmt::format("{} {} ≥ requested {}", sz(top->bytes), top->what, sz(req)));
      if (top) v.arithmetic.push_back(c.share_line(top->bytes));
      if (n.largest_free_block)
        v.arithmetic.push_back(fmt::format("largest free block {} < requested {}", sz(*n.largest_free_block), sz(req)));
      else
        v.arithmetic.push_back("no single cached block was large enough, so the cache could not serve the request");
      if (n.free) v.arithmetic.push_back(fmt::format("free on the device {} {} requested {}: the driver could not supply a new segment",
                                                     sz(*n.free), *n.free < req ? "<" : "≥", sz(req)));
      break;
    case OomClass::capacity: {
      u64 live = n.allocated.value_or(0);
      if (n.total && n.allocated)
        v.arithmetic.push_back(fmt::format("allocated {} of the {} device ({}) is held by live tensors", sz(live),
                                           sz(*n.total), pct(live, *n.total)));
      u64 avail = n.free.value_or(0) + n.reserved_unallocated.value_or(0);
      if (n.free && n.reserved_unallocated)
        v.arithmetic.push_back(fmt::format("free {} + cached-unallocated {} = {} {} requested {}", sz(*n.free),
                                           sz(*n.reserved_unallocated), sz(avail), avail < req ? "<" : "≥", sz(req)));
      else if (n.free)
        v.arithmetic.push_back(fmt::format("free {} {} requested {}", sz(*n.free), *n.free < req ? "<" : "≥", sz(req)));
      if (c.e.family == OomFamily::mps && n.reserved && n.limit) {
        u64 sum = *n.reserved + n.non_pytorch.value_or(0) + req;
        v.arithmetic.push_back(fmt::format("MPS allocated {} + other allocations {} + requested {} = {} {} the {} "
                                           "high-watermark cap",
                                           sz(*n.reserved), sz(n.non_pytorch.value_or(0)), sz(req), sz(sum),
                                           sum > *n.limit ? ">" : "≤", sz(*n.limit)));
      }
      if (n.total && n.allocated && n.largest_free_block)
        v.arithmetic.push_back(fmt::format("in use {} of pool {}; largest free block {}", sz(live), sz(*n.total),
                                           sz(*n.largest_free_block)));
      break;
    }
    case OomClass::external:
      if (top) {
        v.arithmetic.push_back(fmt::format("{} {} ≥ requested {}", sz(top->bytes), top->what, sz(req)));
        v.arithmetic.push_back(c.share_line(top->bytes));
      }
      if (n.process_in_use && n.reserved && n.non_pytorch)
        v.arithmetic.push_back(fmt::format("this process uses {} − reserved {} = {} outside PyTorch's allocator",
                                           sz(*n.process_in_use), sz(*n.reserved), sz(*n.non_pytorch)));
      break;
    case OomClass::limit:
      if (n.limit) {
        u64 used = n.reserved ? *n.reserved : n.allocated.value_or(0);
        u64 other = n.non_pytorch && c.e.family == OomFamily::mps ? *n.non_pytorch : 0;
        if (other)
          v.arithmetic.push_back(fmt::format("allocated {} + other {} + requested {} = {} > allowed {}", sz(used),
                                             sz(other), sz(req), sz(used + other + req), sz(*n.limit)));
        else
          v.arithmetic.push_back(fmt::format("{} {} + requested {} = {} > allowed {}",
                                             n.reserved ? "reserved" : "allocated", sz(used), sz(req),
                                             sz(used + req), sz(*n.limit)));
      }
      if (n.free && *n.free >= req)
        v.arithmetic.push_back(fmt::format("the device still had {} free ≥ requested {}", sz(*n.free), sz(req)));
      if (n.total && n.limit)
        v.arithmetic.push_back(fmt::format("the cap is {} of the {} device", pct(*n.limit, *n.total), sz(*n.total)));
      break;
    case OomClass::unquantified:
      break;
  }
}

}  // namespace

const char* to_string(OomClass c) {
  switch (c) {
    case OomClass::fragmentation: return "fragmentation";
    case OomClass::capacity: return "capacity";
    case OomClass::external: return "external";
    case OomClass::limit: return "limit";
    case OomClass::unquantified: return "unquantified";
  }
  return "unquantified";
}

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
  const auto& n = e.numbers;
  Verdict v;
  Context c{e, t, n.requested.value_or(0)};

  if (n.self_process)
    v.notes.push_back(fmt::format(
        "Process {} ({}) is taken to be this process: the message has no \"Including non-PyTorch memory\" line (a PID "
        "namespace hides our PID from NVML) and its size matches the {} reserved plus {} of non-PyTorch memory.",
        n.self_process->pid, sz(n.self_process->bytes), sz(*n.reserved), sz(n.non_pytorch.value_or(0))));
  if (e.placeholder_limit)
    v.notes.push_back("The printed limit (17179869184.00 GiB) is a placeholder: no memory fraction is set.");

  if (n.requested && *n.requested >= kPlaceholderSize) {
    v.cls = OomClass::unquantified;
    v.notes.push_back("The request is at least 1 EiB, a size no device has: a bug in the program (a negative or "
                      "overflowing dimension, an uninitialised size), not a memory shortage. Check the shape of "
                      "the tensor created at the failing line.");
    return v;
  }
  bool has_device_figures = n.total || n.reserved || n.allocated || n.free;
  if (is_library_failure(e.family) || !n.requested || !has_device_figures) {
    v.cls = OomClass::unquantified;
    if (e.truncated)
      v.notes.push_back("The message was cut short after \"GPU\": PyTorch 2.3 printed the device index as a character "
                        "(a NUL for GPU 0), which ended the message. PyTorch 2.4 fixed it.");
    else
      v.notes.push_back(family_hint(e.family));
    if (n.requested) v.arithmetic.push_back(fmt::format("requested {}; no device figures to compare it with", sz(*n.requested)));
    return v;
  }

  u64 req = c.req;
  bool over_capacity = n.total && ((n.allocated && *n.allocated > *n.total) || (n.reserved && *n.reserved > *n.total));
  if (over_capacity)
    v.notes.push_back(fmt::format(
        "PyTorch reports more memory in use than the device has ({}): on Windows and WSL the driver spills into shared "
        "system memory when the device is full. The job needs more than the device holds; the spill only made it slow "
        "before it failed.",
        sz(*n.total)));

  u64 used_by_us = n.reserved ? *n.reserved : n.allocated.value_or(0);
  bool limit_hit = n.limit && (!n.total || *n.limit < *n.total) &&
                   used_by_us + req + (e.family == OomFamily::mps ? n.non_pytorch.value_or(0) : 0) > *n.limit;
  std::vector<Cause> causes = candidate_causes(c, limit_hit);

  const Cause* top = nullptr;
  // Only a cap crossed while the device demonstrably had the memory is the
  // binding constraint. MPS prints no free figure, and its cap is the default
  // high watermark (above the machine's RAM): there it stays secondary.
  bool device_had_room = n.free && *n.free >= req;
  if (limit_hit && device_had_room) {
    v.cls = OomClass::limit;
    for (const Cause& cause : causes)
      if (cause.cls == OomClass::limit) top = &cause;
  } else if (!over_capacity) {
    for (const Cause& cause : causes)
      if (c.significant(cause.bytes) && cause.cls != OomClass::limit) {
        top = &cause;
        break;
      }
    // A cap crossed while the device was full too is not the binding
    // constraint: raising it would not help. It stays a secondary cause.
    v.cls = top ? top->cls : OomClass::capacity;
  } else {
    v.cls = OomClass::capacity;
  }

  for (const Cause& cause : causes) {
    if (&cause == top) continue;
    if (cause.bytes >= req || cause.cls == OomClass::limit) v.secondary.push_back(cause);
  }
  if (v.cls == OomClass::capacity)
    for (const Cause& cause : v.secondary)
      if (cause.cls == OomClass::fragmentation)
        v.notes.push_back(fmt::format("{} {} would have covered the request, but {}: too small a share to blame; "
                                      "fragmentation is secondary here.",
                                      sz(cause.bytes), cause.what, c.share_line(cause.bytes)));
  explain(c, v, top);

  if (n.total && n.free) {
    u64 in_use = minus(*n.total, *n.free);
    u64 named = n.process_in_use.value_or(used_by_us) + other_processes_bytes(n);
    // Rounding of two-decimal figures leaves small remainders; report a gap of
    // at least 1% of the device only.
    if (in_use > named && (in_use - named) * 100 >= *n.total && (n.process_in_use || !n.other_processes.empty()))
      v.unaccounted = in_use - named;
  }
  if (n.free && *n.free >= req && v.cls != OomClass::limit)
    v.notes.push_back(fmt::format("The device reported {} free, at least the request: the figure is read after PyTorch "
                                  "released its cache, so memory may have been freed in between, or the request "
                                  "needed a contiguous range the driver could not provide.",
                                  sz(*n.free)));
  return v;
}

}  // namespace oomlens::analyzer
