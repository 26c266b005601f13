#include "report/probe_reports.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>

#include "report/files.hpp"

namespace oomlens::report {
namespace {

using nlohmann::json;
namespace verify = rules::verify;

template <class T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  // json's get<int> of a float out of the int's range is undefined behaviour.
  if constexpr (std::is_integral_v<T>)
    if (it->is_number_float()) throw std::runtime_error(std::string(key) + ": expected an integer, found " + it->dump());
  return it->get<T>();
}

std::string scalar_text(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

verify::DeviceMeasure device_of(const json& j) {
  verify::DeviceMeasure d;
  d.index = get_or<int>(j, "index", 0);
  d.name = get_or<std::string>(j, "name", "");
  d.total_memory = get_or<std::uint64_t>(j, "total_memory", 0);
  d.peak_reserved = get_or<std::uint64_t>(j, "peak_reserved", 0);
  d.peak_allocated = get_or<std::uint64_t>(j, "peak_allocated", 0);
  d.inactive_split_peak = get_or<std::uint64_t>(j, "inactive_split_peak", 0);
  d.num_alloc_retries = get_or<std::uint64_t>(j, "num_alloc_retries", 0);
  d.num_ooms = get_or<std::uint64_t>(j, "num_ooms", 0);
  return d;
}

}  // namespace

verify::ProcessMeasure parse_probe_report(const std::string& text) {
  json j = json::parse(text);  // throws on malformed JSON
  if (!j.is_object() || get_or<int>(j, "probe", 0) != 1) throw std::runtime_error("not a probe report of version 1");
  verify::ProcessMeasure p;
  p.pid = get_or<int>(j, "pid", 0);
  if (j.contains("rank") && j["rank"].is_number_integer()) p.rank = j["rank"].get<int>();
  p.reason = get_or<std::string>(j, "reason", "");
  p.torch_version = get_or<std::string>(j, "torch_version", "");
  p.cuda_initialized = get_or<bool>(j, "cuda_initialized", false);
  p.seconds = get_or<double>(j, "seconds", 0);
  p.snapshot = get_or<std::string>(j, "snapshot", "");
  if (auto it = j.find("env_at_cuda_init"); it != j.end() && it->is_object())
    p.env_at_cuda_init = it->get<std::map<std::string, std::string>>();
  for (const auto& d : j.value("devices", json::array())) p.devices.push_back(device_of(d));
  for (const auto& o : j.value("ooms", json::array()))
    p.ooms.push_back({get_or<int>(o, "device", 0), get_or<std::uint64_t>(o, "requested", 0),
                      get_or<double>(o, "seconds", 0)});
  if (auto it = j.find("allocator"); it != j.end() && it->is_object()) {
    p.allocator.backend = get_or<std::string>(*it, "backend", "");
    const json settings = it->value("settings", json::object());
    for (const auto& [key, value] : settings.items())
      if (!value.is_structured()) p.allocator.settings[key] = scalar_text(value);
    if (it->contains("expandable_segments_seen") && (*it)["expandable_segments_seen"].is_boolean())
      p.allocator.expandable_segments_seen = (*it)["expandable_segments_seen"].get<bool>();
  }
  return p;
}

ProbeReports read_probe_reports(const std::string& dir, const std::string& run) {
  ProbeReports out;
  const std::string prefix = "probe-" + run + "-";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".json")) continue;
    FileError error;
    const auto text = read_file(entry.path().string(), error);
    if (!text) {
      out.unreadable.push_back(error.message());
      continue;
    }
    try {
      out.processes.push_back(parse_probe_report(*text));
    } catch (const std::exception& e) {
      out.unreadable.push_back(entry.path().string() + ": " + e.what());
    }
  }
  std::sort(out.processes.begin(), out.processes.end(), [](const auto& x, const auto& y) {
    return std::pair(x.rank.value_or(1 << 30), x.pid) < std::pair(y.rank.value_or(1 << 30), y.pid);
  });
  return out;
}

}  // namespace oomlens::report
