#include "analyzer/log/finding_groups.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>


namespace oomlens::analyzer {

namespace {

void append_number(std::string& out, long long n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

}  // namespace

// Every finding of a long log passes here (tens of thousands a GiB on logs
// full of look-alikes): one string, appended in runs, no formatting.
std::string finding_cause(const LogFinding& f) {
  std::string key;
  key.reserve(48 + f.detail.size());
  append_number(key, static_cast<int>(f.kind));
  key += '|';
  append_number(key, f.file);
  key += '|';
  // Collateral failures tell which ranks died because of an OOM: keep each
  // rank's apart.
  if (f.kind == FindingKind::collateral && f.rank) {
    key += "rank";
    append_number(key, *f.rank);
    key += '|';
  }
  // Numbers (pids, sizes, counts) vary between occurrences of one cause.
  const std::string_view detail = f.detail;
  std::size_t i = 0;
  while (i < detail.size()) {
    const std::size_t run = i;
    while (i < detail.size() && !(detail[i] >= '0' && detail[i] <= '9')) ++i;
    key.append(detail, run, i - run);
    if (i == detail.size()) break;
    key += '#';
    while (i < detail.size() && detail[i] >= '0' && detail[i] <= '9') ++i;
  }
  return key;
}

std::vector<LogFinding> merge_across_failures(std::vector<LogFinding> findings) {
  std::vector<LogFinding> merged;
  std::unordered_map<std::string, std::size_t> index;
  for (auto& f : findings) {
    if (f.kind == FindingKind::allocator_setting) {
      merged.push_back(std::move(f));
      continue;
    }
    auto [it, fresh] = index.try_emplace(finding_cause(f), merged.size());
    if (fresh) {
      merged.push_back(std::move(f));
      continue;
    }
    LogFinding& g = merged[it->second];
    const std::uint64_t f_last = f.count > 1 ? f.last_line : f.line;
    if (g.more_lines.size() < FindingGroups::kMoreLines) g.more_lines.push_back(f.line);
    for (auto l : f.more_lines)
      if (g.more_lines.size() < FindingGroups::kMoreLines) g.more_lines.push_back(l);
    g.count += f.count;
    g.last_line = std::max(g.last_line ? g.last_line : g.line, f_last);
  }
  return merged;
}

bool FindingGroups::add(LogFinding f, std::size_t ooms_before, std::size_t max_groups) {
  // Settings are context for the incident after them, each with its value:
  // never merged.
  if (f.kind == FindingKind::allocator_setting) {
    if (groups_.size() >= max_groups) return false;
    groups_.push_back(std::move(f));
    epochs_.push_back(ooms_before);
    return true;
  }
  std::string key = finding_cause(f);
  key += '|';
  append_number(key, static_cast<long long>(ooms_before));
  auto [it, fresh] = index_.try_emplace(std::move(key), groups_.size());
  if (!fresh) {
    // `f` may itself be a group (a segment's, see analyzer/log/segmented_log.hpp).
    LogFinding& g = groups_[it->second];
    g.count += f.count;
    g.last_line = f.count > 1 ? f.last_line : f.line;
    if (g.more_lines.size() < kMoreLines) g.more_lines.push_back(f.line);
    for (std::uint64_t line : f.more_lines)
      if (g.more_lines.size() < kMoreLines) g.more_lines.push_back(line);
    return true;
  }
  if (groups_.size() >= max_groups) {
    index_.erase(it);
    return false;
  }
  groups_.push_back(std::move(f));
  epochs_.push_back(ooms_before);
  return true;
}

}  // namespace oomlens::analyzer
