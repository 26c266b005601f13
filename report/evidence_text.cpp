#include "report/evidence_text.hpp"

#include "analyzer/size.hpp"

namespace oomlens::report {

std::string evidence_size(const rules::Diagnosis& d, std::string_view name) {
  const auto bytes = d.evidence_of(name);
  return bytes ? analyzer::format_size(*bytes) : std::string("not recorded");
}

}  // namespace oomlens::report
