// LSP base-protocol framing: "Content-Length: N\r\n\r\n" + N bytes of body.
//
// FrameReader is a push parser: the transport feeds whatever bytes arrived
// and pulls events. It never throws and never gives up on a stream: a bad
// header block is reported and skipped, and the reader finds the next message
// (the rest of the session should survive one buggy or truncated message).
// The events do not depend on how the bytes were split across feeds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "lsp/skipped_request.hpp"

namespace oomlens::lsp {

struct FrameLimits {
  // A larger body is reported and its bytes skipped, never buffered. Large
  // enough for the didOpen of a log of a couple of hundred MiB (its text is
  // JSON-escaped: every line end and ANSI escape grows); the server holds
  // other messages to a tighter limit once it knows what they are.
  std::size_t max_body_bytes = 256 * 1024 * 1024;
  // A header block is a few dozen bytes; this much without "\r\n\r\n" means
  // the stream is not LSP framing (or lost sync), so the reader resyncs.
  std::size_t max_header_bytes = 8 * 1024;
  // Larger still is not a big document but a corrupt header: resync instead
  // of skipping (which would swallow the rest of the session).
  std::uint64_t max_skip_bytes = std::uint64_t{1} << 30;
  // Bodies at least this large go to a BodySink, when the reader has a sink
  // factory, instead of the reader's buffer.
  std::size_t sink_min_bytes = 1 << 20;
};

// Takes a large body as it arrives, in place of the reader's buffer: the
// transport can read straight into it (FrameReader::direct_space), and the
// sink can work on the first bytes while the rest is still in the pipe.
class BodySink {
 public:
  virtual ~BodySink() = default;
  // Room for up to `max` more bytes of the body (never empty while bytes are
  // missing); valid until the next commit().
  virtual std::span<char> space(std::size_t max) = 0;
  // The first `n` bytes of the last space() now hold body bytes.
  virtual void commit(std::size_t n) = 0;
};
// Called with the body's length when a large body starts.
using BodySinkFactory = std::function<std::unique_ptr<BodySink>(std::size_t length)>;

// next() has nothing to give until more bytes are fed.
struct NeedMoreBytes {};
// One complete message body (normally JSON; not validated here): in `body`,
// or, for a body that went to a sink, in `sink`.
struct FramedMessage {
  std::string body;
  std::unique_ptr<BodySink> sink;
};
// Something in the stream was not valid framing and was skipped.
struct FramingError {
  explicit FramingError(std::string description, std::optional<std::string> skipped_request_id = std::nullopt)
      : description(std::move(description)), skipped_request_id(std::move(skipped_request_id)) {}
  std::string description;
  // The JSON text of the id of a request skipped for its size (read as its
  // bytes went by): that request is owed an error answer.
  std::optional<std::string> skipped_request_id;
};

using FrameEvent = std::variant<NeedMoreBytes, FramedMessage, FramingError>;

class FrameReader {
 public:
  explicit FrameReader(FrameLimits limits = {}, BodySinkFactory make_sink = {});

  // Appends bytes to the stream. Cheap; the parsing happens in next().
  void feed(std::string_view bytes);
  // Where the transport can read the next bytes without a copy: inside a
  // body that goes to a sink, the sink's own room (up to `max` bytes, never
  // past the body's end). Empty when the bytes should be fed instead. Call
  // after next() returned NeedMoreBytes; report what was read with
  // commit_direct(), then call next() as after feed().
  std::span<char> direct_space(std::size_t max);
  void commit_direct(std::size_t n);
  // The next message or error; NeedMoreBytes once everything fed is used up.
  // Call it until it returns NeedMoreBytes after each feed().
  FrameEvent next();
  // The input ended: reports a header block or body cut short (an error that
  // was already reported, such as an oversized body being skipped, is not
  // reported again). Call after next() returned NeedMoreBytes. Resets the
  // reader to its initial state.
  std::optional<FramingError> at_eof();

  // Bytes fed but not yet turned into events (for tests and diagnostics).
  std::size_t buffered_bytes() const { return buffer_.size() - consumed_; }
  // What the reader's buffer holds on to (for tests: it shrinks after a
  // large body).
  std::size_t buffer_capacity() const { return buffer_.capacity(); }

 private:
  enum class State {
    header,  // reading a header block up to "\r\n\r\n"
    body,    // reading `remaining_` bytes of body
    skip,    // discarding `remaining_` bytes of an oversized body
    resync,  // discarding bytes up to the next "Content-Length:"
  };

  // Each step returns an event, or nullopt when it moved to another state
  // and next() should go on.
  std::optional<FrameEvent> read_header();
  std::optional<FrameEvent> read_body();
  std::optional<FrameEvent> skip_body();
  std::optional<FrameEvent> resync();
  std::string_view unread() const;
  void compact();
  void to_sink(std::string_view bytes);
  void skipped(std::string_view bytes);
  std::optional<FrameEvent> skip_finished();

  FrameLimits limits_;
  BodySinkFactory make_sink_;
  std::unique_ptr<BodySink> sink_;  // the body being read, when it goes to a sink
  std::uint64_t body_length_ = 0;   // its Content-Length
  State state_ = State::header;
  std::string buffer_;
  std::size_t consumed_ = 0;      // bytes of buffer_ already turned into events
  std::size_t header_scanned_ = 0;  // bytes of the header block searched for its end
  std::uint64_t remaining_ = 0;   // body bytes to read or skip
  std::uint64_t skip_length_ = 0;  // the Content-Length of the body being skipped
  SkippedRequestScanner skipped_request_;  // its id, if it is a request
  bool skip_done_in_feed_ = false;  // a skip ended in feed(): next() reports it
};

// The bytes that carry `body` as one LSP message.
std::string frame(std::string_view body);

}  // namespace oomlens::lsp
