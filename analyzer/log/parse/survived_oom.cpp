// A GPU out-of-memory error the program caught and got past, as its own log
// line says: an OOM-retry loop ("CUDA out of memory on micro-batch 4;
// retrying with half the batch", "... recovered", "... skipping batch"), a
// library falling back after a failed device allocation. The run survived
// it: an allocator_pressure finding (an early warning that attaches to a
// later OOM), never an OOM event.
//
// Runs before every other parser: the line may carry a whole allocator
// message ("Tried to allocate ...") that would otherwise read as the failure.
// Only the line's own words count; help text about retries ("--retry-on-oom:
// if you run out of memory ...") is advice and nothing at all.
#include <optional>
#include <string_view>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/oom_context.hpp"
#include "analyzer/log/parse/parser.hpp"

namespace oomlens::analyzer::parse {

std::optional<std::size_t> parse_survived_oom(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  if (!is_survival_note(line.text)) return std::nullopt;
  auto pos = oom_statement(line.text);
  if (!pos) return std::nullopt;
  std::string_view body = line.text;
  if (strip_log_prefix(body)) pos = oom_statement(body);  // else the same text: the same answer
  if (!pos || is_mention(body, *pos)) return std::nullopt;
  if (!has_gpu_context(body) || is_host_memory(body) || is_code(body) || is_advice(body)) return std::nullopt;
  MemoryNumbers numbers;
  read_stated_sizes(body, numbers);
  out.findings.push_back(finding_at(line, FindingKind::allocator_pressure,
                                    "a GPU out-of-memory error was caught and the program went on (retry, skip or "
                                    "fallback): the run survived it, but memory is at its limit",
                                    numbers.requested));
  return at;
}

}  // namespace oomlens::analyzer::parse
