#include "lsp/skipped_request.hpp"

namespace oomlens::lsp {
namespace {

// Longer than any id a client sends; a longer value is not kept.
constexpr std::size_t kMaxIdBytes = 256;
// Enough of a key to tell "id" and "method" from longer keys.
constexpr std::size_t kKeyBytes = 7;

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

void SkippedRequestScanner::end_value() {
  capturing_ = false;
  std::string_view v = value_;
  while (!v.empty() && json_space(v.front())) v.remove_prefix(1);
  while (!v.empty() && json_space(v.back())) v.remove_suffix(1);
  if (!id_ && !v.empty() && (v.front() == '"' || v.front() == '-' || (v.front() >= '0' && v.front() <= '9')))
    id_ = std::string(v);
  value_.clear();
}

void SkippedRequestScanner::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (capturing_ && !in_string_ && depth_ == 1 && (c == ',' || c == '}')) {
      end_value();
    } else if (capturing_) {
      if (value_.size() < kMaxIdBytes) {
        value_ += c;
      } else {
        capturing_ = false;  // too long to be an id worth answering
        value_.clear();
      }
    }
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
        if (string_is_key_) {
          string_is_key_ = false;
          key_is_id_ = key_ == "id";
          if (key_ == "method") has_method_ = true;
        }
      } else if (string_is_key_ && key_.size() < kKeyBytes) {
        key_ += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        if (depth_ == 1 && expect_key_) {
          string_is_key_ = true;
          expect_key_ = false;
          key_.clear();
        }
        break;
      case '{':
      case '[':
        if (depth_ == 0 && c == '{') expect_key_ = true;
        ++depth_;
        break;
      case '}':
      case ']':
        if (depth_ > 0) --depth_;
        break;
      case ',':
        if (depth_ == 1) expect_key_ = true;
        break;
      case ':':
        if (depth_ == 1 && key_is_id_) {
          key_is_id_ = false;
          capturing_ = true;
          value_.clear();
        }
        break;
      default:
        break;
    }
  }
}

std::optional<std::string> SkippedRequestScanner::request_id() const {
  if (!has_method_) return std::nullopt;
  return id_;
}

}  // namespace oomlens::lsp
