// Reading a large didOpen: the language server's hand-written JSON reader
// (lsp/jsonrpc.hpp, IncrementalMessage) against nlohmann::json and against
// simdjson's On Demand parser, on the same message body in memory.
//
//   json_read_bench LOG [RUNS]
//
// LOG becomes the text of a didOpen message, escaped as a client escapes it.
// Each reader must end where the server needs to be: the document's text as
// a std::string (unescaped) and the offsets of its line starts ('\n'). For
// simdjson that means its parse, a copy of the string it unescaped into its
// own buffer, and a pass for the line starts; the hand-written reader does
// all three in one pass, and in the server it does it while the body is
// still arriving (which this benchmark does not show: the body is all here),
// where simdjson can start only once the last byte is in.
// Prints the median of RUNS (default 7) for each, in ms and GB/s of body.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "lsp/jsonrpc.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::size_t> line_starts(std::string_view text) {
  std::vector<std::size_t> starts{0};
  for (const char* p = text.data(); (p = static_cast<const char*>(std::memchr(p, '\n', text.data() + text.size() - p)));)
    starts.push_back(static_cast<std::size_t>(++p - text.data()));
  return starts;
}

template <typename F>
double median_ms(int runs, F&& run) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: json_read_bench LOG [RUNS]\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "json_read_bench: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::stringstream raw;
  raw << in.rdbuf();
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
  nlohmann::json message = {
      {"jsonrpc", "2.0"},
      {"method", "textDocument/didOpen"},
      {"params", {{"textDocument", {{"uri", "file:///bench.log"}, {"languageId", "log"}, {"version", 1},
                                    {"text", raw.str()}}}}}};
  const std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::size_t text_bytes = message["params"]["textDocument"]["text"].get_ref<const std::string&>().size();
  message = nullptr;
  std::size_t sink = 0;  // keeps the results alive to the optimiser

  double nlohmann_ms = median_ms(runs, [&] {
    auto j = nlohmann::json::parse(body);
    std::string text = std::move(j["params"]["textDocument"]["text"].get_ref<std::string&>());
    sink += line_starts(text).size() + text.size();
  });

  // simdjson at its best: the padded body ready (a reader would read into
  // padded room directly) and the text copied into a string whose pages
  // are already in memory. On this kind of machine a fresh 100 MiB
  // allocation costs more than the parse (the first touch of 4 KiB pages);
  // the server's reader asks for huge pages and populates them at once.
  simdjson::padded_string padded(body);
  simdjson::ondemand::parser parser;
  std::string simdjson_text;
  bool simdjson_ok = true;
  double simdjson_ms = median_ms(runs + 1, [&] {  // the first run sizes the parser's buffers
    auto doc = parser.iterate(padded);
    std::string_view view;
    if (doc["params"]["textDocument"]["text"].get_string().get(view)) {
      simdjson_ok = false;
      return;
    }
    simdjson_text.assign(view);
    sink += line_starts(simdjson_text).size() + simdjson_text.size();
  });

  double oomlens_ms = median_ms(runs, [&] {
    oomlens::lsp::IncrementalMessage incremental(body.size());
    constexpr std::size_t kChunk = 64 * 1024;  // what the server reads at a time
    for (std::size_t at = 0; at < body.size();) {
      auto room = incremental.space(std::min(kChunk, body.size() - at));
      std::memcpy(room.data(), body.data() + at, room.size());
      incremental.commit(room.size());
      at += room.size();
    }
    auto parsed = incremental.finish();
    sink += std::holds_alternative<oomlens::lsp::Notification>(parsed) ? 1 : 0;
  });

  const double gb = static_cast<double>(body.size()) / 1e9;
  std::cout << fmt::format("didOpen body {:.1f} MiB (text {:.1f} MiB), median of {} runs\n",
                           static_cast<double>(body.size()) / (1 << 20), static_cast<double>(text_bytes) / (1 << 20),
                           runs);
  std::cout << fmt::format("  nlohmann::json parse + line starts       {:8.1f} ms  {:5.2f} GB/s\n", nlohmann_ms,
                           gb / (nlohmann_ms / 1e3));
  if (simdjson_ok)
    std::cout << fmt::format("  simdjson On Demand + copy + line starts  {:8.1f} ms  {:5.2f} GB/s\n", simdjson_ms,
                             gb / (simdjson_ms / 1e3));
  else
    std::cout << "  simdjson On Demand: could not read the text\n";
  std::cout << fmt::format("  oomlens IncrementalMessage (one pass)    {:8.1f} ms  {:5.2f} GB/s\n", oomlens_ms,
                           gb / (oomlens_ms / 1e3));
  return sink == 0 ? 1 : 0;
}
