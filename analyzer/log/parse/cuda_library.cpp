// GPU OOMs raised outside PyTorch's caching allocator: a CUDA/HIP runtime or
// driver call, legacy THC (before PyTorch 1.0), cuBLAS, cuDNN and NCCL. None
// of them carries numbers: the memory went to a CUDA context, a library
// handle or NCCL buffers that the allocator cannot see.
//
// Also here, because its text is the CUDA driver's: stream_executor's
// "failed to allocate ... from device: CUDA_ERROR_OUT_OF_MEMORY", which TF/XLA
// print when a first attempt fails and the BFC allocator then retries.
// Like NCCL's WARN lines it can be survived: what the same rank prints next
// decides (oom_context.hpp's fate_after). Training output first: pressure;
// an error, a traceback, an abort or the end of the log first: the OOM.
#include <re2/re2.h>

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/oom_context.hpp"
#include "analyzer/log/parse/parser.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

constexpr std::size_t kNcclLookahead = 8;     // "NCCL error in" -> ncclUnhandledCudaError -> Last error: -> text
constexpr std::size_t kNcclLookbehind = 20;   // NCCL WARN lines print before the Python exception
constexpr std::size_t kFateLines = 120;       // how far a survivable message looks for the run going on

// PyTorch's wording, not the library's: the C10 suffix (sometimes flattened
// onto the message line), a torch exception, cuBLAS's handle-creation call,
// AT_CUDNN_CHECK's "cuDNN error:", C10_CUDA_DRIVER_CHECK's "CUDA driver
// error:", THC.
Framework framework_of(std::string_view text, std::string_view exception, bool c10_suffix) {
  auto has = [&](std::string_view s) { return text.find(s) != std::string_view::npos; };
  if (c10_suffix || exception.find("torch") != std::string_view::npos || has("torch/") || has("TORCH_USE_") ||
      has("kernel errors might be asynchronously reported") || has("cublasCreate(handle)") ||
      has("cublasLtCreate(") || has("cuDNN error:") || has("CUDA driver error:") || has("THC"))
    return Framework::pytorch;
  if (has("tensorflow")) return Framework::tensorflow;
  if (exception.find("jax") != std::string_view::npos || has("jaxlib")) return Framework::jax;
  return Framework::unknown;
}

// Fills an event's text fields from the phrase at `pos` and appends it.
std::size_t emit(const Region& region, std::size_t at, std::size_t pos, std::size_t last, OomEvent ev,
                 bool c10_suffix, Parsed& out) {
  const Line& line = region.lines[at];
  std::string_view text(line.text);
  ev.exception = exception_on(text, pos);
  ev.framework = framework_of(text, ev.exception, c10_suffix);
  ev.message = capped(text.substr(pos));
  return append_event(region, last, std::move(ev), out);
}

// stream_executor's "failed to allocate {x}G ({N} bytes) from device: CUDA_ERROR_OUT_OF_MEMORY";
// and its host twin for pinned memory, "failed to alloc {N} bytes on host".
const RE2& stream_executor_device_re() {
  static const RE2 re(
      R"((failed to allocate (\S+) \((\d+) bytes\) from device: (?:CUDA_ERROR_OUT_OF_MEMORY|(hip)ErrorOutOfMemory)))",
      RE2::Latin1);
  return re;
}

// JAX's builds log from external/xla (or external/tsl, older external/org_tensorflow);
// TensorFlow's from tensorflow/ or external/local_xla.
bool logged_by_jax(std::string_view text) {
  static const RE2 jax(R"(external/(?:org_tensorflow|xla|tsl)/|jaxlib)", RE2::Latin1);
  return RE2::PartialMatch(text, jax);
}

std::optional<std::size_t> stream_executor_note(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 host(R"(failed to alloc (\d+) bytes on host: CUDA_ERROR_OUT_OF_MEMORY)", RE2::Latin1);
  const Line& line = region.lines[at];
  StringPiece found, shown, bytes, hip;
  if (RE2::PartialMatch(line.text, stream_executor_device_re(), &found, &shown, &bytes, &hip)) {
    // More of the same notes (the BFC allocator retrying smaller sizes) decide nothing.
    auto another_note = [](std::string_view text) { return RE2::PartialMatch(text, stream_executor_device_re()); };
    Fate fate = fate_after(region, at, kFateLines, another_note);
    if (fate == Fate::survived || fate == Fate::neutral) {
      out.findings.push_back(finding_at(
          line, FindingKind::allocator_pressure,
          fmt::format("stream_executor could not allocate {} from the device; TF/XLA's BFC allocator usually "
                      "retries and succeeds, so this alone is not an OOM",
                      view(shown)),
          exact_u64(view(bytes))));
      return at;
    }
    // Nothing but an error, a traceback or the end of the log follows: this is what ended the run.
    bool jax = logged_by_jax(line.text);
    OomEvent ev = event_at(line, jax ? OomFamily::xla : OomFamily::tensorflow);
    ev.framework = jax ? Framework::jax : Framework::tensorflow;
    ev.device = hip.empty() ? Device::cuda : Device::hip;
    ev.numbers.requested = exact_u64(view(bytes));
    ev.message = capped(std::string_view(line.text).substr(pos_of(line.text, found)));
    return append_event(region, at, std::move(ev), out);
  }
  if (RE2::PartialMatch(line.text, host, &bytes)) {
    out.findings.push_back(finding_at(line, FindingKind::cpu_alloc_failure,
                                      "stream_executor could not allocate pinned host memory", exact_u64(view(bytes))));
    return at;
  }
  return std::nullopt;
}

// NCCL's CUDACHECK: WARN("Cuda failure '%s'") and newer "Cuda failure %d '%s'";
// RCCL says HIP.
bool says_cuda_oom(std::string_view text) {
  static const RE2 re(R"((?i)(?:cuda|hip) failure (?:\d+ |\w+: )?'?out of memory|CUDA_ERROR_OUT_OF_MEMORY)",
                      RE2::Latin1);
  return RE2::PartialMatch(text, re);
}

// "host:pid:tid [cudaDev] file:line NCCL WARN Cuda failure 'out of memory'".
bool is_nccl_warn_oom(std::string_view text, std::optional<int>* gpu) {
  static const RE2 warn(R"(NCCL WARN)", RE2::Latin1);
  static const RE2 dev(R"(\[(\d{1,4})\]\s+(?:\S+:\d+\s+)?NCCL WARN)", RE2::Latin1);
  if (!RE2::PartialMatch(text, warn) || !says_cuda_oom(text)) return false;
  int d = 0;
  if (gpu && RE2::PartialMatch(text, dev, &d)) *gpu = d;
  return true;
}

Device nccl_device(std::string_view text) {
  static const RE2 hip(R"((?i)hip failure|rccl)", RE2::Latin1);
  return RE2::PartialMatch(text, hip) ? Device::hip : Device::cuda;
}

// NCCL lines that only trace the error back up its call stack ("NCCL INFO
// include/alloc.h:103 -> 1") or repeat the warning decide nothing.
bool nccl_trace(std::string_view text) {
  static const RE2 re(R"(NCCL (?:INFO|WARN) .*-> \d+\s*$|NCCL WARN Cuda failure|Failed to CUDA calloc)", RE2::Latin1);
  return RE2::PartialMatch(text, re);
}

// NCCL can fall back after a failed allocation (another algorithm, another
// transport) and the run goes on: then it is pressure, not the failure.
bool survived_by_nccl(const Region& region, std::size_t at, const std::string& what, std::optional<std::uint64_t> bytes,
                      Parsed& out) {
  if (fate_after(region, at, kFateLines, nccl_trace) != Fate::survived) return false;
  out.findings.push_back(finding_at(region.lines[at], FindingKind::allocator_pressure,
                                    fmt::format("{}, then fell back and the run went on: not the failure", what), bytes));
  return true;
}

std::optional<std::size_t> nccl_warn(const Region& region, std::size_t at, Parsed& out) {
  const Line& line = region.lines[at];
  std::optional<int> gpu;
  if (!is_nccl_warn_oom(line.text, &gpu)) return std::nullopt;
  if (survived_by_nccl(region, at, "NCCL could not allocate device memory ('out of memory')", std::nullopt, out))
    return at;
  OomEvent ev = event_at(line, OomFamily::nccl);
  ev.device = nccl_device(line.text);
  ev.gpu = gpu;
  std::size_t pos = line.text.find("NCCL WARN");
  return emit(region, at, pos, at, std::move(ev), false, out);
}

// NCCL's ncclCudaCalloc: "NCCL WARN Failed to CUDA calloc {N} bytes" (also
// "calloc async"), after the CUDACHECK line: the size NCCL asked for.
std::optional<std::size_t> nccl_calloc(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 re(R"(((?i:failed to cuda calloc)(?: async)? (\d+) bytes))", RE2::Latin1);
  static const RE2 dev(R"(\[(\d{1,4})\]\s+(?:\S+:\d+\s+)?NCCL )", RE2::Latin1);
  const Line& line = region.lines[at];
  if (line.text.find("calloc") == std::string::npos) return std::nullopt;
  StringPiece found, bytes;
  if (!RE2::PartialMatch(line.text, re, &found, &bytes)) return std::nullopt;
  auto requested = exact_u64(view(bytes));
  if (survived_by_nccl(region, at, fmt::format("NCCL could not allocate {} bytes of device memory", view(bytes)),
                       requested, out))
    return at;
  OomEvent ev = event_at(line, OomFamily::nccl);
  ev.device = nccl_device(line.text);
  int d = 0;
  if (RE2::PartialMatch(line.text, dev, &d)) ev.gpu = d;
  ev.numbers.requested = requested;
  std::size_t pos = line.text.find("NCCL WARN");
  return emit(region, at, pos == std::string::npos ? pos_of(line.text, found) : pos, at, std::move(ev), false, out);
}

// PyTorch's C10D_NCCL_CHECK: "NCCL error in: {file}:{line}, unhandled cuda
// error ..., NCCL version {v}" then "ncclUnhandledCudaError: Call to CUDA
// function failed." and "Last error:\n{text}". Only an OOM when NCCL says the
// CUDA failure was "out of memory": on this line, in the lines that follow,
// or in an NCCL WARN just before.
const RE2& nccl_unhandled_re() {
  static const RE2 re(R"((?i)((?:NCCL error in: .*?)?unhandled cuda error))", RE2::Latin1);
  return re;
}

std::optional<std::size_t> nccl_unhandled(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 continuation(R"(^\s*(?:ncclUnhandledCudaError|Last error:))", RE2::Latin1);
  const Line& line = region.lines[at];
  StringPiece found;
  if (!RE2::PartialMatch(line.text, nccl_unhandled_re(), &found)) return std::nullopt;

  bool evidence = says_cuda_oom(line.text);
  std::optional<int> gpu;
  std::size_t last = at;
  bool contiguous = true, after_last_error = false;
  std::size_t cursor = at;
  for (std::size_t n = 0; n < kNcclLookahead && !evidence; ++n) {
    auto next = next_line_of(region, cursor, line.rank);
    if (!next) break;
    cursor = *next;
    std::string_view text = head(region.lines[cursor].text);
    bool ours = RE2::PartialMatch(text, continuation);
    if (contiguous && (ours || after_last_error)) {
      last = cursor;  // part of the exception's own text
      after_last_error = text.find("Last error:") != std::string_view::npos;
    } else {
      contiguous = false;  // still look a few lines on, but leave them to other parsers
    }
    if (says_cuda_oom(text)) {
      evidence = true;
      is_nccl_warn_oom(text, &gpu);
    }
  }
  for (std::size_t k = 0; !evidence && k < kNcclLookbehind && k < at; ++k) {
    const Line& before = region.lines[at - 1 - k];
    if (before.rank && before.rank != line.rank) continue;
    evidence = is_nccl_warn_oom(before.text, &gpu);
  }
  if (!evidence) return std::nullopt;  // a CUDA failure of another kind: not ours to call an OOM

  OomEvent ev = event_at(line, OomFamily::nccl);
  ev.device = nccl_device(line.text);
  ev.gpu = gpu;
  return emit(region, at, pos_of(line.text, found), last, std::move(ev), false, out);
}

// One line plus, for PyTorch's checks, the C10 suffix.
std::optional<std::size_t> single_line(const Region& region, std::size_t at, Parsed& out) {
  // cuBLAS/cuDNN, cuDNN's conv workspace, CUDA/HIP runtime and driver checks,
  // legacy THC, then the driver/runtime codes as other libraries print them
  // (numba, CuPy).
  static const RE2 cublas(R"(((?:(?:CUDA|HIP) error: )?(CU|HIP)BLAS_STATUS_ALLOC_FAILED))", RE2::Latin1);
  static const RE2 cudnn(R"(((?:cuDNN error: )?CUDNN_STATUS_ALLOC_FAILED|Not enough memory for workspace!))",
                         RE2::Latin1);
  static const RE2 runtime(R"(\b((CUDA|HIP) (?:driver )?error: out of memory))", RE2::Latin1);
  static const RE2 thc(R"(((cuda) runtime error \(2\) : out of memory))", RE2::Latin1);
  // Legacy THC printed the failed check before raising: "THCudaCheck FAIL
  // file={file} line={n} error=2 : out of memory".
  static const RE2 thc_check(R"(((THCuda)Check FAIL file=\S+ line=\d+ error=2 : out of memory))", RE2::Latin1);
  static const RE2 codes(R"(\b((CUDA)_ERROR_OUT_OF_MEMORY|(cuda)ErrorMemoryAllocation|(hip)ErrorOutOfMemory)\b)",
                         RE2::Latin1);
  const Line& line = region.lines[at];
  if (is_c10_suffix(line.text)) return std::nullopt;  // "Search for `cudaErrorMemoryAllocation'..." is a suffix

  StringPiece found, vendor, vendor2, vendor3;
  OomFamily family;
  if (RE2::PartialMatch(line.text, cublas, &found, &vendor)) family = OomFamily::cublas;
  else if (RE2::PartialMatch(line.text, cudnn, &found)) family = OomFamily::cudnn;
  else if (RE2::PartialMatch(line.text, runtime, &found, &vendor)) family = OomFamily::cuda_runtime;
  else if (RE2::PartialMatch(line.text, thc, &found, &vendor)) family = OomFamily::cuda_runtime;
  else if (line.text.find("THCudaCheck") != std::string::npos &&
           RE2::PartialMatch(line.text, thc_check, &found, &vendor))
    family = OomFamily::cuda_runtime;
  else if (RE2::PartialMatch(line.text, codes, &found, &vendor, &vendor2, &vendor3)) {
    family = OomFamily::cuda_runtime;
    if (vendor.empty()) vendor = vendor2.empty() ? vendor3 : vendor2;
  } else {
    return std::nullopt;
  }
  bool hip = !vendor.empty() && (vendor[0] == 'H' || vendor[0] == 'h');
  std::size_t last = c10_suffix_end(region, at);
  bool c10_suffix = last != at;  // only PyTorch's C10_CUDA_CHECK appends it
  OomEvent ev = event_at(line, family);
  ev.device = hip ? Device::hip : Device::cuda;
  return emit(region, at, pos_of(line.text, found), last, std::move(ev), c10_suffix, out);
}

}  // namespace

std::optional<std::size_t> parse_cuda_library(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  if (auto last = stream_executor_note(region, at, out)) return last;
  // An "unhandled cuda error" without OOM evidence is no OOM, and nothing else here.
  if (RE2::PartialMatch(region.lines[at].text, nccl_unhandled_re())) return nccl_unhandled(region, at, out);
  if (auto last = nccl_warn(region, at, out)) return last;
  if (auto last = nccl_calloc(region, at, out)) return last;
  return single_line(region, at, out);
}

}  // namespace oomlens::analyzer::parse
