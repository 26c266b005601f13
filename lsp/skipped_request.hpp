// The id of a request whose body is too large to read: found while its bytes
// are skipped, so the client gets an answer instead of waiting forever.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oomlens::lsp {

// Reads a JSON body a piece at a time, keeping only the top-level "id" value
// (its JSON text, when a number or string of a few hundred bytes) and whether
// a top-level "method" key was seen. Memory stays a few hundred bytes, however
// large or deep the body; malformed JSON gives no id, never an error.
class SkippedRequestScanner {
 public:
  void feed(std::string_view bytes);
  // The id's JSON text, when the body is a request (it has a "method").
  std::optional<std::string> request_id() const;

 private:
  void end_value();

  std::uint64_t depth_ = 0;  // objects and arrays open
  bool in_string_ = false;
  bool escaped_ = false;
  bool expect_key_ = false;     // at depth 1: the next string is a key
  bool string_is_key_ = false;  // the string being read is a top-level key
  std::string key_;             // its first bytes
  bool key_is_id_ = false;      // the last top-level key was "id"
  bool capturing_ = false;      // reading the id's value
  std::string value_;
  std::optional<std::string> id_;
  bool has_method_ = false;
};

}  // namespace oomlens::lsp
