// libFuzzer target: any bytes through the whole log pipeline (scanner,
// stream, parsers, incidents, rules, JSON). Must never crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyzer/log/analyzer.hpp"
#include "report/json_report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The first byte picks how the input is cut, so piece boundaries vary too.
  std::size_t piece = size ? 1 + data[0] % 97 : 1;
  oomlens::analyzer::LogAnalyzer analyzer;
  for (std::size_t at = 0; at < bytes.size(); at += piece) analyzer.feed(bytes.substr(at, piece));
  auto report = oomlens::rules::diagnose_log(analyzer.finish());
  auto json = oomlens::report::report_json({{"fuzz", std::move(report)}});
  (void)json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
