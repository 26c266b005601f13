#include "rules/source/cache_flushes.hpp"

#include <algorithm>

namespace oomlens::rules::source {

using analyzer::python::Call;
using analyzer::python::Node;
using analyzer::python::Script;

namespace {

// The device caches a script may flush; torch.cuda.memory.empty_cache and
// other re-exports resolve to these (Script::calls_to).
constexpr std::string_view kEmptyCacheNames[] = {"torch.cuda.empty_cache", "torch.mps.empty_cache",
                                                 "torch.xpu.empty_cache"};

}  // namespace

std::vector<std::pair<Call, std::string_view>> cache_flushes(const Script& s) {
  std::vector<std::pair<Call, std::string_view>> flushes;
  for (std::string_view name : kEmptyCacheNames)
    for (Call& call : s.calls_to(name)) flushes.emplace_back(std::move(call), name);
  std::sort(flushes.begin(), flushes.end(),
            [](const auto& a, const auto& b) { return a.first.range.begin < b.first.range.begin; });
  return flushes;
}

bool periodic_guard(const Script& s, Node node, Node stop) {
  for (const auto& g : s.guards(node, stop))
    if (g.condition && analyzer::python::periodic_condition(g.condition)) return true;
  return false;
}

}  // namespace oomlens::rules::source
