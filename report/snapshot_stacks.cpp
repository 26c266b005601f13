#include "report/snapshot_stacks.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace oomlens::report {

namespace snap = analyzer::snapshot;

ShownStack shown_stack(const snap::FrameList& frames, const snap::FoldedStack* folded, snap::MissingStack missing,
                       const StackStyle& style) {
  ShownStack shown;
  if (!frames || frames->empty()) {
    shown.heading = missing == snap::MissingStack::none
                        ? std::string("(no stack recorded)")
                        : fmt::format("(no stack recorded: {})", snap::describe(missing));
    return shown;
  }
  if (style.all_frames) {
    shown.frames = *frames;
    return shown;
  }
  snap::FoldedStack computed;
  if (!folded) {
    computed = snap::fold_stack(*frames);
    folded = &computed;
  }
  if (!folded->in_user_code)
    shown.heading = folded->lead.empty() ? "(only C++ frames: no Python stack, such as autograd's backward pass)"
                                         : "(no frame in your own code; the framework's frames)";
  const std::size_t n = std::min(style.max_frames, folded->lead.size());
  shown.frames.assign(folded->lead.begin(), folded->lead.begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<std::string> parts;
  if (folded->lead.size() > n)
    parts.push_back(fmt::format("{} more {}", folded->lead.size() - n, folded->in_user_code ? "of yours" : "framework"));
  if (folded->folded_native) parts.push_back(fmt::format("{} C++", folded->folded_native));
  if (folded->folded_framework) parts.push_back(fmt::format("{} framework", folded->folded_framework));
  if (parts.empty()) return shown;
  std::string list = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) list += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  shown.folded = fmt::format("+ {} frame{} folded", list, frames->size() - n == 1 ? "" : "s");
  return shown;
}

}  // namespace oomlens::report
