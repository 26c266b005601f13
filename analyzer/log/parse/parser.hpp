// The parsers: one per message family. Each looks at an anchor line of a
// region and, when the line is its family's, turns it into an OomEvent or a
// LogFinding.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/log/event.hpp"
#include "analyzer/log/line.hpp"
#include "analyzer/log/stream.hpp"

namespace oomlens::analyzer::parse {

struct Parsed {
  std::vector<OomEvent> ooms;
  std::vector<LogFinding> findings;
  // An OOM's traceback ran into the region's first line: the region should
  // be read again with the full lookback (the stream reads a short way back
  // first, since most anchors need none).
  bool wants_longer_lookback = false;
};

// A parser reads region.lines[at] (and may read the lines after it, for
// wrapped or multi-line messages). When the line is its family's it appends
// what it found to `out` and returns the index of the last line it consumed;
// otherwise it returns nothing and appends nothing. Parsers leave
// `traceback` empty: parse_region attaches it.
using Parser = std::optional<std::size_t> (*)(const Region& region, std::size_t at, Parsed& out);

std::optional<std::size_t> parse_survived_oom(const Region&, std::size_t, Parsed&);       // survived_oom.cpp: an OOM the program got past
std::optional<std::size_t> parse_pytorch_allocator(const Region&, std::size_t, Parsed&);  // pytorch_allocator.cpp
std::optional<std::size_t> parse_cuda_malloc_async(const Region&, std::size_t, Parsed&);  // cuda_malloc_async.cpp
std::optional<std::size_t> parse_mps(const Region&, std::size_t, Parsed&);                // mps.cpp
std::optional<std::size_t> parse_cuda_library(const Region&, std::size_t, Parsed&);       // cuda_library.cpp: runtime/driver/THC/cuBLAS/cuDNN/NCCL
std::optional<std::size_t> parse_xla(const Region&, std::size_t, Parsed&);                // xla.cpp
std::optional<std::size_t> parse_tensorflow(const Region&, std::size_t, Parsed&);         // tensorflow.cpp
std::optional<std::size_t> parse_memory_summary(const Region&, std::size_t, Parsed&);     // memory_summary.cpp: torch.cuda.memory_summary()
std::optional<std::size_t> parse_allocator_notes(const Region&, std::size_t, Parsed&);    // allocator_notes.cpp: _use_uvm, INTERNAL ASSERT
std::optional<std::size_t> parse_pressure_warning(const Region&, std::size_t, Parsed&);   // pressure_warning.cpp
std::optional<std::size_t> parse_lookalike(const Region&, std::size_t, Parsed&);          // lookalike.cpp: host OOM kill, DataLoader, CPU alloc, illegal access, assert
std::optional<std::size_t> parse_generic_oom(const Region&, std::size_t, Parsed&);        // generic_oom.cpp: any other GPU runtime's OOM
std::optional<std::size_t> parse_collateral(const Region&, std::size_t, Parsed&);         // collateral.cpp: NCCL watchdog, ChildFailedError, SIGTERM/SIGKILL
std::optional<std::size_t> parse_allocator_setting(const Region&, std::size_t, Parsed&);  // allocator_setting.cpp

// DeepSpeed's count of cache flushes on its pressure warning, read by hand
// (pressure_warning.cpp); exposed for the test against its pattern.
std::optional<std::string_view> cache_flush_count(std::string_view text);

// Runs every parser over the region's anchor lines, in the order above (the
// first that claims a line wins), and attaches each OOM's traceback. The
// survived-OOM parser comes first (a retry note may quote a whole allocator
// message); the generic parser comes after every specific one and after the
// look-alikes, so it only sees wordings nobody else knows.
void parse_region(const Region& region, Parsed& out);

// Whether parse_region may set wants_longer_lookback for `region`: it can
// look further back, and at an anchor that may state an out-of-memory the
// walk up the traceback reaches the region's first line. Decided from the
// lines alone, without the parsers, so that a reader can hand every other
// region to another thread to parse. (True for more regions than the parse
// would be: the anchor need not turn out to be an OOM.)
bool may_want_longer_lookback(const Region& region);

// The anchor literals the scanner looks for (lower case; matched
// case-insensitively). Every parser's trigger text contains one of them.
const std::vector<std::string>& anchor_literals();  // anchors.cpp

// A bit per anchor literal (by index, as in Region::anchor_literals) that may
// belong to an out-of-memory statement; a line whose literals are all others
// can only be a finding.
std::uint64_t oom_literal_mask();  // anchors.cpp

// For each anchor literal, by index: its gate and how far around a hit the
// parsers read (see AnchorPolicy).
const std::vector<AnchorPolicy>& anchor_policies();  // anchors.cpp

}  // namespace oomlens::analyzer::parse
