// Turning raw terminal bytes into lines the parsers can read.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace oomlens::analyzer {

// Removes ANSI escape sequences (CSI colour codes, OSC titles, two-byte
// escapes). A colour code can sit inside a number ("\x1b[1;36m2.00\x1b[0m GiB"),
// so this runs before any parsing.
std::string strip_ansi(std::string_view text);

// What a launcher or logger put in front of the program's own text.
struct LinePrefix {
  std::optional<int> rank;
  std::optional<std::int64_t> time_ms;
  std::size_t length = 0;  // bytes of prefix to drop
  // A process named by its pid only (Ray's "(RayWorkerWrapper pid=4242, ...)",
  // vLLM's "(VllmWorkerProcess pid=4242)", NCCL's "host:pid:tid"): it tells
  // processes apart but is no rank number.
  std::optional<std::uint64_t> pid;
  // NCCL's "host:pid:tid [N]": N is the CUDA device index, usually the local
  // rank but not always. Never copied into `rank`; the prefix is kept in the
  // text (NCCL's parser reads the device from it).
  std::optional<int> device;
};

// Recognises, repeatedly and in any order, what launchers and loggers put in
// front of a line:
//   timestamps    "2026-03-01 12:00:00,123", "[2026-03-01T12:00:00.123Z]", "2026/03/01 12:00:00"
//   launchers     "[rank3]:", "[default3]:" (any torchelastic role: "[trainer3]:"), srun's "3: "
//                 (also right-aligned " 3: "), mpirun's "[1,3]<stderr>:", horovod/gloo's
//                 "[3]<stderr>:", MPICH/Intel MPI's "[3] ", Lightning's "[rank: 3] ",
//                 pdsh's "host: " before one of these
//   worker tags   Ray and vLLM "(VllmWorker rank=1 pid=4242) ", "(RayWorkerWrapper pid=4242,
//                 ip=10.0.0.3) ", "(pid=4242) ", "(Worker_TP1 pid=4242) "
//   loggers       vLLM's "ERROR 03-01 12:00:00 [file.py:12] " (a year-less time),
//                 DeepSpeed's "[INFO] [file.py:12:fn] [Rank 3] "
// and, without removing them (parsers read them): the year-less time of a
// glog or c10 prefix ("E0301 12:00:00.123456 4242 file.py:12]",
// "[W301 12:00:00.123456789 file.cpp:12]") and NCCL's "host:pid:tid [N]".
LinePrefix read_prefix(std::string_view text);

// Width of text in a terminal, counting code points (UTF-8 continuation bytes
// do not add a column; invalid bytes count one each). Capped at UINT32_MAX.
std::uint32_t display_columns(std::string_view text);

// ASCII case folding; other bytes unchanged (the locale plays no part).
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

// Whether `text` contains `lower` (which must be lower case), ignoring ASCII case.
bool contains_folded(std::string_view text, std::string_view lower);

// A line folded to lower case once, so that a parser can look for the words
// its patterns require with plain searches and run the patterns only on the
// lines that have them. Most anchor lines are ordinary chatter; a search costs
// a memchr where an RE2 partial match costs a DFA walk of the whole line.
class FoldedText {
 public:
  explicit FoldedText(std::string_view text);
  // Points into itself: neither copied nor moved.
  FoldedText(const FoldedText&) = delete;
  FoldedText& operator=(const FoldedText&) = delete;
  bool has(std::string_view lower) const { return folded_.find(lower) != std::string_view::npos; }
  bool has_any(std::initializer_list<std::string_view> lower) const;

 private:
  // The lines the parsers fold are mostly short, and each is folded by
  // several of them: in place, without an allocation, up to this length.
  static constexpr std::size_t kInlineBytes = 320;
  std::array<char, kInlineBytes> inline_;
  std::string long_;
  std::string_view folded_;
};

// Milliseconds since the Unix epoch for a civil UTC date and time.
std::int64_t epoch_ms(int year, int month, int day, int hour, int minute, int second, int millis);

// Logs that print no year ("03-01 12:00:00", glog's "0301 12:00:00") get
// times in this year, before any real log was written: they order the lines
// of one log among themselves but say nothing against a dated time.
inline constexpr int kYearlessYear = 1972;  // a leap year: "02-29" is a valid day
bool is_yearless(std::int64_t ms);
// Two times can be ordered: both dated, or both year-less.
bool same_clock(std::int64_t a, std::int64_t b);
// "2026-03-01T12:00:00.123", or "--03-01T12:00:00.123" for a year-less time.
std::string format_time(std::int64_t ms);

}  // namespace oomlens::analyzer
