// Helpers the parsers share: events and findings placed at their anchor line,
// walking one rank's lines, joining wrapped lines, exact numbers, size
// captures, log prefixes and PyTorch's C10_CUDA_CHECK suffix.
#pragma once

#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/log/event.hpp"
#include "analyzer/log/line.hpp"
#include "analyzer/log/parse/parser.hpp"

namespace oomlens::analyzer::parse {

// -- text ---------------------------------------------------------------------

// Lines that may continue a message are judged by their start: patterns see at
// most this many bytes of them, so a hostile megabyte line costs no more.
inline constexpr std::size_t kHeadBytes = 512;

inline std::string_view head(std::string_view text) { return text.substr(0, kHeadBytes); }

// An RE2 capture as a string_view.
inline std::string_view view(re2::StringPiece sp) { return {sp.data(), sp.size()}; }

// Where `found`, a capture from a match on `text`, starts in `text`.
inline std::size_t pos_of(std::string_view text, re2::StringPiece found) {
  return static_cast<std::size_t>(found.data() - text.data());
}

// Caps a message kept for output (hostile logs can have megabyte lines).
std::string capped(std::string_view text, std::size_t max_bytes = 4096);

// The text before `needle` on the line that looks like a Python exception type
// ("torch.OutOfMemoryError", "RuntimeError"); empty when there is none.
std::string exception_before(std::string_view line, std::size_t needle_pos);

// -- numbers ------------------------------------------------------------------

// `digits` as a number only when all of it is one and it fits. Byte counts are
// read this way, never through a double (N > 2^53 would lose digits), and a
// figure too large to fit is absurd: none, never a wrapped value.
std::optional<std::uint64_t> exact_u64(std::string_view digits);
std::optional<int> exact_int(std::string_view digits);

// Reading "Key=value" fields by hand, where a pattern with a capture would make
// RE2 walk a long line up to three times (forward, back, then for the
// capture) on each of thousands of lines: each gives what an unanchored
// search for its pattern would capture at the leftmost match.
bool is_word_byte(char c);  // RE2's \w in Latin-1
bool is_digit_byte(char c);
// The run of `value` bytes (at least one) right after the first `key` that
// has one, which then continues with `then`: `key(\w+)then` for
// is_word_byte, `key(\d+)then` for is_digit_byte.
std::optional<std::string_view> value_after(std::string_view text, std::string_view key, bool (*value)(char),
                                            std::string_view then = {});

// A size as printed by PyTorch/TSL/MPS, for use inside RE2 patterns: captures
// the number and unit, e.g. "2.00 GiB", "512 bytes", "9.07 GB", "1.50GiB".
inline constexpr const char* kSizePattern = R"(([0-9]+(?:\.[0-9]+)?\s*(?:bytes|[KMGTP]i?B|B)))";

// The pattern `before`, a kSizePattern capture, `after`.
std::string sized(std::string_view before, std::string_view after = {});

// The size in the first capture of `re` (built with `sized`) when `re` matches
// `text`; none when it does not match or the capture is no size.
std::optional<std::uint64_t> size_of(std::string_view text, const RE2& re);

// The leftmost match of `anchored` ("^" then `literal` then the rest) in
// `text`, as an unanchored search for the pattern would find it: tried at
// each occurrence of the literal in turn. Anchored, RE2 reads a few dozen
// bytes from each place instead of walking the whole text, and reads the
// captures there rather than in a second pass over it.
template <typename... Out>
bool match_at_literal(std::string_view text, std::string_view literal, const RE2& anchored, Out*... out) {
  for (std::size_t at = text.find(literal); at != std::string_view::npos; at = text.find(literal, at + 1))
    if (RE2::PartialMatch(text.substr(at), anchored, out...)) return true;
  return false;
}

// size_of for a pattern that begins with `literal`, given anchored.
std::optional<std::uint64_t> size_at_literal(std::string_view text, std::string_view literal, const RE2& anchored);

// -- where events and findings are -------------------------------------------

// An event or finding placed at `line`: its number, offset, rank and time. The
// caller fills in what the message says; an event's end_line starts at `line`.
OomEvent event_at(const Line& line, OomFamily family);
LogFinding finding_at(const Line& line, FindingKind kind, std::string detail,
                      std::optional<std::uint64_t> bytes = std::nullopt);

// Appends `ev`, whose message ends on region.lines[last], and returns `last`:
// what the parser that read it returns.
std::size_t append_event(const Region& region, std::size_t last, OomEvent ev, Parsed& out);

// -- lines after the anchor ---------------------------------------------------

// The next line after `i` printed by `rank`. Other ranks' lines interleave and
// are skipped, unless one is an anchor: the walk stops there, so that its
// parser still gets it (parse_region skips every anchor up to the index a
// parser returns).
std::optional<std::size_t> next_line_of(const Region& region, std::size_t i, const std::optional<int>& rank);

// The message that starts on region.lines[at], joined with the lines after it
// while `complete(text)` is false (terminals and log wrappers cut long
// messages). Only lines of the same rank that do not start a new record
// (blank, "Traceback", a frame, an exception chain, a line with a timestamp
// of its own) are joined, at most
// `max_lines` in all. Lines are concatenated without a separator: a hard wrap
// splits words, so patterns allow optional whitespace between tokens.
// `last` receives the index of the last line used.
std::string joined_message(const Region& region, std::size_t at, std::size_t max_lines,
                           const std::function<bool(std::string_view)>& complete, std::size_t* last);

// -- framework output ---------------------------------------------------------

// Strips a TSL/glog line prefix ("I tensorflow/...bfc_allocator.cc:1036] ",
// "W0301 12:00:00.123456 4242 bfc_allocator.cc:479] ") from the front of
// `text`; `file`, when given, receives the source file it names. False, with
// `text` unchanged, when the line has none.
bool strip_log_prefix(std::string_view& text, std::string_view* file = nullptr);

// A line of what C10_CUDA_CHECK appends to a CUDA error (ROCm builds print
// the hipified text): 2.x starts with the "Search for `cudaError…'" help
// line, 1.13 ends the hint with a period.
bool is_c10_suffix(std::string_view text);

// The last line of that suffix after region.lines[at], printed by the same
// rank; `at` when none follows.
std::size_t c10_suffix_end(const Region& region, std::size_t at);

}  // namespace oomlens::analyzer::parse
