// Repeated findings of one kind and cause, kept as one: thousands of
// allocator-pressure warnings or DataLoader-worker tracebacks are one finding
// with a count, its first and last lines, and the lines of the first few
// occurrences. Memory stays bounded by the number of distinct causes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/log/event.hpp"

namespace oomlens::analyzer {

class FindingGroups {
 public:
  // How many occurrences after the first keep their line.
  static constexpr std::size_t kMoreLines = 4;

  // Adds `f`, found after `ooms_before` OOM events of its input: repeats
  // never merge across an OOM, so a group lies wholly before or after each
  // failure. `f` may be a group itself (count > 1), added after the groups
  // of the same cause that come before it. False when a new group would
  // exceed `max_groups`.
  bool add(LogFinding f, std::size_t ooms_before, std::size_t max_groups);

  std::vector<LogFinding> take() { return std::move(groups_); }
  // For each group taken, the `ooms_before` it was added with (call before take()).
  std::vector<std::size_t> take_epochs() { return std::move(epochs_); }
  std::size_t size() const { return groups_.size(); }

 private:
  std::vector<LogFinding> groups_;
  std::vector<std::size_t> epochs_;
  std::unordered_map<std::string, std::size_t> index_;
};

// The groups of one cause that FindingGroups kept apart on either side of an
// OOM, merged once the incidents have taken theirs: the findings a report
// lists, in the order of their first lines.
std::vector<LogFinding> merge_across_failures(std::vector<LogFinding> findings);

// The cause of a finding as grouping sees it: the kind and the detail with
// every run of digits read as one (pids, counts, sizes and sequence numbers
// differ between repeats of one cause); collateral failures per rank.
std::string finding_cause(const LogFinding& f);

}  // namespace oomlens::analyzer
