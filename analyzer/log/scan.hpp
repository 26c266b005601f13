// The hot loop: finds anchor literals in raw log bytes and counts newlines,
// at close to memory bandwidth. Everything slower runs only near its hits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oomlens::analyzer {

namespace detail {
// The implementations behind scan() and count_newlines(). `best` is the
// fastest one this CPU runs; the others exist so tests can compare them and
// benchmarks can time them. A path this CPU (or build) lacks runs `scalar`.
enum class ScanPath { best, scalar, avx2, avx512 };
bool path_supported(ScanPath path);
std::size_t count_newlines(std::string_view buf, ScanPath path);
}  // namespace detail

struct ScanHit {
  std::size_t offset;     // where the literal starts in the scanned buffer
  std::uint32_t literal;  // index into the scanner's literal list
  // '\n' bytes in the scanned buffer before `offset`: the hit's line number
  // comes from the pass that found it, with no second count.
  std::size_t newlines_before = 0;
};

// Finds every occurrence of a fixed set of ASCII literals, case-insensitively,
// in one pass over a buffer, counting '\n' in the same pass.
//
// Implementation: a SIMD fingerprint filter (Teddy, as in Hyperscan and
// ripgrep) over a 5-byte window of each literal, then an exact check. Chosen
// because the diagnose benchmark must keep pace with `rg -c`; no Debian library
// offers multi-literal search at that speed without pulling in Hyperscan.
class LiteralScanner {
 public:
  // Literals are ASCII, at least 5 bytes, matched case-insensitively (only
  // A-Z/a-z fold). Throws std::invalid_argument for any other literal.
  explicit LiteralScanner(std::vector<std::string> literals);
  // Fingerprints planned for the filter of one path (the default plans for
  // the path `best` runs). Any plan finds the same hits on every path; it
  // only decides how often the filter hands a window to the exact check.
  LiteralScanner(std::vector<std::string> literals, detail::ScanPath planned_for);
  ~LiteralScanner();
  LiteralScanner(const LiteralScanner&) = delete;
  LiteralScanner& operator=(const LiteralScanner&) = delete;

  // Appends to `hits` every match that starts and ends inside `buf`, in
  // increasing offset order (several literals at one offset: each reported,
  // in increasing literal index).
  // Returns the number of '\n' bytes in `buf`.
  std::size_t scan(std::string_view buf, std::vector<ScanHit>& hits) const;
  // The same, on one particular implementation (tests, benchmarks).
  std::size_t scan(std::string_view buf, std::vector<ScanHit>& hits,
                   detail::ScanPath path) const;

  // How many window starts of `buf` the filter of `path` passes to the exact
  // check (true hits included): what the fingerprint plan costs on a text.
  std::size_t candidates(std::string_view buf, detail::ScanPath path) const;

  const std::vector<std::string>& literals() const { return literals_; }
  std::size_t longest() const { return longest_; }
  // Whether the fingerprint plan was made at build time: it is for exactly
  // parse::anchor_literals() (same strings, same order); any other list is
  // planned when its scanner is built, which takes milliseconds.
  bool plan_was_baked() const;

 private:
  struct Tables;
  std::vector<std::string> literals_;
  std::size_t longest_ = 0;
  Tables* tables_ = nullptr;
};

// Number of '\n' bytes in buf, vectorised.
std::size_t count_newlines(std::string_view buf);

}  // namespace oomlens::analyzer
