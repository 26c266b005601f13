// libFuzzer target: any bytes as one report of the verify probe (the JSON a
// job's Python process writes, so as untrusted as the job). The reader may
// refuse it with an exception, as read_probe_reports expects, and must do
// nothing else: no crash, no abort, no leak.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "report/probe_reports.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    auto measure = oomlens::report::parse_probe_report(std::string(reinterpret_cast<const char*>(data), size));
    (void)measure;
  } catch (const std::exception&) {
    // Refused: read_probe_reports lists it as unreadable.
  }
  return 0;
}
