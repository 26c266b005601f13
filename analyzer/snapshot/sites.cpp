#include "analyzer/snapshot/sites.hpp"

#include <algorithm>
#include <functional>
#include <string>

namespace oomlens::analyzer::snapshot {
namespace {

std::size_t lead_hash(const FoldedStack& folded) {
  std::size_t h = folded.in_user_code ? 0x51ed270b27ull : 0x9e3779b97f4a7c15ull;
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const Frame& f : folded.lead) {
    mix(std::hash<std::string>{}(f.filename));
    mix(std::hash<std::int64_t>{}(f.line));
    mix(std::hash<std::string>{}(f.name));
  }
  return h;
}

bool same_site(const FoldedStack& a, const FoldedStack& b) { return a.in_user_code == b.in_user_code && a.lead == b.lead; }

}  // namespace

std::size_t SiteGrouper::site_of(const FrameList& frames, MissingStack missing) {
  if (!frames || frames->empty()) {
    for (std::size_t i = 0; i < sites_.size(); ++i)
      if (sites_[i].missing == missing && (!sites_[i].frames || sites_[i].frames->empty())) return i;
    sites_.push_back({0, 0, frames, {}, missing});
    largest_.push_back(0);
    return sites_.size() - 1;
  }
  if (auto it = by_list_.find(frames.get()); it != by_list_.end()) return it->second;
  FoldedStack folded = fold_stack(*frames);
  const std::size_t hash = lead_hash(folded);
  std::size_t index = sites_.size();
  for (auto [lo, hi] = by_lead_.equal_range(hash); lo != hi; ++lo)
    if (same_site(sites_[lo->second].folded, folded)) {
      index = lo->second;
      break;
    }
  if (index == sites_.size()) {
    sites_.push_back({0, 0, frames, std::move(folded), MissingStack::none});
    largest_.push_back(0);
    by_lead_.emplace(hash, index);
  }
  by_list_.emplace(frames.get(), index);
  return index;
}

void SiteGrouper::add(const FrameList& frames, std::uint64_t bytes, MissingStack missing) {
  const std::size_t i = site_of(frames, missing);
  SiteFrames& site = sites_[i];
  site.bytes += bytes;
  ++site.count;
  if (bytes > largest_[i] && frames && !frames->empty() && frames != site.frames) {
    // The shown fold counts the frames of the stack kept, so both change together.
    site.frames = frames;
    const bool in_user = site.folded.in_user_code;
    site.folded = fold_stack(*frames);
    site.folded.in_user_code = in_user;
  }
  largest_[i] = std::max(largest_[i], bytes);
}

std::vector<SiteFrames> SiteGrouper::take(std::size_t top, std::size_t& total) {
  std::vector<SiteFrames> sites = std::move(sites_);
  std::stable_sort(sites.begin(), sites.end(), [](const SiteFrames& x, const SiteFrames& y) { return x.bytes > y.bytes; });
  total = sites.size();
  if (sites.size() > top) sites.resize(top);
  sites_.clear();
  largest_.clear();
  by_list_.clear();
  by_lead_.clear();
  return sites;
}

}  // namespace oomlens::analyzer::snapshot
