#include "rules/verify/setting_in_effect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "analyzer/alloc_conf.hpp"

namespace oomlens::rules::verify {
namespace {

std::string who(const ProcessMeasure& p) {
  return p.rank ? fmt::format("rank {} (pid {})", *p.rank, p.pid) : fmt::format("pid {}", p.pid);
}

void add(std::vector<std::string>& reasons, std::string line) {
  if (std::find(reasons.begin(), reasons.end(), line) == reasons.end()) reasons.push_back(std::move(line));
}

const std::string* setting(const ProcessMeasure& p, const std::string& key) {
  auto it = p.allocator.settings.find(key);
  return it == p.allocator.settings.end() ? nullptr : &it->second;
}

// One option against what the process read back; an empty string when it
// agrees or the process cannot tell, else why it is not in effect.
std::string option_mismatch(const ProcessMeasure& p, const analyzer::AllocOption& o) {
  const auto& backend = p.allocator.backend;
  if (o.key == "expandable_segments") {
    bool wanted = o.value == "True";
    if (wanted && backend == "cudaMallocAsync")
      return "expandable_segments is ignored by the cudaMallocAsync backend in effect";
    std::optional<bool> actual;
    if (const auto* s = setting(p, "expandable_segments")) actual = *s == "true";
    else if (p.allocator.expandable_segments_seen && wanted) actual = *p.allocator.expandable_segments_seen;
    if (actual && *actual != wanted)
      return fmt::format("PyTorch reports expandable_segments {} (this build or platform {})", *actual ? "on" : "off",
                         wanted ? "does not support it: Windows, or ROCm before 2.12" : "keeps it on");
    return {};
  }
  if (o.key == "max_split_size_mb") {
    const auto* s = setting(p, "max_split_size");
    char* end = nullptr;
    unsigned long long mb = std::strtoull(o.value.c_str(), &end, 10);
    if (!s || end == o.value.c_str()) return {};
    std::string wanted = std::to_string(mb << 20);
    if (*s != wanted)
      return fmt::format("PyTorch reports max_split_size {} bytes, not {} MiB", *s == "-1" ? "unlimited" : *s, mb);
    return {};
  }
  if (o.key == "backend" && !backend.empty() && backend != o.value)
    return fmt::format("PyTorch reports the {} backend, not {}", backend, o.value);
  if (o.key == "garbage_collection_threshold") {
    const auto* s = setting(p, "garbage_collection_threshold");
    if (s && std::abs(std::strtod(s->c_str(), nullptr) - std::strtod(o.value.c_str(), nullptr)) > 1e-9)
      return fmt::format("PyTorch reports garbage_collection_threshold {}, not {}", *s, o.value);
  }
  return {};
}

}  // namespace

SettingCheck check_setting(const RunMeasure& run, const std::string& variable, const std::string& value) {
  SettingCheck check;
  auto conf = analyzer::parse_alloc_conf(value, {variable});
  bool alloc_variable = analyzer::is_alloc_conf_variable(variable);
  for (const auto& problem : conf.problems)
    if (alloc_variable && problem.severity == analyzer::ConfSeverity::error)
      add(check.reasons, fmt::format("{}='{}' is not a valid setting: {}", variable, value, problem.message));
  if (!check.reasons.empty()) check.in_effect = false;

  for (const auto& p : run.processes) {
    if (!p.cuda_initialized) continue;
    if (p.env_at_cuda_init) {
      auto it = p.env_at_cuda_init->find(variable);
      if (it == p.env_at_cuda_init->end()) {
        check.in_effect = false;
        add(check.reasons, fmt::format("{} removed {} from its environment before CUDA started", who(p), variable));
      } else if (it->second != value) {
        check.in_effect = false;
        add(check.reasons, fmt::format("{} changed {} to '{}' before CUDA started", who(p), variable, it->second));
      }
    }
    if (!alloc_variable) continue;
    for (const auto& o : conf.options) {
      auto why = option_mismatch(p, o);
      if (why.empty()) continue;
      check.in_effect = false;
      add(check.reasons, fmt::format("{}: {}", who(p), why));
    }
  }
  if (check.in_effect && alloc_variable) {
    for (const auto& p : run.processes) {
      if (!p.cuda_initialized || !p.allocator.settings.empty() || !p.allocator.backend.empty()) continue;
      add(check.reasons, fmt::format("torch {} cannot report its allocator settings: in effect as far as the "
                                     "environment at CUDA start shows",
                                     p.torch_version.empty() ? "(unknown version)" : p.torch_version));
    }
  }
  return check;
}

}  // namespace oomlens::rules::verify
