// gen_training_log: writes a deterministic, realistic multi-rank training log
// for the `oomlens diagnose` benchmark (bench/diagnose_vs_ripgrep.sh).
//
//   gen_training_log --size BYTES [--ooms N] [--ranks R] [--seed S] OUT
//
// The log tells one story: a torchrun job (R ranks, launcher line prefixes
// "[rankN]:") that trains, hits a GPU out-of-memory error N times, and is
// restarted by the elastic agent after each one. Roughly by bytes it holds:
// tqdm progress bars redrawn with '\r' (many redraws per '\n', ANSI colour on
// some), per-rank logging lines with timestamps (loss, lr, grad norm), NCCL
// INFO bursts whenever a communicator is created, Python and c10 warnings,
// tracebacks of exceptions the job handled (frames in site-packages), and the
// N OOM incidents, evenly spaced: a full traceback from
// /home/user/proj/train.py through torch frames into the allocator's message,
// sometimes a second rank failing the same way (echo), then collateral
// failures (NCCL watchdog, SIGTERM) and the restart.
//
// Invariant the benchmark relies on: the phrase "out of memory" (in any case)
// appears ONLY inside the OOM messages, one per line, so `rg -c 'out of memory'`
// counts exactly the OOM messages written (reported on stderr). Keep it so when
// adding noise.
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
// Buffered output with the few formatters the log needs (integers only).

class Out {
 public:
  explicit Out(std::FILE* file) : file_(file), buf_(new char[kCap]) {}

  void put(std::string_view s) {
    if (s.empty()) return;
    if (len_ + s.size() > kCap) flush();
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
  }
  void ch(char c) {
    if (len_ == kCap) flush();
    buf_[len_++] = c;
  }
  void repeat(char c, std::size_t n) {
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

  std::uint64_t written() const { return flushed_ + len_; }
  std::uint64_t lines() const { return lines_; }

  bool flush() {
    lines_ += static_cast<std::uint64_t>(std::count(buf_.get(), buf_.get() + len_, '\n'));
    if (len_ != 0 && std::fwrite(buf_.get(), 1, len_, file_) != len_) failed_ = true;
    flushed_ += len_;
    len_ = 0;
    return !failed_;
  }
  bool failed() const { return failed_; }

 private:
  static constexpr std::size_t kCap = std::size_t{8} << 20;
  std::FILE* file_;
  std::unique_ptr<char[]> buf_;
  std::size_t len_ = 0;
  std::uint64_t flushed_ = 0;
  std::uint64_t lines_ = 0;
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
};

class LogWriter {
 public:
  // max_restarts: torchrun's --max-restarts, enough for every OOM.
  LogWriter(Out& out, std::uint64_t seed, int ranks, std::uint64_t max_restarts)
      : out_(out), rng_(seed), ranks_(ranks), max_restarts_(max_restarts), restarts_left_(max_restarts) {
    new_worker_pids();
  }

  Stats stats;

  // One piece of ordinary training noise, chosen at random.
  void noise() {
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
  }

  // One OOM incident: the failing rank's traceback and message, sometimes a
  // second rank's, then collateral failures and the agent tearing down.
  void incident() {
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

  // ------------------------------------------------------------------ prefixes

  void rank_prefix(int rank) {
    out_.put("[rank");
    out_.num(static_cast<std::uint64_t>(rank));
    out_.put("]:");
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
        rank_prefix(rank);
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
    const int rank = static_cast<int>(rng_.below(ranks_));
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
      w.oom_message(rank_, oom_);
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
    clock_.advance(rng_.range(1000, 5000));
    if (rng_.chance(60)) {
      clock_.advance(600000);  // the watchdog's timeout
      for (int r = 0; r < ranks_ && r < 4; ++r) {
        if (r == failed_rank) continue;
        rank_prefix(r);
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
      glog_prefix('W', launcher_pid_);
      out_.put("torch/distributed/elastic/multiprocessing/api.py:897] Sending process ");
      out_.num(pid(r));
      out_.put(" closing signal SIGTERM\n");
    }
    glog_prefix('E', launcher_pid_);
    out_.put("torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: ");
    out_.num(static_cast<std::uint64_t>(failed_rank % 8));
    out_.put(" (pid: ");
    out_.num(pid(failed_rank));
    out_.put(") of binary: /usr/bin/python3\n");
  }

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
};

// ---------------------------------------------------------------------------
// Command line.

[[noreturn]] void usage(const char* why) {
  if (why) std::fprintf(stderr, "gen_training_log: %s\n", why);
  std::fprintf(stderr,
               "usage: gen_training_log --size BYTES[K|M|G] [--ooms N] [--ranks R] [--seed S] OUT\n"
               "  Writes a deterministic multi-rank training log of exactly BYTES bytes to OUT ('-' for stdout)\n"
               "  with N GPU OOM incidents (default 36) from R ranks (default 8).\n");
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

int main(int argc, char** argv) {
  std::uint64_t size = 0, ooms = 36, ranks = 8, seed = 0x006F6F6D6C656E73ull;  // "oomlens"
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    if (a == "--size") {
      if (!parse_u64(value(), size, true)) usage("bad --size");
    } else if (a == "--ooms") {
      if (!parse_u64(value(), ooms, false)) usage("bad --ooms");
    } else if (a == "--ranks") {
      if (!parse_u64(value(), ranks, false) || ranks == 0 || ranks > 1024) usage("bad --ranks (1..1024)");
    } else if (a == "--seed") {
      if (!parse_u64(value(), seed, false)) usage("bad --seed");
    } else if (a == "-h" || a == "--help") {
      usage(nullptr);
    } else if (path == nullptr && (a == "-" || !a.starts_with("-"))) {
      path = argv[i];
    } else {
      usage("unexpected argument");
    }
  }
  if (path == nullptr || size == 0) usage("--size and OUT are required");
  // Room for start-up, each incident with its restart, and the tail.
  const std::uint64_t minimum = 256 * 1024 + (ooms + 1) * 96 * 1024 * ((ranks + 7) / 8);
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
  LogWriter log(out, seed, static_cast<int>(ranks), (ooms + 4) / 5 * 5 + 5);
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
  const std::uint64_t tail_reserve = 64 * 1024 * ((ranks + 7) / 8) + 4096;
  while (out.written() + tail_reserve < size) log.noise();
  while (out.written() + 600 < size) log.short_line();
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
               "handled tracebacks %.1f%%, OOM incidents %.2f%%\n",
               static_cast<unsigned long long>(out.written()), static_cast<unsigned long long>(out.lines()),
               static_cast<unsigned long long>(s.oom_messages), static_cast<unsigned long long>(s.incidents),
               static_cast<unsigned long long>(s.echoed), pct(s.bytes_bars), pct(s.bytes_logs), pct(s.bytes_nccl),
               pct(s.bytes_warnings), pct(s.bytes_handled), pct(s.bytes_incidents));
  return 0;
}
