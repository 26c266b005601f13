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
#include <re2/re2.h>

#include <optional>
#include <string>

#include <fmt/format.h>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/text.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

LogFinding pressure_at(const Line& line, std::string detail) {
  return finding_at(line, FindingKind::allocator_pressure, std::move(detail));  // neither message states a size
}

}  // namespace

std::optional<std::size_t> parse_pressure_warning(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  // DeepSpeed prints "pytorch"; other accelerators' builds of the same code may not.
  static const RE2 flushes(R"(\b(\d{1,19}) (?:\w+ )?allocator cache flushes since last step)", RE2::Latin1);
  static const RE2 bfc_gc(R"(Garbage collection: deallocate free memory regions)", RE2::Latin1);
  const FoldedText words(line.text);
  StringPiece count;
  if (words.has("cache flushes since last step") && RE2::PartialMatch(line.text, flushes, &count)) {
    out.findings.push_back(pressure_at(
        line, fmt::format("{} allocator cache flush(es) since the last step: PyTorch's caching allocator had to "
                          "free its cache and retry cudaMalloc (DeepSpeed)",
                          view(count))));
    return at;
  }
  if (words.has("deallocate free memory regions") && RE2::PartialMatch(line.text, bfc_gc)) {
    out.findings.push_back(pressure_at(
        line, "TensorFlow's BFC allocator freed cached regions to fit a larger one: running near the device "
              "memory limit (fragmentation)"));
    return at;
  }
  return std::nullopt;
}

}  // namespace oomlens::analyzer::parse
