// Choosing the literal scanner's fingerprints: which 5-byte window of each
// literal the SIMD filter looks for, and in which of its 8 buckets.
//
// Planning costs tens of milliseconds, far more than a short scan, so the
// plan for the anchor literals is computed when oomlens is built
// (cmake/anchor_scan_plan.cpp writes it) and only other literal lists are
// planned when their scanner is built.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace oomlens::analyzer::scan_plan {

// Fingerprint length. With ~50 literals in 8 buckets, 3 bytes let one false
// candidate through every ~250 bytes of a real log, 4 bytes every ~800, 5
// bytes every ~12 KB; a sixth byte gained little and costs a lookup per step.
constexpr std::size_t kWindow = 5;
constexpr int kBuckets = 8;  // one bit of a class byte each

constexpr bool is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
constexpr unsigned char ascii_lower(unsigned char c) { return is_upper(c) ? c | 0x20 : c; }

// The filter's folding: x | 0x20 sends 'A'..'Z' onto 'a'..'z'. It also merges
// some punctuation pairs ('[' with '{', '_' with DEL) and control bytes with
// punctuation; that only admits extra candidates, which the check rejects.
// It touches only bit 1 of the high nibble, which is why it costs nothing in
// the loop: the high-nibble tables are simply filled for h and h | 2 alike.
constexpr unsigned char filter_fold(unsigned char c) { return c | 0x20; }

// A literal as the scanner holds it: lower case (only A-Z fold). Throws
// std::invalid_argument for a literal shorter than kWindow or not ASCII.
std::string fold_literal(std::string_view literal);

struct FingerprintChoice {
  std::size_t offset = 0;  // where the fingerprint window starts in the literal
  int bucket = 0;          // 0 .. kBuckets - 1
  bool operator==(const FingerprintChoice&) const = default;
};

// A window and a bucket per literal (folded, as fold_literal gives them), so
// that the expected number of candidates on training logs is small.
// `nibble_filter`: the scan will run on the AVX2 nibble tables, which let
// through every mix of a bucket's nibbles; otherwise on the exact byte
// classes (AVX-512 VBMI, scalar). Deterministic: the same input gives the
// same plan.
std::vector<FingerprintChoice> plan_fingerprints(const std::vector<std::string>& folded_literals,
                                                 bool nibble_filter);

// The plans of parse::anchor_literals(), computed at build time
// (scan_baked_plan.cpp includes what the generator wrote).
struct BakedPlan {
  std::span<const std::string_view> literals;  // as anchor_literals() gave them
  std::span<const FingerprintChoice> plan;     // one per literal
};
BakedPlan baked_anchor_plan(bool nibble_filter);

}  // namespace oomlens::analyzer::scan_plan
