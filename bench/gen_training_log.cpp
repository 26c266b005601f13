// gen_training_log: writes a deterministic, realistic multi-rank training log
// for the `oomlens diagnose` benchmarks (bench/diagnose_vs_ripgrep.sh,
// bench/diagnose_matrix.sh, bench/lsp_bench.py).
//
//   gen_training_log --size BYTES [--mix NAME] [--ooms N] [--ranks R] [--seed S]
//                    [--manifest PATH] OUT
//
// The default mix, `classic`, tells one story: a torchrun job (R ranks, launcher
// line prefixes "[rankN]:") that trains, hits a GPU out-of-memory error N times,
// and is restarted by the elastic agent after each one. Roughly by bytes it
// holds: tqdm progress bars redrawn with '\r' (many redraws per '\n', ANSI
// colour on some), per-rank logging lines with timestamps (loss, lr, grad norm),
// NCCL INFO bursts whenever a communicator is created, Python and c10 warnings,
// tracebacks of exceptions the job handled (frames in site-packages), and the
// N OOM incidents, evenly spaced: a full traceback from
// /home/user/proj/train.py through torch frames into the allocator's message,
// sometimes a second rank failing the same way (echo), then collateral
// failures (NCCL watchdog, SIGTERM) and the restart.
//
// The other mixes stress one kind of content each on top of that story (the
// content matrix of bench/diagnose_matrix.sh; bench/README.md describes them):
//
//   tracebacks     an ordinary (non-OOM) Python traceback every 30-200 lines, of
//                  many kinds: chained, 3.11 carets, site-packages and user frames
//   memory_words   "memory", "allocat", "CUDA" on a quarter of the lines: DeepSpeed
//                  see_memory_usage, trainer memory metrics, nvidia-smi tables,
//                  memory_summary() tables, config dumps
//   progress_bars  tqdm redraws joined by bare '\r' into physical lines of
//                  100 KB to 1 MB (over 5 million bare '\r' per GiB); CRLF sections
//   ranks          sections of 8 to 64 interleaved ranks, one launcher prefix style
//                  each ([rank3]:, [default3]:, srun's "3: ", mpirun's
//                  [1,3]<stderr>:, stacked), with collector timestamps in front
//   lookalikes     host OOM kills, DataLoader workers killed, CPU allocator
//                  failures, illegal memory access, device-side asserts, allocator
//                  pressure warnings, NCCL watchdog timeouts, SIGTERMs
//   bursts         OOMs in bursts: 4 to 8 ranks fail within a second, each with its
//                  own traceback and message, followed by collateral failures
//   mix            all of the above, section by section
//
// Outside `classic` the OOM messages vary by PyTorch era (eras A–I, as in
// fixtures/README.md: the "cached" and "reserved in total" forms, 2.1's
// "capacty", the 2.3 truncation, private pools, "allowed",
// PYTORCH_ALLOC_CONF); some sections end their lines with "\r\n".
//
// --manifest PATH writes the ground truth as JSON: every OOM message planted,
// with its 1-based line as `grep -n` counts it ('\n' only: a physical line with
// bare '\r' in it is one line), the byte offset of that line (as `grep -b`
// prints it) and of the message, its rank and incident; every look-alike,
// pressure, collateral and allocator-setting line planted, with its kind; and
// the figures measured on the bytes written (also printed on stderr).
//
// Invariants the benchmarks rely on: each OOM message is one physical line. The
// texts "out of memory" and "RESOURCE_EXHAUSTED" (case-sensitive, as `rg -c`
// matches them) appear only on OOM message lines and on look-alike lines the
// manifest marks "rg": true (the kernel's "Memory cgroup out of memory: Killed
// process" and TensorFlow's "ran out of memory ... not a failure", in the
// lookalikes and mix logs only); no line holds two of them. "OutOfMemory"
// appears only in OOM messages; "OOM" also in memory_summary() tables
// ("CUDA OOMs: 0"), TensorFlow's garbage-collection warning ("to avoid OOM") and
// Kubernetes' "OOMKilled". Keep it so when adding noise.
//
// Output is byte-identical on every machine: the only randomness is a
// fixed-seed splitmix64 of our own (no <random> distributions, no floating
// point formatting, no locale, no clock), and the file is exactly --size bytes.
// Written through one large buffer, so 1 GiB takes a few seconds.

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

// ---------------------------------------------------------------------------
// Deterministic randomness.

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); the modulo bias is irrelevant here and keeps it portable.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Uniform in [lo, hi].
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(std::uint64_t percent) { return below(100) < percent; }
  template <std::size_t N>
  std::string_view pick(const std::string_view (&items)[N]) { return items[below(N)]; }

 private:
  std::uint64_t state_;
};

// ---------------------------------------------------------------------------
// What the log holds, measured on the bytes written, a '\n'-terminated line at
// a time: the figures the benchmark's content matrix promises per GiB.

struct Measured {
  std::uint64_t lines = 0;            // '\n' bytes: grep -c '' and grep -n count these
  std::uint64_t bare_cr = 0;          // '\r' not directly before a '\n'
  std::uint64_t crlf_lines = 0;       // lines ending in "\r\n"
  std::uint64_t longest = 0;          // longest physical line in bytes, without its '\n'
  std::uint64_t lines_100k = 0;       // physical lines of 100,000 bytes or more
  std::uint64_t word_lines = 0;       // lines with "memory", "allocat" or "cuda" in any case
  std::uint64_t traceback_lines = 0;  // lines with "Traceback (most recent call last)"
  std::uint64_t rg_lines = 0;         // lines rg -c 'out of memory|RESOURCE_EXHAUSTED' counts
  std::uint64_t oom_word_lines = 0;   // lines with "OOM" (case-sensitive)
  std::uint64_t out_of_memory_word_lines = 0;  // lines with "OutOfMemory"
};

class Meter {
 public:
  void feed(const char* p, std::size_t n) {
    const char* end = p + n;
    while (p < end) {
      const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      if (hit == nullptr) {
        carry_.append(p, end);
        return;
      }
      const char* nl = static_cast<const char*>(hit);
      if (carry_.empty()) {
        line(std::string_view(p, static_cast<std::size_t>(nl - p)));
      } else {
        carry_.append(p, nl);
        line(carry_);
        carry_.clear();
      }
      p = nl + 1;
    }
  }
  const Measured& result() const { return m_; }

 private:
  static bool folded_at(std::string_view l, std::size_t i, std::string_view word) {
    if (l.size() - i < word.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k)
      if (static_cast<char>(l[i + k] | 0x20) != word[k]) return false;
    return true;
  }
  static bool has_memory_words(std::string_view l) {
    for (std::size_t i = 0; i < l.size(); ++i) {
      const char f = static_cast<char>(l[i] | 0x20);
      if ((f == 'm' && folded_at(l, i, "memory")) || (f == 'a' && folded_at(l, i, "allocat")) ||
          (f == 'c' && folded_at(l, i, "cuda")))
        return true;
    }
    return false;
  }
  static bool has(std::string_view l, std::string_view s) { return l.find(s) != std::string_view::npos; }

  void line(std::string_view l) {
    ++m_.lines;
    std::size_t body = l.size();
    if (body != 0 && l[body - 1] == '\r') {
      ++m_.crlf_lines;
      --body;
    }
    m_.bare_cr += static_cast<std::uint64_t>(std::count(l.data(), l.data() + body, '\r'));
    m_.longest = std::max<std::uint64_t>(m_.longest, l.size());
    if (l.size() >= 100000) ++m_.lines_100k;
    if (has_memory_words(l)) ++m_.word_lines;
    if (has(l, "Traceback (most recent call last)")) ++m_.traceback_lines;
    if (has(l, "out of memory") || has(l, "RESOURCE_EXHAUSTED")) ++m_.rg_lines;
    if (has(l, "OOM")) ++m_.oom_word_lines;
    if (has(l, "OutOfMemory")) ++m_.out_of_memory_word_lines;
  }

  std::string carry_;
  Measured m_;
};

// ---------------------------------------------------------------------------
// Buffered output with the few formatters the log needs (integers only). It
// knows the line number and line start of the next byte (for the manifest)
// and can write "\r\n" for every '\n' (CRLF sections).

class Out {
 public:
  explicit Out(std::FILE* file) : file_(file), buf_(new char[kCap]) {}

  void put(std::string_view s) {
    if (eat_space_) {
      eat_space_ = false;
      if (!s.empty() && s[0] == ' ') s.remove_prefix(1);
    }
    if (!crlf_) {
      raw(s);
      return;
    }
    for (std::size_t nl; (nl = s.find('\n')) != std::string_view::npos; s.remove_prefix(nl + 1)) {
      raw(s.substr(0, nl));
      raw("\r\n");
    }
    raw(s);
  }
  void ch(char c) {
    if (eat_space_) {
      eat_space_ = false;
      if (c == ' ') return;
    }
    if (c == '\n' && crlf_) raw_ch('\r');
    raw_ch(c);
  }
  void repeat(char c, std::size_t n) {
    if (eat_space_) {
      eat_space_ = false;
      if (c == ' ' && n != 0) --n;
    }
    if (len_ + n > kCap) flush();
    std::memset(buf_.get() + len_, c, n);
    len_ += n;
  }
  // Decimal, left-padded with `fill` to at least `width` characters.
  void num(std::uint64_t v, int width = 0, char fill = ' ') {
    char tmp[24];
    int n = 0;
    do {
      tmp[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    for (int i = n; i < width; ++i) ch(fill);
    while (n > 0) ch(tmp[--n]);
  }
  // `scaled` / 10^decimals with exactly `decimals` digits after the point.
  void fixed(std::uint64_t scaled, int decimals, int width = 0) {
    std::uint64_t unit = 1;
    for (int i = 0; i < decimals; ++i) unit *= 10;
    int int_digits = 1;
    for (std::uint64_t q = scaled / unit; q >= 10; q /= 10) ++int_digits;
    for (int i = int_digits + 1 + decimals; i < width; ++i) ch(' ');
    num(scaled / unit);
    ch('.');
    num(scaled % unit, decimals, '0');
  }
  void hex(std::uint64_t v, int digits) {
    static constexpr char kDigits[] = "0123456789abcdef";
    for (int i = digits - 1; i >= 0; --i) ch(kDigits[(v >> (4 * i)) & 15]);
  }
  void nl() { ch('\n'); }

  void set_crlf(bool on) { crlf_ = on; }
  // Drops the next byte written if it is a space: a line without a launcher's
  // rank mark starts at the program's own text ("Traceback", "  File").
  void eat_space() { eat_space_ = true; }
  bool crlf() const { return crlf_; }

  std::uint64_t written() const { return flushed_ + len_; }
  std::uint64_t lines() const { return lines_; }  // after the last flush
  const Measured& measured() const { return meter_.result(); }

  // 1-based number of the line the next byte lands on, as grep -n counts.
  std::uint64_t line() {
    lines_ += static_cast<std::uint64_t>(std::count(buf_.get() + counted_, buf_.get() + len_, '\n'));
    counted_ = len_;
    return lines_ + 1;
  }
  // Byte offset of the first byte of the line the next byte lands on.
  std::uint64_t line_start() const {
    for (std::size_t i = len_; i > 0; --i)
      if (buf_[i - 1] == '\n') return flushed_ + i;
    return line_start_;
  }

  bool flush() {
    lines_ += static_cast<std::uint64_t>(std::count(buf_.get() + counted_, buf_.get() + len_, '\n'));
    line_start_ = line_start();
    meter_.feed(buf_.get(), len_);
    if (len_ != 0 && std::fwrite(buf_.get(), 1, len_, file_) != len_) failed_ = true;
    flushed_ += len_;
    len_ = 0;
    counted_ = 0;
    return !failed_;
  }
  bool failed() const { return failed_; }

 private:
  void raw(std::string_view s) {
    if (s.empty()) return;
    if (len_ + s.size() > kCap) flush();
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
  }
  void raw_ch(char c) {
    if (len_ == kCap) flush();
    buf_[len_++] = c;
  }

  static constexpr std::size_t kCap = std::size_t{8} << 20;
  std::FILE* file_;
  std::unique_ptr<char[]> buf_;
  std::size_t len_ = 0;
  std::size_t counted_ = 0;  // buf_[0, counted_) is in lines_
  std::uint64_t flushed_ = 0;
  std::uint64_t lines_ = 0;
  std::uint64_t line_start_ = 0;  // of the line the flushed bytes end in
  Meter meter_;
  bool crlf_ = false;
  bool eat_space_ = false;
  bool failed_ = false;
};

// ---------------------------------------------------------------------------
// Simulated wall clock: milliseconds since the Unix epoch, UTC.

struct Civil {
  int year, month, day, hour, minute, second;
};

// Howard Hinnant's days_from_civil inverse.
Civil civil_from_ms(std::int64_t ms) {
  std::int64_t secs = ms / 1000;
  std::int64_t days = secs / 86400;
  std::int64_t rem = secs % 86400;
  days += 719468;
  const std::int64_t era = days / 146097;
  const std::int64_t doe = days - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int y = static_cast<int>(yoe + era * 400 + (m <= 2 ? 1 : 0));
  return {y, m, d, static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60), static_cast<int>(rem % 60)};
}

class Clock {
 public:
  static constexpr std::int64_t kStart = 1772366400000;  // 2026-03-01 12:00:00 UTC

  void advance(std::uint64_t ms) { now_ += static_cast<std::int64_t>(ms); }
  std::int64_t now() const { return now_; }
  Civil civil() const { return civil_from_ms(now_); }
  int millis() const { return static_cast<int>(now_ % 1000); }

 private:
  std::int64_t now_ = kStart;
};

// ---------------------------------------------------------------------------
// The job being simulated.

constexpr std::string_view kSite = "/usr/local/lib/python3.11/site-packages/";
constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kMiB = 1ull << 20;

struct Stats {
  std::uint64_t bytes_bars = 0, bytes_logs = 0, bytes_nccl = 0, bytes_warnings = 0, bytes_handled = 0,
                bytes_incidents = 0;
  std::uint64_t oom_messages = 0, incidents = 0, echoed = 0;
  // The mixes' own content.
  std::uint64_t bytes_tracebacks = 0, bytes_memory = 0, bytes_long_bars = 0, bytes_rank_rounds = 0,
                bytes_lookalikes = 0, bytes_sections = 0;
  std::uint64_t bursts = 0, joined_messages = 0, sections = 0, max_world = 0;
  std::uint64_t styles_used = 0;  // bit per Style
  std::uint64_t eras_used = 0;    // bit per era letter A..I
};

enum class Mix { classic, tracebacks, memory_words, progress_bars, ranks, lookalikes, bursts, mix };
constexpr std::string_view kMixNames[] = {"classic",    "tracebacks", "memory_words", "progress_bars",
                                          "ranks",      "lookalikes", "bursts",       "mix"};

// How a launcher marks a rank's lines: torchrun's "[rank3]:" (--local-ranks-filter,
// 2.2+) and "[default3]:" (--tee), both stacked, srun --label's "3: ", mpirun
// --tag-output's "[1,3]<stderr>:".
// `none`: plain torchrun, every rank writing to the one terminal unmarked.
enum class Style { rank, default_, stacked, srun, mpirun, none };
constexpr std::string_view kStyleNames[] = {"[rankN]:", "[defaultN]:", "[defaultN]:[rankN]:", "srun 'N: '",
                                            "mpirun [1,N]<stderr>:", "no prefix"};

// The ground truth the manifest lists.
struct OomMark {
  std::uint64_t line, line_offset, offset, incident;
  int rank;
  char era;         // PyTorch message era 'A'..'I', or 0 for the classic message (2.4+ wording)
  bool joined;      // written after a progress bar's bare '\r' on the same physical line
  bool truncated;   // 2.3's message cut after "GPU "
};
struct LookMark {
  std::uint64_t line, line_offset, offset;
  int rank;                // -1: no rank prefix
  std::string_view kind;   // the analyzer's finding kinds: host_oom_kill, dataloader_killed, ...
  std::string_view what;   // which message
  bool rg;                 // rg -c 'out of memory|RESOURCE_EXHAUSTED' counts this line
};

class LogWriter {
 public:
  // max_restarts: torchrun's --max-restarts, enough for every OOM.
  LogWriter(Out& out, std::uint64_t seed, int ranks, std::uint64_t max_restarts, Mix mix = Mix::classic)
      : out_(out), rng_(seed), ranks_(ranks), max_restarts_(max_restarts), restarts_left_(max_restarts),
        mix_(mix), max_ranks_(ranks) {
    new_worker_pids();
    stats.max_world = static_cast<std::uint64_t>(ranks_);
    if (mix_ != Mix::classic) begin_mix();
  }

  Stats stats;

  // One piece of ordinary training noise, chosen at random.
  void noise() {
    if (mix_ != Mix::classic) {
      mix_noise();
      return;
    }
    classic_noise();
  }

  void classic_noise() {
    const std::uint64_t before = out_.written();
    const std::uint64_t roll = rng_.below(10000);
    std::uint64_t* bucket;
    if (roll < 90) {
      progress_bar_line();
      bucket = &stats.bytes_bars;
    } else if (roll < 9030) {
      step_log_line(rng_.below(ranks_));
      bucket = &stats.bytes_logs;
    } else if (roll < 9075 && (ranks_ <= 8 || rng_.below(static_cast<std::uint64_t>(ranks_)) < 8)) {
      // Bursts grow with the world size; keep their share of bytes flat.
      nccl_burst(false);
      bucket = &stats.bytes_nccl;
    } else if (roll < 9075) {
      step_log_line(rng_.below(ranks_));
      bucket = &stats.bytes_logs;
    } else if (roll < 9870) {
      warning();
      bucket = &stats.bytes_warnings;
    } else {
      handled_traceback();
      bucket = &stats.bytes_handled;
    }
    *bucket += out_.written() - before;
  }

  // A short single log line (used to approach the exact target size).
  void short_line() {
    const std::uint64_t before = out_.written();
    step_log_line(rng_.below(ranks_));
    stats.bytes_logs += out_.written() - before;
  }

  // Job start (or restart after a failure): launcher banner, NCCL init.
  void startup(bool restart) {
    if (restart && sections_) {
      new_section();
      return;
    }
    const std::uint64_t before = out_.written();
    if (restart) {
      glog_prefix('W', launcher_pid_);
      out_.put("torch/distributed/elastic/agent/server/api.py:719] [default] Worker group FAILED. ");
      out_.num(restarts_left_);
      out_.ch('/');
      out_.num(max_restarts_);
      out_.put(" attempts left; will restart worker group\n");
      --restarts_left_;
      glog_prefix('I', launcher_pid_);
      out_.put("torch/distributed/elastic/agent/server/api.py:881] [default] Stopping worker group\n");
      clock_.advance(rng_.range(2000, 9000));
      new_worker_pids();
    } else {
      out_.put("W0301 12:00:00.000000 ");
      out_.num(launcher_pid_);
      out_.put(" torch/distributed/run.py:793] \n");
      out_.put("W0301 12:00:00.000000 ");
      out_.num(launcher_pid_);
      out_.put(
          " torch/distributed/run.py:793] *****************************************\n"
          "W0301 12:00:00.000000 ");
      out_.num(launcher_pid_);
      out_.put(
          " torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in "
          "default, to avoid your system being overloaded, please further tune the variable for optimal performance "
          "in your application as needed. \n"
          "W0301 12:00:00.000000 ");
      out_.num(launcher_pid_);
      out_.put(" torch/distributed/run.py:793] *****************************************\n");
    }
    glog_prefix('I', launcher_pid_);
    out_.put("torch/distributed/elastic/agent/server/api.py:525] [default] Starting worker group\n");
    for (int r = 0; r < ranks_; ++r) {
      log_prefix(r, "INFO", "train.py", 96);
      out_.put("rank ");
      out_.num(r);
      out_.put("/");
      out_.num(ranks_);
      out_.put(" on ");
      hostname(r);
      out_.put(" cuda:");
      out_.num(r % 8);
      out_.put(restart ? " resuming from /ckpt/run-42/step-" : " starting fresh, checkpoints in /ckpt/run-42/step-");
      out_.num(step_ / 1000 * 1000, 6, '0');
      out_.nl();
    }
    const std::uint64_t mid = out_.written();
    nccl_burst(true);
    stats.bytes_nccl += out_.written() - mid;
    stats.bytes_logs += mid - before;
    if (mix_ != Mix::classic) after_startup();
  }

  // One OOM incident: the failing rank's traceback and message, sometimes a
  // second rank's, then collateral failures and the agent tearing down.
  void incident() {
    if (mix_ != Mix::classic) {
      mix_incident();
      return;
    }
    const std::uint64_t before = out_.written();
    ++stats.incidents;
    const int first = static_cast<int>(rng_.below(ranks_));
    const Oom a = make_oom(first);
    const bool echo = ranks_ > 1 && rng_.chance(33);
    if (!echo) {
      oom_traceback(first, a, nullptr, 0);
    } else {
      ++stats.echoed;
      int second = static_cast<int>(rng_.below(ranks_ - 1));
      if (second >= first) ++second;
      Oom b = make_oom(second, &a);
      if (rng_.chance(50)) {
        // The two ranks' lines interleave, as they do when the launcher tails
        // both pipes at once.
        oom_traceback(first, a, &b, second);
      } else {
        oom_traceback(first, a, nullptr, 0);
        clock_.advance(rng_.range(1, 40));
        oom_traceback(second, b, nullptr, 0);
      }
    }
    collateral(first);
    stats.bytes_incidents += out_.written() - before;
  }

 private:
  static constexpr int kMaxPids = 1024;

  // Lines written while one is alive are the program's stderr (mpirun tags them).
  struct ErrScope {
    explicit ErrScope(LogWriter& w) : w_(w), was_(w.err_) { w_.err_ = true; }
    ~ErrScope() { w_.err_ = was_; }
    ErrScope(const ErrScope&) = delete;
    ErrScope& operator=(const ErrScope&) = delete;
    LogWriter& w_;
    bool was_;
  };

  // ------------------------------------------------------------------ prefixes

  // The launcher's mark of a rank's line, without the space the program's text
  // starts with ("[rank3]:" + " Traceback ..."). A log collector's timestamp may
  // come first.
  void rank_prefix(int rank) {
    if (collector_ts_) {
      timestamp();
      out_.ch(' ');
    }
    const auto r = static_cast<std::uint64_t>(rank);
    switch (style_) {
      case Style::rank:
        out_.put("[rank");
        out_.num(r);
        out_.put("]:");
        break;
      case Style::default_:
        out_.put("[default");
        out_.num(r);
        out_.put("]:");
        break;
      case Style::stacked:
        out_.put("[default");
        out_.num(r);
        out_.put("]:[rank");
        out_.num(r);
        out_.put("]:");
        break;
      case Style::srun:
        out_.num(r);
        out_.ch(':');
        break;
      case Style::mpirun:
        out_.put("[1,");
        out_.num(r);
        out_.put(err_ ? "]<stderr>:" : "]<stdout>:");
        break;
      case Style::none:
        out_.eat_space();
        break;
    }
  }
  // Before text that follows the mark directly ("[rank3]:[W0301 ..."): srun
  // always writes its space.
  void rank_prefix_tight(int rank) {
    rank_prefix(rank);
    if (style_ == Style::srun) out_.ch(' ');
    if (style_ == Style::none) out_.put("");  // nothing to eat
  }

  void timestamp() {
    const Civil c = clock_.civil();
    out_.num(static_cast<std::uint64_t>(c.year));
    out_.ch('-');
    out_.num(static_cast<std::uint64_t>(c.month), 2, '0');
    out_.ch('-');
    out_.num(static_cast<std::uint64_t>(c.day), 2, '0');
    out_.ch(' ');
    out_.num(static_cast<std::uint64_t>(c.hour), 2, '0');
    out_.ch(':');
    out_.num(static_cast<std::uint64_t>(c.minute), 2, '0');
    out_.ch(':');
    out_.num(static_cast<std::uint64_t>(c.second), 2, '0');
    out_.ch(',');
    out_.num(static_cast<std::uint64_t>(clock_.millis()), 3, '0');
  }

  // "I0301 12:34:56.789000 4242 " as glog (and torch's C++ logging) print it.
  void glog_prefix(char level, std::uint64_t pid) {
    clock_.advance(1);
    const Civil c = clock_.civil();
    out_.ch(level);
    out_.num(static_cast<std::uint64_t>(c.month), 2, '0');
    out_.num(static_cast<std::uint64_t>(c.day), 2, '0');
    out_.ch(' ');
    out_.num(static_cast<std::uint64_t>(c.hour), 2, '0');
    out_.ch(':');
    out_.num(static_cast<std::uint64_t>(c.minute), 2, '0');
    out_.ch(':');
    out_.num(static_cast<std::uint64_t>(c.second), 2, '0');
    out_.ch('.');
    out_.num(static_cast<std::uint64_t>(clock_.millis()) * 1000 + rng_.below(1000), 6, '0');
    out_.ch(' ');
    out_.num(pid);
    out_.ch(' ');
  }

  // "[rank3]: 2026-03-01 12:00:00,123 INFO [train.py:301] "; colour on ranks
  // whose logger uses colorlog.
  void log_prefix(int rank, std::string_view level, std::string_view file, int line) {
    clock_.advance(rng_.range(1, 60));
    rank_prefix(rank);
    out_.ch(' ');
    timestamp();
    out_.ch(' ');
    if (rank % 4 == 1) {
      out_.put(level == "INFO" ? "\x1b[32m" : level == "WARNING" ? "\x1b[33m" : "\x1b[31m");
      out_.put(level);
      out_.put("\x1b[0m");
    } else {
      out_.put(level);
    }
    out_.put(" [");
    out_.put(file);
    out_.ch(':');
    out_.num(static_cast<std::uint64_t>(line));
    out_.put("] ");
  }

  void hostname(int rank) {
    out_.put("gpu-node-");
    out_.num(static_cast<std::uint64_t>(rank / 8 + 1), 2, '0');
  }

  void new_worker_pids() {
    const std::uint64_t base = launcher_pid_ + 10 + rng_.below(500) + generation_ * 700;
    ++generation_;
    for (int r = 0; r < ranks_ && r < kMaxPids; ++r) pids_[r] = base + static_cast<std::uint64_t>(r);
  }
  std::uint64_t pid(int rank) const { return pids_[rank % kMaxPids]; }

  // ------------------------------------------------------------------ noise

  // Rank 0's tqdm bar: many '\r' redraws on one line, which ends when a log
  // message is written through tqdm (clear, message, '\n') or the epoch ends.
  void progress_bar_line() {
    rank_prefix(0);
    const bool colour = epoch_ % 3 == 2;
    const std::uint64_t redraws = rng_.range(20, 260);
    std::uint64_t last_len = 0;
    for (std::uint64_t i = 0; i < redraws && epoch_step_ < kStepsPerEpoch; ++i) {
      ++epoch_step_;
      ++step_;
      clock_.advance(rng_.range(240, 330));
      tick_loss();
      const std::uint64_t start = out_.written();
      out_.ch('\r');
      out_.put("Epoch ");
      out_.num(epoch_);
      out_.put(": ");
      out_.num(epoch_step_ * 100 / kStepsPerEpoch, 3);
      out_.put("%|");
      if (colour) out_.put("\x1b[32m");
      bar(epoch_step_, kStepsPerEpoch);
      if (colour) out_.put("\x1b[39m");
      out_.put("| ");
      out_.num(epoch_step_);
      out_.ch('/');
      out_.num(kStepsPerEpoch);
      out_.put(" [");
      const std::uint64_t elapsed = epoch_step_ * 285 / 1000;
      interval(elapsed);
      out_.ch('<');
      interval((kStepsPerEpoch - epoch_step_) * 285 / 1000);
      out_.put(", ");
      out_.fixed(340 + rng_.below(30), 2, 5);
      out_.put("it/s, loss=");
      out_.fixed(loss_ / 100, 2);
      out_.put(", lr=");
      lr();
      out_.ch(']');
      last_len = out_.written() - start - 1;
    }
    if (epoch_step_ >= kStepsPerEpoch) {
      out_.nl();
      log_prefix(0, "INFO", "train.py", 322);
      out_.put("epoch ");
      out_.num(epoch_);
      out_.put(" done: train_loss ");
      out_.fixed(loss_, 4);
      out_.put(" val_loss ");
      out_.fixed(loss_ + rng_.range(100, 900), 4);
      out_.put(" val_ppl ");
      out_.fixed(rng_.range(700, 1400), 2);
      out_.nl();
      ++epoch_;
      epoch_step_ = 0;
      return;
    }
    if (rng_.chance(70)) {
      // tqdm.write(): clear the bar, print the message, redraw later.
      out_.ch('\r');
      out_.repeat(' ', last_len);
      out_.ch('\r');
      timestamp();
      out_.put(" INFO [train.py:301] step ");
      out_.num(step_);
      out_.put(" loss ");
      out_.fixed(loss_, 4);
      out_.put(" lr ");
      lr();
      out_.put(" grad_norm ");
      out_.fixed(rng_.range(150, 2400), 3);
    }
    out_.nl();
  }

  void bar(std::uint64_t n, std::uint64_t total) {
    static constexpr std::string_view kPartial[] = {" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    const std::uint64_t eighths = n * 80 / total;
    const std::uint64_t full = eighths / 8;
    for (std::uint64_t i = 0; i < full; ++i) out_.put("█");
    if (full < 10) {
      out_.put(kPartial[eighths % 8]);
      out_.repeat(' ', 10 - full - 1);
    }
  }

  void interval(std::uint64_t secs) {
    if (secs >= 3600) {
      out_.num(secs / 3600);
      out_.ch(':');
      out_.num(secs / 60 % 60, 2, '0');
    } else {
      out_.num(secs / 60, 2, '0');
    }
    out_.ch(':');
    out_.num(secs % 60, 2, '0');
  }

  void tick_loss() {
    // A hyperbolic decay from 9.8 towards 2.0 with jitter; loss_ is the loss
    // times 10^4 (integers only, so every machine prints the same digits).
    loss_ = 20000 + 78000 * 20000 / (20000 + step_) + rng_.below(400);
  }

  void lr() {
    // Cosine-ish: 3e-4 falling with the step, printed like "2.94e-04".
    const std::uint64_t mant = 300 - (step_ / 997) % 240;  // 3.00 .. 0.61
    const std::uint64_t norm = mant >= 100 ? mant : mant * 10;
    out_.fixed(norm, 2);
    out_.put(mant >= 100 ? "e-04" : "e-05");
  }

  void step_log_line(std::uint64_t rank_u) {
    const int rank = static_cast<int>(rank_u);
    // Training moves on between rank 0's bar redraws too (tqdm's mininterval).
    if (rng_.chance(10) && epoch_step_ + 1 < kStepsPerEpoch) {
      ++step_;
      ++epoch_step_;
    }
    const std::uint64_t kind = rng_.below(100);
    if (kind < 70) {
      log_prefix(rank, "INFO", "train.py", 301);
      out_.put("epoch ");
      out_.num(epoch_);
      out_.put(" step ");
      out_.num(step_);
      out_.put(" loss ");
      out_.fixed(loss_ + rng_.below(200), 4);
      out_.put(" lr ");
      lr();
      out_.put(" grad_norm ");
      out_.fixed(rng_.range(150, 2400), 3);
      out_.put(" tok/s ");
      out_.num(rng_.range(41000, 47000));
    } else if (kind < 85) {
      log_prefix(rank, "INFO", "metrics.py", 58);
      out_.put("step ");
      out_.num(step_);
      out_.put(" max_allocated ");
      out_.fixed(rng_.range(5800, 6400), 2);
      out_.put(" GiB max_reserved ");
      out_.fixed(rng_.range(6500, 7400), 2);
      out_.put(" GiB data_time ");
      out_.fixed(rng_.range(2, 90), 3);
      out_.put("s step_time ");
      out_.fixed(rng_.range(270, 310), 3);
      out_.ch('s');
    } else if (kind < 95) {
      log_prefix(rank, "INFO", "data.py", 141);
      out_.put("worker ");
      out_.num(rng_.below(8));
      out_.put(" opened shard /data/tokenized/shard-");
      out_.num(rng_.below(4096), 5, '0');
      out_.put(".bin (");
      out_.num(rng_.range(100000, 200000));
      out_.put(" sequences, seq_len 4096)");
    } else {
      log_prefix(rank, "DEBUG", "checkpoint.py", 47);
      out_.put("async save of optimizer shard ");
      out_.num(static_cast<std::uint64_t>(rank));
      out_.put(" to /ckpt/run-42/step-");
      out_.num(step_ / 1000 * 1000, 6, '0');
      out_.put(" finished in ");
      out_.fixed(rng_.range(800, 9000), 3);
      out_.ch('s');
    }
    out_.nl();
  }

  void nccl_prefix(int rank, std::uint64_t thread) {
    rank_prefix(rank);
    out_.ch(' ');
    hostname(rank);
    out_.ch(':');
    out_.num(pid(rank));
    out_.ch(':');
    out_.num(thread);
    out_.put(" [");
    out_.num(static_cast<std::uint64_t>(rank % 8));
    out_.put("] NCCL INFO ");
  }

  // What NCCL_DEBUG=INFO prints when a communicator is created (at start-up,
  // and for the eval/checkpoint subgroups later).
  void nccl_burst(bool init) {
    const std::uint64_t channels = init ? 24 : rng_.range(2, 8);
    const std::uint64_t comm = 0x55d000000000ull | (rng_.next() & 0xfffffff000ull);
    if (init) {
      rank_prefix(0);
      out_.put(" NCCL version 2.21.5+cuda12.4\n");
    }
    for (int r = 0; r < ranks_; ++r) {
      const std::uint64_t main_thread = pid(r);
      const std::uint64_t worker = pid(r) + 60 + rng_.below(40);
      if (init) {
        nccl_prefix(r, main_thread);
        out_.put("Bootstrap : Using eth0:10.1.");
        out_.num(static_cast<std::uint64_t>(r / 8));
        out_.ch('.');
        out_.num(static_cast<std::uint64_t>(r / 8 + 11));
        out_.put("<0>\n");
        nccl_prefix(r, main_thread);
        out_.put("NET/Plugin: No plugin found (libnccl-net.so)\n");
        nccl_prefix(r, main_thread);
        out_.put("cudaDriverVersion 12040\n");
        nccl_prefix(r, worker);
        out_.put("NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.1.0.11<0>\n");
      }
      nccl_prefix(r, worker);
      out_.put("ncclCommInitRank comm 0x");
      out_.hex(comm + static_cast<std::uint64_t>(r) * 0x1000, 12);
      out_.put(" rank ");
      out_.num(static_cast<std::uint64_t>(r));
      out_.put(" nranks ");
      out_.num(static_cast<std::uint64_t>(ranks_));
      out_.put(" cudaDev ");
      out_.num(static_cast<std::uint64_t>(r % 8));
      out_.put(" nvmlDev ");
      out_.num(static_cast<std::uint64_t>(r % 8));
      out_.put(" busId ");
      out_.hex(0x18000 + static_cast<std::uint64_t>(r % 8) * 0x11000, 5);
      out_.put(" commId 0x");
      out_.hex(comm >> 7, 16);
      out_.put(" - Init START\n");
      for (std::uint64_t c = 0; c < channels; ++c) {
        if (r == 0) {
          nccl_prefix(r, worker);
          out_.put("Channel ");
          out_.num(c, 2, '0');
          out_.ch('/');
          out_.num(channels, 2, '0');
          out_.put(" :");
          for (int k = 0; k < ranks_ && k < 16; ++k) {
            out_.put("    ");
            out_.num(static_cast<std::uint64_t>(k));
          }
          out_.nl();
        }
        nccl_prefix(r, worker);
        out_.put("Channel ");
        out_.num(c, 2, '0');
        out_.put("/0 : ");
        out_.num(static_cast<std::uint64_t>(r));
        out_.ch('[');
        out_.num(static_cast<std::uint64_t>(r % 8));
        out_.put("] -> ");
        const int next = (r + 1) % ranks_;
        out_.num(static_cast<std::uint64_t>(next));
        out_.ch('[');
        out_.num(static_cast<std::uint64_t>(next % 8));
        out_.put(next / 8 == r / 8 ? "] via P2P/CUMEM/read\n" : "] [send] via NET/IB/0/GDRDMA\n");
      }
      nccl_prefix(r, worker);
      out_.put("Connected all rings\n");
      nccl_prefix(r, worker);
      out_.put("comm 0x");
      out_.hex(comm + static_cast<std::uint64_t>(r) * 0x1000, 12);
      out_.put(" rank ");
      out_.num(static_cast<std::uint64_t>(r));
      out_.put(" nranks ");
      out_.num(static_cast<std::uint64_t>(ranks_));
      out_.put(" cudaDev ");
      out_.num(static_cast<std::uint64_t>(r % 8));
      out_.put(" nvmlDev ");
      out_.num(static_cast<std::uint64_t>(r % 8));
      out_.put(" busId ");
      out_.hex(0x18000 + static_cast<std::uint64_t>(r % 8) * 0x11000, 5);
      out_.put(" commId 0x");
      out_.hex(comm >> 7, 16);
      out_.put(" - Init COMPLETE\n");
    }
    clock_.advance(rng_.range(300, 3000));
  }

  void warning() {
    const int rank = static_cast<int>(rng_.below(ranks_));
    const ErrScope err(*this);
    switch (rng_.below(6)) {
      case 0:
        rank_prefix(rank);
        out_.ch(' ');
        out_.put(kSite);
        out_.put(
            "torch/utils/checkpoint.py:1399: FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated. "
            "Please use `torch.amp.autocast('cpu', args...)` instead.\n");
        rank_prefix(rank);
        out_.put("   with device_autocast_ctx, torch.cpu.amp.autocast(**cpu_autocast_kwargs), recompute_context:  # type: ignore[attr-defined]\n");
        break;
      case 1:
        rank_prefix_tight(rank);
        out_.put("[W");
        c10_time();
        out_.put(" reducer.cpp:1400] Warning: find_unused_parameters=True was specified in DDP constructor, but did "
                 "not find any unused parameters in the forward pass. This flag results in an extra traversal of the "
                 "autograd graph every iteration,  which can adversely affect performance. If your model indeed never "
                 "has any unused parameters in the forward pass, consider turning this flag off. Note that this "
                 "warning may be a false positive if your model has flow control causing later iterations to have "
                 "unused parameters. (function operator())\n");
        break;
      case 2:
        log_prefix(rank, "WARNING", "train.py", 288);
        out_.put("grad_norm ");
        out_.fixed(rng_.range(5000, 90000), 3);
        out_.put(" exceeds clip threshold 1.000 at step ");
        out_.num(step_);
        out_.put(", clipping\n");
        break;
      case 3:
        rank_prefix(rank);
        out_.ch(' ');
        out_.put(kSite);
        out_.put(
            "torch/_dynamo/variables/functions.py:700: UserWarning: Graph break due to unsupported builtin "
            "_operator.getitem. This function is either a Python builtin (e.g. _warnings.warn) or a third-party C/C++ "
            "Python extension (perhaps created with pybind).\n");
        rank_prefix(rank);
        out_.put("   torch._dynamo.utils.warn_once(msg)\n");
        break;
      case 4:
        log_prefix(rank, "WARNING", "data.py", 203);
        out_.put("skipped sample ");
        out_.num(rng_.below(200000));
        out_.put(" of shard-");
        out_.num(rng_.below(4096), 5, '0');
        out_.put(": sequence length ");
        out_.num(rng_.range(4097, 30000));
        out_.put(" > 4096 after packing\n");
        break;
      default:
        rank_prefix(rank);
        out_.put("wandb: WARNING Step cannot be set when using syncing with tensorboard. Please log your step values as "
                 "a metric such as 'global_step'\n");
        break;
    }
  }

  // "0301 12:34:56.123456789" as torch's C++ warnings print the time.
  void c10_time() {
    const Civil c = clock_.civil();
    out_.num(static_cast<std::uint64_t>(c.month), 2, '0');
    out_.num(static_cast<std::uint64_t>(c.day), 2, '0');
    out_.ch(' ');
    out_.num(static_cast<std::uint64_t>(c.hour), 2, '0');
    out_.ch(':');
    out_.num(static_cast<std::uint64_t>(c.minute), 2, '0');
    out_.ch(':');
    out_.num(static_cast<std::uint64_t>(c.second), 2, '0');
    out_.ch('.');
    out_.num(static_cast<std::uint64_t>(clock_.millis()) * 1000000 + rng_.below(1000000), 9, '0');
  }

  void frame(int rank, std::string_view dir, std::string_view file, std::uint64_t line, std::string_view fn,
             std::string_view code, std::size_t carets = 0) {
    frame_line(rank, dir, file, line, fn);
    code_line(rank, code);
    if (carets != 0) {
      rank_prefix(rank);
      out_.repeat(' ', 5 + code.size() - std::min(carets, code.size()));
      out_.repeat('^', std::min(carets, code.size()));
      out_.nl();
    }
  }

  // An exception the job caught, logged with its traceback, and survived.
  void handled_traceback() {
    const int drawn = static_cast<int>(rng_.below(ranks_));
    const int rank = handled_traceback_rank_ >= 0 ? handled_traceback_rank_ : drawn;
    const ErrScope err(*this);
    switch (rng_.below(3)) {
      case 0: {
        log_prefix(rank, "ERROR", "checkpoint.py", 91);
        out_.put("upload of step-");
        out_.num(step_ / 1000 * 1000, 6, '0');
        out_.put(" failed, retrying in 30s\n");
        rank_prefix(rank);
        out_.put(" Traceback (most recent call last):\n");
        frame(rank, kProj, "checkpoint.py", 85, "upload", "client.upload_file(str(path), bucket, key)");
        frame(rank, kSite, "boto3/s3/inject.py", 145, "upload_file", "return transfer.upload_file(");
        frame(rank, kSite, "boto3/s3/transfer.py", 378, "upload_file", "raise S3UploadFailedError(");
        rank_prefix(rank);
        out_.put(" boto3.exceptions.S3UploadFailedError: Failed to upload /ckpt/run-42/model.safetensors to "
                 "run-42/model.safetensors: An error occurred (SlowDown) when calling the UploadPart operation "
                 "(reached max retries: 4): Please reduce your request rate.\n");
        break;
      }
      case 1: {
        log_prefix(rank, "ERROR", "data.py", 177);
        out_.put("bad record in shard-");
        out_.num(rng_.below(4096), 5, '0');
        out_.put(", skipping\n");
        rank_prefix(rank);
        out_.put(" Traceback (most recent call last):\n");
        frame(rank, kProj, "data.py", 172, "__iter__", "record = json.loads(line)", 17);
        frame(rank, "/usr/lib/python3.11/json/", "__init__.py", 346, "loads", "return _default_decoder.decode(s)", 33);
        frame(rank, "/usr/lib/python3.11/json/", "decoder.py", 337, "decode", "obj, end = self.raw_decode(s, idx=_w(s, 0).end())");
        frame(rank, "/usr/lib/python3.11/json/", "decoder.py", 353, "raw_decode", "obj, end = self.scan_once(s, idx)", 24);
        rank_prefix(rank);
        out_.put(" json.decoder.JSONDecodeError: Unterminated string starting at: line 1 column ");
        const std::uint64_t col = rng_.range(1000, 60000);
        out_.num(col);
        out_.put(" (char ");
        out_.num(col - 1);
        out_.put(")\n");
        break;
      }
      default: {
        rank_prefix(rank);
        out_.put(" wandb: Network error (ConnectionError), entering retry loop.\n");
        log_prefix(rank, "WARNING", "logging_utils.py", 40);
        out_.put("metrics upload failed\n");
        rank_prefix(rank);
        out_.put(" Traceback (most recent call last):\n");
        frame(rank, kSite, "urllib3/connection.py", 198, "_new_conn", "sock = connection.create_connection(");
        frame(rank, kSite, "urllib3/util/connection.py", 85, "create_connection", "raise err");
        frame(rank, kSite, "urllib3/util/connection.py", 73, "create_connection", "sock.connect(sa)");
        rank_prefix(rank);
        out_.put(" ConnectionRefusedError: [Errno 111] Connection refused\n");
        rank_prefix(rank);
        out_.put(" \n");
        rank_prefix(rank);
        out_.put(" During handling of the above exception, another exception occurred:\n");
        rank_prefix(rank);
        out_.put(" \n");
        rank_prefix(rank);
        out_.put(" Traceback (most recent call last):\n");
        frame(rank, kSite, "wandb/sdk/internal/internal_api.py", 2218, "upload_file", "response = self._upload_session.put(url, data=progress, headers=extra_headers)");
        frame(rank, kSite, "requests/adapters.py", 700, "send", "raise ConnectionError(e, request=request)");
        rank_prefix(rank);
        out_.put(" requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.wandb.ai', port=443): Max "
                 "retries exceeded with url: /files/user/proj/run-42 (Caused by NewConnectionError('<urllib3.connection."
                 "HTTPSConnection object at 0x7f3a");
        out_.hex(rng_.next(), 8);
        out_.put(">: Failed to establish a new connection: [Errno 111] Connection refused'))\n");
        break;
      }
    }
  }

  // ------------------------------------------------------------------ OOMs

  enum class OomKind { fragmentation, capacity, external, limit, private_pools };

  struct Oom {
    OomKind kind;
    int gpu;
    std::uint64_t requested, total, free, allocated, reserved_unallocated, private_pool, allowed;
    std::uint64_t self_pid, self_bytes, other_pid, other_bytes;
    bool nvml;          // per-process lines ("Process N has ...") vs "this process has"
    bool torch_cuda;    // torch.cuda.OutOfMemoryError (older) vs torch.OutOfMemoryError
    int where;          // 0 forward, 1 backward, 2 optimizer step
    char era = 0;       // the mixes: PyTorch message era 'A'..'I'; 0: the classic message
    int proc = 0;       // the mixes, eras D+: 0 "this process has", 1 "Process {self}" (PID namespace), 2 none
  };

  // Numbers are consistent the way the allocator's are: in_use = reserved +
  // non-PyTorch, free = total - everyone's use.
  Oom make_oom(int rank, const Oom* like = nullptr) {
    Oom o{};
    const std::uint64_t roll = rng_.below(100);
    o.kind = like ? like->kind
             : roll < 40 ? OomKind::fragmentation
             : roll < 70 ? OomKind::capacity
             : roll < 85 ? OomKind::external
             : roll < 93 ? OomKind::limit
                         : OomKind::private_pools;
    o.gpu = rank % 8;
    o.total = 7915 * kGiB / 100;  // 79.15 GiB, an 80 GB H100
    o.nvml = like ? like->nvml : rng_.chance(75);
    o.torch_cuda = like ? like->torch_cuda : rng_.chance(15);
    o.where = like ? like->where : static_cast<int>(rng_.below(3));
    o.self_pid = pid(rank);
    const std::uint64_t non_pytorch = rng_.range(380, 720) * kMiB;
    const std::uint64_t centi = kGiB / 100;
    switch (o.kind) {
      case OomKind::fragmentation:
      case OomKind::private_pools:
        o.requested = rng_.range(1, 8) * 512 * kMiB;
        o.reserved_unallocated = o.requested + rng_.range(50, 900) * centi;
        break;
      case OomKind::capacity:
        o.requested = rng_.range(1, 12) * 256 * kMiB + rng_.below(128) * 2 * kMiB;  // 2 MiB granules
        o.reserved_unallocated = rng_.range(2, 40) * centi;
        break;
      case OomKind::external:
        o.requested = rng_.range(1, 6) * 1024 * kMiB;
        o.reserved_unallocated = rng_.range(5, 60) * centi;
        o.other_pid = rng_.range(30000, 90000);
        o.other_bytes = rng_.range(1200, 2600) * centi;
        break;
      case OomKind::limit:
        o.requested = rng_.range(2, 8) * 512 * kMiB;
        o.reserved_unallocated = rng_.range(5, 80) * centi;
        o.allowed = o.total / 2 + rng_.below(400) * centi;
        break;
    }
    std::uint64_t headroom;  // free on the device when the allocation failed
    if (o.kind == OomKind::limit) {
      headroom = o.total - o.allowed - non_pytorch + rng_.range(10, 90) * centi;
    } else {
      headroom = rng_.range(5, 110) * centi;
      if (headroom >= o.requested) headroom = o.requested / 2;
    }
    o.free = headroom;
    const std::uint64_t in_use_all = o.total - headroom - rng_.range(1, 3) * centi;
    o.self_bytes = in_use_all - o.other_bytes;
    const std::uint64_t reserved = o.self_bytes - non_pytorch;
    if (o.kind == OomKind::private_pools) o.private_pool = rng_.range(100, 900) * centi;
    o.allocated = reserved - o.reserved_unallocated;  // includes private-pool allocations
    return o;
  }

  // torch's c10::CachingAllocator::format_size.
  void format_size(std::uint64_t bytes) {
    if (bytes <= 1024) {
      out_.num(bytes);
      out_.put(" bytes");
      return;
    }
    std::uint64_t unit;
    std::string_view name;
    if (bytes <= kMiB) {
      unit = 1024;
      name = " KiB";
    } else if (bytes <= kGiB) {
      unit = kMiB;
      name = " MiB";
    } else {
      unit = kGiB;
      name = " GiB";
    }
    out_.fixed((bytes * 100 + unit / 2) / unit, 2);
    out_.put(name);
  }

  // The allocator's message, as c10/cuda/CUDACachingAllocator.cpp builds it.
  void oom_message(int rank, const Oom& o) {
    mark_oom(rank, 0, false);
    rank_prefix(rank);
    out_.put(o.torch_cuda ? " torch.cuda.OutOfMemoryError: " : " torch.OutOfMemoryError: ");
    out_.put("CUDA out of memory. Tried to allocate ");
    format_size(o.requested);
    out_.put(". GPU ");
    out_.num(static_cast<std::uint64_t>(o.gpu));
    out_.put(" has a total capacity of ");
    format_size(o.total);
    out_.put(" of which ");
    format_size(o.free);
    out_.put(" is free. ");
    if (o.nvml) {
      if (o.other_bytes != 0) {
        out_.put("Process ");
        out_.num(o.other_pid);
        out_.put(" has ");
        format_size(o.other_bytes);
        out_.put(" memory in use. ");
      }
      out_.put("Process ");
      out_.num(o.self_pid);
      out_.put(" has ");
      format_size(o.self_bytes);
      out_.put(" memory in use. ");
    } else {
      out_.put("Including non-PyTorch memory, this process has ");
      format_size(o.self_bytes);
      out_.put(" memory in use. ");
    }
    if (o.allowed != 0) {
      format_size(o.allowed);
      out_.put(" allowed; ");
    }
    out_.put("Of the allocated memory ");
    format_size(o.allocated);
    out_.put(" is allocated by PyTorch, ");
    if (o.private_pool != 0) {
      out_.put("with ");
      format_size(o.private_pool);
      out_.put(" allocated in private pools (e.g., CUDA Graphs), ");
    }
    out_.put("and ");
    format_size(o.reserved_unallocated);
    out_.put(
        " is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n");
    ++stats.oom_messages;
  }

  // A Python stack frame as a traceback prints it: a "File" line, a code line.
  struct FrameSpec {
    std::string_view dir, file;
    std::uint64_t line;
    std::string_view function, code;
  };

  static constexpr std::string_view kProj = "/home/user/proj/";
  // From the user's script into the op that failed; where == 0, 1, 2.
  static constexpr FrameSpec kHead[] = {
      {kProj, "train.py", 514, "<module>", "main()"},
      {kProj, "train.py", 497, "main", "train_one_epoch(model, loader, optimizer, scaler, epoch, cfg)"},
  };
  static constexpr FrameSpec kForward[] = {
      {kProj, "train.py", 262, "train_one_epoch", "out = model(batch[\"input_ids\"], labels=batch[\"labels\"])"},
      {kSite, "torch/nn/modules/module.py", 1751, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"},
      {kSite, "torch/nn/modules/module.py", 1762, "_call_impl", "return forward_call(*args, **kwargs)"},
      {kSite, "torch/nn/parallel/distributed.py", 1643, "forward", "else self._run_ddp_forward(*inputs, **kwargs)"},
      {kSite, "torch/nn/parallel/distributed.py", 1459, "_run_ddp_forward",
       "return self.module(*inputs, **kwargs)  # type: ignore[index]"},
      {kSite, "torch/nn/modules/module.py", 1762, "_call_impl", "return forward_call(*args, **kwargs)"},
      {kProj, "model.py", 188, "forward", "attn = torch.softmax(scores.float(), dim=-1).to(q.dtype)"},
  };
  static constexpr FrameSpec kBackward[] = {
      {kProj, "train.py", 271, "train_one_epoch", "scaler.scale(loss).backward()"},
      {kSite, "torch/_tensor.py", 626, "backward", "torch.autograd.backward("},
      {kSite, "torch/autograd/__init__.py", 347, "backward", "_engine_run_backward("},
      {kSite, "torch/autograd/graph.py", 823, "_engine_run_backward",
       "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"},
  };
  static constexpr FrameSpec kOptimizerStep[] = {
      {kProj, "train.py", 279, "train_one_epoch", "scaler.step(optimizer)"},
      {kSite, "torch/amp/grad_scaler.py", 457, "step",
       "retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)"},
      {kSite, "torch/amp/grad_scaler.py", 352, "_maybe_opt_step", "retval = optimizer.step(*args, **kwargs)"},
      {kSite, "torch/optim/optimizer.py", 493, "wrapper", "out = func(*args, **kwargs)"},
      {kSite, "torch/optim/adamw.py", 220, "step", "adamw("},
      {kSite, "torch/optim/adamw.py", 782, "_multi_tensor_adamw",
       "exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)"},
  };

  // One failing rank's traceback, emitted a line at a time so that two ranks'
  // tracebacks can interleave.
  class TracebackCursor {
   public:
    TracebackCursor(int rank, const Oom& oom, std::uint64_t salt) : rank_(rank), oom_(oom), salt_(salt) {}

    // Emits the next line; returns false past the end.
    bool next(LogWriter& w) {
      const std::size_t i = next_++;
      if (i == 0) {
        w.rank_prefix(rank_);
        w.out_.put(" Traceback (most recent call last):\n");
        return true;
      }
      const std::size_t frame = (i - 1) / 2;
      const std::size_t head = std::size(kHead);
      const FrameSpec* tail = oom_.where == 0 ? kForward : oom_.where == 1 ? kBackward : kOptimizerStep;
      const std::size_t tail_size = oom_.where == 0   ? std::size(kForward)
                                    : oom_.where == 1 ? std::size(kBackward)
                                                      : std::size(kOptimizerStep);
      if (frame < head + tail_size) {
        const FrameSpec& f = frame < head ? kHead[frame] : tail[frame - head];
        // The user's own frames move a little between incidents (edits between restarts).
        const std::uint64_t line = f.line + (f.dir == kProj && frame >= head ? salt_ : 0);
        if ((i - 1) % 2 == 0) {
          w.frame_line(rank_, f.dir, f.file, line, f.function);
        } else {
          w.code_line(rank_, f.code);
        }
        return true;
      }
      if (done_) return false;
      done_ = true;
      w.oom_any(rank_, oom_);
      return true;
    }

   private:
    int rank_;
    const Oom& oom_;
    std::uint64_t salt_;
    std::size_t next_ = 0;
    bool done_ = false;
  };

  void frame_line(int rank, std::string_view dir, std::string_view file, std::uint64_t line, std::string_view fn) {
    rank_prefix(rank);
    out_.put("   File \"");
    out_.put(dir);
    out_.put(file);
    out_.put("\", line ");
    out_.num(line);
    out_.put(", in ");
    out_.put(fn);
    out_.nl();
  }
  void code_line(int rank, std::string_view code) {
    rank_prefix(rank);
    out_.put("     ");
    out_.put(code);
    out_.nl();
  }

  void oom_traceback(int rank, const Oom& o, const Oom* other, int other_rank) {
    const ErrScope err(*this);
    // The failing step's last normal lines.
    step_log_line(static_cast<std::uint64_t>(rank));
    clock_.advance(rng_.range(100, 2000));
    const std::uint64_t salt = stats.incidents % 5;
    TracebackCursor a(rank, o, salt);
    if (other == nullptr) {
      while (a.next(*this)) {
      }
      return;
    }
    TracebackCursor b(other_rank, *other, salt);
    bool more_a = true, more_b = true;
    while (more_a || more_b) {
      if (more_a && (rng_.chance(50) || !more_b)) {
        more_a = a.next(*this);
      } else {
        more_b = b.next(*this);
      }
    }
  }

  // What follows the failure: the other ranks' watchdogs time out on the
  // collective the dead rank never joined, and the agent stops everyone.
  void collateral(int failed_rank) {
    const ErrScope err(*this);
    clock_.advance(rng_.range(1000, 5000));
    if (rng_.chance(60)) {
      clock_.advance(600000);  // the watchdog's timeout
      for (int r = 0; r < ranks_ && r < 4; ++r) {
        if (r == failed_rank) continue;
        mark_look(r, "collateral", "nccl_watchdog_timeout");
        rank_prefix_tight(r);
        out_.put("[E");
        c10_time();
        out_.put(" ProcessGroupNCCL.cpp:632] [Rank ");
        out_.num(static_cast<std::uint64_t>(r));
        out_.put("] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=");
        out_.num(step_ * 3 + 1);
        out_.put(", OpType=ALLREDUCE, NumelIn=");
        out_.num(262144000);
        out_.put(", NumelOut=");
        out_.num(262144000);
        out_.put(", Timeout(ms)=600000) ran for ");
        out_.num(rng_.range(600001, 600400));
        out_.put(" milliseconds before timing out.\n");
      }
    }
    for (int r = 0; r < ranks_; ++r) {
      if (r == failed_rank) continue;
      mark_look(-1, "collateral", "sigterm");
      glog_prefix('W', launcher_pid_);
      out_.put("torch/distributed/elastic/multiprocessing/api.py:897] Sending process ");
      out_.num(pid(r));
      out_.put(" closing signal SIGTERM\n");
    }
    mark_look(-1, "collateral", "exitcode");
    glog_prefix('E', launcher_pid_);
    out_.put("torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: ");
    out_.num(static_cast<std::uint64_t>(failed_rank % 8));
    out_.put(" (pid: ");
    out_.num(pid(failed_rank));
    out_.put(") of binary: /usr/bin/python3\n");
  }

  // ================================================================== the mixes

 public:
  const std::vector<OomMark>& oom_marks() const { return ooms_; }
  const std::vector<LookMark>& look_marks() const { return looks_; }

 private:
  // ------------------------------------------------------------------ ground truth

  void mark_oom(int rank, char era, bool truncated) {
    ooms_.push_back(
        OomMark{out_.line(), out_.line_start(), out_.written(), stats.incidents, rank, era, joined_next_, truncated});
    if (joined_next_) ++stats.joined_messages;
    joined_next_ = false;
  }
  void mark_look(int rank, std::string_view kind, std::string_view what, bool rg = false) {
    looks_.push_back(LookMark{out_.line(), out_.line_start(), out_.written(), rank, kind, what, rg});
  }

  // ------------------------------------------------------------------ set-up

  void begin_mix() {
    sections_ = mix_ == Mix::ranks || mix_ == Mix::mix;
    tb_dense_ = mix_ == Mix::tracebacks || mix_ == Mix::mix;
    crlf_percent_ = mix_ == Mix::progress_bars ? 30 : 15;
    if (mix_ == Mix::progress_bars) style_ = Style::none;
    era_ = pick_era();
    gpu_total_ = pick_gpu();
    if (sections_) configure_section();
    note_style();
  }

  void note_style() {
    stats.styles_used |= std::uint64_t{1} << static_cast<int>(style_);
    stats.max_world = std::max<std::uint64_t>(stats.max_world, static_cast<std::uint64_t>(ranks_));
  }

  // Which PyTorch printed the OOMs of this job (its message era), weighted
  // towards the releases in use now.
  char pick_era() {
    const std::uint64_t roll = rng_.below(100);
    return roll < 3 ? 'A' : roll < 8 ? 'B' : roll < 18 ? 'C' : roll < 28 ? 'D' : roll < 40 ? 'E' : roll < 45 ? 'F'
           : roll < 55 ? 'G' : roll < 88 ? 'H' : 'I';
  }

  // The device's total capacity as the allocator prints it.
  std::uint64_t pick_gpu() {
    static constexpr std::uint64_t kCentiGiB[] = {7915, 7915, 7915, 3939, 3174, 9310, 13981};
    return kCentiGiB[rng_.below(std::size(kCentiGiB))] * (kGiB / 100);
  }

  // A section of the ranks and mix logs: one job of a sweep, with its own
  // launcher (prefix style), world size, collector timestamps and line ends.
  void configure_section() {
    static constexpr int kWorlds[] = {64, 8, 32, 16};
    static constexpr Style kCycle[] = {Style::rank, Style::default_, Style::srun, Style::mpirun, Style::stacked};
    if (mix_ == Mix::ranks) {
      style_ = kCycle[stats.sections % std::size(kCycle)];
      ranks_ = kWorlds[stats.sections % std::size(kWorlds)];
      collector_ts_ = stats.sections % 3 == 1;
      out_.set_crlf(stats.sections % 7 == 3);
    } else {
      const std::uint64_t roll = rng_.below(12);
      style_ = roll < 2 ? Style::none : kCycle[roll % std::size(kCycle)];
      ranks_ = kWorlds[rng_.below(std::size(kWorlds))];
      collector_ts_ = rng_.chance(25);
      out_.set_crlf(rng_.chance(crlf_percent_));
    }
    ranks_ = std::min(ranks_, max_ranks_);
    era_ = pick_era();
    gpu_total_ = pick_gpu();
    new_worker_pids();
  }

  // The next job of the sweep, as `tail -n +1 job-*.out` concatenates them.
  void new_section() {
    const std::uint64_t before = out_.written();
    ++stats.sections;
    configure_section();
    note_style();
    out_.nl();
    out_.put("==> /shared/logs/sweep-42/job-");
    out_.num(stats.sections, 4, '0');
    out_.put(".out <==\n");
    const std::uint64_t job = 4242000 + stats.sections * 17;
    if (style_ == Style::srun) {
      out_.put("srun: job ");
      out_.num(job);
      out_.put(" queued and waiting for resources\nsrun: job ");
      out_.num(job);
      out_.put(" has been allocated resources\n");
    } else if (style_ == Style::mpirun) {
      for (int node = 1; node < (ranks_ + 7) / 8; ++node) {
        out_.put("Warning: Permanently added 'gpu-node-");
        out_.num(static_cast<std::uint64_t>(node + 1), 2, '0');
        out_.put("' (ED25519) to the list of known hosts.\n");
      }
    } else {
      glog_prefix('I', launcher_pid_);
      out_.put("torch/distributed/elastic/agent/server/api.py:525] [default] Starting worker group\n");
    }
    // Every rank says hello, in whatever order the processes got there.
    std::vector<int> order = shuffled_ranks();
    for (int r : order) {
      log_prefix(r, "INFO", "train.py", 96);
      out_.put("rank ");
      out_.num(static_cast<std::uint64_t>(r));
      out_.put("/");
      out_.num(static_cast<std::uint64_t>(ranks_));
      out_.put(" on ");
      hostname(r);
      out_.put(" cuda:");
      out_.num(static_cast<std::uint64_t>(r % 8));
      out_.put(" starting fresh, checkpoints in /ckpt/sweep-42/job-");
      out_.num(stats.sections, 4, '0');
      out_.nl();
    }
    nccl_burst(true);
    stats.bytes_sections += out_.written() - before;
    after_startup();
  }

  void after_startup() {
    if (mix_ == Mix::memory_words || mix_ == Mix::mix || mix_ == Mix::lookalikes) config_dump();
  }

  std::vector<int> shuffled_ranks() {
    std::vector<int> order(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) order[static_cast<std::size_t>(r)] = r;
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng_.below(i)]);
    return order;
  }
  int pick_rank() { return static_cast<int>(rng_.below(static_cast<std::uint64_t>(ranks_))); }

  // ------------------------------------------------------------------ noise

  void mix_noise() {
    if (tb_dense_ && out_.line() >= next_tb_line_) {
      const std::uint64_t before = out_.written();
      ordinary_traceback();
      stats.bytes_tracebacks += out_.written() - before;
      next_tb_line_ = out_.line() + rng_.range(30, 200);
      return;
    }
    const std::uint64_t roll = rng_.below(10000);
    const std::uint64_t before = out_.written();
    std::uint64_t* bucket = nullptr;
    switch (mix_) {
      case Mix::memory_words:
        if (roll < 3000) {
          memory_chatter();
          bucket = &stats.bytes_memory;
        }
        break;
      case Mix::progress_bars:
        if (roll < 26) {
          long_bar();
          bucket = &stats.bytes_long_bars;
        } else if (roll < 60) {
          short_bars();
          bucket = &stats.bytes_long_bars;
        }
        break;
      case Mix::ranks:
        if (roll < 3000) {
          rank_round();
          bucket = &stats.bytes_rank_rounds;
        } else if (roll < 3150) {
          warning_all_ranks();
          bucket = &stats.bytes_rank_rounds;
        }
        break;
      case Mix::lookalikes:
        if (roll < 80) {
          lookalike();
          bucket = &stats.bytes_lookalikes;
        }
        break;
      case Mix::mix:
        if (roll < 900) {
          memory_chatter();
          bucket = &stats.bytes_memory;
        } else if (roll < 912) {
          long_bar();
          bucket = &stats.bytes_long_bars;
        } else if (roll < 930) {
          short_bars();
          bucket = &stats.bytes_long_bars;
        } else if (roll < 1600) {
          rank_round();
          bucket = &stats.bytes_rank_rounds;
        } else if (roll < 1650) {
          warning_all_ranks();
          bucket = &stats.bytes_rank_rounds;
        } else if (roll < 1700) {
          lookalike();
          bucket = &stats.bytes_lookalikes;
        }
        break;
      default:
        break;
    }
    if (bucket == nullptr) {
      classic_noise();
      return;
    }
    *bucket += out_.written() - before;
  }

  // One line of the program's own output on a rank: the mark, a space, text.
  void py(int rank, std::string_view text) {
    rank_prefix(rank);
    out_.ch(' ');
    out_.put(text);
    out_.nl();
  }

  // Python 3.11's position line under a frame's code: '~' around, '^' at the
  // failing part, `at` columns into the code.
  void carets(int rank, std::size_t at, std::size_t tildes, std::size_t hats, std::size_t tail_tildes = 0) {
    rank_prefix(rank);
    out_.repeat(' ', 5 + at);
    out_.repeat('~', tildes);
    out_.repeat('^', hats);
    out_.repeat('~', tail_tildes);
    out_.nl();
  }

  void chain(int rank, bool cause) {
    py(rank, "");
    py(rank, cause ? "The above exception was the direct cause of the following exception:"
                   : "During handling of the above exception, another exception occurred:");
    py(rank, "");
  }

  // A site-packages frame.
  void sp(int rank, std::string_view file, std::uint64_t line, std::string_view fn, std::string_view code) {
    frame_line(rank, kSite, file, line, fn);
    code_line(rank, code);
  }
  void user(int rank, std::string_view file, std::uint64_t line, std::string_view fn, std::string_view code) {
    frame_line(rank, kProj, file, line, fn);
    code_line(rank, code);
  }
  void stdlib(int rank, std::string_view file, std::uint64_t line, std::string_view fn, std::string_view code) {
    frame_line(rank, "/usr/lib/python3.11/", file, line, fn);
    if (!code.empty()) code_line(rank, code);
  }

  // DataLoader's frames from the training loop into the fetch.
  void loader_frames(int rank) {
    user(rank, "train.py", 257, "train_one_epoch", "for step, batch in enumerate(loader):");
    sp(rank, "torch/utils/data/dataloader.py", 708, "__next__", "data = self._next_data()");
    carets(rank, 7, 0, 17);
    sp(rank, "torch/utils/data/dataloader.py", 1480, "_next_data", "return self._process_data(data)");
    carets(rank, 7, 0, 24);
    sp(rank, "torch/utils/data/dataloader.py", 1505, "_process_data", "data.reraise()");
  }

  void exc(int rank, std::string_view type, std::string_view text) {
    rank_prefix(rank);
    out_.ch(' ');
    out_.put(type);
    out_.put(": ");
    out_.put(text);
  }

  // An exception the job caught, logged (logging.exception) and survived: many
  // kinds, so that a reader cannot learn one shape.
  void ordinary_traceback() {
    const int rank = pick_rank();
    const ErrScope err(*this);
    const std::uint64_t kind = rng_.below(20);
    switch (kind) {
      case 0: {  // KeyError in a dataset, 3.11 carets
        log_prefix(rank, "ERROR", "data.py", 212);
        out_.put("failed to build sample ");
        out_.num(rng_.below(9000000));
        out_.put(" from shard-");
        const std::uint64_t shard = rng_.below(4096);
        out_.num(shard, 5, '0');
        out_.put(", skipping\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "data.py", 205, "__getitem__", "meta = self.index[key]");
        carets(rank, 7, 10, 5);
        exc(rank, "KeyError", "'shard-");
        out_.num(shard, 5, '0');
        out_.ch('/');
        out_.num(rng_.below(200000), 6, '0');
        out_.put("'\n");
        break;
      }
      case 1: {  // ValueError from a tokenizer, chained (transformers re-raises)
        log_prefix(rank, "ERROR", "collate.py", 58);
        out_.put("collate failed for batch ");
        out_.num(step_);
        out_.nl();
        py(rank, "Traceback (most recent call last):");
        sp(rank, "transformers/tokenization_utils_base.py", 775, "convert_to_tensors", "tensor = as_tensor(value)");
        carets(rank, 9, 0, 16);
        sp(rank, "transformers/tokenization_utils_base.py", 737, "as_tensor", "return torch.tensor(value)");
        carets(rank, 7, 0, 19);
        exc(rank, "ValueError", "expected sequence of length ");
        out_.num(rng_.range(256, 4096));
        out_.put(" at dim 1 (got ");
        out_.num(rng_.range(100, 255));
        out_.put(")\n");
        chain(rank, true);
        py(rank, "Traceback (most recent call last):");
        user(rank, "collate.py", 51, "__call__", "enc = self.tokenizer(texts, padding=\"longest\", return_tensors=\"pt\")");
        carets(rank, 6, 0, 63);
        sp(rank, "transformers/tokenization_utils_base.py", 2887, "__call__",
           "encodings = self._call_one(text=text, text_pair=text_pair, **all_kwargs)");
        sp(rank, "transformers/tokenization_utils_base.py", 2975, "_call_one", "return self.batch_encode_plus(");
        sp(rank, "transformers/tokenization_utils_fast.py", 580, "_batch_encode_plus",
           "return BatchEncoding(sanitized_tokens, sanitized_encodings, tensor_type=return_tensors)");
        sp(rank, "transformers/tokenization_utils_base.py", 791, "convert_to_tensors", "raise ValueError(");
        exc(rank, "ValueError",
            "Unable to create tensor, you should probably activate truncation and/or padding with 'padding=True' "
            "'truncation=True' to have batched tensors with the same length. Perhaps your features (`labels` in this "
            "case) have excessive nesting (inputs type `list` where type `int` is expected).\n");
        break;
      }
      case 2: {  // FileNotFoundError resuming from a checkpoint
        log_prefix(rank, "WARNING", "checkpoint.py", 64);
        out_.put("could not load /ckpt/run-42/step-");
        const std::uint64_t at = (step_ / 1000 + rng_.below(3)) * 1000;
        out_.num(at, 6, '0');
        out_.put("/optimizer.pt, trying the previous checkpoint\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "checkpoint.py", 58, "load_latest",
             "state = torch.load(path, map_location=\"cpu\", weights_only=True)");
        carets(rank, 8, 0, 55);
        sp(rank, "torch/serialization.py", 1425, "load", "with _open_file_like(f, \"rb\") as opened_file:");
        carets(rank, 5, 0, 24);
        sp(rank, "torch/serialization.py", 751, "_open_file_like", "return _open_file(name_or_buffer, mode)");
        carets(rank, 7, 0, 32);
        sp(rank, "torch/serialization.py", 732, "__init__", "super().__init__(open(name, mode))");
        carets(rank, 17, 0, 16);
        exc(rank, "FileNotFoundError", "[Errno 2] No such file or directory: '/ckpt/run-42/step-");
        out_.num(at, 6, '0');
        out_.put("/optimizer.pt'\n");
        break;
      }
      case 3: {  // HTTP 5xx from the hub, chained, then a retry line
        log_prefix(rank, "WARNING", "hub.py", 40);
        out_.put("push_to_hub failed (attempt ");
        const std::uint64_t attempt = rng_.range(1, 4);
        out_.num(attempt);
        out_.put("/5), retrying in ");
        out_.num(std::uint64_t{1} << (attempt + 1));
        out_.put("s\n");
        const std::string_view code = rng_.chance(50) ? "503 Server Error: Service Unavailable"
                                                       : "502 Server Error: Bad Gateway";
        py(rank, "Traceback (most recent call last):");
        sp(rank, "huggingface_hub/utils/_http.py", 406, "hf_raise_for_status", "response.raise_for_status()");
        sp(rank, "requests/models.py", 1024, "raise_for_status", "raise HTTPError(http_error_msg, response=self)");
        exc(rank, "requests.exceptions.HTTPError", code);
        out_.put(" for url: https://huggingface.co/api/models/org/run-42/commit/main\n");
        chain(rank, true);
        py(rank, "Traceback (most recent call last):");
        user(rank, "hub.py", 33, "push", "api.upload_folder(folder_path=path, repo_id=repo, commit_message=msg)");
        sp(rank, "huggingface_hub/utils/_validators.py", 114, "_inner_fn", "return fn(*args, **kwargs)");
        carets(rank, 7, 0, 19);
        sp(rank, "huggingface_hub/hf_api.py", 1524, "_inner", "return fn(self, *args, **kwargs)");
        sp(rank, "huggingface_hub/hf_api.py", 4214, "create_commit",
           "hf_raise_for_status(commit_resp, endpoint_name=\"commit\")");
        sp(rank, "huggingface_hub/utils/_http.py", 477, "hf_raise_for_status",
           "raise _format(HfHubHTTPError, str(e), response) from e");
        exc(rank, "huggingface_hub.errors.HfHubHTTPError", code);
        out_.put(" for url: https://huggingface.co/api/models/org/run-42/commit/main (Request ID: Root=1-");
        out_.hex(rng_.next(), 8);
        out_.ch('-');
        out_.hex(rng_.next(), 16);
        out_.put(")\n");
        break;
      }
      case 4:
      case 5: {  // the classic three (S3 upload, JSON record, wandb network)
        handled_traceback_on(rank);
        break;
      }
      case 6: {  // a tokenizer warning logged with its stack (logging's stack_info=True)
        log_prefix(rank, "WARNING", "tokenization_utils_base.py", 4117);
        out_.put("Token indices sequence length is longer than the specified maximum sequence length for this model (");
        out_.num(rng_.range(4097, 30000));
        out_.put(" > 4096). Running this sequence through the model will result in indexing errors\n");
        py(rank, "Stack (most recent call last):");
        user(rank, "train.py", 514, "<module>", "main()");
        user(rank, "train.py", 497, "main", "train_one_epoch(model, loader, optimizer, scaler, epoch, cfg)");
        user(rank, "train.py", 257, "train_one_epoch", "for step, batch in enumerate(loader):");
        user(rank, "data.py", 131, "__iter__", "ids = self.tokenizer(text)[\"input_ids\"]");
        sp(rank, "transformers/tokenization_utils_base.py", 3055, "__call__",
           "encodings = self._call_one(text=text, text_pair=text_pair, **all_kwargs)");
        sp(rank, "transformers/tokenization_utils_base.py", 4117, "_eventual_warn_about_too_long_sequence",
           "logger.warning(");
        // Now the real traceback the long sequence caused further down.
        log_prefix(rank, "ERROR", "data.py", 140);
        out_.put("dropping document ");
        out_.num(rng_.below(90000000));
        out_.nl();
        py(rank, "Traceback (most recent call last):");
        user(rank, "data.py", 136, "__iter__", "yield self.pack(ids)");
        carets(rank, 6, 0, 14);
        user(rank, "data.py", 98, "pack", "chunk = ids[self.pos : self.pos + self.seq_len]");
        carets(rank, 8, 3, 37);
        exc(rank, "TypeError", "slice indices must be integers or None or have an __index__ method\n");
        break;
      }
      case 7: {  // AssertionError in evaluation
        log_prefix(rank, "ERROR", "eval.py", 77);
        out_.put("eval batch ");
        out_.num(rng_.below(400));
        out_.put(" failed\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "eval.py", 71, "evaluate",
             "assert logits.shape[-1] == tokenizer.vocab_size, (logits.shape, tokenizer.vocab_size)");
        carets(rank, 7, 0, 40);
        exc(rank, "AssertionError", "(torch.Size([8, 4096, 32064]), 32000)\n");
        break;
      }
      case 8: {  // ZeroDivisionError in a metric
        log_prefix(rank, "ERROR", "metrics.py", 51);
        out_.put("metric perplexity failed on an empty eval shard\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "metrics.py", 48, "compute", "return {\"ppl\": self.perplexity()}");
        carets(rank, 16, 0, 17);
        user(rank, "metrics.py", 44, "perplexity", "return math.exp(self.total_loss / self.n_tokens)");
        carets(rank, 16, 15, 3, 13);
        exc(rank, "ZeroDivisionError", "float division by zero\n");
        break;
      }
      case 9: {  // IndexError in a collate function, re-raised by the DataLoader
        log_prefix(rank, "WARNING", "train.py", 262);
        out_.put("skipping a malformed batch at step ");
        out_.num(step_);
        out_.nl();
        py(rank, "Traceback (most recent call last):");
        loader_frames(rank);
        exc(rank, "IndexError", "Caught IndexError in DataLoader worker process ");
        out_.num(rng_.below(8));
        out_.put(".\n");
        py(rank, "Original Traceback (most recent call last):");
        sp(rank, "torch/utils/data/_utils/worker.py", 351, "_worker_loop", "data = fetcher.fetch(index)  # type: ignore[possibly-undefined]");
        carets(rank, 7, 0, 20);
        sp(rank, "torch/utils/data/_utils/fetch.py", 55, "fetch", "return self.collate_fn(data)");
        carets(rank, 7, 0, 21);
        user(rank, "collate.py", 37, "__call__", "first = batch[0][\"pixel_values\"]");
        carets(rank, 8, 5, 3);
        py(rank, "IndexError: list index out of range");
        py(rank, "");
        break;
      }
      case 10: {  // TypeError in a callback
        log_prefix(rank, "ERROR", "callbacks.py", 97);
        out_.put("callback BestCheckpoint.on_log failed\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "callbacks.py", 93, "on_log", "self.best = max(self.best, logs[\"eval_accuracy\"])");
        carets(rank, 27, 4, 17);
        exc(rank, "TypeError", "'NoneType' object is not subscriptable\n");
        break;
      }
      case 11: {  // a device mismatch during generation (names cuda:N, is no memory error)
        log_prefix(rank, "ERROR", "eval.py", 120);
        out_.put("generation for prompt ");
        out_.num(rng_.below(500));
        out_.put(" failed\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "eval.py", 113, "generate", "out = model.generate(**inputs, max_new_tokens=256)");
        carets(rank, 6, 0, 50);
        sp(rank, "torch/utils/_contextlib.py", 116, "decorate_context", "return func(*args, **kwargs)");
        carets(rank, 7, 0, 21);
        sp(rank, "transformers/generation/utils.py", 2215, "generate", "result = self._sample(");
        sp(rank, "transformers/generation/utils.py", 3206, "_sample", "outputs = self(**model_inputs, return_dict=True)");
        sp(rank, "torch/nn/modules/module.py", 1751, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)");
        sp(rank, "torch/nn/modules/module.py", 1762, "_call_impl", "return forward_call(*args, **kwargs)");
        sp(rank, "torch/nn/modules/sparse.py", 190, "forward", "return F.embedding(");
        sp(rank, "torch/nn/functional.py", 2551, "embedding",
           "return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)");
        carets(rank, 7, 0, 72);
        exc(rank, "RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, cuda:");
        out_.num(static_cast<std::uint64_t>(rank % 8));
        out_.put(" and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)\n");
        break;
      }
      case 12: {  // an unreadable image
        log_prefix(rank, "WARNING", "data.py", 244);
        out_.put("replacing unreadable image with a random sample\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "data.py", 240, "load_image", "img = Image.open(path).convert(\"RGB\")");
        carets(rank, 6, 0, 16);
        sp(rank, "PIL/Image.py", 3498, "open", "raise UnidentifiedImageError(msg)");
        exc(rank, "PIL.UnidentifiedImageError", "cannot identify image file '/data/images/");
        out_.num(rng_.below(1000), 5, '0');
        out_.ch('/');
        out_.num(rng_.below(1000000000), 9, '0');
        out_.put(".jpg'\n");
        break;
      }
      case 13: {  // a full disk while saving, chained (3.11 "During handling")
        log_prefix(rank, "ERROR", "checkpoint.py", 112);
        out_.put("checkpoint save to /ckpt/run-42/step-");
        out_.num(step_ / 1000 * 1000, 6, '0');
        out_.put(" failed, will retry at the next interval\n");
        py(rank, "Traceback (most recent call last):");
        sp(rank, "torch/serialization.py", 944, "save", "_save(");
        sp(rank, "torch/serialization.py", 1216, "_save", "zip_file.write_record(name, storage, num_bytes)");
        exc(rank, "RuntimeError", "[enforce fail at inline_container.cc:783] . PytorchStreamWriter failed writing file data/");
        out_.num(rng_.below(400));
        out_.put(": file write failed\n");
        chain(rank, false);
        py(rank, "Traceback (most recent call last):");
        user(rank, "checkpoint.py", 104, "save", "torch.save(state, tmp_path)");
        sp(rank, "torch/serialization.py", 943, "save", "with _open_zipfile_writer(f) as opened_zipfile:");
        sp(rank, "torch/serialization.py", 784, "__exit__", "self.file_like.write_end_of_file()");
        exc(rank, "RuntimeError", "[enforce fail at inline_container.cc:603] . unexpected pos ");
        {
          const std::uint64_t pos = rng_.range(1000000000, 9000000000);
          out_.num(pos);
          out_.put(" vs ");
          out_.num(pos - rng_.range(64, 512));
        }
        out_.nl();
        break;
      }
      case 14: {  // git in a container without .git
        log_prefix(rank, "WARNING", "utils.py", 21);
        out_.put("could not read the git revision\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "utils.py", 17, "git_rev",
             "return subprocess.check_output([\"git\", \"rev-parse\", \"HEAD\"], cwd=root).decode().strip()");
        carets(rank, 7, 0, 64);
        stdlib(rank, "subprocess.py", 466, "check_output",
               "return run(*popenargs, stdout=PIPE, timeout=timeout, check=True,");
        carets(rank, 7, 0, 57);
        stdlib(rank, "subprocess.py", 571, "run", "raise CalledProcessError(retcode, process.args,");
        py(rank, "subprocess.CalledProcessError: Command '['git', 'rev-parse', 'HEAD']' returned non-zero exit status 128.");
        break;
      }
      case 15: {  // a gzip file read as text
        log_prefix(rank, "ERROR", "data.py", 166);
        out_.put("cannot read /data/raw/part-");
        const std::uint64_t part = rng_.below(100000);
        out_.num(part, 5, '0');
        out_.put(".jsonl, skipping the file\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "data.py", 160, "read_jsonl", "for line in f:");
        frame_line(rank, "", "<frozen codecs>", 322, "decode");
        exc(rank, "UnicodeDecodeError", "'utf-8' codec can't decode byte 0x8b in position 1: invalid start byte\n");
        break;
      }
      case 16: {  // a streaming read that timed out, chained twice
        log_prefix(rank, "WARNING", "stream.py", 88);
        out_.put("read of s3://corpus/shards/shard-");
        out_.num(rng_.below(100000), 5, '0');
        out_.put(".tar timed out, retry 1/3\n");
        py(rank, "Traceback (most recent call last):");
        sp(rank, "urllib3/response.py", 754, "_error_catcher", "yield");
        sp(rank, "urllib3/response.py", 879, "_raw_read", "data = self._fp_read(amt, read1=read1) if not fp_closed else b\"\"");
        carets(rank, 7, 0, 36);
        stdlib(rank, "http/client.py", 473, "read", "s = self.fp.read(amt)");
        stdlib(rank, "socket.py", 706, "readinto", "return self._sock.recv_into(b)");
        stdlib(rank, "ssl.py", 1314, "recv_into", "return self.read(nbytes, buffer)");
        stdlib(rank, "ssl.py", 1166, "read", "return self._sslobj.read(len, buffer)");
        py(rank, "TimeoutError: The read operation timed out");
        chain(rank, false);
        py(rank, "Traceback (most recent call last):");
        sp(rank, "botocore/response.py", 99, "read", "chunk = self._raw_stream.read(amt)");
        sp(rank, "urllib3/response.py", 953, "read", "data = self._raw_read(amt)");
        sp(rank, "urllib3/response.py", 878, "_raw_read", "with self._error_catcher():");
        stdlib(rank, "contextlib.py", 155, "__exit__", "self.gen.throw(typ, value, traceback)");
        sp(rank, "urllib3/response.py", 759, "_error_catcher",
           "raise ReadTimeoutError(self._pool, None, \"Read timed out.\") from e  # type: ignore[arg-type]");
        py(rank, "urllib3.exceptions.ReadTimeoutError: AWSHTTPSConnectionPool(host='corpus.s3.us-east-1.amazonaws.com', "
                 "port=443): Read timed out.");
        chain(rank, false);
        py(rank, "Traceback (most recent call last):");
        user(rank, "stream.py", 81, "fetch", "return obj[\"Body\"].read()");
        sp(rank, "botocore/response.py", 102, "read", "raise ReadTimeoutError(endpoint_url=e.url, error=e)");
        py(rank, "botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: \"None\"");
        break;
      }
      case 17: {  // the triton cache on a read-only home
        log_prefix(rank, "WARNING", "compile.py", 30);
        out_.put("torch.compile cache unavailable, compiling from scratch\n");
        py(rank, "Traceback (most recent call last):");
        sp(rank, "triton/runtime/cache.py", 120, "put", "os.makedirs(self.cache_dir, exist_ok=True)");
        frame_line(rank, "", "<frozen os>", 225, "makedirs");
        exc(rank, "PermissionError", "[Errno 13] Permission denied: '/home/user/.triton/cache/");
        out_.hex(rng_.next(), 16);
        out_.put("'\n");
        break;
      }
      case 18: {  // the tokenizers fork warning, then a worker's pickling error
        py(rank, "huggingface/tokenizers: The current process just got forked, after parallelism has already been "
                 "used. Disabling parallelism to avoid deadlocks...");
        py(rank, "To disable this warning, you can either:");
        py(rank, "\t- Avoid using `tokenizers` before the fork if possible");
        py(rank, "\t- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)");
        log_prefix(rank, "ERROR", "data.py", 301);
        out_.put("could not start the prefetch pool, falling back to the main process\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "data.py", 296, "start_pool", "self.pool = mp.Pool(self.workers, initializer=_init, initargs=(self.tok,))");
        carets(rank, 12, 0, 67);
        stdlib(rank, "multiprocessing/context.py", 119, "Pool", "return Pool(processes, initializer, initargs, maxtasksperchild,");
        stdlib(rank, "multiprocessing/pool.py", 215, "__init__", "self._repopulate_pool()");
        stdlib(rank, "multiprocessing/reduction.py", 51, "dumps", "cls(buf, protocol).dump(obj)");
        py(rank, "AttributeError: Can't pickle local object 'build_tokenizer.<locals>.normalize'");
        break;
      }
      default: {  // a wrong config key, found late
        log_prefix(rank, "ERROR", "train.py", 340);
        out_.put("eval hook failed; continuing without eval this epoch\n");
        py(rank, "Traceback (most recent call last):");
        user(rank, "train.py", 336, "maybe_eval", "if step % cfg.eval.every_steps == 0:");
        carets(rank, 8, 9, 16);
        sp(rank, "omegaconf/dictconfig.py", 355, "__getattr__", "self._format_and_raise(");
        sp(rank, "omegaconf/_utils.py", 899, "format_and_raise", "_raise(ex, cause)");
        py(rank, "omegaconf.errors.ConfigAttributeError: Key 'every_steps' is not in struct");
        py(rank, "    full_key: eval.every_steps");
        py(rank, "    object_type=dict");
        break;
      }
    }
  }

  // The classic handled tracebacks, on a given rank.
  void handled_traceback_on(int rank) {
    handled_traceback_rank_ = rank;  // handled_traceback() still draws its own (and ignores it)
    handled_traceback();
    handled_traceback_rank_ = -1;
  }

  // ------------------------------------------------------------------ memory words

  // "[2026-03-01 12:00:00,123] [INFO] [utils.py:781:see_memory_usage] " as
  // DeepSpeed's logger prints it (after the launcher's mark).
  void ds_prefix(int rank, std::string_view level, std::string_view where) {
    clock_.advance(rng_.range(0, 3));
    rank_prefix_tight(rank);
    out_.ch('[');
    timestamp();
    out_.put("] [");
    out_.put(level);
    out_.put("] [");
    out_.put(where);
    out_.put("] ");
  }

  void gib2(std::uint64_t centi) {  // "12.34"
    out_.fixed(centi, 2);
  }

  // Lines that name memory, allocations and CUDA in passing: the bulk of what a
  // memory-conscious job prints, none of it a failure.
  void memory_chatter() {
    const int rank = pick_rank();
    const std::uint64_t total = gpu_total_ / (kGiB / 100);  // centi-GiB
    const std::uint64_t ma = rng_.range(total * 40 / 100, total * 80 / 100);
    const std::uint64_t roll = rng_.below(100);
    if (roll < 28) {  // DeepSpeed see_memory_usage
      static constexpr std::string_view kWhen[] = {"After Forward", "After Backward", "Before optimizer step",
                                                   "After optimizer step", "Engine before step", "end of epoch"};
      ds_prefix(rank, "INFO", "utils.py:781:see_memory_usage");
      out_.put(rng_.pick(kWhen));
      out_.nl();
      ds_prefix(rank, "INFO", "utils.py:782:see_memory_usage");
      out_.put("MA ");
      gib2(ma);
      out_.put(" GB         Max_MA ");
      gib2(ma + rng_.range(10, 300));
      out_.put(" GB         CA ");
      gib2(ma + rng_.range(300, 900));
      out_.put(" GB         Max_CA ");
      out_.num((ma + 1000) / 100);
      out_.put(" GB \n");
      ds_prefix(rank, "INFO", "utils.py:789:see_memory_usage");
      out_.put("CPU Virtual Memory:  used = ");
      gib2(rng_.range(15000, 90000) / 10);
      out_.put(" GB, percent = ");
      out_.fixed(rng_.range(50, 900), 1);
      out_.put("%\n");
    } else if (roll < 46) {  // a debug print of torch.cuda's counters
      log_prefix(rank, "DEBUG", "train.py", 288);
      out_.put("step ");
      out_.num(step_);
      out_.put(": torch.cuda.memory_allocated()=");
      gib2(ma);
      out_.put(" GiB torch.cuda.max_memory_allocated()=");
      gib2(ma + rng_.range(100, 600));
      out_.put(" GiB torch.cuda.memory_reserved()=");
      gib2(ma + rng_.range(600, 1200));
      out_.put(" GiB\n");
    } else if (roll < 58) {  // HF Trainer's log dict with a memory callback's keys
      rank_prefix(rank);
      out_.put(" {'loss': ");
      out_.fixed(loss_ / 100, 2);
      out_.put(", 'grad_norm': ");
      out_.fixed(rng_.range(150, 2400), 3);
      out_.put(", 'learning_rate': ");
      lr();
      out_.put(", 'memory_allocated': ");
      gib2(ma);
      out_.put(", 'max_memory_allocated': ");
      gib2(ma + rng_.range(50, 400));
      out_.put(", 'max_memory_reserved': ");
      gib2(ma + rng_.range(400, 1000));
      out_.put(", 'epoch': ");
      out_.fixed(epoch_ * 100 + epoch_step_ * 100 / kStepsPerEpoch, 2);
      out_.put("}\n");
    } else if (roll < 68) {  // Lightning's DeviceStatsMonitor
      rank_prefix(rank);
      out_.put(" {'DeviceStatsMonitor.on_train_batch_end/allocated_bytes.all.current': ");
      out_.num(ma * (kGiB / 100));
      out_.put(".0, 'DeviceStatsMonitor.on_train_batch_end/allocated_bytes.all.peak': ");
      out_.num((ma + rng_.range(50, 400)) * (kGiB / 100));
      out_.put(".0, 'DeviceStatsMonitor.on_train_batch_end/reserved_bytes.all.current': ");
      out_.num((ma + rng_.range(400, 1000)) * (kGiB / 100));
      out_.put(".0, 'DeviceStatsMonitor.on_train_batch_end/num_alloc_retries': 0.0, 'step': ");
      out_.num(step_);
      out_.put("}\n");
    } else if (roll < 78) {  // a monitoring thread's one-liner per GPU
      const std::uint64_t used = ma * 1024 / 100 + rng_.range(600, 2000);
      const std::uint64_t cap = total * 1024 / 100 + 400;
      log_prefix(rank, "INFO", "monitor.py", 37);
      out_.put("GPU memory usage: ");
      out_.num(used);
      out_.put("MiB / ");
      out_.num(cap);
      out_.put("MiB (");
      out_.fixed(used * 1000 / cap, 1);
      out_.put("%), util ");
      out_.num(rng_.range(70, 100));
      out_.put("%, cuda:");
      out_.num(static_cast<std::uint64_t>(rank % 8));
      out_.put(" temp ");
      out_.num(rng_.range(38, 71));
      out_.put("C\n");
    } else if (roll < 82) {
      nvidia_smi();
    } else if (roll < 85) {
      memory_summary(rank, ma);
    } else if (roll < 90) {  // an inference engine beside the trainer (evaluation by generation)
      log_prefix(rank, "INFO", "worker.py", 271);
      out_.put("Memory profiling takes ");
      out_.fixed(rng_.range(200, 900), 2);
      out_.put(" seconds; total_gpu_memory (");
      gib2(total);
      out_.put("GiB) x gpu_memory_utilization (0.30) = ");
      gib2(total * 30 / 100);
      out_.put("GiB\n");
      log_prefix(rank, "INFO", "worker.py", 275);
      out_.put("Allocated ");
      gib2(rng_.range(80, 900));
      out_.put(" GiB for KV cache: # CUDA blocks: ");
      out_.num(rng_.range(2000, 30000));
      out_.put(", # CPU blocks: 2048\n");
    } else if (roll < 98) {  // assorted
      static constexpr std::string_view kLines[] = {
          "Using memory efficient attention (xformers 0.0.28) for the cross-attention layers",
          "torch.backends.cuda.enable_mem_efficient_sdp(True); flash_sdp(True); math_sdp(False)",
          "DataLoader(num_workers=8, pin_memory=True, persistent_workers=True, prefetch_factor=4)",
          "activation checkpointing on 32 blocks saves an estimated 18.2 GiB of activation memory per rank",
          "model has 6.74B parameters; fp32 master weights + Adam states need 107.8 GiB across 8 ranks",
          "moving the EMA copy of the weights to cpu to save GPU memory",
          "CUDA graphs captured for 3 shapes; graph pool allocations are reused across steps",
          "allocator: caching allocator with expandable segments, max_split_size_mb unset",
      };
      log_prefix(rank, "INFO", "setup.py", 150);
      out_.put(rng_.pick(kLines));
      out_.nl();
    } else {  // the Trainer's final metrics block
      rank_prefix(rank);
      out_.put(" ***** train metrics *****\n");
      static constexpr std::string_view kKeys[] = {
          "  epoch                      = ", "  train_loss                 = ", "  train_mem_cpu_alloc_delta  = ",
          "  train_mem_cpu_peaked_delta = ", "  train_mem_gpu_alloc_delta  = ", "  train_mem_gpu_peaked_delta = ",
          "  train_runtime              = ", "  train_samples_per_second   = "};
      for (std::size_t k = 0; k < std::size(kKeys); ++k) {
        rank_prefix(rank);
        out_.put(kKeys[k]);
        if (k == 0) {
          out_.fixed(epoch_ * 10 + 10, 1, 10);
        } else if (k == 1) {
          out_.fixed(loss_, 4, 10);
        } else if (k <= 5) {
          out_.num(rng_.range(100, 40000), 9);
          out_.put("MB");
        } else if (k == 6) {
          out_.repeat(' ', 3);
          interval(rng_.range(3600, 90000));
          out_.put(".");
          out_.num(rng_.below(100), 2, '0');
        } else {
          out_.fixed(rng_.range(1000, 90000), 3, 10);
        }
        out_.nl();
      }
    }
  }

  // `nvidia-smi` as a job's monitoring hook prints it, unprefixed.
  void nvidia_smi() {
    const std::uint64_t cap = gpu_total_ / kMiB + 400;
    out_.put(
        "+-----------------------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
        "|-----------------------------------------+------------------------+----------------------+\n"
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
        "|                                         |                        |               MIG M. |\n"
        "|=========================================+========================+======================|\n");
    std::uint64_t used[8];
    for (int g = 0; g < 8; ++g) {
      used[g] = cap * rng_.range(60, 98) / 100;
      out_.put("|   ");
      out_.num(static_cast<std::uint64_t>(g));
      out_.put("  NVIDIA H100 80GB HBM3          On  |   00000000:");
      out_.hex(0x18 + static_cast<std::uint64_t>(g) * 0x11, 2);
      out_.put(":00.0 Off |                    0 |\n| N/A   ");
      out_.num(rng_.range(30, 70));
      out_.put("C    P0            ");
      out_.num(rng_.range(200, 700), 3);
      out_.put("W /  700W |   ");
      out_.num(used[g], 5);
      out_.put("MiB /  ");
      out_.num(cap, 5);
      out_.put("MiB |    ");
      out_.num(rng_.range(50, 100), 3);
      out_.put("%      Default |\n|                                         |                        |             "
               "Disabled |\n+-----------------------------------------+------------------------+----------------------+\n");
    }
    out_.put(
        "\n+-----------------------------------------------------------------------------------------+\n"
        "| Processes:                                                                              |\n"
        "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n"
        "|        ID   ID                                                               Usage      |\n"
        "|=========================================================================================|\n");
    for (int g = 0; g < 8; ++g) {
      out_.put("|    ");
      out_.num(static_cast<std::uint64_t>(g));
      out_.put("   N/A  N/A    ");
      out_.num(pid(g), 7);
      out_.put("      C   /usr/bin/python3                             ");
      out_.num(used[g] - 500, 5);
      out_.put("MiB |\n");
    }
    out_.put("+-----------------------------------------------------------------------------------------+\n");
  }

  // torch.cuda.memory_summary() printed by a rank: "CUDA OOMs: 0" and all.
  void memory_summary(int rank, std::uint64_t ma_centi) {
    const std::uint64_t cur = ma_centi * 1024 / 100;  // MiB
    auto row = [&](std::string_view name, std::uint64_t a, std::uint64_t b, std::string_view unit) {
      rank_prefix(rank);
      out_.put(" | ");
      out_.put(name);
      out_.put(" | ");
      out_.num(a, 6);
      out_.put(unit);
      out_.put(" | ");
      out_.num(b, 6);
      out_.put(unit);
      out_.put(" | ");
      out_.num(a * 3 / 100 + 11, 6);
      out_.put(" GiB | ");
      out_.num(a * 3 / 100 + 11 - a / 1024, 6);
      out_.put(" GiB |\n");
    };
    const std::string_view bar = " |===========================================================================|\n";
    const std::string_view sep = " |---------------------------------------------------------------------------|\n";
    rank_prefix(rank);
    out_.put(bar);
    rank_prefix(rank);
    out_.put(" |                  PyTorch CUDA memory summary, device ID ");
    out_.num(static_cast<std::uint64_t>(rank % 8));
    out_.put("                 |\n");
    rank_prefix(rank);
    out_.put(sep);
    rank_prefix(rank);
    out_.put(" |            CUDA OOMs: 0            |        cudaMalloc retries: ");
    out_.num(rng_.below(3));
    out_.put("         |\n");
    rank_prefix(rank);
    out_.put(bar);
    rank_prefix(rank);
    out_.put(" |        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n");
    static constexpr std::string_view kBlocks[] = {"Allocated memory     ", "Active memory        ",
                                                   "Requested memory     ", "GPU reserved memory  ",
                                                   "Non-releasable memory"};
    for (std::string_view block : kBlocks) {
      rank_prefix(rank);
      out_.put(sep);
      const std::uint64_t v = cur + rng_.below(2000);
      row(block, v, v + rng_.below(3000), " MiB");
      row("      from large pool", v - v / 50, v - v / 50 + rng_.below(3000), " MiB");
      row("      from small pool", v / 50, v / 50 + rng_.below(100), " MiB");
    }
    static constexpr std::string_view kCounts[] = {"Allocations          ", "Active allocs        ",
                                                   "GPU reserved segments", "Non-releasable allocs",
                                                   "Oversize allocations ", "Oversize GPU segments"};
    for (std::string_view name : kCounts) {
      rank_prefix(rank);
      out_.put(sep);
      const std::uint64_t v = name.starts_with("Oversize") ? 0 : rng_.range(300, 9000);
      rank_prefix(rank);
      out_.put(" | ");
      out_.put(name);
      out_.put(" | ");
      out_.num(v, 7);
      out_.put("    | ");
      out_.num(v + rng_.below(500) * (v != 0), 7);
      out_.put("    | ");
      out_.num(v * 1000, 9);
      out_.put("  | ");
      out_.num(v * 1000 - v, 9);
      out_.put("  |\n");
    }
    rank_prefix(rank);
    out_.put(bar);
  }

  // At each job start: the run's configuration and environment as scripts dump
  // them (the allocator setting is an analyzer anchor).
  void config_dump() {
    const int rank = 0;
    log_prefix(rank, "INFO", "train.py", 71);
    out_.put("config:\n");
    static constexpr std::string_view kYaml[] = {
        "  model: {name: llama-7b, dtype: bf16, activation_checkpointing: true, attn_impl: sdpa}",
        "  optim: {name: adamw, lr: 3.0e-4, betas: [0.9, 0.95], weight_decay: 0.1, fused: true}",
        "  data: {batch_size: 8, grad_accum: 4, seq_len: 4096, num_workers: 8, pin_memory: true}",
        "  dist: {backend: nccl, zero_stage: 3, offload_optimizer: none, overlap_comm: true}",
        "  memory: {empty_cache_every: 0, cuda_graphs: false, max_memory_fraction: 1.0}",
    };
    for (std::string_view l : kYaml) {
      rank_prefix(rank);
      out_.ch(' ');
      out_.put(l);
      out_.nl();
    }
    log_prefix(rank, "INFO", "train.py", 74);
    out_.put("environment: CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 NCCL_DEBUG=INFO OMP_NUM_THREADS=1 ");
    mark_look(rank, "allocator_setting", "pytorch_cuda_alloc_conf");
    out_.put("PYTORCH_CUDA_ALLOC_CONF=");
    out_.put(rng_.chance(50) ? "expandable_segments:True" : "max_split_size_mb:512,garbage_collection_threshold:0.8");
    out_.put(" TOKENIZERS_PARALLELISM=false\n");
  }

  // ------------------------------------------------------------------ progress bars

  // The bar of the progress mix's current loop; tqdm's format
  // "{desc}: {percentage:3.0f}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}{postfix}]".
  void new_bar() {
    ++bar_serial_;
    bar_kind_ = static_cast<int>(rng_.below(4));
    bar_n_ = 0;
    bar_last_len_ = 0;
    switch (bar_kind_) {
      case 0:  // the training loop's own bar, per epoch
      case 1:  // Lightning's
        bar_total_ = rng_.range(4000, 16000);
        bar_step_ = 1;
        break;
      case 2:  // HF Trainer's, over the whole run
        bar_total_ = rng_.range(20000, 90000);
        bar_step_ = 1;
        break;
      default:  // datasets' map, in examples
        bar_total_ = rng_.range(2000, 9000) * 1000;
        bar_step_ = rng_.range(500, 3000);
        break;
    }
  }

  void bar_w(std::uint64_t n, std::uint64_t total, std::uint64_t width) {
    static constexpr std::string_view kPartial[] = {" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    const std::uint64_t eighths = std::min(n, total) * width * 8 / total;
    const std::uint64_t full = eighths / 8;
    for (std::uint64_t i = 0; i < full; ++i) out_.put("█");
    if (full < width) {
      out_.put(kPartial[eighths % 8]);
      out_.repeat(' ', width - full - 1);
    }
  }

  // One redraw: '\r' and the bar, padded over a longer previous redraw.
  void bar_redraw() {
    bar_n_ = std::min(bar_n_ + bar_step_, bar_total_);
    if (bar_kind_ != 3) {
      ++step_;
      tick_loss();
    }
    clock_.advance(rng_.range(100, 330));
    out_.ch('\r');
    const std::uint64_t start = out_.written();
    const std::uint64_t pct = bar_n_ * 100 / bar_total_;
    const std::uint64_t per_s = bar_kind_ == 3 ? rng_.range(30000, 42000) * 100 : rng_.range(340, 369);
    const std::uint64_t elapsed = bar_kind_ == 3 ? bar_n_ / 36000 : bar_n_ * 285 / 1000;
    const std::uint64_t remaining = bar_kind_ == 3 ? (bar_total_ - bar_n_) / 36000 : (bar_total_ - bar_n_) * 285 / 1000;
    switch (bar_kind_) {
      case 0:
        out_.put("Epoch ");
        out_.num(epoch_);
        out_.put(": ");
        break;
      case 1:
        out_.put("Epoch ");
        out_.num(epoch_);
        out_.put(":  ");
        break;
      case 3:
        out_.put("Map (num_proc=16): ");
        break;
      default:
        break;
    }
    out_.num(pct, 3);
    out_.put("%|");
    bar_w(bar_n_, bar_total_, 10);
    out_.put("| ");
    out_.num(bar_n_);
    out_.ch('/');
    out_.num(bar_total_);
    out_.put(" [");
    interval(elapsed);
    out_.ch('<');
    interval(remaining);
    out_.put(", ");
    if (bar_kind_ == 3) {
      out_.fixed(per_s, 2);
      out_.put(" examples/s]");
    } else {
      out_.fixed(per_s, 2, 5);
      out_.put("it/s");
      if (bar_kind_ == 0) {
        out_.put(", loss=");
        out_.fixed(loss_ / 100, 2);
        out_.put(", lr=");
        lr();
      } else if (bar_kind_ == 1) {
        out_.put(", v_num=");
        out_.num(bar_serial_ % 7);
        out_.put(", train_loss=");
        out_.fixed(loss_ / 10, 3);
      }
      out_.ch(']');
    }
    const std::uint64_t len = out_.written() - start;
    if (len < bar_last_len_) out_.repeat(' ', bar_last_len_ - len);
    bar_last_len_ = std::max(len, bar_last_len_);
  }

  // One physical line of a long-running bar: hundreds to thousands of redraws
  // joined by bare '\r' (tqdm writes '\n' only when the bar closes), ended by
  // the bar's close, by tqdm.write (clear, message, '\n'), or by a warning
  // that the same process printed to the same stream mid-bar.
  void long_bar() {
    if (bar_n_ >= bar_total_) new_bar();
    const std::uint64_t redraws = rng_.chance(85) ? rng_.range(950, 6000) : rng_.range(100, 950);
    bar_open(redraws);
    if (bar_n_ >= bar_total_) {
      out_.nl();
      if (bar_kind_ <= 1) ++epoch_;
      return;
    }
    if (rng_.chance(65)) {
      out_.ch('\r');
      out_.repeat(' ', bar_last_len_);
      out_.ch('\r');
      timestamp();
      out_.put(" INFO [train.py:301] step ");
      out_.num(step_);
      out_.put(" loss ");
      out_.fixed(loss_, 4);
      out_.put(" lr ");
      lr();
      out_.put(" grad_norm ");
      out_.fixed(rng_.range(150, 2400), 3);
      out_.nl();
      bar_last_len_ = 0;
    } else {
      out_.put(kSite);
      out_.put(rng_.chance(50) ? "torch/optim/lr_scheduler.py:224: UserWarning: Detected call of `lr_scheduler.step()` "
                                 "before `optimizer.step()`. Failure to do this will result in PyTorch skipping the "
                                 "first value of the learning rate schedule.\n"
                               : "torch/utils/checkpoint.py:92: UserWarning: None of the inputs have requires_grad=True. "
                                 "Gradients will be None\n");
      out_.put("  warnings.warn(\n");
      bar_last_len_ = 0;
    }
  }

  // Redraws on the current physical line, without ending it.
  void bar_open(std::uint64_t redraws) {
    if (bar_total_ == 0 || bar_n_ >= bar_total_) new_bar();
    for (std::uint64_t i = 0; i < redraws && bar_n_ < bar_total_; ++i) bar_redraw();
  }

  // Short bars: checkpoint shards, downloads, a dataset's map.
  void short_bars() {
    const std::uint64_t kind = rng_.below(3);
    const std::uint64_t total = kind == 0 ? 4 : kind == 1 ? rng_.range(2000, 5000) : rng_.range(1000, 60000);
    const std::uint64_t redraws = kind == 0 ? 4 : rng_.range(10, 200);
    std::uint64_t last = 0;
    const std::uint64_t shard = rng_.range(1, 4);
    for (std::uint64_t i = 1; i <= redraws; ++i) {
      const std::uint64_t n = total * i / redraws;
      out_.ch('\r');
      const std::uint64_t start = out_.written();
      if (kind == 0) {
        out_.put("Loading checkpoint shards: ");
      } else if (kind == 1) {
        out_.put("model-0000");
        out_.num(shard);
        out_.put("-of-00004.safetensors: ");
      } else {
        out_.put("Filter: ");
      }
      out_.num(n * 100 / total, 3);
      out_.put("%|");
      bar_w(n, total, 10);
      out_.put("| ");
      if (kind == 1) {
        out_.fixed(n / 10, 2);
        out_.put("G/");
        out_.fixed(total / 10, 2);
        out_.put("G [00:");
        out_.num(i * 12 / redraws, 2, '0');
        out_.put("<00:");
        out_.num((redraws - i) * 12 / redraws, 2, '0');
        out_.put(", ");
        out_.num(rng_.range(150, 420));
        out_.put("MB/s]");
      } else {
        out_.num(n);
        out_.ch('/');
        out_.num(total);
        out_.put(" [00:");
        out_.num(i * 3 / redraws, 2, '0');
        out_.put("<00:");
        out_.num((redraws - i) * 3 / redraws, 2, '0');
        out_.put(", ");
        out_.fixed(rng_.range(100, 900000), 2);
        out_.put(kind == 0 ? "s/it]" : " examples/s]");
      }
      const std::uint64_t len = out_.written() - start;
      if (len < last) out_.repeat(' ', last - len);
      last = std::max(last, len);
    }
    out_.nl();
  }

  // ------------------------------------------------------------------ many ranks

  // Every rank reports the same step, in the order their writes happened to
  // reach the launcher.
  void rank_round() {
    if (rng_.chance(10) && epoch_step_ + 1 < kStepsPerEpoch) {
      ++step_;
      ++epoch_step_;
      tick_loss();
    }
    const bool memory = rng_.chance(20);
    for (int r : shuffled_ranks()) {
      if (memory) {
        log_prefix(r, "INFO", "metrics.py", 58);
        out_.put("step ");
        out_.num(step_);
        out_.put(" max_allocated ");
        out_.fixed(rng_.range(5800, 6400), 2);
        out_.put(" GiB max_reserved ");
        out_.fixed(rng_.range(6500, 7400), 2);
        out_.put(" GiB step_time ");
        out_.fixed(rng_.range(270, 310), 3);
        out_.put("s\n");
      } else {
        log_prefix(r, "INFO", "train.py", 301);
        out_.put("epoch ");
        out_.num(epoch_);
        out_.put(" step ");
        out_.num(step_);
        out_.put(" loss ");
        out_.fixed(loss_ + rng_.below(200), 4);
        out_.put(" lr ");
        lr();
        out_.put(" grad_norm ");
        out_.fixed(rng_.range(150, 2400), 3);
        out_.put(" tok/s ");
        out_.num(rng_.range(41000, 47000));
        out_.nl();
      }
    }
  }

  // A two-line Python warning printed by every rank at once: each rank's two
  // lines stay in order, the ranks' lines interleave.
  void warning_all_ranks() {
    const ErrScope err(*this);
    static constexpr std::string_view kFirst[] = {
        "torch/utils/checkpoint.py:1399: FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated. Please use "
        "`torch.amp.autocast('cpu', args...)` instead.",
        "torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and "
        "UntypedStorage will be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
        "torch/distributed/fsdp/_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` for "
        "``ShardingStrategy``, full_state_dict will be returned.",
    };
    static constexpr std::string_view kSecond[] = {
        "  with device_autocast_ctx, torch.cpu.amp.autocast(**cpu_autocast_kwargs), recompute_context:  # type: "
        "ignore[attr-defined]",
        "  return self.fget.__get__(instance, owner)()",
        "  warnings.warn(",
    };
    const std::size_t which = rng_.below(std::size(kFirst));
    std::vector<int> order = shuffled_ranks();
    std::vector<int> printed(order.size(), 0);
    std::vector<std::size_t> active(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) active[i] = i;
    while (!active.empty()) {
      const std::size_t k = rng_.below(std::min<std::size_t>(active.size(), 4));  // the next few writers
      const std::size_t i = active[k];
      const int r = order[i];
      rank_prefix(r);
      out_.ch(' ');
      if (printed[i] == 0) {
        out_.put(kSite);
        out_.put(kFirst[which]);
      } else {
        out_.put(kSecond[which]);
      }
      out_.nl();
      if (++printed[i] == 2) active.erase(active.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }

  // ------------------------------------------------------------------ look-alikes

  // "[1234567.890123] " as the kernel's log prints it (seconds since boot).
  void dmesg_prefix() {
    const std::uint64_t ms = static_cast<std::uint64_t>(clock_.now() - Clock::kStart) + 1234567000;
    out_.ch('[');
    out_.num(ms / 1000, 7);
    out_.ch('.');
    out_.num(ms % 1000 * 1000 + rng_.below(1000), 6, '0');
    out_.put("] ");
  }

  // Messages that sit where an OOM would and are not a GPU OOM, and warnings
  // that memory is tight: each key line is in the manifest with its kind.
  void lookalike() {
    const ErrScope err(*this);
    const int rank = pick_rank();
    const std::uint64_t roll = rng_.below(100);
    if (roll < 12) {  // the host's OOM killer, in the kernel log an epilogue appends
      const std::uint64_t victim = pid(rank) + rng_.range(100, 3000);
      const bool cgroup = rng_.chance(12);
      out_.put("---- dmesg (job epilogue) ----\n");
      mark_look(-1, "host_oom_kill", "invoked_oom_killer");
      dmesg_prefix();
      out_.put("pt_data_worker invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, "
               "oom_score_adj=0\n");
      dmesg_prefix();
      out_.put("CPU: 17 PID: ");
      out_.num(victim);
      out_.put(" Comm: pt_data_worker Tainted: P           OE      6.5.0-1023-nvidia #24-Ubuntu\n");
      mark_look(-1, "host_oom_kill", "oom_kill_constraint");
      dmesg_prefix();
      out_.put("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,oom_memcg=/slurm/uid_1000/"
               "job_4242,task_memcg=/slurm/uid_1000/job_4242/step_0,task=pt_data_worker,pid=");
      out_.num(victim);
      out_.put(",uid=1000\n");
      mark_look(-1, "host_oom_kill", cgroup ? "cgroup_out_of_memory_killed_process" : "kernel_killed_process", cgroup);
      dmesg_prefix();
      out_.put(cgroup ? "Memory cgroup out of memory: Killed process " : "Out of memory: Killed process ");
      out_.num(victim);
      out_.put(" (pt_data_worker) total-vm:");
      out_.num(rng_.range(20000000, 90000000));
      out_.put("kB, anon-rss:");
      out_.num(rng_.range(10000000, 60000000));
      out_.put("kB, file-rss:");
      out_.num(rng_.range(10000, 900000));
      out_.put("kB, shmem-rss:0kB, UID:1000 pgtables:");
      out_.num(rng_.range(20000, 200000));
      out_.put("kB oom_score_adj:0\n");
      dmesg_prefix();
      out_.put("oom_reaper: reaped process ");
      out_.num(victim);
      out_.put(" (pt_data_worker), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB\n");
    } else if (roll < 16) {  // bash and Slurm report a SIGKILL
      if (rng_.chance(50)) {
        mark_look(-1, "host_oom_kill", "bash_killed");
        out_.put("/var/spool/slurmd/job4242/slurm_script: line 27: ");
        out_.num(pid(rank) + rng_.range(1, 90));
        out_.put(" Killed                  python3 /home/user/proj/eval.py --shard ");
        out_.num(rng_.below(64));
        out_.nl();
      } else {
        mark_look(-1, "host_oom_kill", "slurm_oom_kill_event");
        out_.put("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.");
        out_.num(rng_.below(9));
        out_.put(". Some of your processes may have been killed by the cgroup out-of-memory handler.\n");
      }
    } else if (roll < 18) {  // a Kubernetes sidecar's status line
      mark_look(-1, "host_oom_kill", "kubernetes_oomkilled");
      out_.put("eval-sidecar-");
      out_.num(rng_.below(8));
      out_.put(": container \"eval\" terminated: reason=OOMKilled exitCode=137 restarts=");
      out_.num(rng_.below(5));
      out_.nl();
    } else if (roll < 36) {  // a DataLoader worker killed (host memory, /dev/shm)
      const std::uint64_t worker = pid(rank) + rng_.range(100, 3000);
      const bool bus = rng_.chance(25);
      log_prefix(rank, "ERROR", "train.py", 260);
      out_.put("data loader failed, rebuilding it and skipping the rest of the epoch\n");
      if (bus) {
        mark_look(rank, "dataloader_killed", "bus_error_shm");
        py(rank, "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).");
      }
      py(rank, "Traceback (most recent call last):");
      sp(rank, "torch/utils/data/dataloader.py", 1243, "_try_get_data", "data = self._data_queue.get(timeout=timeout)");
      carets(rank, 7, 0, 37);
      stdlib(rank, "multiprocessing/queues.py", 113, "get", "if not self._poll(timeout):");
      stdlib(rank, "multiprocessing/connection.py", 257, "poll", "return self._poll(timeout)");
      stdlib(rank, "multiprocessing/connection.py", 440, "_poll", "r = wait([self], timeout)");
      stdlib(rank, "multiprocessing/connection.py", 948, "wait", "ready = selector.select(timeout)");
      stdlib(rank, "selectors.py", 415, "select", "fd_event_list = self._selector.poll(timeout)");
      sp(rank, "torch/utils/data/_utils/signal_handling.py", 73, "handler", "_error_if_any_worker_fails()");
      mark_look(rank, "dataloader_killed", "killed_by_signal");
      exc(rank, "RuntimeError", "DataLoader worker (pid ");
      out_.num(worker);
      out_.put(bus ? ") is killed by signal: Bus error. It is possible that dataloader's workers are out of shared "
                     "memory. Please try to raise your shared memory limit.\n"
                   : ") is killed by signal: Killed. \n");
      chain(rank, true);
      py(rank, "Traceback (most recent call last):");
      user(rank, "train.py", 257, "train_one_epoch", "for step, batch in enumerate(loader):");
      sp(rank, "torch/utils/data/dataloader.py", 708, "__next__", "data = self._next_data()");
      sp(rank, "torch/utils/data/dataloader.py", 1458, "_next_data", "idx, data = self._get_data()");
      sp(rank, "torch/utils/data/dataloader.py", 1420, "_get_data", "success, data = self._try_get_data()");
      sp(rank, "torch/utils/data/dataloader.py", 1256, "_try_get_data",
         "raise RuntimeError(f\"DataLoader worker (pid(s) {pids_str}) exited unexpectedly\") from e");
      mark_look(rank, "dataloader_killed", "exited_unexpectedly");
      exc(rank, "RuntimeError", "DataLoader worker (pid(s) ");
      out_.num(worker);
      out_.put(") exited unexpectedly\n");
    } else if (roll < 44) {  // the host allocator
      log_prefix(rank, "ERROR", "data.py", 236);
      out_.put("could not materialize shard in RAM, streaming it instead\n");
      py(rank, "Traceback (most recent call last):");
      user(rank, "data.py", 233, "_load_shard", "buf = torch.empty(n_tokens, dtype=torch.int32)");
      carets(rank, 6, 0, 42);
      if (rng_.chance(70)) {
        mark_look(rank, "cpu_alloc_failure", "default_cpu_allocator");
        exc(rank, "RuntimeError", "[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: you "
                                  "tried to allocate ");
        out_.num(rng_.range(1, 64) * kGiB / 2);
        out_.put(" bytes. Error code 12 (Cannot allocate memory)\n");
      } else {
        mark_look(rank, "cpu_alloc_failure", "numpy_unable_to_allocate");
        exc(rank, "numpy.core._exceptions._ArrayMemoryError", "Unable to allocate ");
        out_.fixed(rng_.range(100, 6400), 2);
        out_.put(" GiB for an array with shape (");
        out_.num(rng_.range(1000, 90000));
        out_.put(", 4096) and data type float64\n");
      }
    } else if (roll < 52) {  // an illegal memory access (a kernel bug)
      log_prefix(rank, "ERROR", "train.py", 275);
      out_.put("step ");
      out_.num(step_);
      out_.put(" failed on a CUDA error, reloading the last checkpoint\n");
      py(rank, "Traceback (most recent call last):");
      user(rank, "train.py", 271, "train_one_epoch", "scaler.scale(loss).backward()");
      sp(rank, "torch/_tensor.py", 626, "backward", "torch.autograd.backward(");
      sp(rank, "torch/autograd/__init__.py", 347, "backward", "_engine_run_backward(");
      sp(rank, "torch/autograd/graph.py", 823, "_engine_run_backward",
         "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass");
      carets(rank, 7, 0, 46);
      const bool misaligned = rng_.chance(15);
      mark_look(rank, "not_memory_error", misaligned ? "misaligned_address" : "illegal_memory_access");
      py(rank, misaligned ? "RuntimeError: CUDA error: misaligned address"
                          : "RuntimeError: CUDA error: an illegal memory access was encountered");
      cuda_error_suffix(rank);
    } else if (roll < 58) {  // a device-side assert: one line per failing thread, then the error
      const std::uint64_t threads = rng_.range(32, 160);
      const std::uint64_t block = rng_.below(4096);
      for (std::uint64_t t = 0; t < threads; ++t) {
        rank_prefix_tight(rank);
        out_.put("../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [");
        out_.num(block + t / 128);
        out_.put(",0,0], thread: [");
        out_.num(t % 128);
        out_.put(",0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.\n");
      }
      py(rank, "Traceback (most recent call last):");
      user(rank, "model.py", 97, "forward", "x = self.embed(input_ids) + self.pos[positions]");
      carets(rank, 32, 9, 11);
      mark_look(rank, "not_memory_error", "device_side_assert");
      py(rank, "RuntimeError: CUDA error: device-side assert triggered");
      cuda_error_suffix(rank);
    } else if (roll < 78) {  // DeepSpeed: the caching allocator flushed and retried
      mark_look(rank, "allocator_pressure", "deepspeed_cache_flushes");
      ds_prefix(rank, "WARNING", "stage3.py:2117:step");
      out_.num(rng_.range(1, 40));
      out_.put(" pytorch allocator cache flushes since last step. this happens when there is high memory pressure and "
               "is detrimental to performance. if this is happening frequently consider adjusting settings to reduce "
               "memory consumption. If you are unable to make the cache flushes go away consider adding "
               "get_accelerator().empty_cache() calls in your training loop to ensure that all ranks flush their "
               "caches at the same time\n");
    } else if (roll < 84) {  // TensorFlow in the data pipeline: BFC warnings
      const bool not_failure = rng_.chance(50);
      const Civil c = clock_.civil();
      mark_look(rank, "allocator_pressure", not_failure ? "tf_bfc_not_a_failure" : "tf_bfc_garbage_collection",
                not_failure);
      rank_prefix_tight(rank);
      out_.num(static_cast<std::uint64_t>(c.year));
      out_.ch('-');
      out_.num(static_cast<std::uint64_t>(c.month), 2, '0');
      out_.ch('-');
      out_.num(static_cast<std::uint64_t>(c.day), 2, '0');
      out_.ch(' ');
      out_.num(static_cast<std::uint64_t>(c.hour), 2, '0');
      out_.ch(':');
      out_.num(static_cast<std::uint64_t>(c.minute), 2, '0');
      out_.ch(':');
      out_.num(static_cast<std::uint64_t>(c.second), 2, '0');
      out_.ch('.');
      out_.num(static_cast<std::uint64_t>(clock_.millis()) * 1000 + rng_.below(1000), 6, '0');
      if (not_failure) {
        out_.put(": W tensorflow/core/common_runtime/bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory "
                 "trying to allocate ");
        out_.fixed(rng_.range(100, 900), 2);
        out_.put("GiB with freed_by_count=0. The caller indicates that this is not a failure, but this may mean that "
                 "there could be performance gains if more memory were available.\n");
      } else {
        out_.put(": W tensorflow/core/common_runtime/gpu/gpu_bfc_allocator.cc:47] Garbage collection: deallocate free "
                 "memory regions (i.e., allocations) so that we can re-allocate a larger region to avoid OOM due to "
                 "memory fragmentation. If you see this message frequently, you are running near the threshold of the "
                 "available device memory and re-allocation may incur great performance overhead. You may try smaller "
                 "batch sizes to observe the performance impact. Set TF_ENABLE_GPU_GARBAGE_COLLECTION=false if you'd "
                 "like to disable this feature.\n");
      }
    } else if (roll < 92) {  // a watchdog timing out a collective that a slow rank held up
      clock_.advance(rng_.range(1000, 9000));
      const std::uint64_t seq = step_ * 3 + rng_.below(3);
      mark_look(rank, "collateral", "nccl_watchdog_timeout");
      rank_prefix_tight(rank);
      out_.put("[E");
      c10_time();
      out_.put(" ProcessGroupNCCL.cpp:616] [Rank ");
      out_.num(static_cast<std::uint64_t>(rank));
      out_.put("] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=");
      out_.num(seq);
      out_.put(", OpType=_ALLGATHER_BASE, NumelIn=");
      out_.num(rng_.range(1000000, 90000000));
      out_.put(", NumelOut=");
      out_.num(rng_.range(100000000, 900000000));
      out_.put(", Timeout(ms)=1800000) ran for ");
      out_.num(rng_.range(1800001, 1800900));
      out_.put(" milliseconds before timing out.\n");
      rank_prefix_tight(rank);
      out_.put("[E");
      c10_time();
      out_.put(" ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank ");
      out_.num(static_cast<std::uint64_t>(rank));
      out_.put("] Exception (either an error or timeout) detected by watchdog at work: ");
      out_.num(seq);
      out_.put(", last enqueued NCCL work: ");
      out_.num(seq + 1);
      out_.put(", last completed NCCL work: ");
      out_.num(seq - 1);
      out_.put(".\n");
      log_prefix(rank, "WARNING", "train.py", 415);
      out_.put("collective timed out once; the elastic agent will restart the group if it happens again\n");
    } else {  // SIGTERM: preemption notices and the handler's lines
      mark_look(rank, "collateral", "sigterm");
      log_prefix(rank, "WARNING", "train.py", 88);
      out_.put("received SIGTERM (preemption notice), writing an emergency checkpoint to /ckpt/run-42/preempt-");
      out_.num(step_, 8, '0');
      out_.nl();
      log_prefix(rank, "INFO", "train.py", 93);
      out_.put("emergency checkpoint written in ");
      out_.fixed(rng_.range(2000, 30000), 3);
      out_.put("s; the scheduler cancelled the preemption\n");
    }
  }

  // What C10_CUDA_CHECK appends to a CUDA error.
  void cuda_error_suffix(int rank) {
    py(rank, "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
             "might be incorrect.");
    py(rank, "For debugging consider passing CUDA_LAUNCH_BLOCKING=1");
    py(rank, "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.");
    py(rank, "");
  }

  // ------------------------------------------------------------------ the mixes' OOMs

  // As make_oom, on this section's device, with the era's own details; the
  // numbers add up the same way.
  Oom make_oom_mix(int rank, const Oom* like) {
    Oom o{};
    o.era = era_;
    const std::uint64_t roll = rng_.below(100);
    o.kind = like ? like->kind
             : roll < 40 ? OomKind::fragmentation
             : roll < 70 ? OomKind::capacity
             : roll < 85 ? OomKind::external
             : roll < 93 ? OomKind::limit
                         : OomKind::private_pools;
    if (o.kind == OomKind::private_pools && era_ < 'G') o.kind = OomKind::fragmentation;
    if (o.kind == OomKind::limit && era_ == 'A') o.kind = OomKind::capacity;  // no fraction before 1.8
    o.gpu = rank % 8;
    o.total = gpu_total_;
    const std::uint64_t proc_roll = rng_.below(100);
    o.proc = like ? like->proc : proc_roll < 75 ? 0 : proc_roll < 90 ? 1 : 2;
    o.torch_cuda = like ? like->torch_cuda : rng_.chance(50);
    o.where = like ? like->where : static_cast<int>(rng_.below(3));
    o.self_pid = pid(rank);
    const std::uint64_t centi = kGiB / 100;
    const std::uint64_t t = o.total / centi;  // capacity in hundredths of a GiB
    const std::uint64_t non_pytorch = rng_.range(300, 720) * kMiB;
    switch (o.kind) {
      case OomKind::fragmentation:
      case OomKind::private_pools:
        o.requested = rng_.range(1, 8) * 256 * kMiB;
        o.reserved_unallocated = o.requested + rng_.range(t / 200, t / 9) * centi;
        break;
      case OomKind::capacity:
        o.requested = rng_.range(1, 12) * 128 * kMiB + rng_.below(128) * 2 * kMiB;
        o.reserved_unallocated = rng_.range(2, 40) * centi;
        break;
      case OomKind::external:
        o.requested = rng_.range(1, 6) * 512 * kMiB;
        o.reserved_unallocated = rng_.range(5, 60) * centi;
        o.other_pid = rng_.range(30000, 90000);
        o.other_bytes = rng_.range(t / 6, t / 3) * centi;
        break;
      case OomKind::limit:
        o.requested = rng_.range(2, 8) * 256 * kMiB;
        o.reserved_unallocated = rng_.range(5, 80) * centi;
        o.allowed = o.total / 2 + rng_.below(t / 20) * centi;
        break;
    }
    std::uint64_t headroom;
    if (o.kind == OomKind::limit) {
      headroom = o.total - o.allowed - non_pytorch + rng_.range(10, 90) * centi;
    } else {
      headroom = rng_.range(5, 110) * centi;
      if (headroom >= o.requested) headroom = o.requested / 2;
    }
    o.free = headroom;
    const std::uint64_t in_use_all = o.total - headroom - rng_.range(1, 3) * centi;
    o.self_bytes = in_use_all - o.other_bytes;
    const std::uint64_t reserved = o.self_bytes - non_pytorch;
    if (o.kind == OomKind::private_pools) o.private_pool = std::min(rng_.range(100, 900) * centi, reserved / 4);
    o.allocated = reserved - o.reserved_unallocated;
    return o;
  }

  void oom_any(int rank, const Oom& o) {
    if (o.era == 0) {
      oom_message(rank, o);
    } else {
      era_message(rank, o);
    }
  }

  // The caching allocator's OOM message as the era printed it.
  void era_message(int rank, const Oom& o) {
    const char era = o.era;
    if (join_rank_ == rank) {
      // Another process's bar redraw reached the shared terminal between this
      // rank's traceback and its message: one physical line, '\r' inside.
      join_rank_ = -1;
      bar_open(1);
      joined_next_ = true;
    }
    mark_oom(rank, era, era == 'F' && o.gpu == 0);
    stats.eras_used |= std::uint64_t{1} << (era - 'A');
    ++stats.oom_messages;
    rank_prefix(rank);
    out_.ch(' ');
    out_.put(era <= 'B'   ? "RuntimeError: "
             : era == 'C' ? (o.torch_cuda ? "torch.cuda.OutOfMemoryError: " : "RuntimeError: ")
             : era <= 'F' ? "torch.cuda.OutOfMemoryError: "
                          : "torch.OutOfMemoryError: ");
    out_.put("CUDA out of memory. Tried to allocate ");
    format_size(o.requested);
    if (era <= 'C') {
      out_.put(" (GPU ");
      out_.num(static_cast<std::uint64_t>(o.gpu));
      out_.put("; ");
      format_size(o.total);
      out_.put(" total capacity; ");
      format_size(o.allocated);
      out_.put(" already allocated; ");
      format_size(o.free);
      out_.put(" free; ");
      if (era == 'A') {
        format_size(o.reserved_unallocated);
        out_.put(" cached)");
      } else {
        if (o.allowed != 0) {
          format_size(o.allowed);
          out_.put(" allowed; ");
        }
        format_size(o.allocated + o.reserved_unallocated);
        out_.put(" reserved in total by PyTorch)");
        if (era == 'C')
          out_.put(" If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  "
                   "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF");
      }
      out_.nl();
      return;
    }
    out_.put(". GPU ");
    if (era == 'F') {
      // 2.3 streamed the device index as a char: GPU 0's NUL ended the message.
      if (o.gpu == 0) {
        out_.nl();
        return;
      }
      out_.ch(static_cast<char>(o.gpu));
    } else {
      out_.num(static_cast<std::uint64_t>(o.gpu));
    }
    out_.put(era == 'D' ? " has a total capacty of " : " has a total capacity of ");
    format_size(o.total);
    out_.put(" of which ");
    format_size(o.free);
    out_.put(" is free. ");
    if (o.proc != 2) {
      if (o.other_bytes != 0) {
        out_.put("Process ");
        out_.num(o.other_pid);
        out_.put(" has ");
        format_size(o.other_bytes);
        out_.put(" memory in use. ");
      }
      if (o.proc == 0) {
        out_.put("Including non-PyTorch memory, this process has ");
      } else {
        out_.put("Process ");
        out_.num(o.self_pid);
        out_.put(" has ");
      }
      format_size(o.self_bytes);
      out_.put(" memory in use. ");
    }
    if (era >= 'H' && o.allowed != 0) {
      format_size(o.allowed);
      out_.put(" allowed; ");
    }
    out_.put("Of the allocated memory ");
    format_size(o.allocated);
    out_.put(" is allocated by PyTorch, ");
    if (era >= 'G' && o.private_pool != 0) {
      out_.put("with ");
      format_size(o.private_pool);
      out_.put(" allocated in private pools (e.g., CUDA Graphs), ");
    }
    out_.put("and ");
    format_size(o.reserved_unallocated);
    out_.put(" is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting ");
    if (era == 'D') {
      out_.put("max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
               "PYTORCH_CUDA_ALLOC_CONF\n");
      return;
    }
    out_.put(era == 'I' ? "PYTORCH_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF");
    out_.put("=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
             "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n");
  }

  // One incident of a mix: one rank (sometimes echoed by a second), or a burst
  // of 4 to 8 ranks failing within a second, then the collateral.
  void mix_incident() {
    const std::uint64_t before = out_.written();
    ++stats.incidents;
    // The job is resubmitted in other environments: vary the PyTorch release
    // (sections choose theirs when they start).
    if (!sections_) era_ = pick_era();
    const bool burst = ranks_ >= 4 && (mix_ == Mix::bursts || (mix_ == Mix::mix && rng_.chance(50)));
    std::vector<int> who;
    bool interleave;
    if (burst) {
      ++stats.bursts;
      const std::size_t n = std::min<std::size_t>(rng_.range(4, 8), static_cast<std::size_t>(ranks_));
      std::vector<int> order = shuffled_ranks();
      who.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n));
      interleave = rng_.chance(80);
    } else {
      who.push_back(pick_rank());
      if (ranks_ > 1 && rng_.chance(33)) {
        int second = static_cast<int>(rng_.below(static_cast<std::uint64_t>(ranks_ - 1)));
        if (second >= who[0]) ++second;
        who.push_back(second);
        ++stats.echoed;
      }
      interleave = who.size() > 1 && rng_.chance(50);
    }
    std::vector<Oom> ooms;
    ooms.reserve(who.size());
    ooms.push_back(make_oom_mix(who[0], nullptr));
    for (std::size_t i = 1; i < who.size(); ++i) ooms.push_back(make_oom_mix(who[i], &ooms[0]));
    failing_tracebacks(who, ooms, interleave);
    mix_collateral(who);
    stats.bytes_incidents += out_.written() - before;
    if (!sections_) out_.set_crlf(rng_.chance(crlf_percent_));
  }

  void failing_tracebacks(const std::vector<int>& who, const std::vector<Oom>& ooms, bool interleave) {
    const ErrScope err(*this);
    // The failing step's last normal lines.
    for (int r : who) step_log_line(static_cast<std::uint64_t>(r));
    clock_.advance(rng_.range(50, 300));
    if (style_ == Style::none && (mix_ == Mix::progress_bars || mix_ == Mix::mix)) {
      // Every process writes to one terminal: rank 0's bar may be mid-line.
      const std::uint64_t v = rng_.below(3);
      if (v == 1) bar_open(rng_.range(5, 400));             // the traceback starts after the bar
      if (v == 2) join_rank_ = who[rng_.below(who.size())];  // a redraw lands before a message
    }
    const std::uint64_t salt = stats.incidents % 5;
    std::vector<TracebackCursor> cursors;
    cursors.reserve(who.size());
    for (std::size_t i = 0; i < who.size(); ++i) cursors.emplace_back(who[i], ooms[i], salt);
    if (!interleave) {
      for (auto& c : cursors) {
        while (c.next(*this)) others_go_on(who);
        clock_.advance(rng_.range(1, 120));
      }
      return;
    }
    std::vector<std::size_t> active(cursors.size());
    for (std::size_t i = 0; i < active.size(); ++i) active[i] = i;
    std::size_t cur = 0;
    while (!active.empty()) {
      if (!rng_.chance(60) || cur >= active.size()) cur = rng_.below(active.size());
      if (!cursors[active[cur]].next(*this)) {
        active.erase(active.begin() + static_cast<std::ptrdiff_t>(cur));
        continue;
      }
      others_go_on(who);
    }
  }

  // With many ranks, the ones that did not fail keep logging for a moment.
  void others_go_on(const std::vector<int>& failed) {
    if (!(mix_ == Mix::ranks || mix_ == Mix::mix || mix_ == Mix::bursts) || !rng_.chance(6)) return;
    const int r = pick_rank();
    if (std::find(failed.begin(), failed.end(), r) != failed.end()) return;
    step_log_line(static_cast<std::uint64_t>(r));
  }

  // After the failure: watchdogs on ranks that waited in a collective, and the
  // launcher tearing the job down, each launcher in its own words.
  void mix_collateral(const std::vector<int>& failed) {
    const ErrScope err(*this);
    auto has_failed = [&](int r) { return std::find(failed.begin(), failed.end(), r) != failed.end(); };
    clock_.advance(rng_.range(1000, 5000));
    if (rng_.chance(60)) {
      clock_.advance(600000);
      int n = 0;
      for (int r : shuffled_ranks()) {
        if (has_failed(r) || n >= 8) continue;
        ++n;
        mark_look(r, "collateral", "nccl_watchdog_timeout");
        rank_prefix_tight(r);
        out_.put("[E");
        c10_time();
        out_.put(" ProcessGroupNCCL.cpp:632] [Rank ");
        out_.num(static_cast<std::uint64_t>(r));
        out_.put("] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=");
        out_.num(step_ * 3 + 1);
        out_.put(", OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for ");
        out_.num(rng_.range(600001, 600400));
        out_.put(" milliseconds before timing out.\n");
      }
    }
    const Civil c = clock_.civil();
    if (style_ == Style::srun) {
      for (int r : failed) {
        mark_look(-1, "collateral", "srun_task_exit");
        out_.put("srun: error: ");
        hostname(r);
        out_.put(": task ");
        out_.num(static_cast<std::uint64_t>(r));
        out_.put(": Exited with exit code 1\n");
      }
      out_.put("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n");
      mark_look(-1, "collateral", "slurm_step_cancelled");
      out_.put("slurmstepd: error: *** STEP ");
      out_.num(4242000 + stats.sections * 17);
      out_.put(".0 ON gpu-node-01 CANCELLED AT ");
      out_.num(static_cast<std::uint64_t>(c.year));
      out_.ch('-');
      out_.num(static_cast<std::uint64_t>(c.month), 2, '0');
      out_.ch('-');
      out_.num(static_cast<std::uint64_t>(c.day), 2, '0');
      out_.ch('T');
      out_.num(static_cast<std::uint64_t>(c.hour), 2, '0');
      out_.ch(':');
      out_.num(static_cast<std::uint64_t>(c.minute), 2, '0');
      out_.ch(':');
      out_.num(static_cast<std::uint64_t>(c.second), 2, '0');
      out_.put(" ***\n");
      return;
    }
    if (style_ == Style::mpirun) {
      out_.put("--------------------------------------------------------------------------\n"
               "Primary job  terminated normally, but 1 process returned\n"
               "a non-zero exit code. Per user-direction, the job has been aborted.\n"
               "--------------------------------------------------------------------------\n");
      mark_look(-1, "collateral", "mpirun_exit");
      out_.put("mpirun detected that one or more processes exited with non-zero status, thus causing\n"
               "the job to be terminated. The first process to do so was:\n\n  Process name: [[4242,1],");
      out_.num(static_cast<std::uint64_t>(failed[0]));
      out_.put("]\n  Exit code:    1\n--------------------------------------------------------------------------\n");
      return;
    }
    for (int r = 0; r < ranks_; ++r) {
      if (has_failed(r)) continue;
      mark_look(-1, "collateral", "sigterm");
      glog_prefix('W', launcher_pid_);
      out_.put("torch/distributed/elastic/multiprocessing/api.py:897] Sending process ");
      out_.num(pid(r));
      out_.put(" closing signal SIGTERM\n");
    }
    mark_look(-1, "collateral", "exitcode");
    glog_prefix('E', launcher_pid_);
    out_.put("torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: ");
    out_.num(static_cast<std::uint64_t>(failed[0] % 8));
    out_.put(" (pid: ");
    out_.num(pid(failed[0]));
    out_.put(") of binary: /usr/bin/python3\n");
    if (rng_.chance(25)) child_failed_error(failed, c);
  }

  // torchrun's summary when it gives up (printed by the agent, unprefixed).
  void child_failed_error(const std::vector<int>& failed, const Civil& c) {
    auto frame_plain = [&](std::string_view dir, std::string_view file, int line, std::string_view fn,
                           std::string_view code) {
      out_.put("  File \"");
      out_.put(dir);
      out_.put(file);
      out_.put("\", line ");
      out_.num(static_cast<std::uint64_t>(line));
      out_.put(", in ");
      out_.put(fn);
      out_.put("\n    ");
      out_.put(code);
      out_.nl();
    };
    out_.put("Traceback (most recent call last):\n");
    frame_plain("/usr/local/bin/", "torchrun", 8, "<module>", "sys.exit(main())");
    frame_plain(kSite, "torch/distributed/elastic/multiprocessing/errors/__init__.py", 355, "wrapper",
                "return f(*args, **kwargs)");
    frame_plain(kSite, "torch/distributed/run.py", 918, "main", "run(args)");
    frame_plain(kSite, "torch/distributed/run.py", 909, "run", "elastic_launch(");
    frame_plain(kSite, "torch/distributed/launcher/api.py", 138, "__call__",
                "return launch_agent(self._config, self._entrypoint, list(args))");
    frame_plain(kSite, "torch/distributed/launcher/api.py", 269, "launch_agent", "raise ChildFailedError(");
    mark_look(-1, "collateral", "child_failed_error");
    out_.put("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
             "============================================================\n"
             "/home/user/proj/train.py FAILED\n"
             "------------------------------------------------------------\n");
    auto entry = [&](std::size_t k, int r) {
      out_.ch('[');
      out_.num(k);
      out_.put("]:\n  time      : ");
      out_.num(static_cast<std::uint64_t>(c.year));
      out_.ch('-');
      out_.num(static_cast<std::uint64_t>(c.month), 2, '0');
      out_.ch('-');
      out_.num(static_cast<std::uint64_t>(c.day), 2, '0');
      out_.ch('_');
      out_.num(static_cast<std::uint64_t>(c.hour), 2, '0');
      out_.ch(':');
      out_.num(static_cast<std::uint64_t>(c.minute), 2, '0');
      out_.ch(':');
      out_.num(static_cast<std::uint64_t>(c.second), 2, '0');
      out_.put("\n  host      : ");
      hostname(r);
      out_.put("\n  rank      : ");
      out_.num(static_cast<std::uint64_t>(r));
      out_.put(" (local_rank: ");
      out_.num(static_cast<std::uint64_t>(r % 8));
      out_.put(")\n  exitcode  : 1 (pid: ");
      out_.num(pid(r));
      out_.put(")\n  error_file: <N/A>\n  traceback : To enable traceback see: "
               "https://pytorch.org/docs/stable/elastic/errors.html\n");
    };
    out_.put("Failures:\n");
    if (failed.size() == 1) out_.put("  <NO_OTHER_FAILURES>\n");
    for (std::size_t k = 1; k < failed.size(); ++k) entry(k, failed[k]);
    out_.put("------------------------------------------------------------\nRoot Cause (first observed failure):\n");
    entry(0, failed[0]);
    out_.put("============================================================\n");
  }

 private:

  // ------------------------------------------------------------------ state

  static constexpr std::uint64_t kStepsPerEpoch = 12000;

  Out& out_;
  SplitMix64 rng_;
  int ranks_;
  Clock clock_;
  std::uint64_t launcher_pid_ = 4242;
  std::uint64_t generation_ = 0;
  std::uint64_t pids_[kMaxPids] = {};
  std::uint64_t max_restarts_;
  std::uint64_t restarts_left_;
  std::uint64_t step_ = 0, epoch_ = 0, epoch_step_ = 0;
  std::uint64_t loss_ = 98000;  // 9.8

  // The mixes.
  Mix mix_;
  int max_ranks_;
  Style style_ = Style::rank;
  bool collector_ts_ = false;  // a log collector's timestamp before the rank mark
  bool err_ = false;           // writing the program's stderr (mpirun tags it)
  bool sections_ = false;      // a sweep of jobs, each with its own launcher and world size
  bool tb_dense_ = false;      // an ordinary traceback every 30-200 lines
  std::uint64_t crlf_percent_ = 15;
  char era_ = 0;
  std::uint64_t gpu_total_ = 7915 * (kGiB / 100);
  std::uint64_t next_tb_line_ = 0;
  int handled_traceback_rank_ = -1;
  int join_rank_ = -1;         // the rank whose OOM message a bar redraw precedes
  bool joined_next_ = false;
  int bar_kind_ = 0;
  std::uint64_t bar_n_ = 0, bar_total_ = 0, bar_step_ = 1, bar_last_len_ = 0, bar_serial_ = 0;
  std::vector<OomMark> ooms_;
  std::vector<LookMark> looks_;
};

// ---------------------------------------------------------------------------
// Command line.

[[noreturn]] void usage(const char* why) {
  if (why) std::fprintf(stderr, "gen_training_log: %s\n", why);
  std::fprintf(stderr,
               "usage: gen_training_log --size BYTES[K|M|G] [--mix NAME] [--ooms N] [--ranks R] [--seed S]\n"
               "                        [--manifest PATH] OUT\n"
               "  Writes a deterministic multi-rank training log of exactly BYTES bytes to OUT ('-' for stdout)\n"
               "  with N GPU OOM incidents from up to R ranks.\n"
               "  --mix NAME      classic (default), tracebacks, memory_words, progress_bars, ranks, lookalikes,\n"
               "                  bursts or mix (bench/README.md describes each)\n"
               "  --ooms N        incidents (default 36; bursts 48; mix 50)\n"
               "  --ranks R       world size (default 8; bursts 16); ranks and mix: the largest section (default 64)\n"
               "  --manifest PATH the ground truth as JSON: every OOM message's grep -n line, offset, rank and\n"
               "                  incident, and every look-alike line planted\n");
  std::exit(2);
}

bool parse_u64(const char* s, std::uint64_t& v, bool suffix) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || *s == '-') return false;
  std::uint64_t mul = 1;
  if (suffix && *end != '\0') {
    switch (*end) {
      case 'K': case 'k': mul = 1ull << 10; break;
      case 'M': case 'm': mul = 1ull << 20; break;
      case 'G': case 'g': mul = 1ull << 30; break;
      default: return false;
    }
    ++end;
  }
  if (*end != '\0') return false;
  v = x * mul;
  return true;
}

}  // namespace

// The ground truth, as JSON (one entry a line, so that grep and diff work on it).
bool write_manifest(const char* path, std::string_view mix, std::uint64_t size, std::uint64_t seed, const Out& out,
                    const Stats& st, const LogWriter& log) {
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return false;
  const Measured& m = out.measured();
  std::fprintf(f, "{\n\"generator\": \"gen_training_log\",\n\"mix\": \"%.*s\",\n\"size\": %llu,\n\"seed\": %llu,\n",
               static_cast<int>(mix.size()), mix.data(), static_cast<unsigned long long>(size),
               static_cast<unsigned long long>(seed));
  std::fprintf(f, "\"incidents\": %llu,\n\"bursts\": %llu,\n",
               static_cast<unsigned long long>(st.incidents), static_cast<unsigned long long>(st.bursts));
  std::fprintf(f,
               "\"measured\": {\"lines\": %llu, \"bare_cr\": %llu, \"crlf_lines\": %llu, \"longest_line\": %llu, "
               "\"lines_100k\": %llu, \"memory_word_lines\": %llu, \"traceback_lines\": %llu, \"rg_lines\": %llu, "
               "\"oom_word_lines\": %llu, \"outofmemory_word_lines\": %llu},\n",
               static_cast<unsigned long long>(m.lines), static_cast<unsigned long long>(m.bare_cr),
               static_cast<unsigned long long>(m.crlf_lines), static_cast<unsigned long long>(m.longest),
               static_cast<unsigned long long>(m.lines_100k), static_cast<unsigned long long>(m.word_lines),
               static_cast<unsigned long long>(m.traceback_lines), static_cast<unsigned long long>(m.rg_lines),
               static_cast<unsigned long long>(m.oom_word_lines),
               static_cast<unsigned long long>(m.out_of_memory_word_lines));
  std::fprintf(f, "\"ooms\": [\n");
  const auto& ooms = log.oom_marks();
  for (std::size_t i = 0; i < ooms.size(); ++i) {
    const OomMark& o = ooms[i];
    const char era[2] = {o.era, '\0'};
    std::fprintf(f,
                 "{\"line\": %llu, \"line_offset\": %llu, \"offset\": %llu, \"rank\": %d, \"incident\": %llu, "
                 "\"era\": \"%s\", \"joined\": %s, \"truncated\": %s}%s\n",
                 static_cast<unsigned long long>(o.line), static_cast<unsigned long long>(o.line_offset),
                 static_cast<unsigned long long>(o.offset), o.rank, static_cast<unsigned long long>(o.incident),
                 o.era != 0 ? era : "classic", o.joined ? "true" : "false", o.truncated ? "true" : "false",
                 i + 1 < ooms.size() ? "," : "");
  }
  std::fprintf(f, "],\n\"lookalikes\": [\n");
  const auto& looks = log.look_marks();
  for (std::size_t i = 0; i < looks.size(); ++i) {
    const LookMark& l = looks[i];
    std::fprintf(f,
                 "{\"line\": %llu, \"line_offset\": %llu, \"offset\": %llu, \"rank\": %d, \"kind\": \"%.*s\", "
                 "\"what\": \"%.*s\", \"rg\": %s}%s\n",
                 static_cast<unsigned long long>(l.line), static_cast<unsigned long long>(l.line_offset),
                 static_cast<unsigned long long>(l.offset), l.rank, static_cast<int>(l.kind.size()), l.kind.data(),
                 static_cast<int>(l.what.size()), l.what.data(), l.rg ? "true" : "false",
                 i + 1 < looks.size() ? "," : "");
  }
  std::fprintf(f, "]\n}\n");
  return std::fclose(f) == 0;
}

int main(int argc, char** argv) {
  std::uint64_t size = 0, ooms = 0, ranks = 0, seed = 0x006F6F6D6C656E73ull;  // "oomlens"
  const char* path = nullptr;
  const char* manifest = nullptr;
  Mix mix = Mix::classic;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    if (a == "--size") {
      if (!parse_u64(value(), size, true)) usage("bad --size");
    } else if (a == "--ooms") {
      if (!parse_u64(value(), ooms, false) || ooms == 0) usage("bad --ooms");
    } else if (a == "--ranks") {
      if (!parse_u64(value(), ranks, false) || ranks == 0 || ranks > 1024) usage("bad --ranks (1..1024)");
    } else if (a == "--seed") {
      if (!parse_u64(value(), seed, false)) usage("bad --seed");
    } else if (a == "--mix") {
      const std::string_view name = value();
      const auto* it = std::find(std::begin(kMixNames), std::end(kMixNames), name);
      if (it == std::end(kMixNames)) usage("bad --mix");
      mix = static_cast<Mix>(it - std::begin(kMixNames));
    } else if (a == "--manifest") {
      manifest = value();
    } else if (a == "-h" || a == "--help") {
      usage(nullptr);
    } else if (path == nullptr && (a == "-" || !a.starts_with("-"))) {
      path = argv[i];
    } else {
      usage("unexpected argument");
    }
  }
  if (path == nullptr || size == 0) usage("--size and OUT are required");
  if (ooms == 0) ooms = mix == Mix::bursts ? 48 : mix == Mix::mix ? 50 : 36;
  if (ranks == 0) ranks = mix == Mix::ranks || mix == Mix::mix ? 64 : mix == Mix::bursts ? 16 : 8;
  // Room for start-up, each incident with its restart, and the tail (the
  // mixes' pieces are larger: a progress bar's line reaches 1 MB).
  const std::uint64_t tail_reserve = mix == Mix::classic ? 64 * 1024 * ((ranks + 7) / 8) + 4096 : 4 * kMiB;
  const std::uint64_t minimum =
      256 * 1024 + (ooms + 1) * 96 * 1024 * ((ranks + 7) / 8) + (mix == Mix::classic ? 0 : 2 * tail_reserve);
  if (size < minimum) {
    std::fprintf(stderr, "gen_training_log: --size must be at least %llu bytes for %llu OOMs and %llu ranks\n",
                 static_cast<unsigned long long>(minimum), static_cast<unsigned long long>(ooms),
                 static_cast<unsigned long long>(ranks));
    return 2;
  }

  const bool to_stdout = std::string_view(path) == "-";
  std::FILE* file = to_stdout ? stdout : std::fopen(path, "wb");
  if (file == nullptr) {
    std::fprintf(stderr, "gen_training_log: cannot open %s: %s\n", path, std::strerror(errno));
    return 1;
  }

  Out out(file);
  LogWriter log(out, seed, static_cast<int>(ranks), (ooms + 4) / 5 * 5 + 5, mix);
  log.startup(false);
  // Incident k sits at (k + 0.5) / N of the file: evenly spaced, none at the edges.
  for (std::uint64_t k = 0; k < ooms; ++k) {
    const std::uint64_t at = size / ooms * k + size / ooms / 2;
    while (out.written() < at) log.noise();
    log.incident();
    log.startup(true);
  }
  // Fill to exactly `size`: big pieces while far away, then short lines, then
  // a separator line of the exact remaining length.
  while (out.written() + tail_reserve < size) log.noise();
  while (out.written() + 600 < size) log.short_line();
  out.set_crlf(false);
  if (out.written() < size) {
    const std::uint64_t left = size - out.written();
    out.repeat('=', left - 1);
    out.nl();
  }

  if (!out.flush() || (!to_stdout && std::fclose(file) != 0) || (to_stdout && std::fflush(stdout) != 0)) {
    std::fprintf(stderr, "gen_training_log: write to %s failed: %s\n", path, std::strerror(errno));
    return 1;
  }
  const Stats& s = log.stats;
  const double total = static_cast<double>(out.written());
  auto pct = [&](std::uint64_t b) { return 100.0 * static_cast<double>(b) / total; };
  std::fprintf(stderr,
               "gen_training_log: wrote %llu bytes, %llu lines, %llu OOM messages in %llu incidents "
               "(%llu echoed by a second rank)\n"
               "gen_training_log: bytes: progress bars %.1f%%, log lines %.1f%%, NCCL %.1f%%, warnings %.1f%%, "
               "handled tracebacks %.1f%%, OOM incidents %.2f%%",
               static_cast<unsigned long long>(out.written()), static_cast<unsigned long long>(out.lines()),
               static_cast<unsigned long long>(s.oom_messages), static_cast<unsigned long long>(s.incidents),
               static_cast<unsigned long long>(s.echoed), pct(s.bytes_bars), pct(s.bytes_logs), pct(s.bytes_nccl),
               pct(s.bytes_warnings), pct(s.bytes_handled), pct(s.bytes_incidents));
  if (mix != Mix::classic)
    std::fprintf(stderr,
                 ", ordinary tracebacks %.1f%%, memory chatter %.1f%%, long bars %.1f%%, rank rounds %.1f%%, "
                 "look-alikes %.1f%%, section starts %.1f%%",
                 pct(s.bytes_tracebacks), pct(s.bytes_memory), pct(s.bytes_long_bars), pct(s.bytes_rank_rounds),
                 pct(s.bytes_lookalikes), pct(s.bytes_sections));
  std::fprintf(stderr, "\n");

  // What the bytes hold, measured on them (per GiB: scaled to 1 GiB).
  const Measured& m = out.measured();
  const double per_gib = static_cast<double>(kGiB) / total;
  const std::uint64_t ordinary = m.traceback_lines - std::min(m.traceback_lines, s.oom_messages);
  std::uint64_t rg_lookalikes = 0;
  std::vector<std::pair<std::string_view, std::uint64_t>> kinds;
  for (const LookMark& l : log.look_marks()) {
    if (l.rg) ++rg_lookalikes;
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == l.kind; });
    if (it == kinds.end()) {
      kinds.emplace_back(l.kind, 1);
    } else {
      ++it->second;
    }
  }
  const std::string_view name = kMixNames[static_cast<int>(mix)];
  std::fprintf(stderr,
               "gen_training_log: mix %.*s: %llu bare \\r (%.0f per GiB), %llu CRLF lines, longest line %llu bytes, "
               "%llu lines of 100 KB or more\n",
               static_cast<int>(name.size()), name.data(), static_cast<unsigned long long>(m.bare_cr),
               static_cast<double>(m.bare_cr) * per_gib, static_cast<unsigned long long>(m.crlf_lines),
               static_cast<unsigned long long>(m.longest), static_cast<unsigned long long>(m.lines_100k));
  std::fprintf(stderr,
               "gen_training_log: mix %.*s: %llu ordinary tracebacks (%.0f per GiB, one per %.0f lines), "
               "%llu lines with memory/allocat/cuda (%.1f%% of lines)\n",
               static_cast<int>(name.size()), name.data(), static_cast<unsigned long long>(ordinary),
               static_cast<double>(ordinary) * per_gib,
               ordinary != 0 ? static_cast<double>(m.lines) / static_cast<double>(ordinary) : 0.0,
               static_cast<unsigned long long>(m.word_lines),
               100.0 * static_cast<double>(m.word_lines) / static_cast<double>(std::max<std::uint64_t>(m.lines, 1)));
  std::fprintf(stderr, "gen_training_log: mix %.*s: look-alike, pressure, collateral and setting lines planted: %zu (",
               static_cast<int>(name.size()), name.data(), log.look_marks().size());
  for (std::size_t i = 0; i < kinds.size(); ++i)
    std::fprintf(stderr, "%s%.*s %llu", i ? ", " : "", static_cast<int>(kinds[i].first.size()), kinds[i].first.data(),
                 static_cast<unsigned long long>(kinds[i].second));
  std::fprintf(stderr, "), %llu of them counted by rg\n", static_cast<unsigned long long>(rg_lookalikes));
  std::fprintf(stderr, "gen_training_log: mix %.*s: %llu bursts, %llu messages joined after a bar's \\r, world up to %llu ranks, styles:",
               static_cast<int>(name.size()), name.data(), static_cast<unsigned long long>(s.bursts),
               static_cast<unsigned long long>(s.joined_messages), static_cast<unsigned long long>(s.max_world));
  for (int i = 0; i < static_cast<int>(std::size(kStyleNames)); ++i)
    if (s.styles_used >> i & 1 || (mix == Mix::classic && i == 0))
      std::fprintf(stderr, " %.*s", static_cast<int>(kStyleNames[i].size()), kStyleNames[i].data());
  std::fprintf(stderr, "; eras:");
  if (s.eras_used == 0) std::fprintf(stderr, " classic");
  for (int i = 0; i < 9; ++i)
    if (s.eras_used >> i & 1) std::fprintf(stderr, " %c", 'A' + i);
  std::fprintf(stderr, "\n");

  // The invariants the benchmarks rely on, checked on the bytes.
  const std::uint64_t want_rg = s.oom_messages + rg_lookalikes;
  bool ok = true;
  if (m.rg_lines != want_rg) {
    std::fprintf(stderr, "gen_training_log: BUG: %llu lines match 'out of memory|RESOURCE_EXHAUSTED', expected %llu\n",
                 static_cast<unsigned long long>(m.rg_lines), static_cast<unsigned long long>(want_rg));
    ok = false;
  }
  if (m.out_of_memory_word_lines > s.oom_messages || log.oom_marks().size() != s.oom_messages) {
    std::fprintf(stderr, "gen_training_log: BUG: 'OutOfMemory' on %llu lines, %zu messages marked, %llu written\n",
                 static_cast<unsigned long long>(m.out_of_memory_word_lines), log.oom_marks().size(),
                 static_cast<unsigned long long>(s.oom_messages));
    ok = false;
  }
  if (m.lines != out.lines()) {
    std::fprintf(stderr, "gen_training_log: BUG: line counts disagree (%llu vs %llu)\n",
                 static_cast<unsigned long long>(m.lines), static_cast<unsigned long long>(out.lines()));
    ok = false;
  }
  if (manifest != nullptr && !write_manifest(manifest, name, size, seed, out, s, log)) {
    std::fprintf(stderr, "gen_training_log: cannot write the manifest %s: %s\n", manifest, std::strerror(errno));
    return 1;
  }
  return ok ? 0 : 3;
}
