// The pieces the snapshot pages share (one snapshot, two runs compared, a
// job's ranks): the page's head with its style and policy, its foot, and a
// stack or a list of sites drawn the same way on each.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/snapshot/sites.hpp"

namespace oomlens::report::html {

// <!DOCTYPE html> to the opening <body>; `title` is escaped.
void page_open(std::string& out, std::string_view title);
// The closing note and </html>.
void page_close(std::string& out, std::string_view made_from);

// The user's frames first, the rest folded into a <details> that opens
// without any script.
void frames_list(std::string& out, const analyzer::snapshot::FrameList& frames,
                 const analyzer::snapshot::FoldedStack* folded = nullptr,
                 analyzer::snapshot::MissingStack missing = analyzer::snapshot::MissingStack::none);

void sites_list(std::string& out, const std::vector<analyzer::snapshot::SiteFrames>& sites);

}  // namespace oomlens::report::html
