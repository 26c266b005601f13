// The anchor scan alone, on each SIMD path this CPU runs, with the
// fingerprints planned for that path: how fast the hot loop reads a log and
// how often its filter hands a window to the exact check.
//
//   scan_bench LOG... [--runs N] [--mib M]
//
// Reads the first M MiB (default 256) of each LOG into memory once, then for
// each path scans it N times (default 5) in 1 MiB pieces, as the reader feeds
// the analyzer, and prints the median time, the throughput, the hits and the
// candidates per MiB (windows the filter passed, true hits included). A
// machine without AVX-512 prints only the paths it has. The analyzer's other
// work (regions, parsers) is not in these figures: `diagnose_matrix.sh`
// measures the whole command.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/scan.hpp"

using oomlens::analyzer::LiteralScanner;
using oomlens::analyzer::ScanHit;
using oomlens::analyzer::detail::path_supported;
using oomlens::analyzer::detail::ScanPath;

namespace {

std::string read_head(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::string data(max_bytes, '\0');
  in.read(data.data(), static_cast<std::streamsize>(max_bytes));
  data.resize(static_cast<std::size_t>(in.gcount()));
  return data;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  double ms = 0;
  std::size_t hits = 0, candidates = 0;
};

Row measure(const std::string& data, ScanPath path, int runs) {
  const LiteralScanner scanner(oomlens::analyzer::parse::anchor_literals(), path);
  constexpr std::size_t kPiece = 1 << 20;
  Row row;
  std::vector<double> times;
  std::vector<ScanHit> hits;
  for (int r = 0; r < runs; ++r) {
    hits.clear();
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t at = 0; at < data.size(); at += kPiece)
      scanner.scan(std::string_view(data).substr(at, kPiece), hits, path);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  row.ms = median(times);
  row.hits = hits.size();
  row.candidates = scanner.candidates(data, path);
  return row;
}

const char* name(ScanPath p) { return p == ScanPath::avx512 ? "avx512" : p == ScanPath::avx2 ? "avx2" : "scalar"; }

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> logs;
  int runs = 5;
  std::size_t mib = 256;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--mib") == 0 && i + 1 < argc) mib = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    else logs.emplace_back(argv[i]);
  }
  if (logs.empty()) {
    fmt::print(stderr, "usage: scan_bench LOG... [--runs N] [--mib M]\n");
    return 2;
  }
  std::vector<ScanPath> paths;
  for (ScanPath p : {ScanPath::avx2, ScanPath::avx512})
    if (path_supported(p)) paths.push_back(p);
  if (paths.empty()) paths.push_back(ScanPath::scalar);
  fmt::print("{:<34} {:>7} {:>9} {:>8} {:>8} {:>13}\n", "log", "path", "ms", "GB/s", "hits", "candidates/MiB");
  for (const std::string& log : logs) {
    std::string data;
    try {
      data = read_head(log, mib << 20);
    } catch (const std::exception& e) {
      fmt::print(stderr, "scan_bench: {}\n", e.what());
      return 2;
    }
    const std::string shown = log.substr(log.find_last_of('/') + 1);
    for (ScanPath p : paths) {
      const Row row = measure(data, p, runs);
      fmt::print("{:<34} {:>7} {:>9.1f} {:>8.2f} {:>8} {:>13.1f}\n", shown, name(p), row.ms,
                 static_cast<double>(data.size()) / row.ms / 1e6, row.hits,
                 static_cast<double>(row.candidates) * static_cast<double>(1 << 20) / static_cast<double>(data.size()));
    }
  }
  return 0;
}
