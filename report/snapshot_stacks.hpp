// How a recorded stack is shown, decided once for every format (text, JSON,
// HTML, the editor's Markdown): the user's frames first, then one line saying
// what was folded; or, without a stack, which known cause left it empty.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analyzer/snapshot/user_frames.hpp"

namespace oomlens::report {

struct ShownStack {
  std::string heading;  // before the frames, when they are not the user's ("no frame in your code")
  std::vector<analyzer::snapshot::Frame> frames;
  std::string folded;  // after them: "+ 24 C++ and 2 framework frames folded"; empty when nothing was
};

struct StackStyle {
  std::size_t max_frames = 4;  // of the lead; the rest are counted in `folded`
  bool all_frames = false;     // every frame as recorded, innermost first, nothing folded
};

// `folded` is the stack's fold when already computed (a site's), else null.
ShownStack shown_stack(const analyzer::snapshot::FrameList& frames, const analyzer::snapshot::FoldedStack* folded,
                       analyzer::snapshot::MissingStack missing, const StackStyle& style);

}  // namespace oomlens::report
