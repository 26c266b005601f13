#include "lsp/framing.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace oomlens::lsp {
namespace {

constexpr std::string_view kHeaderEnd = "\r\n\r\n";
// A body at least this large that fills the buffer is moved out, not copied.
constexpr std::size_t kMoveBodyBytes = 64 * 1024;
// A buffer this large shrinks again when it is mostly empty.
constexpr std::size_t kKeepBufferBytes = 1 << 20;
constexpr std::string_view kLineEnd = "\r\n";
constexpr std::string_view kContentLength = "content-length";
// What resync looks for. Not anchored to a line start: after a body whose
// Content-Length was too small, the next header follows the leftover bytes
// directly ("}Content-Length: 52").
constexpr std::string_view kResyncMarker = "content-length:";

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view lower_b) {
  return a.size() == lower_b.size() &&
         std::equal(a.begin(), a.end(), lower_b.begin(), [](char x, char y) { return ascii_lower(x) == y; });
}

// Case-insensitive find of an all-lowercase needle.
std::size_t ifind(std::string_view haystack, std::string_view lower_needle, std::size_t from) {
  if (haystack.size() < lower_needle.size()) return std::string_view::npos;
  for (std::size_t i = from; i + lower_needle.size() <= haystack.size(); ++i) {
    if (iequals(haystack.substr(i, lower_needle.size()), lower_needle)) return i;
  }
  return std::string_view::npos;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Header values go into error descriptions that end up in logs and JSON:
// keep them short and ASCII.
std::string quoted(std::string_view s) {
  constexpr std::size_t kMax = 40;
  std::string out = "\"";
  for (char c : s.substr(0, kMax)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '"' && c != '\\') {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  if (s.size() > kMax) out += "...";
  return out + "\"";
}

struct ContentLengthHeader {
  std::optional<std::string_view> value;
  bool conflicting = false;  // two Content-Length headers that disagree
};

// Lines without a colon and unknown headers are ignored: only Content-Length
// matters, and a stray line should not cost the message.
ContentLengthHeader find_content_length(std::string_view block) {
  ContentLengthHeader found;
  while (true) {
    std::size_t line_end = block.find(kLineEnd);
    std::string_view line = block.substr(0, line_end);
    std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequals(trim(line.substr(0, colon)), kContentLength)) {
      std::string_view value = trim(line.substr(colon + 1));
      if (found.value && *found.value != value) found.conflicting = true;
      if (!found.value) found.value = value;
    }
    if (line_end == std::string_view::npos) break;
    block.remove_prefix(line_end + kLineEnd.size());
  }
  return found;
}

std::string size_text(std::size_t bytes) {
  if (bytes % (1024 * 1024) == 0) return fmt::format("{} MiB", bytes / (1024 * 1024));
  return fmt::format("{} bytes", bytes);
}

}  // namespace

FrameReader::FrameReader(FrameLimits limits, BodySinkFactory make_sink)
    : limits_(limits), make_sink_(std::move(make_sink)) {}

void FrameReader::feed(std::string_view bytes) {
  compact();
  // An oversized body is dropped as it arrives instead of being buffered.
  if (state_ == State::skip && buffered_bytes() == 0) {
    auto take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, bytes.size()));
    skipped(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (remaining_ == 0) {
      state_ = State::header;
      skip_done_in_feed_ = true;
    }
  }
  // A body with a sink goes there directly, never through the buffer.
  if (state_ == State::body && sink_ && buffered_bytes() == 0) {
    auto take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, bytes.size()));
    to_sink(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
  buffer_.append(bytes);
}

std::span<char> FrameReader::direct_space(std::size_t max) {
  if (state_ != State::body || !sink_ || buffered_bytes() != 0 || remaining_ == 0) return {};
  return sink_->space(static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, max)));
}

void FrameReader::commit_direct(std::size_t n) {
  n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, n));
  sink_->commit(n);
  remaining_ -= n;
}

void FrameReader::to_sink(std::string_view bytes) {
  while (!bytes.empty()) {
    std::span<char> room = sink_->space(bytes.size());
    std::size_t n = std::min(room.size(), bytes.size());
    std::copy_n(bytes.data(), n, room.data());
    sink_->commit(n);
    remaining_ -= n;
    bytes.remove_prefix(n);
  }
}

void FrameReader::skipped(std::string_view bytes) {
  skipped_request_.feed(bytes);
  remaining_ -= bytes.size();
}

// A skipped request is answered (by the server, with this error): the
// client would otherwise wait for it forever.
std::optional<FrameEvent> FrameReader::skip_finished() {
  auto id = skipped_request_.request_id();
  skipped_request_ = {};
  if (!id) return std::nullopt;
  return FramingError{fmt::format("request of {} bytes not handled: it exceeds the limit of {}", skip_length_,
                                  size_text(limits_.max_body_bytes)),
                      std::move(id)};
}

FrameEvent FrameReader::next() {
  if (skip_done_in_feed_) {
    skip_done_in_feed_ = false;
    if (auto event = skip_finished()) return std::move(*event);
  }
  while (true) {
    std::optional<FrameEvent> event;
    switch (state_) {
      case State::header: event = read_header(); break;
      case State::body: event = read_body(); break;
      case State::skip: event = skip_body(); break;
      case State::resync: event = resync(); break;
    }
    if (event) return std::move(*event);
  }
}

std::optional<FrameEvent> FrameReader::read_header() {
  std::string_view data = unread();
  // Only the first max_header_bytes (+ terminator) may hold the end of the
  // block, however the bytes were split across feeds.
  std::string_view window = data.substr(0, limits_.max_header_bytes + kHeaderEnd.size());
  std::size_t from = header_scanned_ >= kHeaderEnd.size() ? header_scanned_ - (kHeaderEnd.size() - 1) : 0;
  std::size_t end = window.find(kHeaderEnd, from);
  if (end == std::string_view::npos) {
    if (window.size() < limits_.max_header_bytes + kHeaderEnd.size()) {
      header_scanned_ = window.size();
      return NeedMoreBytes{};
    }
    header_scanned_ = 0;
    consumed_ += 1;  // so that resync does not find this block's own header again
    state_ = State::resync;
    return FramingError{fmt::format("header block longer than {} without a blank line; resynchronising",
                                    size_text(limits_.max_header_bytes))};
  }
  header_scanned_ = 0;
  std::string_view block = data.substr(0, end);
  std::size_t block_size = end + kHeaderEnd.size();

  ContentLengthHeader header = find_content_length(block);
  if (!header.value) {
    // Leftovers of a body whose Content-Length was too small sit in front of
    // the next real header: drop just those bytes.
    std::size_t marker = ifind(block, kResyncMarker, 1);
    if (marker != std::string_view::npos) {
      consumed_ += marker;
      return FramingError{fmt::format("skipped {} bytes before a Content-Length header: {}", marker,
                                      quoted(block.substr(0, marker)))};
    }
    consumed_ += block_size;
    return FramingError{fmt::format("header block without Content-Length skipped: {}", quoted(block))};
  }
  consumed_ += block_size;
  if (header.conflicting) {
    state_ = State::resync;
    return FramingError{"header block has conflicting Content-Length headers; resynchronising"};
  }

  std::string_view text = *header.value;
  bool digits_only = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  std::uint64_t length = 0;
  if (!digits_only || std::from_chars(text.data(), text.data() + text.size(), length).ec != std::errc{}) {
    // Without a trustworthy length the body's end is unknown: look for the
    // next header instead.
    state_ = State::resync;
    const char* why = !digits_only ? (text.starts_with('-') ? "is negative" : "is not a number")
                                   : "does not fit in 64 bits";
    return FramingError{fmt::format("Content-Length {} {}; resynchronising", quoted(text), why)};
  }
  if (length > limits_.max_skip_bytes) {
    // No client sends this much: a corrupt header. Skipping it would swallow
    // every later message, so look for the next header instead.
    state_ = State::resync;
    return FramingError{fmt::format("Content-Length {} is absurd; resynchronising", length)};
  }
  if (length > limits_.max_body_bytes) {
    state_ = State::skip;
    remaining_ = length;
    skip_length_ = length;
    skipped_request_ = {};
    return FramingError{fmt::format("Content-Length {} exceeds the limit of {}; skipping the body", length,
                                    size_text(limits_.max_body_bytes))};
  }
  state_ = State::body;
  remaining_ = length;
  body_length_ = length;
  if (make_sink_ && length >= limits_.sink_min_bytes) sink_ = make_sink_(static_cast<std::size_t>(length));
  return std::nullopt;
}

std::optional<FrameEvent> FrameReader::read_body() {
  if (sink_) {
    auto take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, buffered_bytes()));
    to_sink(unread().substr(0, take));
    consumed_ += take;
    if (remaining_ > 0) return NeedMoreBytes{};
    state_ = State::header;
    return FramedMessage{{}, std::move(sink_)};
  }
  std::string_view data = unread();
  if (data.size() < remaining_) return NeedMoreBytes{};
  auto length = static_cast<std::size_t>(remaining_);
  FramedMessage message;
  if (consumed_ == 0 && length >= kMoveBodyBytes) {
    // The body starts the buffer (feed() compacted it): hand the buffer over
    // rather than copy a large body, and keep only what follows it.
    std::string rest = buffer_.substr(length);
    buffer_.resize(length);
    message.body = std::move(buffer_);
    buffer_ = std::move(rest);
  } else {
    message.body.assign(data.substr(0, length));
    consumed_ += length;
  }
  remaining_ = 0;
  state_ = State::header;
  return message;
}

std::optional<FrameEvent> FrameReader::skip_body() {
  auto take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, buffered_bytes()));
  skipped(unread().substr(0, take));
  consumed_ += take;
  if (remaining_ > 0) return NeedMoreBytes{};
  state_ = State::header;
  return skip_finished();
}

std::optional<FrameEvent> FrameReader::resync() {
  std::string_view data = unread();
  std::size_t marker = ifind(data, kResyncMarker, 0);
  if (marker != std::string_view::npos) {
    consumed_ += marker;
    state_ = State::header;
    return std::nullopt;
  }
  // Keep a tail that could be the start of a marker split across feeds.
  std::size_t keep = kResyncMarker.size() - 1;
  if (data.size() > keep) consumed_ += data.size() - keep;
  return NeedMoreBytes{};
}

std::optional<FramingError> FrameReader::at_eof() {
  std::optional<FramingError> error;
  std::size_t pending = buffered_bytes();
  if (state_ == State::header && pending > 0) {
    error = FramingError{fmt::format("input ended inside a header block ({} bytes: {})", pending,
                                     quoted(unread()))};
  } else if (state_ == State::body) {
    std::uint64_t received = sink_ ? body_length_ - remaining_ : pending;
    error = FramingError{fmt::format("input ended after {} of {} body bytes", received, body_length_)};
  }
  // Skip and resync only drop bytes after an error already reported.
  FrameReader fresh(limits_, std::move(make_sink_));
  *this = std::move(fresh);
  return error;
}

std::string_view FrameReader::unread() const { return std::string_view(buffer_).substr(consumed_); }

void FrameReader::compact() {
  if (consumed_ == 0) return;
  buffer_.erase(0, consumed_);
  consumed_ = 0;
  // After a large body (fed without a sink) the buffer would keep its room
  // for good: give it back once little of it is used.
  if (buffer_.capacity() > kKeepBufferBytes && buffer_.size() < buffer_.capacity() / 4) buffer_.shrink_to_fit();
}

std::string frame(std::string_view body) {
  std::string out = fmt::format("Content-Length: {}\r\n\r\n", body.size());
  out.append(body);
  return out;
}

}  // namespace oomlens::lsp
