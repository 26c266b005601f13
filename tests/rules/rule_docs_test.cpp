// The rule catalogue against its doc pages and fixtures: every registered rule
// has a complete page and a golden that names it, every page is a registered
// rule, and the threshold figures the pages quote are the classifier's.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/verdict.hpp"
#include "rules/rule.hpp"

namespace {

using namespace oomlens;
namespace fs = std::filesystem;

const fs::path kSource = OOMLENS_SOURCE_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The sections every page has, named as the pages name them (ruff's "what it
// does / why is this bad / example / fix safety", plus how to verify), and
// the one the build reads the rule's words from.
const std::vector<std::string> kSections = {
    "What it detects", "Why it matters", "What oomlens says", "Example", "Fixes and their safety", "Verify",
};

// The text under "## NAME" up to the next "## ", empty when there is none.
std::string section(std::string_view page, const std::string& name) {
  std::string heading = "\n## " + name + "\n";
  auto start = page.find(heading);
  if (start == std::string_view::npos) return {};
  start += heading.size();
  auto end = page.find("\n## ", start);
  return std::string(page.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
}

bool has_words(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](unsigned char c) { return std::isalnum(c); });
}

// Markdown paragraphs wrap anywhere: one space for every run of white space.
std::string squeezed(std::string_view text) {
  std::string out;
  for (char c : text) {
    bool space = c == ' ' || c == '\n';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}

// Every expected output under fixtures/: the goldens beside logs, jobs and
// snapshots (NAME.json, NAME.txt) and the scripts' lint output (NAME.lint.txt).
std::vector<fs::path> golden_files() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "fixtures")) {
    if (!entry.is_regular_file()) continue;
    auto ext = entry.path().extension();
    if ((ext == ".json" || ext == ".txt") && entry.path().filename() != "README.md") out.push_back(entry.path());
  }
  return out;
}

std::string percent(double share) {
  std::ostringstream ss;
  ss << share * 100;
  return ss.str();
}

std::string gib(std::uint64_t bytes) {
  REQUIRE(bytes % (std::uint64_t{1} << 30) == 0);
  return std::to_string(bytes >> 30);
}

}  // namespace

TEST_CASE("every registered rule has a doc page with every section", "[rules][docs]") {
  for (const auto& info : rules::all_rules()) {
    INFO(info.code);
    auto page = rules::rule_doc(info.code);
    REQUIRE(page);
    CHECK(page->starts_with("# " + std::string(info.code) + " " + std::string(info.name) + "\n"));
    for (const auto& name : kSections) {
      INFO("section " << name);
      CHECK(has_words(section(*page, name)));
    }
  }
}

TEST_CASE("every doc page is a registered rule", "[rules][docs]") {
  std::set<std::string> registered;
  for (const auto& info : rules::all_rules()) registered.insert(std::string(info.code));
  for (const auto& entry : fs::directory_iterator(kSource / "rules" / "docs")) {
    if (entry.path().extension() != ".md") continue;
    INFO(entry.path().filename());
    CHECK(registered.count(entry.path().stem().string()) == 1);
  }
}

TEST_CASE("a finding rule's severity is the one its page states", "[rules][docs]") {
  for (const auto& rule : rules::finding_rules()) {
    INFO(rule.info.code);
    auto page = rules::rule_doc(rule.info.code);
    REQUIRE(page);
    CHECK(page->find("\nSeverity: " + std::string(rules::to_string(rule.severity)) + ".") != std::string_view::npos);
  }
  for (const auto& rule : rules::incident_rules()) {
    INFO(rule.info.code);
    CHECK(rules::rule_doc(rule.info.code)->find("\nSeverity: error.") != std::string_view::npos);
  }
}

TEST_CASE("every registered rule has a fixture whose golden output names it", "[rules][docs][fixtures]") {
  auto goldens = golden_files();
  REQUIRE(!goldens.empty());
  std::vector<std::string> texts;
  for (const auto& p : goldens) texts.push_back(read_file(p));
  for (const auto& info : rules::all_rules()) {
    INFO(info.code);
    // As the JSON contract names it ("rule": "OOM101") or as text and lint
    // output print it (error[OOM101], file:1:1: OOM301).
    const std::string code(info.code);
    std::vector<std::string> needles;
    for (auto [open, close] : {std::pair{'"', '"'}, std::pair{'[', ']'}, std::pair{' ', ' '}}) {
      std::string needle(1, open);
      needle.append(code).push_back(close);
      needles.push_back(std::move(needle));
    }
    bool named = std::any_of(texts.begin(), texts.end(), [&](const std::string& t) {
      return std::any_of(needles.begin(), needles.end(),
                         [&](const std::string& n) { return t.find(n) != std::string::npos; });
    });
    CHECK(named);
  }
}

// The pages quote the classifier's thresholds (analyzer/verdict.hpp); each
// phrase below is how a page states one, and every statement of it must give
// the figure the code uses.
TEST_CASE("the thresholds the doc pages quote are the classifier's", "[rules][docs][thresholds]") {
  const analyzer::ClassifyThresholds t;
  struct Quote {
    const char* page;
    const char* pattern;  // captures: the figures, in order
    std::vector<std::string> figures;
  };
  const std::vector<Quote> quotes = {
      {"OOM101", R"(at least the request AND at least (\d+)% of the device total \((\d+)% of reserved)",
       {percent(t.significant_share), percent(t.significant_share_of_reserved)}},
      {"OOM102", R"(at least (\d+)% of the device total \((\d+)% of reserved)",
       {percent(t.significant_share), percent(t.significant_share_of_reserved)}},
      {"OOM102", R"(outside memory needs, besides, at least (\d+) GiB)", {gib(t.external_min_bytes)}},
      {"OOM102", R"(under (\d+)% of the device)", {percent(t.significant_share)}},
      {"OOM103", R"(at least max\((\d+) GiB, (\d+)% of the device total\) \((\d+)% of reserved)",
       {gib(t.external_min_bytes), percent(t.significant_share), percent(t.significant_share_of_reserved)}},
      {"OOM103", R"(up to about (\d+) GiB of CUDA context)", {gib(t.external_min_bytes)}},
      {"OOM103", R"(it is more than (\d+)% of the device)", {percent(t.significant_share)}},
      {"OOM103", R"(X − reserved ≤ max\((\d+) GiB, (\d+)% of the device\))",
       {gib(t.self_overhead_max_bytes), percent(t.self_overhead_max_share)}},
      {"OOM104", R"(reserved ≥ cap − (\d+)% of the cap)", {percent(t.at_cap_share)}},
  };
  for (const auto& q : quotes) {
    INFO(q.page << ": " << q.pattern);
    auto page = rules::rule_doc(q.page);
    REQUIRE(page);
    std::string text = squeezed(*page);
    std::regex re(q.pattern);
    std::size_t seen = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it, ++seen)
      for (std::size_t i = 0; i < q.figures.size(); ++i) CHECK((*it)[i + 1].str() == q.figures[i]);
    CHECK(seen > 0);  // the phrase is still there: a reworded page updates this table
  }
  // The examples' arithmetic, as the classifier prints it: "(threshold 10%)".
  std::regex example(R"(\(threshold (\d+)%\))");
  for (const auto& info : rules::all_rules()) {
    std::string text = squeezed(*rules::rule_doc(info.code));
    for (auto it = std::sregex_iterator(text.begin(), text.end(), example); it != std::sregex_iterator(); ++it) {
      INFO(info.code);
      CHECK((*it)[1].str() == percent(t.significant_share));
    }
  }
}
