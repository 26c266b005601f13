// Teddy, the SIMD multi-literal filter of Hyperscan and ripgrep, cut down to
// what the log scan needs: up to 8 buckets, a 5-byte fingerprint per literal,
// ASCII case folding, and newline counting fused into the same loop.
//
// How it works. Every literal gets a 5-byte window (its fingerprint) and a
// bucket (a bit 0..7). For window position j and input byte x,
//   class_j(x) = lo[j][x & 15] & hi[j][x >> 4]
// is the set of buckets whose fingerprint byte j may be x. Position p is a
// candidate for the buckets in class_0(b[p]) & ... & class_4(b[p+4]);
// pshufb computes a class for 32 bytes in one instruction (AVX2), vpermi2b
// even the exact 128-entry class of 64 bytes (AVX-512 VBMI), so the filter
// costs a few instructions per 32 or 64 bytes. Each candidate is then
// checked exactly against the literals of its buckets.
//
// The filter only ever over-approximates (nibble tables accept every
// combination of the nibbles put in them), so exactness rests on the check.
#include "analyzer/log/scan.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "analyzer/log/scan_planner.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define OOMLENS_SCAN_X86 1
// The hot functions are compiled for these extensions and chosen at run time,
// so the binary still runs on a plain x86-64.
#define OOMLENS_TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))
#define OOMLENS_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vbmi,avx2,bmi,bmi2,popcnt")))
#endif

namespace oomlens::analyzer {
namespace {

using detail::ScanPath;
using scan_plan::ascii_lower;
using scan_plan::filter_fold;
using scan_plan::FingerprintChoice;
using scan_plan::is_lower;
using scan_plan::is_upper;
using scan_plan::kBuckets;
using scan_plan::kWindow;

std::size_t count_newlines_scalar(const std::uint8_t* p, std::size_t n);

// The number of '\n' before a position, moved from a position where it is
// known. Hits come in window order, so moves are short: forward to the next
// hit, or back by less than a literal's length.
struct NewlineCursor {
  std::size_t pos = 0;    // a position in the buffer...
  std::size_t count = 0;  // ...and the newlines before it
  std::size_t at(const std::uint8_t* buf, std::size_t target) {
    if (target >= pos) count += count_newlines_scalar(buf + pos, target - pos);
    else count -= count_newlines_scalar(buf + target, pos - target);
    pos = target;
    return count;
  }
};

// ---------------------------------------------------------------------------
// Tables and the exact check

class Teddy {
 public:
  // `nibble_filter`: the scan will mostly run on the AVX2 tables (see
  // scan_plan::plan_fingerprints). The anchor literals come with their plan
  // made at build time; any other list is planned here.
  Teddy(const std::vector<std::string>& literals, bool nibble_filter) {
    for (const std::string& lit : literals) add_literal(lit);
    const scan_plan::BakedPlan baked = scan_plan::baked_anchor_plan(nibble_filter);
    baked_ = std::equal(literals.begin(), literals.end(), baked.literals.begin(), baked.literals.end());
    const std::vector<FingerprintChoice> plan =
        baked_ ? std::vector<FingerprintChoice>(baked.plan.begin(), baked.plan.end())
               : scan_plan::plan_fingerprints(folded_, nibble_filter);
    fill_tables(plan);
    fill_buckets(plan);
  }

  bool empty() const { return folded_.empty(); }
  bool baked() const { return baked_; }

  // Nibble tables per window position, 16 bytes each (pshufb's table size).
  alignas(16) std::uint8_t lo[kWindow][16] = {};
  alignas(16) std::uint8_t hi[kWindow][16] = {};
  // The exact class of every byte, case folded only for letters (the nibble
  // tables accept more), for the scalar path and the 128-entry lookups of
  // AVX-512 VBMI. Bytes >= 0x80 are in no class.
  alignas(64) std::uint8_t byte_class[kWindow][256] = {};

  // Reports the literals of `buckets` whose window starts at `pos` and that
  // lie wholly inside buf[0, n) and match it, each with the newlines before
  // it (from `lines`, which knows the count at some nearby position). Out of
  // line: candidates are rare, and the SIMD loops stay small without it.
  [[gnu::noinline]] void verify(const std::uint8_t* buf, std::size_t n, std::size_t pos,
                                unsigned buckets, NewlineCursor& lines,
                                std::vector<ScanHit>& hits) const {
    do {
      const int b = std::countr_zero(buckets);
      buckets &= buckets - 1;
      for (std::uint32_t k = bucket_begin_[b]; k < bucket_begin_[b + 1]; ++k) {
        const Entry& e = entries_[k];
        if (pos < e.window) continue;
        const std::size_t start = pos - e.window;
        if (folded_[e.literal].size() > n - start) continue;
        if (matches(buf + start, e.literal)) hits.push_back(ScanHit{start, e.literal, lines.at(buf, start)});
      }
    } while (buckets != 0);
  }

 private:
  struct Entry {
    std::uint32_t literal;  // index in the scanner's list
    std::uint32_t window;   // where its fingerprint starts in the literal
  };

  void add_literal(const std::string& lit) {
    folded_.push_back(scan_plan::fold_literal(lit));  // throws for a literal it cannot scan for
    std::string fold_bits;
    for (char ch : lit) {
      const auto c = static_cast<unsigned char>(ch);
      fold_bits.push_back(static_cast<char>(is_upper(c) || is_lower(c) ? 0x20 : 0));
    }
    fold_bits_.push_back(std::move(fold_bits));
  }

  void fill_tables(const std::vector<FingerprintChoice>& plan) {
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const auto bit = static_cast<std::uint8_t>(1u << plan[i].bucket);
      for (std::size_t j = 0; j < kWindow; ++j) {
        const auto want = static_cast<unsigned char>(folded_[i][plan[i].offset + j]);
        const unsigned char c = filter_fold(want);
        lo[j][c & 15] |= bit;
        // Both h and h with bit 1 clear fold to c's high nibble.
        hi[j][c >> 4] |= bit;
        hi[j][(c >> 4) & ~2u] |= bit;
        for (unsigned x = 0; x < 0x80; ++x) {
          if (ascii_lower(static_cast<unsigned char>(x)) == want) byte_class[j][x] |= bit;
        }
      }
    }
  }

  void fill_buckets(const std::vector<FingerprintChoice>& plan) {
    for (int b = 0; b < kBuckets; ++b) {
      bucket_begin_[b] = static_cast<std::uint32_t>(entries_.size());
      for (std::size_t i = 0; i < plan.size(); ++i) {
        if (plan[i].bucket == b) {
          entries_.push_back(Entry{static_cast<std::uint32_t>(i),
                                   static_cast<std::uint32_t>(plan[i].offset)});
        }
      }
    }
    bucket_begin_[kBuckets] = static_cast<std::uint32_t>(entries_.size());
  }

  // ASCII case-insensitive: a letter of the literal matches with or without
  // bit 0x20, and no non-letter can turn into a lower-case letter that way.
  bool matches(const std::uint8_t* text, std::uint32_t literal) const {
    const std::string& want = folded_[literal];
    const std::string& fold = fold_bits_[literal];
    for (std::size_t i = 0; i < want.size(); ++i) {
      if ((text[i] | static_cast<unsigned char>(fold[i])) != static_cast<unsigned char>(want[i])) {
        return false;
      }
    }
    return true;
  }

  std::vector<std::string> folded_;     // literals, lower case
  std::vector<std::string> fold_bits_;  // 0x20 where the literal has a letter
  std::vector<Entry> entries_;          // grouped by bucket
  std::uint32_t bucket_begin_[kBuckets + 1] = {};
  bool baked_ = false;  // the plan was made at build time
};

// ---------------------------------------------------------------------------
// Scalar paths (any CPU; also the tails of the SIMD loops)

// Eight bytes at a time: per-byte counters in a word, summed every 255 words
// so that none can overflow.
std::size_t count_newlines_scalar(const std::uint8_t* p, std::size_t n) {
  constexpr std::uint64_t kOnes = 0x0101010101010101u;
  constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Fu;
  constexpr std::uint64_t kEvenBytes = 0x00FF00FF00FF00FFu;
  std::size_t total = 0, i = 0;
  while (n - i >= 8) {
    const std::size_t words = std::min<std::size_t>((n - i) / 8, 255);
    std::uint64_t counts = 0;
    for (std::size_t w = 0; w < words; ++w, i += 8) {
      std::uint64_t x;
      std::memcpy(&x, p + i, 8);
      x ^= kOnes * '\n';
      // The high bit of each byte of t is clear exactly where x has a 0 byte
      // (no carry crosses bytes: 0x7F + 0x7F < 0x100).
      const std::uint64_t t = ((x & kLow7) + kLow7) | x;
      counts += (~t >> 7) & kOnes;
    }
    const std::uint64_t pairs = (counts & kEvenBytes) + ((counts >> 8) & kEvenBytes);
    total += (pairs * 0x0001000100010001u) >> 48;
  }
  for (; i < n; ++i) total += p[i] == '\n';
  return total;
}

// Window starts from `from` on, and newlines in buf[from, n).
// `newlines` is the count before `from`.
std::size_t scan_scalar(const Teddy& t, const std::uint8_t* buf, std::size_t n,
                        std::size_t from, std::size_t newlines, std::vector<ScanHit>& hits) {
  NewlineCursor lines{from, newlines};
  for (std::size_t p = from; p + kWindow <= n; ++p) {
    unsigned m = t.byte_class[0][buf[p]];
    for (std::size_t j = 1; j < kWindow && m != 0; ++j) m &= t.byte_class[j][buf[p + j]];
    if (m != 0) [[unlikely]] t.verify(buf, n, p, m, lines, hits);
  }
  // A second pass, but it costs less than a compare per byte in the loop
  // above; this path is only the fallback and the SIMD loops' tail.
  return count_newlines_scalar(buf + from, n - from);
}

// ---------------------------------------------------------------------------
// AVX2: 32 window starts per step

#if defined(OOMLENS_SCAN_X86)

struct Avx2Tables {
  __m256i lo[kWindow], hi[kWindow];
};

// pshufb looks up within each 128-bit lane, so each lane gets the table.
OOMLENS_TARGET_AVX2 inline Avx2Tables avx2_tables(const Teddy& t) {
  Avx2Tables r;
  for (std::size_t j = 0; j < kWindow; ++j) {
    r.lo[j] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(t.lo[j])));
    r.hi[j] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(t.hi[j])));
  }
  return r;
}

OOMLENS_TARGET_AVX2 inline __m256i avx2_load(const std::uint8_t* q) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
}

// class(x) for 32 bytes. The low-nibble lookup needs no mask: pshufb reads
// the low 4 bits and gives 0 for bytes >= 0x80, which no literal has.
OOMLENS_TARGET_AVX2 inline __m256i avx2_class(__m256i v, __m256i lo, __m256i hi) {
  const __m256i high_nibbles = _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
  return _mm256_and_si256(_mm256_shuffle_epi8(lo, v), _mm256_shuffle_epi8(hi, high_nibbles));
}

// Candidate buckets for the window starts q[0..31] (reads q[0..31+kWindow-1]).
OOMLENS_TARGET_AVX2 inline __m256i avx2_candidates(const std::uint8_t* q, const Avx2Tables& t) {
  __m256i all = avx2_class(avx2_load(q), t.lo[0], t.hi[0]);
  for (std::size_t j = 1; j < kWindow; ++j)
    all = _mm256_and_si256(all, avx2_class(avx2_load(q + j), t.lo[j], t.hi[j]));
  return all;
}

OOMLENS_TARGET_AVX2 inline std::size_t avx2_newlines(const std::uint8_t* q) {
  const __m256i eq = _mm256_cmpeq_epi8(avx2_load(q), _mm256_set1_epi8('\n'));
  return static_cast<std::size_t>(_mm_popcnt_u32(static_cast<std::uint32_t>(_mm256_movemask_epi8(eq))));
}

// Runs the filter from `p` on, 32 window starts per iteration, until an
// iteration has a candidate or too few bytes remain; returns where it stopped
// and adds the newlines it passed. It must not be inlined into a function
// that calls out: calls clobber every vector register, and GCC would then
// keep the tables on the stack and reload them on every iteration.
[[gnu::noinline]] OOMLENS_TARGET_AVX2 std::size_t avx2_skip(const Teddy& t,
                                                            const std::uint8_t* buf,
                                                            std::size_t n, std::size_t p,
                                                            std::size_t& newlines) {
  const Avx2Tables tables = avx2_tables(t);
  std::size_t count = 0;
  for (; n - p >= 32 + kWindow - 1; p += 32) {
    const __m256i a = avx2_candidates(buf + p, tables);
    if (!_mm256_testz_si256(a, a)) break;
    count += avx2_newlines(buf + p);
  }
  newlines += count;
  return p;
}

// Checks the 32 window starts at `p` (with `newlines` before it) and returns
// the newlines among them.
OOMLENS_TARGET_AVX2 std::size_t avx2_step(const Teddy& t, const std::uint8_t* buf, std::size_t n,
                                         std::size_t p, std::size_t newlines,
                                         std::vector<ScanHit>& hits) {
  const __m256i m = avx2_candidates(buf + p, avx2_tables(t));
  const __m256i none = _mm256_cmpeq_epi8(m, _mm256_setzero_si256());
  std::uint32_t starts = ~static_cast<std::uint32_t>(_mm256_movemask_epi8(none));
  if (starts != 0) {
    alignas(32) std::uint8_t classes[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(classes), m);
    NewlineCursor lines{p, newlines};
    do {
      const int i = std::countr_zero(starts);
      starts &= starts - 1;
      t.verify(buf, n, p + i, classes[i], lines, hits);
    } while (starts != 0);
  }
  return avx2_newlines(buf + p);
}

OOMLENS_TARGET_AVX2 std::size_t scan_avx2(const Teddy& t, const std::uint8_t* buf, std::size_t n,
                                         std::vector<ScanHit>& hits) {
  std::size_t p = 0, newlines = 0;
  for (;;) {
    p = avx2_skip(t, buf, n, p, newlines);
    if (n - p < 32 + kWindow - 1) break;
    newlines += avx2_step(t, buf, n, p, newlines, hits);
    p += 32;
  }
  return newlines + scan_scalar(t, buf, n, p, newlines, hits);
}

// The filter alone (LiteralScanner::candidates): window starts it passes,
// 32 at a time; returns where the scalar tail takes over.
OOMLENS_TARGET_AVX2 std::size_t avx2_candidate_count(const Teddy& t, const std::uint8_t* buf, std::size_t n,
                                                    std::size_t& count) {
  const Avx2Tables tables = avx2_tables(t);
  std::size_t p = 0;
  for (; n - p >= 32 + kWindow - 1; p += 32) {
    const __m256i m = avx2_candidates(buf + p, tables);
    const __m256i none = _mm256_cmpeq_epi8(m, _mm256_setzero_si256());
    count += static_cast<std::size_t>(std::popcount(~static_cast<std::uint32_t>(_mm256_movemask_epi8(none))));
  }
  return p;
}

// Byte counters in 4 registers (cmpeq gives -1 per newline), summed with
// psadbw before any can pass 255.
OOMLENS_TARGET_AVX2 std::size_t count_newlines_avx2(const std::uint8_t* p, std::size_t n) {
  const __m256i newline = _mm256_set1_epi8('\n');
  const __m256i zero = _mm256_setzero_si256();
  __m256i sums = zero;  // four 64-bit totals
  std::size_t i = 0;
  while (n - i >= 128) {
    const std::size_t rounds = std::min<std::size_t>((n - i) / 128, 255);
    __m256i c0 = zero, c1 = zero, c2 = zero, c3 = zero;
    for (std::size_t r = 0; r < rounds; ++r, i += 128) {
      c0 = _mm256_sub_epi8(c0, _mm256_cmpeq_epi8(avx2_load(p + i), newline));
      c1 = _mm256_sub_epi8(c1, _mm256_cmpeq_epi8(avx2_load(p + i + 32), newline));
      c2 = _mm256_sub_epi8(c2, _mm256_cmpeq_epi8(avx2_load(p + i + 64), newline));
      c3 = _mm256_sub_epi8(c3, _mm256_cmpeq_epi8(avx2_load(p + i + 96), newline));
    }
    sums = _mm256_add_epi64(sums, _mm256_sad_epu8(c0, zero));
    sums = _mm256_add_epi64(sums, _mm256_sad_epu8(c1, zero));
    sums = _mm256_add_epi64(sums, _mm256_sad_epu8(c2, zero));
    sums = _mm256_add_epi64(sums, _mm256_sad_epu8(c3, zero));
  }
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + count_newlines_scalar(p + i, n - i);
}

// ---------------------------------------------------------------------------
// AVX-512 with VBMI: vpermi2b looks a byte up in a 128-entry table, so one
// instruction gives the exact class of 64 ASCII bytes, where AVX2 needs five
// for 32 bytes and accepts every mix of the nibbles in a bucket. 64 window
// starts per step.

struct Avx512Tables {
  __m512i low[kWindow], high[kWindow];  // classes of bytes 0..63 and 64..127
};

OOMLENS_TARGET_AVX512 inline Avx512Tables avx512_tables(const Teddy& t) {
  Avx512Tables r;
  for (std::size_t j = 0; j < kWindow; ++j) {
    r.low[j] = _mm512_load_si512(t.byte_class[j]);
    r.high[j] = _mm512_load_si512(t.byte_class[j] + 64);
  }
  return r;
}

// The index's bit 7 is ignored, so a byte >= 0x80 gets the class of its low
// 7 bits: a false candidate at worst.
OOMLENS_TARGET_AVX512 inline __m512i avx512_class(const std::uint8_t* q, __m512i low,
                                                 __m512i high) {
  return _mm512_permutex2var_epi8(low, _mm512_loadu_si512(q), high);
}

// Candidate buckets for the window starts q[0..63] (reads q[0..63+kWindow-1]).
OOMLENS_TARGET_AVX512 inline __m512i avx512_candidates(const std::uint8_t* q,
                                                      const Avx512Tables& t) {
  __m512i all = avx512_class(q, t.low[0], t.high[0]);
  for (std::size_t j = 1; j < kWindow; ++j) all = _mm512_and_si512(all, avx512_class(q + j, t.low[j], t.high[j]));
  return all;
}

OOMLENS_TARGET_AVX512 inline std::size_t avx512_newlines(const std::uint8_t* q) {
  const __mmask64 eq = _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(q), _mm512_set1_epi8('\n'));
  return static_cast<std::size_t>(_mm_popcnt_u64(eq));
}

// As avx2_skip, 64 window starts per iteration.
[[gnu::noinline]] OOMLENS_TARGET_AVX512 std::size_t avx512_skip(const Teddy& t,
                                                                const std::uint8_t* buf,
                                                                std::size_t n, std::size_t p,
                                                                std::size_t& newlines) {
  const Avx512Tables tables = avx512_tables(t);
  std::size_t count = 0;
  for (; n - p >= 64 + kWindow - 1; p += 64) {
    const __m512i a = avx512_candidates(buf + p, tables);
    if (_mm512_test_epi8_mask(a, a) != 0) break;
    count += avx512_newlines(buf + p);
  }
  newlines += count;
  return p;
}

// Checks the 64 window starts at `p` (with `newlines` before it) and returns
// the newlines among them.
OOMLENS_TARGET_AVX512 std::size_t avx512_step(const Teddy& t, const std::uint8_t* buf,
                                             std::size_t n, std::size_t p, std::size_t newlines,
                                             std::vector<ScanHit>& hits) {
  const __m512i m = avx512_candidates(buf + p, avx512_tables(t));
  std::uint64_t starts = _mm512_test_epi8_mask(m, m);
  if (starts != 0) {
    alignas(64) std::uint8_t classes[64];
    _mm512_store_si512(classes, m);
    NewlineCursor lines{p, newlines};
    do {
      const int i = std::countr_zero(starts);
      starts &= starts - 1;
      t.verify(buf, n, p + i, classes[i], lines, hits);
    } while (starts != 0);
  }
  return avx512_newlines(buf + p);
}

OOMLENS_TARGET_AVX512 std::size_t scan_avx512(const Teddy& t, const std::uint8_t* buf,
                                             std::size_t n, std::vector<ScanHit>& hits) {
  std::size_t p = 0, newlines = 0;
  for (;;) {
    p = avx512_skip(t, buf, n, p, newlines);
    if (n - p < 64 + kWindow - 1) break;
    newlines += avx512_step(t, buf, n, p, newlines, hits);
    p += 64;
  }
  return newlines + scan_scalar(t, buf, n, p, newlines, hits);
}

OOMLENS_TARGET_AVX512 std::size_t avx512_candidate_count(const Teddy& t, const std::uint8_t* buf,
                                                        std::size_t n, std::size_t& count) {
  const Avx512Tables tables = avx512_tables(t);
  std::size_t p = 0;
  for (; n - p >= 64 + kWindow - 1; p += 64) {
    const __m512i m = avx512_candidates(buf + p, tables);
    count += static_cast<std::size_t>(std::popcount(_mm512_test_epi8_mask(m, m)));
  }
  return p;
}

#endif  // OOMLENS_SCAN_X86

// ---------------------------------------------------------------------------
// Dispatch

struct CpuPaths {
  bool avx2 = false, avx512 = false;
};

// Asked once; what the CPU and the OS (vector state saving) support.
const CpuPaths& cpu_paths() {
  static const CpuPaths paths = [] {
    CpuPaths p;
#if defined(OOMLENS_SCAN_X86)
    __builtin_cpu_init();
    p.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
    p.avx512 = p.avx2 && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
#endif
    return p;
  }();
  return paths;
}

bool cpu_has(ScanPath path) {
  switch (path) {
    case ScanPath::avx2: return cpu_paths().avx2;
    case ScanPath::avx512: return cpu_paths().avx512;
    default: return true;
  }
}

// What `best` and unsupported requests run. AVX-512 VBMI scans about twice
// as fast as AVX2 (measured on Zen 4), so it wins where present.
ScanPath resolve(ScanPath path) {
  if (path == ScanPath::best) {
    return cpu_has(ScanPath::avx512) ? ScanPath::avx512
           : cpu_has(ScanPath::avx2) ? ScanPath::avx2
                                     : ScanPath::scalar;
  }
  return cpu_has(path) ? path : ScanPath::scalar;
}

const std::uint8_t* bytes(std::string_view buf) {
  return reinterpret_cast<const std::uint8_t*>(buf.data());
}

// Hits come out ordered by window position, not by literal start (windows sit
// at different offsets in their literals), so the new ones may need sorting.
void order_hits(std::vector<ScanHit>& hits, std::size_t first) {
  const auto before = [](const ScanHit& a, const ScanHit& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.literal < b.literal;
  };
  const auto begin = hits.begin() + static_cast<std::ptrdiff_t>(first);
  if (!std::is_sorted(begin, hits.end(), before)) std::sort(begin, hits.end(), before);
}

}  // namespace

struct LiteralScanner::Tables {
  Tables(const std::vector<std::string>& literals, ScanPath planned_for)
      : teddy(literals, resolve(planned_for) == ScanPath::avx2) {}
  Teddy teddy;
};

LiteralScanner::LiteralScanner(std::vector<std::string> literals)
    : LiteralScanner(std::move(literals), ScanPath::best) {}

LiteralScanner::LiteralScanner(std::vector<std::string> literals, ScanPath planned_for)
    : literals_(std::move(literals)) {
  for (const std::string& lit : literals_) longest_ = std::max(longest_, lit.size());
  tables_ = new Tables(literals_, planned_for);
}

std::size_t LiteralScanner::candidates(std::string_view buf, ScanPath path) const {
  const Teddy& t = tables_->teddy;
  if (t.empty()) return 0;
  const std::uint8_t* b = bytes(buf);
  const std::size_t n = buf.size();
  std::size_t count = 0, p = 0;
  switch (resolve(path)) {
#if defined(OOMLENS_SCAN_X86)
    case ScanPath::avx2: p = avx2_candidate_count(t, b, n, count); break;
    case ScanPath::avx512: p = avx512_candidate_count(t, b, n, count); break;
#endif
    default: break;
  }
  for (; p + kWindow <= n; ++p) {
    unsigned m = t.byte_class[0][b[p]];
    for (std::size_t j = 1; j < kWindow && m != 0; ++j) m &= t.byte_class[j][b[p + j]];
    count += m != 0;
  }
  return count;
}

LiteralScanner::~LiteralScanner() { delete tables_; }

bool LiteralScanner::plan_was_baked() const { return tables_->teddy.baked(); }

std::size_t LiteralScanner::scan(std::string_view buf, std::vector<ScanHit>& hits) const {
  return scan(buf, hits, detail::ScanPath::best);
}

std::size_t LiteralScanner::scan(std::string_view buf, std::vector<ScanHit>& hits,
                                 detail::ScanPath path) const {
  const Teddy& t = tables_->teddy;
  if (t.empty()) return detail::count_newlines(buf, path);
  const std::size_t first = hits.size();
  std::size_t newlines = 0;
  switch (resolve(path)) {
#if defined(OOMLENS_SCAN_X86)
    case ScanPath::avx2: newlines = scan_avx2(t, bytes(buf), buf.size(), hits); break;
    case ScanPath::avx512: newlines = scan_avx512(t, bytes(buf), buf.size(), hits); break;
#endif
    default: newlines = scan_scalar(t, bytes(buf), buf.size(), 0, 0, hits); break;
  }
  order_hits(hits, first);
  return newlines;
}

std::size_t count_newlines(std::string_view buf) {
  return detail::count_newlines(buf, detail::ScanPath::best);
}

namespace detail {

bool path_supported(ScanPath path) { return cpu_has(path); }

std::size_t count_newlines(std::string_view buf, ScanPath path) {
  switch (resolve(path)) {
#if defined(OOMLENS_SCAN_X86)
    // Counting alone is bound by memory, not by instructions: AVX2 suffices.
    case ScanPath::avx2:
    case ScanPath::avx512: return count_newlines_avx2(bytes(buf), buf.size());
#endif
    default: return count_newlines_scalar(bytes(buf), buf.size());
  }
}

}  // namespace detail
}  // namespace oomlens::analyzer
