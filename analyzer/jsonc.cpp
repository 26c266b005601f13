#include "analyzer/jsonc.hpp"

#include "analyzer/config/literal_builder.hpp"
#include "analyzer/utf8.hpp"

namespace oomlens::analyzer::jsonc {

const JValue* JValue::member(std::string_view key) const {
  for (const auto& m : members)
    if (m.key.text.value == key) return &m.value;
  return nullptr;
}

namespace {

using config::LiteralBuilder;

class Reader {
 public:
  explicit Reader(std::string_view t) : t_(t) {}

  std::optional<JValue> document() {
    auto v = value(0);
    space();
    if (!v || i_ != t_.size()) return std::nullopt;
    return v;
  }

 private:
  void space() {
    while (i_ < t_.size()) {
      char c = t_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++i_;
      } else if (t_.substr(i_, 2) == "//") {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (t_.substr(i_, 2) == "/*") {
        auto e = t_.find("*/", i_ + 2);
        i_ = e == std::string_view::npos ? t_.size() : e + 2;
      } else {
        return;
      }
    }
  }

  std::optional<JValue> value(int depth) {
    if (depth > 256) return std::nullopt;
    space();
    if (i_ >= t_.size()) return std::nullopt;
    char c = t_[i_];
    if (c == '{') return container(depth, true);
    if (c == '[') return container(depth, false);
    if (c == '"') return string();
    JValue v;
    v.begin = i_;
    while (i_ < t_.size() && std::string_view(",}] \t\r\n/").find(t_[i_]) == std::string_view::npos) ++i_;
    if (i_ == v.begin) return std::nullopt;
    v.end = i_;
    return v;
  }

  std::optional<JValue> container(int depth, bool object) {
    JValue v;
    v.kind = object ? JValue::Kind::object : JValue::Kind::array;
    v.begin = i_++;
    char close = object ? '}' : ']';
    for (;;) {
      space();
      if (i_ < t_.size() && t_[i_] == close) break;  // also after a trailing comma
      if (object) {
        if (i_ >= t_.size() || t_[i_] != '"') return std::nullopt;
        auto key = string();
        if (!key) return std::nullopt;
        space();
        if (i_ >= t_.size() || t_[i_] != ':') return std::nullopt;
        ++i_;
        auto val = value(depth + 1);
        if (!val) return std::nullopt;
        v.members.push_back({std::move(*key), std::move(*val)});
      } else {
        auto val = value(depth + 1);
        if (!val) return std::nullopt;
        v.items.push_back(std::move(*val));
      }
      space();
      if (i_ < t_.size() && t_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < t_.size() && t_[i_] == close) break;
      return std::nullopt;
    }
    v.end = ++i_;
    return v;
  }

  std::optional<std::uint32_t> hex4(std::size_t at) const {
    if (at + 4 > t_.size()) return std::nullopt;
    std::uint32_t v = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
      char c = t_[k];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + static_cast<std::uint32_t>(d);
    }
    return v;
  }

  std::optional<JValue> string() {
    JValue v;
    v.kind = JValue::Kind::string;
    v.begin = i_++;
    LiteralBuilder b;
    while (i_ < t_.size() && t_[i_] != '"') {
      if (t_[i_] == '\n') return std::nullopt;
      if (t_[i_] != '\\') {
        b.verbatim(i_, t_.substr(i_, 1));
        ++i_;
        continue;
      }
      if (i_ + 1 >= t_.size()) return std::nullopt;
      char e = t_[i_ + 1];
      std::string bytes;
      std::size_t len = 2;
      switch (e) {
        case '"': case '\\': case '/': bytes = e; break;
        case 'b': bytes = "\b"; break;
        case 'f': bytes = "\f"; break;
        case 'n': bytes = "\n"; break;
        case 'r': bytes = "\r"; break;
        case 't': bytes = "\t"; break;
        case 'u': {
          auto cp = hex4(i_ + 2);
          if (!cp) return std::nullopt;
          len = 6;
          if (*cp >= 0xD800 && *cp < 0xDC00 && t_.substr(i_ + 6, 2) == "\\u") {
            auto lo = hex4(i_ + 8);
            if (lo && *lo >= 0xDC00 && *lo < 0xE000) {
              cp = 0x10000 + ((*cp - 0xD800) << 10) + (*lo - 0xDC00);
              len = 12;
            }
          }
          append_utf8(bytes, *cp);
          break;
        }
        default: return std::nullopt;
      }
      b.decoded(i_, i_ + len, bytes);
      i_ += len;
    }
    if (i_ >= t_.size()) return std::nullopt;
    v.end = ++i_;
    v.text = b.finish(v.begin, v.end);
    return v;
  }

  std::string_view t_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<JValue> parse(std::string_view text) { return Reader(text).document(); }

}  // namespace oomlens::analyzer::jsonc
