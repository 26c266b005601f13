// Warnings that memory is tight before (or instead of) an OOM; each becomes an
// allocator_pressure finding:
//
//   DeepSpeed ZeRO-3, each step where PyTorch's num_alloc_retries grew (its
//   caching allocator freed its cached blocks and retried cudaMalloc):
//     "{n} pytorch allocator cache flushes since last step. this happens when there is
//      high memory pressure and is detrimental to performance. ..."
//   TF's BFC allocator, when it frees cached regions to fit a larger one:
//     "Garbage collection: deallocate free memory regions (i.e., allocations) so that we
//      can re-allocate a larger region to avoid OOM due to memory fragmentation. ..."
//
// (BFC's "not a failure" warning is read by tensorflow.cpp, stream_executor's
// "failed to allocate ... from device" by cuda_library.cpp.)
#include <optional>
#include <string>

#include <fmt/format.h>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/text.hpp"

namespace oomlens::analyzer::parse {
namespace {

LogFinding pressure_at(const Line& line, std::string detail) {
  return finding_at(line, FindingKind::allocator_pressure, std::move(detail));  // neither message states a size
}

// The 1-19 digits (a whole number, after a non-word byte or the line's start)
// that end right before `end`.
std::optional<std::string_view> count_ending_at(std::string_view text, std::size_t end) {
  std::size_t begin = end;
  while (begin > 0 && is_digit_byte(text[begin - 1])) --begin;
  if (begin == end || end - begin > 19 || (begin > 0 && is_word_byte(text[begin - 1]))) return std::nullopt;
  return text.substr(begin, end - begin);
}

}  // namespace

// DeepSpeed's count, as the pattern \b(\d{1,19}) (?:\w+ )?allocator cache
// flushes since last step would capture it at its leftmost match, read back
// from each place the words are: a ZeRO-3 run prints the warning at every
// step, and the pattern's capture made RE2 walk each line three times.
std::optional<std::string_view> cache_flush_count(std::string_view text) {
  constexpr std::string_view kWords = "allocator cache flushes since last step";
  for (std::size_t at = text.find(kWords); at != std::string_view::npos; at = text.find(kWords, at + 1)) {
    if (at == 0 || text[at - 1] != ' ') continue;
    const std::size_t space = at - 1;
    // "N pytorch allocator": a word between starts the match further left, so it wins.
    std::size_t word = space;
    while (word > 0 && is_word_byte(text[word - 1])) --word;
    if (word < space && word > 0 && text[word - 1] == ' ')
      if (auto count = count_ending_at(text, word - 1)) return count;
    if (auto count = count_ending_at(text, space)) return count;
  }
  return std::nullopt;
}

namespace {

}  // namespace

std::optional<std::size_t> parse_pressure_warning(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  // DeepSpeed prints "pytorch"; other accelerators' builds of the same code may not.
  const FoldedText words(line.text);
  if (words.has("cache flushes since last step"))
    if (const auto count = cache_flush_count(line.text)) {
      out.findings.push_back(pressure_at(
          line, fmt::format("{} allocator cache flush(es) since the last step: PyTorch's caching allocator had to "
                            "free its cache and retry cudaMalloc (DeepSpeed)",
                            *count)));
      return at;
    }
  if (words.has("deallocate free memory regions") &&
      line.text.find("Garbage collection: deallocate free memory regions") != std::string::npos) {
    out.findings.push_back(pressure_at(
        line, "TensorFlow's BFC allocator freed cached regions to fit a larger one: running near the device "
              "memory limit (fragmentation)"));
    return at;
  }
  return std::nullopt;
}

}  // namespace oomlens::analyzer::parse
