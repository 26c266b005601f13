// Where the device's memory was at the moment of the failure, as parts of a
// whole: drawn as a bar by the terminal and in editor hovers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/log/event.hpp"

namespace oomlens::rules {

struct MemoryPart {
  enum class Kind { allocated, reserved_unallocated, non_pytorch, other_processes, unaccounted, free };
  Kind kind;
  std::string label;
  std::uint64_t bytes;
};

struct MemoryBreakdown {
  std::uint64_t total = 0;         // the bar's whole: device total, else the sum of parts
  bool total_is_device = false;
  std::vector<MemoryPart> parts;   // in bar order, zero-sized parts left out
};

// The kind as a stable token (JSON `breakdown.parts[].kind`): "allocated",
// "reserved_unallocated", "non_pytorch", "other_processes", "unaccounted", "free".
const char* to_string(MemoryPart::Kind k);

// Empty parts when the message gives too little to draw (fewer than two parts).
MemoryBreakdown memory_breakdown(const analyzer::MemoryNumbers& n);

// One character per cell, each part at least one cell when non-zero:
// '█' allocated, '▓' reserved-unallocated, '▒' non-PyTorch, '░' other
// processes, '╌' unaccounted, ' ' free. Returns one entry per cell so callers
// can colour runs.
std::vector<MemoryPart::Kind> bar_cells(const MemoryBreakdown& b, std::size_t width);
const char* bar_glyph(MemoryPart::Kind k);

// The bar as plain text between brackets, e.g. "[████▓▓  ]".
std::string text_bar(const MemoryBreakdown& b, std::size_t width);

}  // namespace oomlens::rules
