// The PyTorch caching-allocator OOM, "(CUDA|HIP|XPU) out of memory. Tried to
// allocate ...": every message era (A–I), the "more than 1EB" request, the
// hipified text of ROCm builds, the XPU texts, and vendor builds
// that print the same grammar with their own device word ("MLU out of
// memory ... (MLU 0; ...)", "NPU ...", "GCU ...", "MUSA ...").
//
// Also a message without its head: a user selects part of it in the editor
// or the terminal ("Tried to allocate 64.00 MiB (GPU 1; ...", only the
// parenthesis, only "GPU 0 has a total capacity of ... Of the allocated
// memory ..."). What is there is still an allocator OOM with its numbers.
//
// Each number is pulled out by its own small pattern rather than one regex per
// era, so a message cut short (2.3's NUL, a log wrapper) or hard-wrapped by a
// terminal still yields the numbers it does show. Patterns allow \s* between
// tokens because wrapped lines are joined without a separator.
#include <re2/re2.h>

#include <functional>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

// The longest message (era H with a few process lines) wraps to a handful of
// lines even at 80 columns; 12 leaves room for interleaved ranks.
constexpr std::size_t kMaxLines = 12;
// "Tried to allocate more than 1EB memory." states a lower bound only.
constexpr std::uint64_t kOneExabyte = std::uint64_t{1} << 60;
// Enough for any real NVML listing; bounds what hostile text can make us hold.
constexpr std::size_t kMaxProcesses = 256;

// The device words of the allocator grammar: PyTorch's own and vendor forks'.
#define OOMLENS_DEVICE_WORD "(?:GPU|NPU|MLU|GCU|XPU|MUSA)"

// The anchor every era shares, with the device prefix optional (the
// device-generic "Out of memory. Tried to allocate" of Era I).
const RE2& anchor_re() {
  static const RE2 re(R"(((CUDA|HIP|XPU|MLU|NPU|GCU|MUSA)\s*)?[Oo]ut\s*of\s*memory\.\s*Tried\s*to\s*allocate)");
  return re;
}
// Where a message without its head starts: at "Tried to allocate <size>" when
// the device's figures follow (not MPS's "... on private pool"), at the old
// format's "(GPU n; <size> total capacity", at the new format's "GPU n has a
// total capacity", or at the accounting ("Of the allocated memory", "<size>
// already allocated", "<size> reserved in total by PyTorch"). The earliest.
std::optional<std::size_t> partial_start(std::string_view text) {
  static const RE2 forms[] = {
      RE2(sized(R"(Tried\s*to\s*allocate\s*)", R"(\s*(?:\(\s*|\.\s*))" OOMLENS_DEVICE_WORD)),
      RE2(R"(\(\s*)" OOMLENS_DEVICE_WORD R"(\s*[0-9]+\s*;)"),
      RE2(OOMLENS_DEVICE_WORD R"(\s*[0-9]+\s*has\s*a\s*total\s*capaci?ty)"),
      RE2(R"(Of\s*the\s*allocated\s*memory)"),
      RE2(sized("", R"(\s*already\s*allocated)")),
      RE2(sized("", R"(\s*reserved\s*in\s*total\s*by\s*PyTorch)")),
  };
  std::optional<std::size_t> earliest;
  for (const RE2& form : forms) {
    re2::StringPiece found;
    if (form.Match(text, 0, text.size(), RE2::UNANCHORED, &found, 1)) {
      const std::size_t at = pos_of(text, found);
      if (!earliest || at < *earliest) earliest = at;
    }
  }
  return earliest;
}
// Cheap test on the first line before joining: the anchor or a partial
// start must begin there. A bare "out of" counts only where the anchor can
// go on from it: "out of memory." or a line cut short after "out of" (a
// hard wrap), not the kernel's "Out of memory: Killed process" or
// TensorFlow's "ran out of memory trying to allocate".
const RE2& first_line_re() {
  static const RE2 re(
      R"(CUDA|HIP|XPU|MLU|NPU|GCU|MUSA|[Oo]ut\s*of\s*(?:memory\s*\.|[memory]{0,6}\s*$)|Tried|capaci?ty|already|reserved|allocated)");
  return re;
}

// Text that ends the message in every era where it appears: A's "cached)",
// C/D's "... Memory Management and PYTORCH_CUDA_ALLOC_CONF", E–I's URL, the
// XPU tail ("empty_cache") and the 1EB message.
const RE2& terminal_re() {
  static const RE2 re(
      R"(cached\s*\)|Management\s*and\s*PYTORCH_(?:CUDA_|HIP_)?ALLOC_CONF|environment-variables\s*\))"
      R"(|unoccupied\s*cached\s*memory\s*\.|more\s*than\s*1EB\s*memory)");
  return re;
}
// Places where a message may end or go on: B ends at "PyTorch)" where C goes
// on with a hint; a future hint-less message (pytorch/pytorch PR#173051, Era I) ends at
// "unallocated."; 2.3 truncates after "GPU " (Era F). Which one it is shows
// only on the next line (see continues_on_next_line).
const RE2& optional_end_re() {
  static const RE2 re(sized(R"((?:reserved\s*in\s*total\s*by\s*PyTorch\s*\)|but\s*unallocated\s*\.|more\s*than\s*1EB)"
                            R"(|Tried\s*to\s*allocate\s*)",
                            R"(\s*\.\s*GPU)[\s\x00-\x1f]*$)"));
  return re;
}
// What the next line starts with when it continues one of those endings.
const RE2& continuation_re() {
  static const RE2 re(R"(^[\s\x00-\x1f]*(?:If\s*reserved|Please\s*use|[0-9]*\s*has\s*a\s*total|memory\s*\.))");
  return re;
}

// The figures whose pattern begins with a word are anchored there ("^"):
// size_at_literal tries them at each place the word is.
const RE2& requested_re() { static const RE2 re(sized(R"(^Tried\s*to\s*allocate\s*)")); return re; }
const RE2& one_exabyte_re() { static const RE2 re(R"(Tried\s*to\s*allocate\s*more\s*than\s*1EB)"); return re; }
const RE2& gpu_digits_re() { static const RE2 re(OOMLENS_DEVICE_WORD R"(\s*([0-9]+)\s*(?:has|;))"); return re; }
// 2.3 streamed an int8 device index as a char: device n>0 prints byte n (Era F).
const RE2& gpu_char_re() { static const RE2 re(R"(GPU ?([\x01-\x1f]) ?has)"); return re; }
// Era F: the message stops right after "GPU " (device 0's NUL ended the C string).
const RE2& truncated_re() {
  static const RE2 re(sized(R"(Tried\s*to\s*allocate\s*)", R"(\s*\.\s*GPU ?([\x00-\x1f])?[\s\x00-\x1f]*$)"));
  return re;
}
// Eras D–I and XPU "total capacity of T" (2.1's "capacty" typo); eras A–C "T total capacity".
const RE2& total_new_re() { static const RE2 re(sized(R"(^total\s*capaci?ty\s*of\s*)")); return re; }
const RE2& total_old_re() { static const RE2 re(sized("", R"(\s*total\s*capacity)")); return re; }
const RE2& free_new_re() { static const RE2 re(sized(R"(^of\s*which\s*)", R"(\s*is\s*free)")); return re; }
const RE2& free_old_re() { static const RE2 re(sized("", R"(\s*free\s*;)")); return re; }
const RE2& allowed_re() { static const RE2 re(sized("", R"(\s*allowed\s*;)")); return re; }
// New format (D–I, XPU): A, PP (G onward), U.
const RE2& by_pytorch_re() {
  static const RE2 re(sized(R"(^Of\s*the\s*allocated\s*memory\s*)", R"(\s*is\s*allocated\s*by\s*PyTorch)"));
  return re;
}
const RE2& private_pools_re() { static const RE2 re(sized(R"(^with\s*)", R"(\s*allocated\s*in\s*private\s*pools)")); return re; }
const RE2& unallocated_re() {
  static const RE2 re(sized("", R"(\s*is\s*reserved\s*by\s*PyTorch\s*but\s*unallocated)"));
  return re;
}
// Old format: B/C "already allocated" and "reserved in total", A "cached".
const RE2& already_allocated_re() { static const RE2 re(sized("", R"(\s*already\s*allocated)")); return re; }
const RE2& reserved_total_re() { static const RE2 re(sized("", R"(\s*reserved\s*in\s*total\s*by\s*PyTorch)")); return re; }
const RE2& cached_re() { static const RE2 re(sized("", R"(\s*cached\s*\))")); return re; }
// NVML process lines (D onward).
const RE2& self_process_re() {
  static const RE2 re(sized(R"(^this\s*process\s*has\s*)", R"(\s*memory\s*in\s*use)"));
  return re;
}
const RE2& other_process_re() {
  static const RE2 re(sized(R"(^Process\s*([0-9]+)\s*has\s*)", R"(\s*memory\s*in\s*use)"));
  return re;
}
// Era E–I hint, any of the three variable names (ROCm builds print PYTORCH_HIP_ALLOC_CONF).
const RE2& expandable_hint_re() {
  static const RE2 re(R"(PYTORCH_(?:CUDA_|HIP_)?ALLOC_CONF\s*=\s*expandable_segments)");
  return re;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }
std::uint64_t saturating_sub(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; }

// The end of a joined text, where the optional ends are looked for.
std::string_view tail(std::string_view text) {
  constexpr std::size_t kTail = 512;
  return text.substr(text.size() > kTail ? text.size() - kTail : 0);
}

// True once the joined text holds a whole message. Scans only what was added
// since the last call (plus an overlap for a marker split by the join), so a
// long wrapped line is not rescanned per joined line.
struct MessageComplete {
  std::size_t must_exceed = 0;  // set when the next line was found to continue an optional end
  std::size_t scanned = 0;
  bool operator()(std::string_view text) {
    if (text.size() <= must_exceed) return false;
    constexpr std::size_t kOverlap = 256;
    std::size_t from = scanned > kOverlap ? scanned - kOverlap : 0;
    scanned = text.size();
    return RE2::PartialMatch(text.substr(from), terminal_re()) || RE2::PartialMatch(tail(text), optional_end_re());
  }
};

// Whether the next line of the same rank (after `last`) carries on a message
// that stopped at an optional end.
bool continues_on_next_line(const Region& region, std::size_t at, std::size_t last) {
  const auto& rank = region.lines[at].rank;
  for (std::size_t i = last + 1; i < region.lines.size() && i - at < kMaxLines; ++i) {
    if (region.lines[i].rank != rank) continue;
    return RE2::PartialMatch(region.lines[i].text, continuation_re());
  }
  return false;
}

// A line that begins something else: another OOM or exception. No wrapped
// piece of an allocator message contains either, so a message cut short by a
// log wrapper does not swallow the next error while it is being joined.
const RE2& another_message_re() {
  static const RE2 re(R"([Oo]ut\s*of\s*memory|[A-Za-z]Error\s*:)");
  return re;
}

// Gives back the joined lines from the first one that begins another message.
void cut_at_another_message(const Region& region, std::size_t at, std::string& text, std::size_t& last) {
  std::size_t offset = region.lines[at].text.size(), previous = at;
  for (std::size_t i = at + 1; i <= last; ++i) {
    const Line& line = region.lines[i];
    if (line.rank != region.lines[at].rank) continue;  // not joined
    if (RE2::PartialMatch(line.text, another_message_re())) {
      text.resize(offset);
      last = previous;
      return;
    }
    offset += line.text.size();
    previous = i;
  }
}

// The text from line `at` on, joined across wrapped lines: messages are one
// line in source, breaks in logs come from terminals and wrappers.
std::string join_message(const Region& region, std::size_t at, std::size_t& last) {
  MessageComplete complete;
  std::string text;
  for (int round = 0; round < 4; ++round) {
    text = joined_message(region, at, kMaxLines, std::ref(complete), &last);
    if (!RE2::PartialMatch(tail(text), optional_end_re()) || !continues_on_next_line(region, at, last)) break;
    complete.must_exceed = text.size();
  }
  cut_at_another_message(region, at, text, last);
  return text;
}

Device device_of(std::string_view prefix) {
  if (prefix == "CUDA") return Device::cuda;
  if (prefix == "HIP") return Device::hip;
  if (prefix == "XPU") return Device::xpu;
  if (prefix == "MLU") return Device::mlu;
  if (prefix == "NPU") return Device::npu;
  if (prefix == "GCU") return Device::gcu;
  if (prefix == "MUSA") return Device::musa;
  return Device::unknown;
}

// A message without its head names its device only in passing: a vendor's
// device word, or the allocator variable of the hint.
Device device_in(std::string_view msg) {
  static const RE2 vendor(R"(\b(NPU|MLU|GCU|MUSA)\s*[0-9]+\s*(?:;|has))");
  static const RE2 hip(R"(PYTORCH_HIP_ALLOC_CONF|HIP\s*Graphs)");
  static const RE2 cuda(R"(PYTORCH_CUDA_ALLOC_CONF|CUDA\s*Graphs)");
  re2::StringPiece word;
  if (RE2::PartialMatch(msg, vendor, &word)) return device_of(view(word));
  if (RE2::PartialMatch(msg, hip)) return Device::hip;
  if (RE2::PartialMatch(msg, cuda)) return Device::cuda;
  return Device::unknown;
}

// Enough of the message to be one: the request, or the device's total with
// some of PyTorch's accounting, or the old format's accounting pair.
bool enough_for_a_message(const MemoryNumbers& n) {
  return n.requested || (n.total && (n.allocated || n.reserved || n.reserved_unallocated)) ||
         (n.allocated && n.reserved);
}

std::string without_trailing_controls(std::string_view text) {
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  return std::string(text);
}

void read_device_index(std::string_view msg, OomEvent& ev) {
  re2::StringPiece index;
  if (RE2::PartialMatch(msg, gpu_digits_re(), &index)) {
    ev.gpu = exact_int(view(index));
  } else if (RE2::PartialMatch(msg, gpu_char_re(), &index)) {
    ev.gpu = static_cast<int>(static_cast<unsigned char>(index[0]));
  }
  re2::StringPiece size, control;
  if (RE2::PartialMatch(msg, truncated_re(), &size, &control)) {
    ev.truncated = true;
    // Only device 0's NUL ends the message at "GPU "; device n prints byte n.
    if (!ev.gpu) ev.gpu = control.empty() ? 0 : static_cast<int>(static_cast<unsigned char>(control[0]));
  }
}

// size_of, run only where `word` is in the message: most messages lack most
// of the figures (each era has its own words), and looking for a word costs
// far less than the pattern's walk over the whole message. `word` is a token
// of the pattern with no \s* inside, which joining wrapped lines cannot split,
// spelled with the pattern's case.
std::optional<std::uint64_t> size_by(std::string_view msg, std::string_view word, const RE2& re) {
  return msg.find(word) == std::string_view::npos ? std::nullopt : size_of(msg, re);
}

// The same for a pattern anchored at its first word, `literal`.
std::optional<std::uint64_t> size_by(std::string_view msg, std::string_view word, std::string_view literal,
                                     const RE2& anchored) {
  return msg.find(word) == std::string_view::npos ? std::nullopt : size_at_literal(msg, literal, anchored);
}

void read_processes(std::string_view msg, MemoryNumbers& n) {
  if (auto self = size_by(msg, "process", "this", self_process_re()); self && *self > 0) n.process_in_use = self;
  // Each other process's listing from its "Process", the next one looked for after it.
  re2::StringPiece pid, size;
  std::size_t at = msg.find("Process");
  while (at != std::string_view::npos && n.other_processes.size() < kMaxProcesses) {
    re2::StringPiece rest(msg.data() + at, msg.size() - at);
    if (!RE2::Consume(&rest, other_process_re(), &pid, &size)) {
      at = msg.find("Process", at + 1);
      continue;
    }
    auto id = exact_u64(view(pid));
    auto bytes = parse_size(view(size));
    if (id && bytes) n.other_processes.push_back({*id, *bytes});
    at = msg.find("Process", static_cast<std::size_t>(rest.data() - msg.data()));
  }
}

// What each era's numbers mean, mapped onto one set of fields.
void read_accounting(std::string_view msg, MemoryNumbers& n) {
  auto by_pytorch = size_by(msg, "PyTorch", "Of", by_pytorch_re());
  auto unallocated = size_by(msg, "unallocated", unallocated_re());
  if (by_pytorch || unallocated) {
    // D–I: A includes private pools (PP), U excludes them; A + U = reserved.
    auto pools = size_by(msg, "pools", "with", private_pools_re());
    n.private_pools = pools;
    if (by_pytorch) n.allocated = saturating_sub(*by_pytorch, pools.value_or(0));
    if (by_pytorch && unallocated) n.reserved = saturating_add(*by_pytorch, *unallocated);
    n.reserved_unallocated = unallocated;
    return;
  }
  n.allocated = size_by(msg, "already", already_allocated_re());
  if (auto reserved = size_by(msg, "PyTorch", reserved_total_re())) {  // B/C: total reserved
    n.reserved = reserved;
    if (n.allocated) n.reserved_unallocated = saturating_sub(*reserved, *n.allocated);
  } else if (auto cached = size_by(msg, "cached", cached_re())) {  // A: "cached" is reserved - allocated
    n.reserved_unallocated = cached;
    if (n.allocated) n.reserved = saturating_add(*n.allocated, *cached);
  }
}

void read_numbers(std::string_view msg, OomEvent& ev) {
  MemoryNumbers& n = ev.numbers;
  n.requested = size_at_literal(msg, "Tried", requested_re());
  if (!n.requested && RE2::PartialMatch(msg, one_exabyte_re())) n.requested = kOneExabyte;
  n.total = size_at_literal(msg, "total", total_new_re());
  if (!n.total) n.total = size_of(msg, total_old_re());
  n.free = size_by(msg, "which", "of", free_new_re());
  if (!n.free) n.free = size_by(msg, "free", free_old_re());
  if (auto allowed = size_by(msg, "allowed", allowed_re())) {
    if (*allowed >= kPlaceholderSize) ev.placeholder_limit = true;
    else n.limit = allowed;
  }
  read_accounting(msg, n);
  read_processes(msg, n);
  if (n.process_in_use && n.reserved && *n.process_in_use >= *n.reserved) {
    n.non_pytorch = *n.process_in_use - *n.reserved;
  }
}

}  // namespace

std::optional<std::size_t> parse_pytorch_allocator(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& first = region.lines[at];
  if (!RE2::PartialMatch(first.text, first_line_re())) return std::nullopt;

  std::size_t last = at;
  std::string text = join_message(region, at, last);

  re2::StringPiece match[3];
  std::size_t start = 0;
  bool whole = anchor_re().Match(text, 0, text.size(), RE2::UNANCHORED, match, 3);
  if (whole) {
    start = pos_of(text, match[0]);
  } else {
    auto partial = partial_start(text);
    if (!partial) return std::nullopt;
    start = *partial;
  }
  if (start >= first.text.size()) return std::nullopt;  // the anchor belongs to a later line
  std::string_view msg = std::string_view(text).substr(start);

  OomEvent ev = event_at(first, OomFamily::pytorch_allocator);
  ev.framework = Framework::pytorch;
  ev.device = whole ? device_of(view(match[2])) : device_in(msg);
  if (whole && ev.device == Device::unknown) ev.device = device_in(msg);
  ev.exception = whole ? exception_before(first.text, start) : std::string();
  ev.message = capped(without_trailing_controls(msg));
  read_device_index(msg, ev);
  read_numbers(msg, ev);
  if (!whole && !enough_for_a_message(ev.numbers)) return std::nullopt;
  ev.expandable_hint = RE2::PartialMatch(msg, expandable_hint_re());
  return append_event(region, last, std::move(ev), out);
}

}  // namespace oomlens::analyzer::parse
