#include "report/json_text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string_view>

#if defined(__SSE2__) && !defined(OOMLENS_NO_SIMD)
#include <emmintrin.h>
#endif

#include "analyzer/utf8.hpp"

namespace oomlens::report {
namespace {

using nlohmann::json;

inline bool plain_byte(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// Appends to a string through a raw pointer: one call per piece of room
// instead of one per character.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out), used_(out.size()) {}
  // Streaming: what is written goes to `sink` whenever flush() finds a block's
  // worth, through `out` as a buffer of that size. Growing one string to the
  // size of a long report touched fresh pages all the way (a page fault each,
  // and a copy at each doubling): that was half the time after the analysis.
  Writer(std::string& out, std::ostream& sink) : out_(out), used_(0), sink_(&sink) { out_.resize(2 * kBlock); }
  ~Writer() {
    if (sink_) {
      sink_->write(out_.data(), static_cast<std::streamsize>(used_));
      used_ = 0;
    }
    out_.resize(used_);
  }
  // A place where nothing written is still to be taken back (no mark).
  void flush() {
    if (!sink_ || used_ < kBlock) return;
    sink_->write(out_.data(), static_cast<std::streamsize>(used_));
    used_ = 0;
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Room for n more bytes at at().
  char* room(std::size_t n) {
    if (out_.size() - used_ < n) grow(n);
    return out_.data() + used_;
  }
  void wrote(std::size_t n) { used_ += n; }
  void put(char c) {
    *room(1) = c;
    ++used_;
  }
  void put(std::string_view text) {
    std::memcpy(room(text.size()), text.data(), text.size());
    used_ += text.size();
  }
  // Forgets what was written after `mark`.
  std::size_t mark() const { return used_; }
  void back_to(std::size_t mark) { used_ = mark; }

 private:
  void grow(std::size_t n) { out_.resize(std::max(2 * out_.size(), used_ + n + 256)); }

  static constexpr std::size_t kBlock = 64 << 10;

  std::string& out_;
  std::size_t used_;  // the bytes written; out_ may be longer (room)
  std::ostream* sink_ = nullptr;
};

// A string as nlohmann escapes it. One that is not UTF-8 is left to
// nlohmann (what replaces what), as are floats below.
void write_string(Writer& out, const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t start = out.mark();
  out.put('"');
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t n = text.size();
  std::size_t i = 0;
  std::size_t run = 0;  // start of the bytes that go out as they are
  for (;;) {
#if defined(__SSE2__) && !defined(OOMLENS_NO_SIMD)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (i + 16 <= n) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                     _mm_cmplt_epi8(v, space));
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
      if (mask != 0) {
        i += static_cast<std::size_t>(__builtin_ctz(mask));
        break;
      }
      i += 16;
    }
#endif
    while (i < n && plain_byte(p[i])) ++i;
    if (i < n && p[i] >= 0x80) {
      int length = analyzer::utf8_sequence(p + i, n - i);
      if (length <= 0) {  // not UTF-8: nlohmann decides what replaces what
        out.back_to(start);
        out.put(json(text).dump(-1, ' ', false, json::error_handler_t::replace));
        return;
      }
      i += static_cast<std::size_t>(length);
      continue;
    }
    char* o = out.room(i - run + 6);
    char* const begin = o;
    std::memcpy(o, p + run, i - run);
    o += i - run;
    if (i < n) {
      unsigned char c = p[i++];
      *o++ = '\\';
      switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
          *o++ = 'u';
          *o++ = '0';
          *o++ = '0';
          *o++ = kHex[c >> 4];
          *o++ = kHex[c & 0xF];
      }
    }
    out.wrote(static_cast<std::size_t>(o - begin));
    run = i;
    if (i >= n) break;
  }
  out.put('"');
}

// nlohmann's layout: "{}" and "[]" when empty; else, pretty, each member or
// element on a line of its own, `": "` after a key.
void write_json(Writer& out, const json& value, int indent, std::size_t depth) {
  const bool pretty = indent >= 0;
  auto newline = [&](std::size_t level) {
    char* o = out.room(1 + level * static_cast<std::size_t>(indent));
    *o = '\n';
    std::memset(o + 1, ' ', level * static_cast<std::size_t>(indent));
    out.wrote(1 + level * static_cast<std::size_t>(indent));
  };
  switch (value.type()) {
    case json::value_t::object: {
      if (value.empty()) {
        out.put(std::string_view("{}"));
        return;
      }
      out.put('{');
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        out.flush();
        if (!first) out.put(',');
        first = false;
        if (pretty) newline(depth + 1);
        write_string(out, it.key());
        out.put(pretty ? std::string_view(": ") : std::string_view(":"));
        write_json(out, it.value(), indent, depth + 1);
      }
      if (pretty) newline(depth);
      out.put('}');
      return;
    }
    case json::value_t::array: {
      if (value.empty()) {
        out.put(std::string_view("[]"));
        return;
      }
      out.put('[');
      bool first = true;
      for (const auto& element : value) {
        out.flush();
        if (!first) out.put(',');
        first = false;
        if (pretty) newline(depth + 1);
        write_json(out, element, indent, depth + 1);
      }
      if (pretty) newline(depth);
      out.put(']');
      return;
    }
    case json::value_t::string: write_string(out, value.get_ref<const std::string&>()); return;
    case json::value_t::boolean: out.put(value.get<bool>() ? std::string_view("true") : std::string_view("false")); return;
    case json::value_t::null: out.put(std::string_view("null")); return;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: {
      char* o = out.room(24);
      auto [end, ec] = value.is_number_unsigned() ? std::to_chars(o, o + 24, value.get<std::uint64_t>())
                                                  : std::to_chars(o, o + 24, value.get<std::int64_t>());
      out.wrote(static_cast<std::size_t>(end - o));
      return;
    }
    default: {  // floats, binary, discarded: nlohmann's own text, moved in to this depth
      const std::string text = value.dump(indent, ' ', false, json::error_handler_t::replace);
      std::size_t from = 0;
      for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', nl + 1)) {
        out.put(std::string_view(text).substr(from, nl - from));
        newline(depth);
        from = nl + 1;
      }
      out.put(std::string_view(text).substr(from));
      return;
    }
  }
}

}  // namespace

void append_json_text(const json& value, std::string& out, int indent) {
  Writer writer(out);
  write_json(writer, value, indent, 0);
}

void write_json_text(std::ostream& out, const json& value, int indent) {
  std::string buffer;
  Writer writer(buffer, out);
  write_json(writer, value, indent, 0);
}

std::string json_text(const json& value, int indent) {
  std::string out;
  append_json_text(value, out, indent);
  return out;
}

}  // namespace oomlens::report
