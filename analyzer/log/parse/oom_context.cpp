#include "analyzer/log/parse/oom_context.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/text.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

// A size with its unit, commas allowed in the digits ("1,073,741,824 bytes"),
// TSL's bare "3.00G" included. The \b keeps "2 GPUs" from reading as 2 GiB.
const std::string kSize = R"(([0-9][0-9,]*(?:\.[0-9]+)?)\s*(bytes|byte|[KMGTP]i?B|[KMGTP]|B)\b)";

std::optional<std::uint64_t> size_from(std::string_view number, std::string_view unit) {
  std::string digits;
  for (char c : number)
    if (c != ',') digits.push_back(c);
  if (unit.empty() || unit == "bytes" || unit == "byte" || unit == "B") {
    if (digits.find('.') == std::string::npos) return exact_u64(digits);
  }
  return parse_size(digits + std::string(unit));
}

// The first size after one of the role's words; an exact "(N bytes)" right
// after a rounded figure wins ("failed to allocate 3.00G (3221225472 bytes)").
std::optional<std::uint64_t> size_for(std::string_view text, const RE2& re) {
  StringPiece number, unit, exact;
  if (!RE2::PartialMatch(text, re, &number, &unit, &exact)) return std::nullopt;
  if (!exact.empty()) return size_from(view(exact), "bytes");
  return size_from(view(number), view(unit));
}

bool is_fatal_line(std::string_view text) {
  static const RE2 exception_line(R"(^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::|\s*$))",
                                  RE2::Latin1);
  static const RE2 words(
      R"(Traceback \(most recent call last\)|(?i:\baborted\b|core dumped|segmentation fault|terminate called)"
      R"(|\bfatal\b|check failed|exited with (?:exit )?code [1-9]|exit code:? ?[1-9]|exitcode: ?-?[1-9]|exit status [1-9])"
      R"(|process \d+ (?:exited|terminated|died)|\bkilled\b))"
      R"(|RESOURCE_EXHAUSTED|OOM when allocating|\(rounded to \d+\)|Current allocation summary follows)"
      R"(|DistBackendError|ncclUnhandledCudaError|NCCL error in|ChildFailedError|\[ERROR\]|\bERROR\b)",
      RE2::Latin1);
  // glog/TSL level F: "F tensorflow/...cc:12] ", "F0301 12:00:00.1 42 x.cc:12] ". Not E: TF
  // prints benign E lines (cuDNN factory registration) all the time.
  static const RE2 glog_fatal(R"(^\s*F(?:\d{4}\s+[0-9:.]+\s+\d+)?\s+[\w./-]+\.(?:cc|h|cpp):\d+\])", RE2::Latin1);
  return RE2::PartialMatch(text, exception_line) || RE2::PartialMatch(text, words) ||
         RE2::PartialMatch(text, glog_fatal);
}

bool is_progress_line(std::string_view text) {
  static const RE2 re(
      R"((?i)\b(?:epoch|step|iter(?:ation)?|global_step|it)\s*[:=#]?\s*\[?\d+|\bloss\s*[:=]?\s*[-+]?(?:\d+\.?\d*|\.\d+))"
      R"(|\d\s*(?:it/s|s/it|ms/step|s/step|samples/s|tokens/s|tok/s|img/s)\b|\d+%\|)"
      R"(|\[=+>?\.*\]|^\s*\d+/\d+\s*\[|\b(?:saved|saving) (?:the )?(?:model|checkpoint)|\bval(?:idation)?[_ ](?:loss|acc))",
      RE2::Latin1);
  return RE2::PartialMatch(text, re);
}

}  // namespace

std::optional<std::size_t> oom_statement(std::string_view text) {
  // Spelled with separators ("out of memory", CUDA_ERROR_OUT_OF_MEMORY,
  // "out-of-memory"); glued only as a code (hipErrorOutOfMemory,
  // cudaErrorMemoryAllocation) or an exception that is being raised
  // ("OutOfMemoryError:"), not a type named in prose. "Failed to allocate"
  // counts only beside device-memory words. One pattern, one pass: this runs
  // on every anchor line the specific parsers leave.
  static const std::string statement =
      R"((?i:out[ _-]of[ _-](?:(?:gpu|device|video|cuda)[ _-])?memory|memoryallocation)"
      R"(|not enough (?:gpu |device |cuda |vram |video )?memory|insufficient (?:gpu|device|cuda|vram|video) memory))"
      R"(|ErrorOutOfMemory|OutOfMemory(?:Error|Exception)?(?::|\s*$)|[A-Z]+_(?:STATUS_)?ALLOC(?:ATION)?_FAILED)"
      R"(|[Ss]tatusAllocFailed|PT_DEVMEM\W{0,4}Allocation failed)";
  static const RE2 any("((" + statement + R"()|((?i:(?:failed|unable|cannot|could not) to allocate|cannot allocate))))",
                       RE2::Latin1);
  static const RE2 only_statement("(" + statement + ")", RE2::Latin1);
  static const RE2 device_memory(
      R"((?i)cudaMalloc|cuMem|hipMalloc|musaMalloc|device memory|gpu memory|\bon (?:the )?(?:device|gpu)\b)"
      R"(|device:gpu|\bvram\b|\bhbm\b|from device|via uvm)",
      RE2::Latin1);
  std::string_view h = head(text);
  StringPiece found, words, failed;
  if (!RE2::PartialMatch(h, any, &found, &words, &failed)) return std::nullopt;
  if (!words.empty()) return pos_of(h, found);
  if (RE2::PartialMatch(h, device_memory)) return pos_of(h, found);
  // "failed to allocate" without device words: an out-of-memory statement may still follow.
  std::size_t after = pos_of(h, found) + found.size();
  StringPiece rest;
  if (RE2::PartialMatch(h.substr(after), only_statement, &rest)) return pos_of(h, rest);
  return std::nullopt;
}

bool has_gpu_context(std::string_view text) {
  static const RE2 re(
      R"(\bCUDA|cuda|\bcu[A-Z][a-z]|\bCU(?:BLAS|FFT|SOLVER|SPARSE|RAND|DNN)|cuBLAS|cuDNN|cudnn|\bGPU|gpu)"
      R"(|\bHIP\b|\bhip[A-Z]|ROCm|rocm|\bRCCL|\bNCCL|nccl|VRAM|vram|\bMLU|\bNPU|\bGCU|\bMUSA|\bmusa|\bHPU|\bXPU|\bTPU)"
      R"(|\bHBM|PT_DEVMEM|Gaudi|Habana|habana|Ascend|\bCNRT|\bcnrt|\bdevice\b|\bDevice\b|\bUVM\b|NVIDIA|nvidia)",
      RE2::Latin1);
  return RE2::PartialMatch(head(text), re);
}

bool is_host_memory(std::string_view text) {
  // The memory words must name the host's memory: "falling back to the CPU
  // kernel" beside a GPU OOM is no host OOM.
  static const RE2 re(
      R"((?i)\b(?:pinned|page[- ]locked|host|cpu|system|main|shared)\s+(?:\w+\s+){0,2}?(?:memory|ram)\b)"
      R"(|\b(?:host|cpu|system)\s+out of memory|\bram\b|\bof pinned\b|/dev/shm|oom[-_ ]?kill|killed process|\bcgroup)"
      R"(|DefaultCPUAllocator|bad_alloc|cudaHostAlloc|cudaMallocHost|hipHostMalloc|cuMemHostAlloc|host_bfc|gpu_host)"
      R"(|mklcpu|\bswap\b|device:cpu)",
      RE2::Latin1);
  return RE2::PartialMatch(head(text), re);
}

bool has_error_context(std::string_view text) {
  static const RE2 re(
      R"([A-Za-z]\w*(?:Error|Exception)\b|Error[A-Z]|_ERROR_|(?i:\berror|\bfail(?:ed|ure|s)?\b|\bfatal\b|\babort)"
      R"(|\bpanic|\bcrash|\braised?\b|\bexception\b|assert|\bunable to\b|\bcannot\b|\bcould not\b|\bcode\s*[:=]?\s*-?\d+)"
      R"(|\breturned\s*(?:error\s*)?-?\d+|\bstatus\s*[:=]\s*\w+|\bCHECK\b|\bERR\b))",
      RE2::Latin1);
  return RE2::PartialMatch(head(text), re);
}

bool is_advice(std::string_view text) {
  static const RE2 re(
      R"((?i)\bif (?:you|your|the|a|an|this|it|we|there)\b|\bto avoid\b|\bavoid(?:s|ing)?\b|\bprevent(?:s|ing)?\b)"
      R"(|\bin case (?:of|you)\b|\bwhen (?:you|your|a|an|the|it|we|there)\b|\bunless\b)"
      R"(|\b(?:may|might|could|would|should|can) (?:cause|lead|result|happen|occur|run|be|trigger|produce|see|hit|get)\b)"
      R"(|\be\.g\.|\bfor example\b|\bsuch as\b|\btips?:|\bhint:|\bnote:|\bfaq\b|\bhow to\b|\bwithout running\b)"
      R"(|\btry (?:to|reducing|lowering|setting|increasing|using|a smaller)\b|\bthreshold\b|\bprobability\b)"
      R"(|^\s*-{1,2}[a-z][\w-]*(?:[ =]\S+)?\s{2,})",
      RE2::Latin1);
  return RE2::PartialMatch(head(text), re);
}

bool is_survival_note(std::string_view text) {
  static const RE2 re(
      R"((?i)\brecover(?:ed|ing)\b|\brecover(?:ed)? from\b|\bretrying\b|\bwill retry\b|\bretry(?:ing)? (?:with|after|at|on)\b)"
      R"(|\bretry \d+\s*/\s*\d+|\bskipping\b|\bskipped\b|\bfalling back\b|\bfell back\b|\bfall back to\b|\bfallback to\b)"
      R"(|\btrying again\b|\bhalving\b|\breducing (?:the )?(?:micro[- ]?)?batch|\bcontinuing\b|\bwill be retried\b)"
      R"(|\bcaught and handled\b)",
      RE2::Latin1);
  // Every branch holds one of these words, in any case: a line without them
  // (nearly every OOM message of a log dense with them) is answered without
  // the pattern, whose case-folded word boundaries cost 6,600 cycles a line.
  static constexpr std::array<std::string_view, 10> kWords = {
      "recover", "retr", "skipp", "fall", "fell back", "trying again", "halving", "reducing", "continuing",
      "caught and handled"};
  const std::string_view start = head(text);
  if (std::none_of(kWords.begin(), kWords.end(), [&](std::string_view w) { return contains_folded(start, w); }))
    return false;
  return RE2::PartialMatch(start, re);
}

bool is_code(std::string_view text) {
  static const RE2 re(
      R"(^\s*(?:(?:raise|except|catch|throw|assert|if|elif|while|return|def|class|import|with|try|yield|await)\b)"
      R"(|(?:print|logger\.\w+|logging\.\w+|log\.\w+|warnings\.warn|TORCH_CHECK|AT_ERROR|fprintf|printf)\s*\()"
      R"(|#|//|/\*|File ")"
      R"(|[A-Za-z_][\w.\[\]'"]*\s*(?:=|\+=)\s*[^=]))",
      RE2::Latin1);
  return RE2::PartialMatch(head(text), re);
}

bool is_mention(std::string_view text, std::size_t pos) {
  std::string_view before = head(text).substr(0, std::min(pos, head(text).size()));
  if (std::count(before.begin(), before.end(), '`') % 2 == 1) return true;  // inside `...`
  static const RE2 negated(R"((?i)\b(?:not|no|non)[ -](?:an?[ -])?$)", RE2::Latin1);
  if (RE2::PartialMatch(before.substr(before.size() > 16 ? before.size() - 16 : 0), negated)) return true;
  static const RE2 own_report(
      R"(\b(?:error|warning|information|hint)\[OOM\d{3}\]|^\s*GPU out of memory(?:, capacity:|, held elsewhere:)"
      R"(| from fragmentation:| at a memory cap:| without figures:))",
      RE2::Latin1);
  return RE2::PartialMatch(head(text), own_report);
}

std::string exception_on(std::string_view text, std::size_t pos, std::size_t* end) {
  // The last "pkg.SomeError: " that starts before the phrase (the phrase may be
  // inside it: "torch.OutOfMemoryError: ...", or after other words: "Run
  // failed with exception: torch.cuda.OutOfMemoryError: ...").
  static const RE2 typed(R"(((?:^|[^\w.])([A-Za-z_][\w.]*(?:Error|Exception)|Exception):\s))", RE2::Latin1);
  std::string_view h = head(text);
  StringPiece rest(h.data(), h.size()), whole, found;
  std::optional<std::pair<std::string_view, std::size_t>> best;
  while (RE2::FindAndConsume(&rest, typed, &whole, &found)) {
    std::size_t start = pos_of(h, found);
    if (start > pos) break;
    best = {view(found), pos_of(h, whole) + whole.size()};
  }
  if (best) {
    if (end) *end = best->second;
    return std::string(best->first);
  }
  // Any other type right before the phrase ("KeyboardInterrupt: ..."), not a
  // status code in capitals ("INTERNAL: ", "ERROR: ").
  std::string name = exception_before(text, pos);
  bool capitals = !name.empty() && std::none_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  if (!name.empty() && !capitals) {
    if (end) *end = pos;
    return name;
  }
  if (end) *end = 0;
  return {};
}

Device device_from_words(std::string_view text) {
  static const RE2 mlu(R"(\bMLU|\bCNRT|\bcnrt|Cambricon)", RE2::Latin1);
  static const RE2 npu(R"(\bNPU|\bnpu:|Ascend|\bACL\b)", RE2::Latin1);
  static const RE2 gcu(R"(\bGCU|\bgcu:|Enflame)", RE2::Latin1);
  static const RE2 musa(R"(\bMUSA|\bmusa)", RE2::Latin1);
  static const RE2 hpu(R"(\bHPU|\bhpu:|PT_DEVMEM|Gaudi|Habana|habana|synapse)", RE2::Latin1);
  static const RE2 xpu(R"(\bXPU|\bxpu:|Level.?Zero|\bSYCL|\bUR_RESULT)", RE2::Latin1);
  static const RE2 tpu(R"(\bTPU)", RE2::Latin1);
  static const RE2 mps(R"(\bMPS\b|\bMetal\b)", RE2::Latin1);
  static const RE2 hip(R"(\bHIP\b|\bhip[A-Z]|ROCm|rocm|\bRCCL|\bAMD\b|\bMIOpen|\brocBLAS)", RE2::Latin1);
  static const RE2 cuda(R"(CUDA|cuda|\bcu[A-Z][a-z]|\bCU[A-Z]+_|GPU|gpu|NVIDIA|nvidia|NCCL|VRAM|\bUVM\b)", RE2::Latin1);
  std::string_view h = head(text);
  if (RE2::PartialMatch(h, mlu)) return Device::mlu;
  if (RE2::PartialMatch(h, npu)) return Device::npu;
  if (RE2::PartialMatch(h, gcu)) return Device::gcu;
  if (RE2::PartialMatch(h, musa)) return Device::musa;
  if (RE2::PartialMatch(h, hpu)) return Device::hpu;
  if (RE2::PartialMatch(h, xpu)) return Device::xpu;
  if (RE2::PartialMatch(h, tpu)) return Device::tpu;
  if (RE2::PartialMatch(h, mps)) return Device::mps;
  if (RE2::PartialMatch(h, hip)) return Device::hip;
  if (RE2::PartialMatch(h, cuda)) return Device::cuda;
  return Device::unknown;
}

std::optional<int> device_index(std::string_view text) {
  // Not "CUDA 12.1" (a version): a bare number only after device words, and
  // cuda/hip only with a colon.
  static const RE2 named(
      R"((?i)\b(?:gpu|device|npu|mlu|gcu|xpu|hpu|musa|ordinal)\s*(?:id\s*)?[:#=]?\s*(\d{1,4})(?:[^.\d]|$))", RE2::Latin1);
  static const RE2 colon(R"((?i)\b(?:cuda|hip):(\d{1,4})\b)", RE2::Latin1);
  std::string_view h = head(text);
  StringPiece digits;
  if (RE2::PartialMatch(h, named, &digits) || RE2::PartialMatch(h, colon, &digits)) return exact_int(view(digits));
  return std::nullopt;
}

Framework framework_from_words(std::string_view text, std::string_view exception) {
  static const RE2 pytorch(R"(\btorch\b|torch\.|PyTorch|pytorch|\bc10\b|\bTHC|\bATen\b)", RE2::Latin1);
  static const RE2 tensorflow(R"((?i)tensorflow|\btf\.|keras)", RE2::Latin1);
  static const RE2 jax(R"(\bjax|jaxlib|XlaRuntimeError)", RE2::Latin1);
  for (std::string_view s : {exception, head(text)}) {
    if (RE2::PartialMatch(s, pytorch)) return Framework::pytorch;
    if (RE2::PartialMatch(s, tensorflow)) return Framework::tensorflow;
    if (RE2::PartialMatch(s, jax)) return Framework::jax;
  }
  return Framework::unknown;
}

void read_stated_sizes(std::string_view text, MemoryNumbers& n) {
  // Only the role words fold case: "4 m" or "2 t" are no sizes.
  static const std::string exact = R"((?:\s*\(([0-9][0-9,]*)\s*(?:bytes|B)\)))" "?";
  static const RE2 requested(
      std::string(R"((?i:tried to allocate|trying to allocate|(?:failed|unable|cannot|could not) to allocate|cannot allocate)")
          + R"(|attempting to (?:allocate|reserve))"
          + R"(|\ballocating|allocation of|\brequest(?:ed|ing)?(?: size)?(?: of| for)?|\bcalloc(?: async)?)"
          + R"(|\bmalloc\(?|\breserve|\bfor size:*)\s*[:=]?\s*(?i:more than\s*)?)" + kSize + exact,
      RE2::Latin1);
  static const RE2 free_after(kSize + exact + R"(\s*(?:is\s*)?(?i:free|available)\b)", RE2::Latin1);
  static const RE2 free_before(
      std::string(R"(\b(?i:free|available)(?i:\s*memory)?\s*(?:[:=]|(?i:is(?:\s*only)?))\s*)") + kSize + exact,
      RE2::Latin1);
  static const RE2 total_before(
      std::string(R"(\b(?i:total(?:\s*(?:capacity|memory))?|capacity)\s*(?i:of\s*)?[:=]?\s*)") + kSize + exact,
      RE2::Latin1);
  static const RE2 total_after(kSize + exact + R"(\s*(?i:total)\b)", RE2::Latin1);
  std::string_view h = head(text);
  if (!n.requested) n.requested = size_for(h, requested);
  if (!n.free) n.free = size_for(h, free_after);
  if (!n.free) n.free = size_for(h, free_before);
  if (!n.total) n.total = size_for(h, total_before);
  if (!n.total) n.total = size_for(h, total_after);
}

Fate fate_after(const Region& region, std::size_t at, std::size_t max_lines,
                const std::function<bool(std::string_view)>& same_kind) {
  const auto& rank = region.lines[at].rank;
  const std::uint64_t own_number = region.lines[at].number;
  bool any = false;
  for (std::size_t i = at + 1; i < region.lines.size() && i - at <= max_lines; ++i) {
    const Line& line = region.lines[i];
    if (rank && line.rank && line.rank != rank) continue;  // other ranks go on regardless
    if (line.number == own_number) continue;             // a '\r' redraw of the same raw line
    std::string_view text = head(line.text);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    any = true;
    if (same_kind && same_kind(text)) continue;
    if (is_fatal_line(text)) return Fate::fatal;
    if (is_survival_note(text) || is_progress_line(text)) return Fate::survived;
  }
  // A region that stopped reading before the input's end cannot say nothing follows.
  return any || !region.reaches_end ? Fate::neutral : Fate::nothing;
}

}  // namespace oomlens::analyzer::parse
