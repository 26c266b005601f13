// The cudaMallocAsync backend's OOM (c10/cuda/CUDAMallocAsyncAllocator.cpp),
// a message with embedded newlines:
//
//   Allocation on device {dev} would exceed allowed memory. (out of memory)
//   Currently allocated     : {used}
//   Requested               : {size}
//   Device limit            : {total}
//   Free (according to CUDA): {free}
//   PyTorch limit (set by user-supplied memory fraction)
//                           : {limit}
//
// In a log each of those is its own line, and other ranks' lines may sit
// between them, so the labelled lines are read one by one after the header.
#include <re2/re2.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

// Header + five labelled lines + the limit's value line, with room for
// interleaved ranks and a wrapped header.
constexpr std::size_t kMaxLines = 12;

// Where the message starts; the device index follows, or (truncated) nothing.
const RE2& anchor_re() {
  static const RE2 re(R"((Allocation\s*on\s*device)(?:\s?(?:[0-9]+|[\x01-\x1f])?\s*would\s*exceed|[\s\x00-\x1f]*$))");
  return re;
}
// The device index may be a raw byte: 2.6 streams a c10::DeviceIndex (int8)
// as a char (inferred from the types, never seen in a log), as 2.3's caching
// allocator did (Era F); device 0's NUL then ends the whole message after
// "Allocation on device ".
const RE2& header_re() {
  static const RE2 re(R"(^Allocation\s*on\s*device\s?([0-9]+|[\x01-\x1f])?\s*would\s*exceed)");
  return re;
}

// A line holding only the end of a header that a terminal wrapped, such as
// "ory)" or " memory. (out of memory)".
bool is_wrapped_header_tail(std::string_view text) {
  static constexpr std::string_view kHeaderEnd = "wouldexceedallowedmemory.(outofmemory)";
  std::string packed;
  for (char c : text) {
    if (c != ' ' && c != '\t') packed.push_back(c);
    if (packed.size() > kHeaderEnd.size()) return false;
  }
  return !packed.empty() && kHeaderEnd.ends_with(packed);
}
const RE2& currently_allocated_re() { static const RE2 re(sized(R"(Currently\s*allocated\s*:\s*)")); return re; }
const RE2& requested_re() { static const RE2 re(sized(R"(Requested\s*:\s*)")); return re; }
const RE2& device_limit_re() { static const RE2 re(sized(R"(Device\s*limit\s*:\s*)")); return re; }
// ROCm builds print the hipified text: "according to HIP".
const RE2& free_re() {
  static const RE2 re(sized(R"(Free\s*\(\s*according\s*to\s*(CUDA|HIP)\s*\)\s*:\s*)"));
  return re;
}
// The limit's value is on the label's line when a wrapper joined them, else
// on the next line.
const RE2& limit_label_re() {
  static const RE2 re(
      sized(R"(PyTorch\s*limit\s*\(\s*set\s*by\s*user-supplied\s*memory\s*fraction\s*\)(?:\s*:\s*)", ")?"));
  return re;
}
const RE2& limit_value_re() { static const RE2 re(sized(R"(^\s*:\s*)")); return re; }

void set_limit(std::optional<std::uint64_t> limit, OomEvent& ev) {
  if (!limit) return;
  // SIZE_MAX prints as "17179869184.00 GiB" when no memory fraction is set.
  if (*limit >= kPlaceholderSize) ev.placeholder_limit = true;
  else ev.numbers.limit = limit;
}

// Reads the labelled numbers a line carries; false when it carries none.
// `limit_pending` is set by a bare limit label and cleared by its value line.
bool read_labels(std::string_view text, OomEvent& ev, bool& limit_pending) {
  MemoryNumbers& n = ev.numbers;
  bool used = false;
  if (limit_pending) {
    limit_pending = false;
    if (auto limit = size_of(text, limit_value_re())) {
      set_limit(limit, ev);
      return true;
    }
  }
  if (auto used_bytes = size_of(text, currently_allocated_re())) {
    // No cache split in this backend: what it holds is what it has handed out.
    n.allocated = n.reserved = used_bytes;
    used = true;
  }
  if (auto requested = size_of(text, requested_re())) {
    n.requested = requested;
    used = true;
  }
  if (auto total = size_of(text, device_limit_re())) {
    n.total = total;
    used = true;
  }
  re2::StringPiece runtime, free;
  if (RE2::PartialMatch(text, free_re(), &runtime, &free)) {
    n.free = parse_size(view(free));
    if (runtime == "HIP") ev.device = Device::hip;
    used = true;
  }
  re2::StringPiece limit;
  if (RE2::PartialMatch(text, limit_label_re(), &limit)) {
    if (limit.empty()) limit_pending = true;
    else set_limit(parse_size(view(limit)), ev);
    used = true;
  }
  return used;
}

// Sets the device index from a header; false when the text has none.
bool read_header(std::string_view text, OomEvent& ev) {
  re2::StringPiece index;
  if (!RE2::PartialMatch(text, header_re(), &index)) return false;
  auto digits = view(index);
  if (auto gpu = exact_int(digits)) {
    ev.gpu = gpu;
  } else if (digits.size() == 1) {
    ev.gpu = static_cast<unsigned char>(digits[0]);
  }
  return true;
}

// The next line after `after` printed by the same rank as region.lines[at],
// within the message window; other ranks' lines in between are skipped, even
// anchors (unlike next_line_of): a labelled line holds no other message.
std::optional<std::size_t> next_line_in_window(const Region& region, std::size_t at, std::size_t after) {
  for (std::size_t i = after + 1; i < region.lines.size() && i - at < kMaxLines; ++i) {
    if (region.lines[i].rank == region.lines[at].rank) return i;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> parse_cuda_malloc_async(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& first = region.lines[at];
  re2::StringPiece found;
  if (!RE2::PartialMatch(first.text, anchor_re(), &found)) return std::nullopt;
  std::size_t start = pos_of(first.text, found);
  std::string message(std::string_view(first.text).substr(start));

  OomEvent ev = event_at(first, OomFamily::cuda_malloc_async);
  ev.framework = Framework::pytorch;
  ev.device = Device::cuda;
  ev.exception = exception_before(first.text, start);

  std::size_t last = at;
  if (!read_header(message, ev)) {
    // Either device 0's NUL ended the message, or a terminal wrapped the
    // header right after "device ": the next line of this rank tells which.
    auto next = next_line_in_window(region, at, at);
    if (next && read_header(message + region.lines[*next].text, ev)) {
      message += region.lines[*next].text;
      last = *next;
    } else {
      ev.truncated = true;
      ev.gpu = 0;  // only device 0's NUL byte stops the message there
    }
  }

  bool limit_pending = false;
  read_labels(first.text, ev, limit_pending);  // a wrapper may have put it all on one line
  std::size_t header_end = last;
  while (!ev.truncated) {
    auto i = next_line_in_window(region, at, last);
    if (!i) break;
    const std::string& text = region.lines[*i].text;
    bool wrapped_header = last == header_end && is_wrapped_header_tail(text);
    if (!wrapped_header && !read_labels(text, ev, limit_pending)) break;
    message += '\n';
    message += text;
    last = *i;
  }
  ev.message = capped(message);
  return append_event(region, last, std::move(ev), out);
}

}  // namespace oomlens::analyzer::parse
