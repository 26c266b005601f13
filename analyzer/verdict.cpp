#include "analyzer/verdict.hpp"

namespace oomlens::analyzer {

using u64 = std::uint64_t;

const char* to_string(OomClass c) {
  switch (c) {
    case OomClass::fragmentation: return "fragmentation";
    case OomClass::capacity: return "capacity";
    case OomClass::external: return "external";
    case OomClass::limit: return "limit";
    case OomClass::unquantified: return "unquantified";
  }
  return "unquantified";
}

std::uint64_t rounding_slack(std::uint64_t printed) {
  // format_size: bytes up to 1 KiB exact; then KiB, MiB, GiB with 2 decimals.
  u64 unit = 1;
  for (u64 next = 1024; next <= (u64{1} << 30) && printed > next; next <<= 10) unit = next;
  return unit == 1 ? 0 : unit / 200 + 1;
}

}  // namespace oomlens::analyzer
