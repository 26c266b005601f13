// libFuzzer target: any bytes as a memory snapshot. The reader must refuse
// what it cannot read, never crash, never run anything, never blow up.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyzer/snapshot/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto result = oomlens::analyzer::snapshot::parse_snapshot(std::string_view(reinterpret_cast<const char*>(data), size));
  (void)result;
  return 0;
}
