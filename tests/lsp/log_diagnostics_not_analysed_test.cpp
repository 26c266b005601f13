// A log with more OOM messages than the analyzer keeps: the editor hears it
// too (the text output's warning, the JSON's files[].ooms_not_analysed), as
// one warning on the document's first line after the incidents' diagnostics.
#include <catch2/catch.hpp>

#include <string>

#include "analyzer/log/analyzer.hpp"
#include "lsp/document_analysis.hpp"
#include "lsp/documents.hpp"
#include "lsp/log_diagnostics.hpp"
#include "rules/diagnose_log.hpp"
#include "tests/lsp/lsp_test_support.hpp"
#include "tests/repeated_oom_log.hpp"

using namespace oomlens;

namespace {

std::vector<lsp::Diagnostic> diagnostics_of(std::size_t max_events) {
  const std::string text = testing::repeated_oom_log(9);
  analyzer::AnalyzerOptions options;
  options.max_events = max_events;
  analyzer::LogAnalyzer analyzer(options);
  analyzer.feed(text);
  lsp::DocumentStore store;
  lsp::DocumentAnalysis a;
  a.doc = store.open("file:///runs/train.log", "log", 3, text);
  a.report = rules::diagnose_log(analyzer.finish());
  return lsp::log_diagnostics(a);
}

}  // namespace

TEST_CASE("the editor is told when OOM messages were counted but not analysed", "[lsp][cap]") {
  const auto capped = diagnostics_of(4);
  REQUIRE(capped.size() >= 2);
  const lsp::Diagnostic& last = capped.back();
  CHECK(last.severity == 2);
  CHECK(last.range == lsp::Range{{0, 0}, {0, 0}});
  CHECK(last.message ==
        "5 more GPU out-of-memory messages were counted but not analysed: oomlens keeps 4 of a log's messages, to "
        "bound its memory, and incidents among the rest are not in this report.");
  CHECK(last.data.version == 3);
  CHECK(capped.front().severity == 1);  // the incidents come first

  const auto whole = diagnostics_of(100);
  for (const auto& d : whole) CHECK(d.message.find("not analysed") == std::string::npos);
}
