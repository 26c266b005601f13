#include "analyzer/log/finding_groups.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace oomlens::analyzer {

std::string finding_cause(const LogFinding& f) {
  std::string key = fmt::format("{}|{}|", static_cast<int>(f.kind), f.file);
  // Collateral failures tell which ranks died because of an OOM: keep each
  // rank's apart.
  if (f.kind == FindingKind::collateral && f.rank) key += fmt::format("rank{}|", *f.rank);
  key.reserve(key.size() + f.detail.size());  // every finding of a long log passes here
  bool in_digits = false;
  for (char c : f.detail) {
    const bool digit = c >= '0' && c <= '9';
    if (digit && !in_digits) key.push_back('#');
    if (!digit) key.push_back(c);
    in_digits = digit;
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
  std::string key = finding_cause(f) + fmt::format("|{}", ooms_before);
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
