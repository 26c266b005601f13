// The fingerprint planner (see scan_planner.hpp, and scan.cpp for the filter
// it plans for).
#include "analyzer/log/scan_planner.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace oomlens::analyzer::scan_plan {
namespace {


// Bytes of training logs and English text, roughly most frequent first. Only
// the order matters: it steers each fingerprint towards rare bytes and keeps
// bytes that are common together out of one bucket. Unlisted bytes (control
// bytes, non-ASCII) count as rarer than all of these.
constexpr std::string_view kByteRank =
    " e0t1a2o3i4n5s6r7l8d9h.c:u-m/p_f,g=y[]wb\nvk'\"()xE|ITAONSR%#LDCUMP+FG*<>"
    "q@zjBYWHVK!;?&$XQJZ{}\t\r\\^~`";

// What a training log says when nothing is wrong: the words its fingerprints
// must avoid. Letter frequencies alone would pick "orch" for "by pytorch" and
// "lloc" for "tried to allocate", windows that fire on every "torch" and
// "allocated" of a memory-chatty log. Planning against this sample keeps the
// candidate rate low on such logs. (Lower case; the scan folds case.)
constexpr std::string_view kOrdinaryLog =
    "[rank3]:2026-03-01 12:00:00,123 info trainer: epoch 3 step 1200/5000 loss 0.2311 lr 3.0e-04 "
    "grad_norm 1.02 throughput 812.4 samples/s\n"
    " 45%|####      | 450/1000 [01:02<01:16,  7.2it/s, loss=0.231]\n"
    "[2026-03-01 12:00:01,002] [info] [utils.py:781:see_memory_usage] after forward\n"
    "ma 12.3 gb         max_ma 13.1 gb         ca 14.0 gb         max_ca 14 gb\n"
    "cpu virtual memory:  used = 201.3 gb, percent = 40.1%\n"
    "{'loss': 0.231, 'grad_norm': 1.02, 'learning_rate': 3e-05, 'epoch': 0.42, 'memory_allocated': 12.3, "
    "'max_memory_allocated': 13.1, 'memory_reserved': 14.0, 'max_memory_reserved': 15.2}\n"
    "gpu memory usage: allocated 12.30 gib, reserved 14.00 gib, torch.cuda.memory_allocated()=13207024640\n"
    "node1:4242:4311 [3] nccl info channel 00/02 : 0 1 2 3 4 5 6 7 via p2p/cumem/read\n"
    "node1:4242:4311 [3] nccl info comm 0x5581 rank 3 nranks 8 cudadev 3 nvmlDev 3 busid 4a000 - init complete\n"
    "using device cuda:0, cuda_visible_devices=0,1,2,3; pin_memory=true num_workers=8\n"
    "allocated 1.2 gib for kv cache; using memory efficient attention (xformers) on the device\n"
    "traceback (most recent call last):\n"
    "  file \"/home/user/proj/train.py\", line 212, in <module>\n"
    "    main()\n"
    "  file \"/usr/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1739, in "
    "_wrapped_call_impl\n"
    "    return self._call_impl(*args, **kwargs)\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "keyerror: 'input_ids' valueerror: expected input batch_size (32) to match target batch_size (16).\n"
    "during handling of the above exception, another exception occurred:\n"
    "userwarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "futurewarning: `torch.cuda.amp.autocast(args...)` is deprecated. please use "
    "`torch.amp.autocast('cuda', args...)` instead.\n"
    "warning: the process group has been initialized; the reserved and allocated counters were reset. "
    "caching allocator statistics: allocation count 1200, segment count 31, inactive split 0.\n"
    "config: {'model': 'llama-7b', 'batch_size': 8, 'precision': 'bf16', 'optimizer': 'adamw', "
    "'scheduler': 'cosine', 'gradient_checkpointing': true, 'max_seq_len': 4096, 'device_map': 'auto'}\n"
    "saving checkpoint to /data/ckpt/step_1200.pt (model state dict, optimizer state, scheduler, rng state)\n"
    "evaluating: 100%|##########| 250/250 [00:41<00:00,  6.1it/s] accuracy 0.713 perplexity 5.21\n"
    "process 4242 started with pid 4242 on host node1; world size 8, local rank 3, global rank 3\n"
    "the call was retried after a transient error; connection to the parameter server restored\n"
    "using cuda device 0 (nvidia a100-sxm4-80gb), cuda 12.4, cudnn 9.1; cuda memory: 79.15 gib total\n"
    "step 1200: gpu memory allocated 61.2 gb | reserved memory 70.0 gb | peak memory 72.4 gb | free memory 8.1 gb\n"
    "max memory allocated: 61.20 gb, max memory reserved: 70.01 gb, device memory used: 71.3 gb of 80.0 gb\n"
    "[memory] rank 3: allocated=12.3g reserved=14.0g active=12.1g inactive=0.4g cuda peak=15.2g host rss=31.4g\n"
    "cpu memory used 120.4 gb (40%), shared memory /dev/shm 64 gb, pinned memory pool 2.0 gb, swap 0 b\n"
    "| 0  nvidia h100 80gb hbm3   on | 00000000:18:00.0 off |  0 | n/a 44c p0 312w / 700w | 71234mib / 81559mib | 98% default |\n"
    "total memory usage of the model: weights 13.5 gb, gradients 13.5 gb, optimizer states 27.0 gb, activations 9.8 gb\n"
    "enable memory efficient attention; using flash attention 2 for the cuda kernels; cuda graphs disabled\n"
    "index out of range in self; key out of bounds; out of vocabulary tokens: 12; retry 2 of 5\n";

// Estimated share of every folded nibble pair (folded high nibble, low
// nibble) in text, from kByteRank with a Zipf-like fall-off.
using NibbleFrequencies = std::array<std::array<double, 16>, 16>;

NibbleFrequencies nibble_frequencies() {
  std::array<double, 256> byte{};
  byte.fill(1e-5);
  for (std::size_t r = 0; r < kByteRank.size(); ++r) {
    byte[static_cast<unsigned char>(kByteRank[r])] = 1.0 / std::pow(r + 1.0, 1.5);
  }
  NibbleFrequencies f{};
  for (unsigned x = 0; x < 256; ++x) f[(x >> 4) | 2][x & 15] += byte[x];
  return f;
}

// The byte sets a bucket accepts at each window position.
struct BucketSets {
  std::array<std::bitset<128>, kWindow> exact;  // folded bytes, as the exact classes hold them
  std::array<std::uint16_t, kWindow> lo{}, hi{};  // nibbles, as the AVX2 tables hold them
  int members = 0;
};

// kOrdinaryLog as one bitset per byte value and per nibble (where each occurs), so that
// the positions a bucket accepts are a few ORs, shifts and ANDs of bitsets.
class SampleModel {
 public:
  SampleModel() {
    for (std::size_t p = 0; p < kOrdinaryLog.size(); ++p) {
      const auto c = static_cast<unsigned char>(kOrdinaryLog[p]) & 0x7F;
      const std::uint64_t bit = std::uint64_t{1} << (p % 64);
      at_[c][p / 64] |= bit;
      at_low_[c & 15][p / 64] |= bit;
      at_high_[filter_fold(c) >> 4][p / 64] |= bit;
    }
  }

  // Share of sample positions where every window byte is in the bucket's sets.
  // Words of positions already ruled out are skipped: after two window
  // positions few remain, which keeps planning to a few milliseconds.
  // `nibbles`: a byte is in a set when its nibbles are (what the AVX2 tables
  // let through), else when it is itself.
  double rate(const BucketSets& s, bool nibbles) const {
    Bits all;
    all.fill(~std::uint64_t{0});
    for (std::size_t j = 0; j < kWindow; ++j) {
      // Bytes of the set (exact), or low nibbles then high nibbles.
      std::array<const Bits*, 128> rows;
      std::size_t n = 0, n_low = 0;
      if (nibbles) {
        for (unsigned l = s.lo[j]; l != 0; l &= l - 1) rows[n++] = &at_low_[static_cast<std::size_t>(std::countr_zero(l))];
        n_low = n;
        for (unsigned h = s.hi[j]; h != 0; h &= h - 1) rows[n++] = &at_high_[static_cast<std::size_t>(std::countr_zero(h))];
      } else {
        for (std::size_t c = s.exact[j]._Find_first(); c < 128; c = s.exact[j]._Find_next(c)) rows[n++] = &at_[c];
        n_low = n;
      }
      auto any = [&](std::size_t w) {
        if (w >= kWords) return std::uint64_t{0};
        std::uint64_t bits = 0, high = 0;
        for (std::size_t k = 0; k < n_low; ++k) bits |= (*rows[k])[w];
        if (n_low == n) return bits;
        for (std::size_t k = n_low; k < n; ++k) high |= (*rows[k])[w];
        return bits & high;
      };
      // Position p is accepted at j when byte p + j is: shift down by j.
      // any(w + 1), found for word w, is word w + 1's any(w) next time round.
      std::uint64_t next = 0;
      std::size_t next_word = kWords + 1;
      for (std::size_t w = 0; w < kWords; ++w) {
        if (all[w] == 0) continue;
        const std::uint64_t here = next_word == w ? next : any(w);
        if (j == 0) {
          all[w] &= here;
          continue;
        }
        next = any(w + 1);
        next_word = w + 1;
        all[w] &= (here >> j) | (next << (64 - j));
      }
    }
    std::size_t matches = 0;
    for (std::uint64_t w : all) matches += static_cast<std::size_t>(std::popcount(w));
    return static_cast<double>(matches) / static_cast<double>(kOrdinaryLog.size());
  }

 private:
  static constexpr std::size_t kWords = (kOrdinaryLog.size() + 63) / 64;
  using Bits = std::array<std::uint64_t, kWords>;
  std::array<Bits, 128> at_{};
  std::array<Bits, 16> at_low_{}, at_high_{};  // by low nibble, by folded high nibble
};

// A window inside one word of letters ("orch", "lloc", "shar") is likelier in
// text than its letters suggest: words repeat, and a log's vocabulary is not
// the sample's. Windows that span a word boundary or punctuation ("y py",
// "o al", "f me") are the distinctive ones.
bool inside_a_word(std::string_view window) {
  return std::all_of(window.begin(), window.end(), [](char c) { return is_lower(static_cast<unsigned char>(c)); });
}
constexpr double kInsideWordPenalty = 30;

// Picks a window and a bucket per literal so that the expected number of
// candidates (false ones included) is small. A bucket's candidate rate is
// estimated twice and the two are added: the share of positions of
// kOrdinaryLog at which every window byte is in the bucket's sets (the
// words real logs repeat), and the product over positions of the share of
// bytes its nibble tables accept (any other text; the loosest filter).
// Literals that share a bucket widen each other's sets, so the choice is a
// small local search over (window, bucket) per literal.
class Planner {
 public:
  // `nibble_filter`: the scan will run on the AVX2 nibble tables, which let
  // through every mix of a bucket's nibbles. Planning against what they
  // accept keeps a word that only mixes those nibbles ("loss=" against
  // "oom_s") from becoming a candidate on every progress bar; the exact
  // classes of AVX-512 and the scalar path are planned against exactly.
  Planner(const std::vector<std::string>& folded, bool nibble_filter)
      : lits_(folded), nibble_filter_(nibble_filter), freq_(nibble_frequencies()), choice_(folded.size()) {}


  std::vector<FingerprintChoice> plan() {
    choose_rarest_windows();
    assign_buckets_greedily();
    improve();
    return choice_;
  }

 private:
  BucketSets sets_of(const std::vector<FingerprintChoice>& choice, int b, double* penalty) const {
    BucketSets s;
    *penalty = 1;
    for (std::size_t i = 0; i < lits_.size(); ++i) {
      if (choice[i].bucket != b) continue;
      ++s.members;
      if (inside_a_word(std::string_view(lits_[i]).substr(choice[i].offset, kWindow)))
        *penalty = kInsideWordPenalty;
      for (std::size_t j = 0; j < kWindow; ++j) {
        const auto c = static_cast<unsigned char>(lits_[i][choice[i].offset + j]);
        s.exact[j].set(c & 0x7F);
        const unsigned char f = filter_fold(c);
        s.lo[j] |= 1u << (f & 15);
        s.hi[j] |= 1u << (f >> 4);
      }
    }
    return s;
  }

  // Only the nibbles a bucket holds are visited (a handful of the 256
  // pairs), in ascending order: this sum was most of the planning's cost.
  double nibble_rate(const BucketSets& s) const {
    double rate = 1;
    for (std::size_t j = 0; j < kWindow; ++j) {
      double share = 0;
      for (unsigned his = s.hi[j]; his != 0; his &= his - 1) {
        const auto h = static_cast<std::size_t>(std::countr_zero(his));
        for (unsigned los = s.lo[j]; los != 0; los &= los - 1) share += freq_[h][static_cast<std::size_t>(std::countr_zero(los))];
      }
      rate *= share;
    }
    return rate;
  }

  // Expected cost of scanning text with bucket `b` as `choice` has it: its
  // candidate rate times the work per candidate (leaving the SIMD loop, then
  // one comparison per literal in the bucket).
  double bucket_cost(const std::vector<FingerprintChoice>& choice, int b) const {
    double penalty = 1;
    const BucketSets s = sets_of(choice, b, &penalty);
    if (s.members == 0) return 0;
    return (sample_.rate(s, nibble_filter_) + nibble_rate(s) * penalty) * (3 + s.members);
  }

  // Each literal alone in bucket 0: its own rarest window; the others are
  // kept, best first, for the local search.
  void choose_rarest_windows() {
    windows_.assign(lits_.size(), {});
    for (std::size_t i = 0; i < lits_.size(); ++i) {
      std::vector<FingerprintChoice> alone(lits_.size(), FingerprintChoice{0, -1});
      std::vector<std::pair<double, std::size_t>> ranked;
      for (std::size_t o = 0; o + kWindow <= lits_[i].size(); ++o) {
        alone[i] = FingerprintChoice{o, 0};
        ranked.emplace_back(bucket_cost(alone, 0), o);
      }
      std::stable_sort(ranked.begin(), ranked.end());
      for (std::size_t k = 0; k < ranked.size() && k < kWindowsTried; ++k) windows_[i].push_back(ranked[k].second);
      choice_[i].offset = windows_[i].front();
    }
  }

  // In order, each literal goes where it adds least: an empty bucket while
  // there is one, or one whose fingerprints already resemble its own.
  void assign_buckets_greedily() {
    for (auto& c : choice_) c.bucket = -1;
    std::array<double, kBuckets> cost{};  // of each bucket as filled so far
    for (std::size_t i = 0; i < lits_.size(); ++i) {
      double best = INFINITY;
      int best_bucket = 0;
      std::array<double, kBuckets> joined{};
      for (int b = 0; b < kBuckets; ++b) {
        choice_[i].bucket = b;
        joined[b] = bucket_cost(choice_, b);
        const double added = joined[b] - cost[b];
        if (added < best) best = added, best_bucket = b;
      }
      choice_[i].bucket = best_bucket;
      cost[best_bucket] = joined[best_bucket];
    }
  }

  // Moves single literals to another of their best windows or another
  // bucket while that lowers the total cost. Few passes suffice; the caps
  // only bound the time this takes when the scanner is built.
  void improve() {
    std::array<double, kBuckets> cost{};
    for (int b = 0; b < kBuckets; ++b) cost[b] = bucket_cost(choice_, b);
    for (int pass = 0; pass < 3; ++pass) {
      bool moved = false;
      for (std::size_t i = 0; i < lits_.size(); ++i) {
        // The cost of literal i's bucket without it is the same for every
        // other bucket tried: computed once per place the literal is in.
        double without_i = 0;
        bool without_i_known = false;
        for (std::size_t o : windows_[i]) {
          for (int b = 0; b < kBuckets; ++b) {
            const FingerprintChoice old = choice_[i];
            if (old.offset == o && old.bucket == b) continue;
            choice_[i] = FingerprintChoice{o, b};
            const bool same = b == old.bucket;
            if (!same && !without_i_known) {
              without_i = bucket_cost(choice_, old.bucket);
              without_i_known = true;
            }
            const double left = same ? bucket_cost(choice_, old.bucket) : without_i;
            const double joined = same ? 0 : bucket_cost(choice_, b);
            const double before = cost[old.bucket] + (same ? 0 : cost[b]);
            if (left + joined < before * (1 - 1e-9)) {
              cost[old.bucket] = left;
              if (!same) cost[b] = joined;
              moved = true;
              without_i_known = false;
            } else {
              choice_[i] = old;
            }
          }
        }
      }
      if (!moved) break;
    }
  }

  static constexpr std::size_t kWindowsTried = 2;
  const std::vector<std::string>& lits_;
  bool nibble_filter_;
  NibbleFrequencies freq_;
  SampleModel sample_;
  std::vector<FingerprintChoice> choice_;
  std::vector<std::vector<std::size_t>> windows_;  // per literal, its best window offsets
};


}  // namespace

std::string fold_literal(std::string_view literal) {
  if (literal.size() < kWindow) {
    throw std::invalid_argument("LiteralScanner: literal shorter than " + std::to_string(kWindow) +
                                " bytes: " + std::string(literal));
  }
  std::string folded;
  for (char ch : literal) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) throw std::invalid_argument("LiteralScanner: non-ASCII literal: " + std::string(literal));
    folded.push_back(static_cast<char>(ascii_lower(c)));
  }
  return folded;
}

std::vector<FingerprintChoice> plan_fingerprints(const std::vector<std::string>& folded_literals,
                                                 bool nibble_filter) {
  return Planner(folded_literals, nibble_filter).plan();
}

}  // namespace oomlens::analyzer::scan_plan
