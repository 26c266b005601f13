#include <array>

#include "analyzer/parse/parser.hpp"
#include "analyzer/traceback.hpp"

namespace oomlens::analyzer::parse {

void parse_region(const Region& region, Parsed& out) {
  static constexpr std::array<Parser, 10> kParsers = {
      parse_pytorch_allocator, parse_cuda_malloc_async, parse_mps,      parse_cuda_library,
      parse_xla,               parse_tensorflow,        parse_pressure_warning, parse_lookalike,
      parse_collateral,        parse_allocator_setting};
  std::size_t consumed_until = 0;  // anchors at or below a claimed message's last line are its own
  bool consumed_any = false;
  for (std::size_t k = 0; k < region.anchors.size(); ++k) {
    std::size_t at = region.anchors[k];
    if (consumed_any && at <= consumed_until) continue;
    for (Parser parser : kParsers) {
      std::size_t before = out.ooms.size();
      if (auto last = parser(region, at, out)) {
        for (std::size_t k = before; k < out.ooms.size(); ++k) out.ooms[k].traceback = traceback_before(region, at);
        consumed_until = *last;
        consumed_any = true;
        break;
      }
    }
  }
}

}  // namespace oomlens::analyzer::parse
