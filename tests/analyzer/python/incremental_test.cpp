// Incremental parsing must give exactly the tree (and the facts) a fresh
// parse gives: a wrong edit description would silently corrupt the tree.
#include <catch2/catch.hpp>

// GCC 12 reports a false -Wrestrict inside std::string::insert/replace with
// literals (GCC bug 105329); the code is plain string editing.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "analyzer/python/script.hpp"

using namespace oomlens::analyzer::python;

namespace {

std::string sexp(const Script& s) {
  std::unique_ptr<char, void (*)(void*)> text(ts_node_string(s.root().raw()), std::free);
  return text.get();
}

void check_same_as_fresh(const Script& incremental) {
  Script fresh = parse_script(incremental.source());
  REQUIRE(sexp(incremental) == sexp(fresh));
  CHECK(incremental.calls().size() == fresh.calls().size());
  CHECK(incremental.syntax_errors().size() == fresh.syntax_errors().size());
  CHECK(incremental.root().range() == fresh.root().range());
}

constexpr const char* kScript =
    "import torch\n"
    "import os\n"
    "\n"
    "def train(model, loader):\n"
    "    for step, batch in enumerate(loader):\n"
    "        loss = model(batch).sum()\n"
    "        loss.backward()\n"
    "        torch.cuda.empty_cache()\n"
    "\n"
    "if __name__ == \"__main__\":\n"
    "    train(None, [])\n";

}  // namespace

TEST_CASE("python incremental parse: typical edits give the fresh tree") {
  Script v1 = parse_script(kScript);
  std::string text = kScript;

  SECTION("insert a line") {
    text.insert(text.find("import os"), "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n");
  }
  SECTION("delete the empty_cache line") {
    auto at = text.find("        torch.cuda.empty_cache()\n");
    text.erase(at, std::string("        torch.cuda.empty_cache()\n").size());
  }
  SECTION("type a character that breaks the syntax") { text.insert(text.find("loss.backward()") + 13, "("); }
  SECTION("replace everything") { text = "x = 1\n"; }
  SECTION("append at the end") { text += "print('done')\n"; }
  SECTION("no change") {}

  Script v2 = parse_script(text, &v1);
  check_same_as_fresh(v2);
  // The previous version is untouched (another thread may be reading it).
  CHECK(sexp(v1) == sexp(parse_script(kScript)));
}

TEST_CASE("python incremental parse: a chain of random edits stays equal to fresh parses") {
  std::mt19937 rng(1234);
  const std::string pieces[] = {"(", ")", ":", "\n", "    ", "torch.cuda.empty_cache()", "for i in x:\n    ",
                                "import torch as t\n", "\"é\"", "#", "def f():\n\tpass\n", "\r\n"};
  std::string text = kScript;
  Script current = parse_script(text);
  for (int round = 0; round < 200; ++round) {
    std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size())(rng);
    std::size_t erase = std::uniform_int_distribution<std::size_t>(0, 6)(rng);
    erase = std::min(erase, text.size() - at);
    text.replace(at, erase, pieces[std::uniform_int_distribution<std::size_t>(0, std::size(pieces) - 1)(rng)]);
    Script next = parse_script(text, &current);
    check_same_as_fresh(next);
    current = std::move(next);
  }
}
