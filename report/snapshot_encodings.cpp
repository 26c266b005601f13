#include "report/snapshot_encodings.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/snapshot/pickle.hpp"

namespace oomlens::report {
namespace {

// Writes pickle opcodes (protocol 2) as JSON SAX events arrive: a container
// is EMPTY_DICT/EMPTY_LIST and MARK, its items, then SETITEMS/APPENDS.
class PickleWriter : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit PickleWriter(std::string& out) : out_(out) { out_ += "\x80\x02"; }

  bool null() override { return op('N'); }
  bool boolean(bool v) override { return op(v ? '\x88' : '\x89'); }
  bool number_integer(number_integer_t v) override {
    if (v >= INT32_MIN && v <= INT32_MAX) return op('J'), le(static_cast<std::uint32_t>(v), 4);
    return op('\x8a'), op('\x08'), le(static_cast<std::uint64_t>(v), 8);  // LONG1, 8 bytes two's complement
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (v <= INT32_MAX) return op('J'), le(v, 4);
    if (v <= static_cast<std::uint64_t>(INT64_MAX)) return op('\x8a'), op('\x08'), le(v, 8);
    return op('\x8a'), op('\x09'), le(v, 8), op('\0');  // above 2^63: a ninth byte keeps it positive
  }
  bool number_float(number_float_t v, const string_t&) override {
    op('G');
    const auto bits = std::bit_cast<std::uint64_t>(v);
    for (int i = 7; i >= 0; --i) out_ += static_cast<char>((bits >> (8 * i)) & 0xFF);  // big-endian
    return true;
  }
  bool string(string_t& v) override { return op('X'), le(v.size(), 4), out_.append(v), true; }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return op('}'), op('('); }
  bool key(string_t& v) override { return string(v); }
  bool end_object() override { return op('u'); }
  bool start_array(std::size_t) override { return op(']'), op('('); }
  bool end_array() override { return op('e'); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    error_ = fmt::format("not a valid JSON snapshot at byte {}: {}", position, e.what());
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  bool op(char c) {
    out_ += c;
    return true;
  }
  bool le(std::uint64_t v, int width) {
    for (int i = 0; i < width; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xFF);
    return true;
  }

  std::string& out_;
  std::string error_;
};

}  // namespace

SnapshotEncoding detect_encoding(std::string_view head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
    return SnapshotEncoding::gzip;
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (head[first] == '{' || head[first] == '[')) return SnapshotEncoding::json;
  return SnapshotEncoding::pickle;
}

bool gunzip(std::string_view in, std::string& out, std::string& error) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  const std::size_t limit = analyzer::snapshot::kMaxPickleBytes;
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) {  // 15 + 32: a gzip or zlib header, detected
    error = "gzip: cannot start zlib";
    return false;
  }
  auto fail = [&](std::string why) {
    inflateEnd(&z);
    error = std::move(why);
    return false;
  };
  std::size_t fed = 0;
  for (;;) {
    if (z.avail_in == 0 && fed < in.size()) {
      const std::size_t piece = std::min<std::size_t>(in.size() - fed, UINT_MAX);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + fed));
      z.avail_in = static_cast<uInt>(piece);
      fed += piece;
    }
    if (out.size() >= limit)
      return fail(fmt::format("gzip: decompresses to more than {} bytes, the most a snapshot may hold: refused", limit));
    const std::size_t before = out.size();
    const std::size_t room = std::min(kChunk, limit - before);
    out.resize(before + room);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.avail_out = static_cast<uInt>(room);
    const int status = inflate(&z, Z_NO_FLUSH);
    out.resize(before + room - z.avail_out);
    if (status == Z_STREAM_END) {
      if (z.avail_in == 0 && fed == in.size()) break;
      if (inflateReset(&z) != Z_OK) return fail("gzip: cannot read the next member");  // concatenated members
      continue;
    }
    if (status == Z_BUF_ERROR && z.avail_in == 0 && fed == in.size())
      return fail(fmt::format("gzip: truncated after {} compressed bytes", in.size()));
    if (status != Z_OK && status != Z_BUF_ERROR)
      return fail(fmt::format("gzip: corrupt stream at compressed byte {}: {}", z.total_in, z.msg ? z.msg : "?"));
  }
  inflateEnd(&z);
  return true;
}

bool json_to_pickle(std::string_view json, std::string& out, std::string& error) {
  out.reserve(json.size());
  PickleWriter writer(out);
  const bool ok = nlohmann::json::sax_parse(json.begin(), json.end(), &writer, nlohmann::json::input_format_t::json, true);
  if (!ok) {
    error = writer.error().empty() ? std::string("not a valid JSON snapshot") : writer.error();
    return false;
  }
  out += '.';
  return true;
}

}  // namespace oomlens::report
