// Allocation sites: live memory grouped by the user's frames of the stack it
// was allocated from. Two blocks allocated from the same Python call path are
// one site however their C++ frames differ (stacks="all" records the
// allocator's own path, which varies with the size and the stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/snapshot/model.hpp"
#include "analyzer/snapshot/user_frames.hpp"

namespace oomlens::analyzer::snapshot {

struct SiteFrames {
  std::uint64_t bytes = 0;
  std::size_t count = 0;
  FrameList frames;     // the whole stack of the site's largest block, as recorded
  FoldedStack folded;   // what is shown: the user's frames first, the rest counted
  MissingStack missing = MissingStack::none;  // why frames is empty
};

class SiteGrouper {
 public:
  // `missing` is read only when `frames` is empty: blocks without a stack are
  // grouped by why they have none.
  void add(const FrameList& frames, std::uint64_t bytes, MissingStack missing);
  // The sites holding the most bytes, most first; `total` gets how many there were.
  std::vector<SiteFrames> take(std::size_t top, std::size_t& total);

 private:
  std::size_t site_of(const FrameList& frames, MissingStack missing);

  std::vector<SiteFrames> sites_;
  std::vector<std::uint64_t> largest_;  // per site: its largest block, whose stack it keeps
  // PyTorch shares one frame list per stack: each list is folded once.
  std::unordered_map<const std::vector<Frame>*, std::size_t> by_list_;
  std::unordered_multimap<std::size_t, std::size_t> by_lead_;  // hash of the folded lead -> site
};

}  // namespace oomlens::analyzer::snapshot
