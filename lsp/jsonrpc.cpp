#include "lsp/jsonrpc.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "analyzer/hex.hpp"
#include "analyzer/utf8.hpp"
#include "report/json_text.hpp"

#if defined(__SSE2__) && !defined(OOMLENS_NO_SIMD)
#include <emmintrin.h>
#endif

namespace oomlens::lsp {
namespace {

using nlohmann::json;

bool valid_id(const json& id) { return id.is_number_integer() || id.is_string(); }

// Explicit null params are accepted as absent: some clients send
// "params": null for shutdown and exit.
bool valid_params(const json& message) {
  auto it = message.find("params");
  return it == message.end() || it->is_object() || it->is_array() || it->is_null();
}

json params_of(json& message) {
  auto it = message.find("params");
  return it == message.end() ? json() : std::move(*it);
}

// nlohmann's description without its "[json.exception...] " tag and the
// "; last read: '...'" tail, which echoes the offending (possibly invalid
// UTF-8) bytes back.
std::string describe(const json::parse_error& error) {
  std::string text = error.what();
  if (auto tail = text.find("; last read:"); tail != std::string::npos) text.erase(tail);
  if (text.starts_with("[json.exception")) {
    if (auto tag_end = text.find("] "); tag_end != std::string::npos) text.erase(0, tag_end + 2);
  }
  return text;
}

Message parse_response(json& message, const json& id, bool id_ok) {
  auto invalid = [&](std::string why) {
    return Invalid{id_ok ? id : json(), InvalidRequest, std::move(why), /*reply_owed=*/false};
  };
  bool has_result = message.contains("result");
  auto error_it = message.find("error");
  if (has_result == (error_it != message.end())) {
    return invalid("a response must have exactly one of \"result\" and \"error\"");
  }
  // An error response may carry a null id (the client could not read ours).
  bool null_id_ok = !has_result && message.contains("id") && message["id"].is_null();
  if (!id_ok && !null_id_ok) return invalid("a response needs an integer or string \"id\"");

  Response response{id_ok ? id : json(), nullptr, std::nullopt};
  if (has_result) {
    response.result = std::move(message["result"]);
    return response;
  }
  const json& error = *error_it;
  if (!error.is_object()) return invalid("\"error\" must be an object");
  auto code = error.find("code");
  auto text = error.find("message");
  if (code == error.end() || !code->is_number_integer()) return invalid("\"error.code\" must be an integer");
  if (text == error.end() || !text->is_string()) return invalid("\"error.message\" must be a string");
  // Codes are 32-bit in LSP; a wider one is kept saturated rather than rejected.
  auto wide = code->is_number_unsigned() ? static_cast<std::int64_t>(std::min<std::uint64_t>(code->get<std::uint64_t>(), INT32_MAX))
                                         : code->get<std::int64_t>();
  ResponseError parsed;
  parsed.code = static_cast<int>(std::clamp<std::int64_t>(wide, INT32_MIN, INT32_MAX));
  parsed.message = text->get<std::string>();
  if (auto data = error.find("data"); data != error.end()) parsed.data = *data;
  response.error = std::move(parsed);
  return response;
}

// ---- large strings -------------------------------------------------------
//
// nlohmann's lexer reads a byte at a time and grows its token a byte at a
// time: a didOpen of a 100 MiB log spends seconds there. Strings of at least
// kLargeStringBytes are instead validated and unescaped here, 16 bytes at a
// time, and the rest of the body (its "skeleton", where each large string is
// a placeholder) goes to nlohmann, whose tree then gets the strings back.
// Whatever is unusual (any error, a placeholder in a key, a string that
// happens to equal the placeholder) goes to nlohmann's whole-body parse, so
// results and errors stay nlohmann's.

#if !defined(__SSE2__) || defined(OOMLENS_NO_SIMD)
// Without SSE2, plain bytes go 8 at a time.
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;

// Whether one of 8 bytes needs a closer look: not ASCII, a control
// character, a backslash or a quote. (For ASCII bytes each test is exact
// about "some byte": the borrows that can make it name the wrong byte never
// make it see one that is not there.)
inline bool special_word(std::uint64_t w) {
  std::uint64_t control = (w - kOnes * 0x20) & ~w;
  std::uint64_t b = w ^ (kOnes * static_cast<unsigned char>('\\'));
  std::uint64_t q = w ^ (kOnes * static_cast<unsigned char>('"'));
  return ((w | control | ((b - kOnes) & ~b) | ((q - kOnes) & ~q)) & kHighs) != 0;
}
#endif

inline bool plain_byte(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// The value of 4 hex digits, or -1.
int hex4(const unsigned char* p) {
  int value = 0;
  for (int k = 0; k < 4; ++k) {
    int d = analyzer::hex_digit(p[k]);
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

enum class Step {
  end,        // at the closing quote
  need_more,  // the bytes so far are fine; the rest has not arrived
  invalid,    // not a JSON string
};

// Whether the first n (1 to 4) bytes at a and b are equal; four may be read at each.
inline bool same_prefix(const unsigned char* a, const unsigned char* b, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    std::uint32_t x, y;
    std::memcpy(&x, a, 4);
    std::memcpy(&y, b, 4);
    const std::uint32_t mask = n >= 4 ? 0xFFFFFFFFu : (1u << (8 * n)) - 1;
    return ((x ^ y) & mask) == 0;
  } else {
    return std::memcmp(a, b, n) == 0;
  }
}

// Room unescape_some needs past the JSON text it reads: a value is never
// longer than its text, but whole blocks are stored at once.
constexpr std::size_t kSlack = 16;

// Unescapes raw[pos, size), up to the string's closing quote, to out[w...],
// which must have room for (size - pos) + kSlack bytes. Leaves `pos` at the
// first byte it has not used (the closing quote at the end) and `w` after
// the last byte written.
Step unescape_some(const char* raw, std::size_t size, std::size_t& pos, char* out, std::size_t& w,
                   LineStartsBuilder* lines = nullptr) {
  const auto* p = reinterpret_cast<const unsigned char*>(raw);
  std::size_t i = pos;
  char* o = out + w;
  auto stop = [&](Step step) {
    pos = i;
    w = static_cast<std::size_t>(o - out);
    return step;
  };
  for (;;) {
    // Plain bytes go through a block at a time (stored before they are
    // looked at: what follows a special byte is overwritten or never used).
#if defined(__SSE2__) && !defined(OOMLENS_NO_SIMD)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (i + 16 <= size) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), v);
      // Signed: bytes from 0x80 up count as below 0x20 too.
      __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                     _mm_cmplt_epi8(v, space));
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
      if (mask != 0) {
        auto k = static_cast<std::size_t>(__builtin_ctz(mask));
        i += k;
        o += k;
        break;
      }
      i += 16;
      o += 16;
    }
#else
    while (i + 8 <= size) {
      std::uint64_t word;
      std::memcpy(&word, p + i, 8);
      if (special_word(word)) break;
      std::memcpy(o, &word, 8);
      i += 8;
      o += 8;
    }
#endif
    while (i < size && plain_byte(p[i])) *o++ = static_cast<char>(p[i++]);
    if (i >= size) return stop(Step::need_more);
    unsigned char c = p[i];
    if (c >= 0x80) {
      // Characters beyond ASCII tend to come in runs (progress bars, text
      // in other scripts): stay here for the run.
      do {
        int length = analyzer::utf8_sequence(p + i, size - i);
        if (length == 0) return stop(Step::invalid);
        if (length < 0) return stop(Step::need_more);
        // A run of one character (a progress bar's blocks) is validated
        // once: each repeat only compared with the one before it. Stored
        // four bytes at a time, within the slack.
        const auto n = static_cast<std::size_t>(length);
        if (i + 4 > size) {  // the last bytes here: no room to read four
          for (std::size_t k = 0; k < n; ++k) *o++ = static_cast<char>(p[i++]);
          continue;
        }
        do {
          std::memcpy(o, p + i, 4);
          o += n;
          i += n;
        } while (i + 4 <= size && same_prefix(p + i, p + i - n, n));
      } while (i < size && p[i] >= 0x80);
      continue;
    }
    if (c == '"') return stop(Step::end);
    if (c != '\\') return stop(Step::invalid);  // a control character
    if (i + 1 >= size) return stop(Step::need_more);
    std::size_t used = 2;
    switch (p[i + 1]) {
      case '"': *o++ = '"'; break;
      case '\\': *o++ = '\\'; break;
      case '/': *o++ = '/'; break;
      case 'b': *o++ = '\b'; break;
      case 'f': *o++ = '\f'; break;
      case 'n':
        if (lines) lines->line_end('\n', static_cast<std::size_t>(o - out));
        *o++ = '\n';
        break;
      case 'r':
        if (lines) lines->line_end('\r', static_cast<std::size_t>(o - out));
        *o++ = '\r';
        break;
      case 't': *o++ = '\t'; break;
      case 'u': {
        if (i + 6 > size) return stop(Step::need_more);
        int unit = hex4(p + i + 2);
        if (unit < 0) return stop(Step::invalid);
        auto cp = static_cast<std::uint32_t>(unit);
        used = 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return stop(Step::invalid);  // a low surrogate first
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // Must be followed by "\u" and a low surrogate.
          if ((i + 6 < size && p[i + 6] != '\\') || (i + 7 < size && p[i + 7] != 'u')) return stop(Step::invalid);
          if (i + 12 > size) return stop(Step::need_more);
          int low = hex4(p + i + 8);
          if (low < 0xDC00 || low > 0xDFFF) return stop(Step::invalid);
          cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<std::uint32_t>(low) - 0xDC00);
          used = 12;
        }
        if (lines && (cp == '\n' || cp == '\r')) lines->line_end(static_cast<char>(cp), static_cast<std::size_t>(o - out));
        o = analyzer::write_utf8(o, cp);
        break;
      }
      default: return stop(Step::invalid);
    }
    i += used;
  }
}

// Asks for transparent huge pages on a large buffer about to be written, and
// for its pages ahead of the writer: faulting in 100 MiB a 4 KiB page at a
// time costs more than copying it, and even huge pages faulted in one by one
// by the writes cost 10 to 250 ms here (each fault may compact memory),
// where MADV_POPULATE_WRITE takes about 6 ms of waiting and 25 ms of the
// kernel clearing pages. Those 25 ms run on a thread of their own, a few
// megabytes at a time (one call over the whole buffer would hold the memory
// map's lock while the reader's own allocations wait for it): the reader
// writes several times slower than pages are cleared, so the thread stays
// ahead of it. Kernels before 5.14 refuse the call; the pages then come as
// they are written. The returned thread must be joined before the buffer is
// freed or moved to other memory.
std::jthread advise_huge_pages(void* data, std::size_t size) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = 2u << 20;
  if (size < 2 * kHuge) return {};
  // The whole huge pages inside the buffer, found by offsets from its start.
  const auto address = reinterpret_cast<std::uintptr_t>(data);
  const std::size_t skip = (kHuge - address % kHuge) % kHuge;
  const std::size_t cut = (address + size) % kHuge;
  if (skip + cut >= size) return {};
  char* begin = static_cast<char*>(data) + skip;
  const std::size_t length = size - skip - cut;
  ::madvise(begin, length, MADV_HUGEPAGE);
  return std::jthread([begin, length] {
    constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE (Linux 5.14), absent from older headers
    constexpr std::size_t kStep = 2 * kHuge;
    for (std::size_t at = 0; at < length; at += kStep)
      if (::madvise(begin + at, std::min(kStep, length - at), kPopulateWrite) != 0) return;
  });
#else
  (void)data;
  (void)size;
  return {};
#endif
}

// What stands in the skeleton for a large string: the start of its JSON
// text (the closing quote follows as for any string), and the value nlohmann
// reads from it (which a real string could have too: then the count is off).
constexpr std::string_view kPlaceholderOpen = "\"\\u0000oomlens:large-string\\u0000";
constexpr char kPlaceholderBytes[] = "\0oomlens:large-string\0";
const std::string kPlaceholderValue(kPlaceholderBytes, sizeof kPlaceholderBytes - 1);

// Counts the placeholders of a skeleton (and checks that it is JSON).
struct PlaceholderCounter {
  std::size_t values = 0;
  std::size_t keys = 0;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const std::string&) { return true; }
  bool string(std::string& s) {
    values += s == kPlaceholderValue;
    return true;
  }
  bool binary(json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool key(std::string& s) {
    keys += s == kPlaceholderValue;
    return true;
  }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};

// How much of a body an IncrementalMessage holds at a time.
constexpr std::size_t kWindowBytes = 1 << 20;

// nlohmann reads it all.
Message parse_whole(std::string_view body);
Message classify(json message);

}  // namespace

// Reads a body a piece at a time, in order: copies what is not in a large
// string to the skeleton, unescapes the large strings. The pieces need not
// be kept: when something is wrong, the skeleton and the rest of the bytes
// rebuild a text that nlohmann refuses exactly as it would the body (each
// large string that was fine turns into a string of as many plain bytes,
// which keeps every line and column where it was).
class IncrementalMessage::Scanner {
 public:
  explicit Scanner(std::size_t length) : length_(length) {}

  // Reads data[0, size): first what the last call left unused, then the
  // next bytes. Returns how much it used; the rest (at most 11 bytes of an
  // escape or character cut off by the end of the data) comes first next time.
  std::size_t advance(const char* data, std::size_t size) {
    std::size_t i = advance_unchecked(data, size);
    offset_ += i;
    return i;
  }

  // After the whole body; `rest` is what advance() left unused.
  Message finish(std::string_view rest) {
    if (!failed_ && !in_string_ && rest.empty()) {
      if (large_.empty()) return parse_whole(skeleton_);  // the skeleton is the body
      PlaceholderCounter counter;
      if (json::sax_parse(skeleton_, &counter)) {
        if (counter.keys != 0 || counter.values != values_.size()) return parse_whole(rebuild_exact());
        // Each value keeps its bytes wherever it moves (into the tree, then
        // into a document): that is how a document finds its line starts.
        std::vector<StringLines> lines;
        for (std::size_t k = 0; k < values_.size(); ++k)
          lines.push_back({values_[k].data(), values_[k].size(), std::move(starts_[k])});
        std::size_t next = 0;
        json::parser_callback_t splice = [&](int, json::parse_event_t event, json& parsed) {
          if (event == json::parse_event_t::value && parsed.is_string() &&
              parsed.get_ref<const std::string&>() == kPlaceholderValue)
            parsed = std::move(values_[next++]);
          return true;
        };
        Message message = classify(json::parse(skeleton_, splice));
        if (auto* n = std::get_if<Notification>(&message)) n->string_lines = std::move(lines);
        return message;
      }
    }
    return parse_whole(rebuild_equivalent(rest));
  }

 private:
  struct Large {
    std::size_t offset;     // of its kPlaceholderOpen in the skeleton
    std::size_t raw_bytes;  // of its JSON text (once it ended)
  };

  std::size_t advance_unchecked(const char* data, std::size_t size) {
    if (failed_) {
      tail_.append(data, size);
      return size;
    }
    std::size_t i = 0;
    while (i < size) {
      if (!in_string_) {
        // Only strings hold quotes: outside them a quote starts one.
        const void* quote = std::memchr(data + i, '"', size - i);
        std::size_t end = quote ? static_cast<std::size_t>(static_cast<const char*>(quote) - data) + 1 : size;
        skeleton_.append(data + i, end - i);
        if (quote) {
          in_string_ = true;
          is_large_ = false;
          raw_len_ = 0;
          string_offset_ = offset_ + end;
          quote_at_ = skeleton_.size() - 1;
          value_len_ = 0;  // value_ keeps its size: room made once serves every small string
          lines_.reset();
        }
        i = end;
        continue;
      }
      // A string not known to be large yet is read a little past the point
      // where it would be (kSlack covers any escape cut off there), so that
      // a body of many small strings makes little room for each.
      std::size_t limit = is_large_ ? size : std::min(size, i + (kLargeStringBytes - raw_len_) + kSlack);
      // Grows only: the value's length is value_len_ until the string ends.
      std::size_t room = value_len_ + (limit - i) + kSlack;
      if (value_.size() < room) value_.resize(room);
      std::size_t pos = i;
      Step step = unescape_some(data, limit, pos, value_.data(), value_len_, &lines_);
      if (step == Step::invalid) {
        // nlohmann says what is wrong: keep the bytes from here as they are.
        failed_ = true;
        tail_.append(data + i, size - i);
        return size;
      }
      std::size_t used = pos - i;
      if (!is_large_ && raw_len_ + used >= kLargeStringBytes) {
        become_large();
      } else if (!is_large_) {
        skeleton_.append(data + i, used);
      }
      raw_len_ += used;
      i = pos;
      if (step == Step::need_more) {
        if (limit == size) break;
        continue;  // the string is large now: the rest of the data is its
      }
      skeleton_.push_back('"');  // the closing quote
      ++i;
      in_string_ = false;
      if (is_large_) {
        if (populating_.joinable()) populating_.join();  // before the buffer may shrink
        large_.back().raw_bytes = raw_len_;
        value_.resize(value_len_);
        if (value_.capacity() > 2 * value_.size() + 65536) value_.shrink_to_fit();
        values_.push_back(std::move(value_));
        value_ = std::string();
        starts_.push_back(std::move(lines_).finish());
      }
    }
    return i;
  }

  // The string read so far has kLargeStringBytes of JSON text: its value
  // stays out of the skeleton.
  void become_large() {
    skeleton_.resize(quote_at_);
    large_.push_back({skeleton_.size(), 0});
    skeleton_.append(kPlaceholderOpen);
    is_large_ = true;
    // The first is normally a document's text, and most of the body: room
    // for all of it at once (a value is never longer than its JSON text).
    std::size_t left = length_ > string_offset_ ? length_ - string_offset_ : 0;
    value_.reserve((large_.size() == 1 ? left : std::min(left, 4 * kLargeStringBytes)) + kSlack);
    // Lines of a log or a script average well over 32 bytes; room that is
    // never used is never touched, so it costs no memory.
    if (large_.size() == 1) lines_.reserve(left / 32 + 1);
    if (large_.size() == 1) populating_ = advise_huge_pages(value_.data(), value_.capacity());
  }

  // The skeleton with each large string written out again.
  template <typename Write>
  std::string rebuild(Write write) const {
    std::string out;
    std::size_t at = 0;
    for (std::size_t k = 0; k < large_.size(); ++k) {
      out.append(skeleton_, at, large_[k].offset - at);
      write(out, k);
      at = large_[k].offset + kPlaceholderOpen.size();
    }
    out.append(skeleton_, at);
    return out;
  }

  // A text with the body's values (the count of placeholders was off).
  std::string rebuild_exact() const {
    return rebuild([&](std::string& out, std::size_t k) {
      std::string text = json(values_[k]).dump();
      out.append(text, 0, text.size() - 1);  // the skeleton has the closing quote
    });
  }

  // A text nlohmann reads as it would the body: the same bytes where it
  // matters, and as many plain bytes in the large strings (none of which
  // held a raw line end, a control character).
  std::string rebuild_equivalent(std::string_view rest) const {
    std::string out = rebuild([&](std::string& o, std::size_t k) {
      bool open = k + 1 == large_.size() && in_string_ && is_large_;
      o.push_back('"');
      o.append(open ? raw_len_ : large_[k].raw_bytes, 'a');
    });
    out.append(tail_);
    out.append(rest);
    return out;
  }

  std::size_t length_;            // of the whole body
  std::size_t offset_ = 0;        // of the next byte advance() reads, in the body
  bool in_string_ = false;
  bool is_large_ = false;         // the current string is large
  std::size_t raw_len_ = 0;       // bytes of its JSON text read so far
  std::size_t string_offset_ = 0; // where its text starts in the body
  std::size_t quote_at_ = 0;      // where its opening quote is in the skeleton
  std::string value_;             // its value so far: value_len_ bytes (and room after them)
  std::size_t value_len_ = 0;
  LineStartsBuilder lines_;       // and where its lines start
  bool failed_ = false;           // something is not JSON: nlohmann reports it
  std::string skeleton_;
  std::string tail_;              // after a failure: the bytes from where it was found
  std::vector<Large> large_;
  std::vector<std::string> values_;
  std::vector<LineStarts> starts_;  // of each value
  // Faults in the first large value's pages (advise_huge_pages). Last, so
  // that it is joined before the buffers are freed.
  std::jthread populating_;
};

namespace {

Message parse_unchecked(std::string_view body) {
  if (body.size() < kFastPathBodyBytes) return parse_whole(body);
  IncrementalMessage::Scanner scanner(body.size());
  std::size_t used = scanner.advance(body.data(), body.size());
  return scanner.finish(body.substr(used));
}

Message parse_whole(std::string_view body) {
  json message;
  try {
    message = json::parse(body.begin(), body.end());
  } catch (const json::parse_error& error) {
    return Invalid{nullptr, ParseError, describe(error)};
  }
  return classify(std::move(message));
}

Message classify(json message) {
  if (!message.is_object()) {
    return Invalid{nullptr, InvalidRequest,
                   message.is_array() ? "batches are not supported by LSP" : "message is not a JSON object"};
  }

  json id;
  bool id_ok = false;
  if (auto it = message.find("id"); it != message.end() && valid_id(*it)) {
    id = *it;
    id_ok = true;
  }
  bool has_id = message.contains("id");
  auto method = message.find("method");
  bool is_response = method == message.end() && (message.contains("result") || message.contains("error"));

  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return Invalid{id_ok ? id : json(), InvalidRequest, "\"jsonrpc\" must be \"2.0\"", !is_response};
  }
  if (is_response) return parse_response(message, id, id_ok);
  if (method == message.end()) {
    return Invalid{id_ok ? id : json(), InvalidRequest, "message has no \"method\" (and is not a response)"};
  }
  if (!method->is_string()) return Invalid{id_ok ? id : json(), InvalidRequest, "\"method\" must be a string"};
  if (has_id && !id_ok) return Invalid{nullptr, InvalidRequest, "\"id\" must be an integer or a string"};
  if (!valid_params(message)) {
    return Invalid{id_ok ? id : json(), InvalidRequest, "\"params\" must be an object or an array"};
  }

  std::string name = method->get<std::string>();
  if (has_id) return Request{std::move(id), std::move(name), params_of(message)};
  return Notification{std::move(name), params_of(message), {}};
}

template <typename Parse>
Message parse_guarded(Parse parse) noexcept {
  try {
    return parse();
  } catch (const std::bad_alloc&) {
    return Invalid{nullptr, InternalError, "out of memory while reading the message"};
  } catch (const std::exception& error) {
    return Invalid{nullptr, InternalError, std::string("could not read the message: ") + error.what()};
  }
}

}  // namespace

Message parse_message(std::string_view body) noexcept {
  return parse_guarded([&] { return parse_unchecked(body); });
}

std::optional<std::string> unescape_json_string(std::string_view raw) {
  std::string out(raw.size() + kSlack, '\0');
  std::size_t pos = 0;
  std::size_t length = 0;
  Step step = unescape_some(raw.data(), raw.size(), pos, out.data(), length);
  out.resize(length);
  // All of it, up to where the closing quote would be: a quote before the
  // end is one nlohmann would not have let through, and need_more short of
  // the end is an escape or character cut off.
  if (step != Step::need_more || pos != raw.size()) return std::nullopt;
  return out;
}

IncrementalMessage::IncrementalMessage(std::size_t length)
    : length_(length), window_(new char[kWindowBytes]), scanner_(std::make_unique<Scanner>(length)) {}

IncrementalMessage::~IncrementalMessage() = default;

std::span<char> IncrementalMessage::space(std::size_t max) {
  std::size_t room = std::min({max, kWindowBytes - held_, length_ - received_});
  return {window_.get() + held_, room};
}

void IncrementalMessage::commit(std::size_t n) {
  n = std::min(n, length_ - received_);
  received_ += n;
  std::size_t size = held_ + n;
  std::size_t used = scanner_->advance(window_.get(), size);
  held_ = size - used;
  std::memmove(window_.get(), window_.get() + used, held_);
}

Message IncrementalMessage::finish() noexcept {
  return parse_guarded([&] { return scanner_->finish(std::string_view(window_.get(), held_)); });
}

json make_result(const RequestId& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error(const RequestId& id, int code, std::string_view message, std::optional<json> data) {
  json error{{"code", code}, {"message", message}};
  if (data) error["data"] = std::move(*data);
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

json make_notification(std::string_view method, json params) {
  json message{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return message;
}

json make_request(const RequestId& id, std::string_view method, json params) {
  json message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return message;
}

std::string serialize(const json& message) {
  std::string out;
  serialize_to(message, out);
  return out;
}

void serialize_to(const json& message, std::string& out) { report::append_json_text(message, out); }

}  // namespace oomlens::lsp
