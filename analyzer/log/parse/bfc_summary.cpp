#include "analyzer/log/parse/bfc_summary.hpp"

#include <re2/re2.h>

#include "analyzer/log/parse/common.hpp"

namespace oomlens::analyzer::parse {

bool is_bfc_stats_header(std::string_view text) {
  static const RE2 re(R"(^\s*Stats:\s*$)", RE2::Latin1);
  return RE2::FullMatch(text, re);
}

bool read_bfc_stat(std::string_view text, MemoryNumbers& numbers) {
  static const RE2 re(
      R"(^\s*(Limit|InUse|MaxInUse|NumAllocs|MaxAllocSize|Reserved|PeakReserved|LargestFreeBlock):\s*(-?\d+)\s*$)",
      RE2::Latin1);
  re2::StringPiece key, value;
  if (!RE2::FullMatch(text, re, &key, &value)) return false;
  auto bytes = exact_u64(view(value));  // a negative or absurd figure is none
  if (key == "Limit") numbers.total = bytes;
  else if (key == "InUse") numbers.allocated = bytes;
  else if (key == "LargestFreeBlock") numbers.largest_free_block = bytes;
  return true;
}

bool is_bfc_occupancy_render(std::string_view text) {
  static const RE2 re(R"(^\s*[*x_]{8,}\s*$)", RE2::Latin1);
  return RE2::FullMatch(text, re);
}

}  // namespace oomlens::analyzer::parse
