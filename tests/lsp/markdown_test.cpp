#include <catch2/catch.hpp>

#include "lsp/markdown.hpp"

using oomlens::lsp::markdown_to_plaintext;

TEST_CASE("plain-text hovers carry no Markdown syntax") {
  std::string md = "### OOM101 allocator-fragmentation · fragmentation\n\n**In your code:** `train.py:3` in `step`  \n"
                   "```text\n[███ ]\n```\n- `safe` Set X\n\n[OOM101 documentation](https://example.org/OOM101.md)\n";
  std::string plain = markdown_to_plaintext(md);
  CHECK(plain == "OOM101 allocator-fragmentation · fragmentation\n\nIn your code: train.py:3 in step\n[███ ]\n- safe Set X\n\n"
                 "OOM101 documentation (https://example.org/OOM101.md)\n");
}

namespace {

oomlens::rules::Diagnosis script_diagnosis() {
  oomlens::rules::Diagnosis d;
  d.code = "OOM301";
  d.name = "empty-cache-in-loop";
  d.severity = oomlens::rules::Severity::warning;
  d.message = "torch.cuda.empty_cache() in a training loop";
  d.explanation = "It frees nothing the next step keeps.";
  d.fixes.push_back(oomlens::rules::edit_fix("Remove the call", oomlens::rules::FixSafety::safe, {{10, 20, ""}}));
  d.fixes.back().detail = "The cache is reused.";
  return d;
}

}  // namespace

TEST_CASE("one Markdown format for every diagnosis: a script's", "[lsp][markdown]") {
  CHECK(oomlens::lsp::diagnosis_markdown(script_diagnosis()) ==
        "### OOM301 empty-cache-in-loop\n\n"
        "torch.cuda.empty_cache() in a training loop\n\n"
        "It frees nothing the next step keeps.\n\n"
        "**Fixes**\n\n- `safe` Remove the call  \n  The cache is reused.\n\n"
        "[OOM301 documentation](https://github.com/oomlens/oomlens/blob/main/rules/docs/OOM301.md)\n");
}

TEST_CASE("one Markdown format for every diagnosis: named figures and the user's frame", "[lsp][markdown]") {
  oomlens::rules::Diagnosis d = script_diagnosis();
  d.fixes.clear();
  d.evidence = {{"requested_bytes", 4ull << 30}, {"oom_events", 2}};
  d.frame = oomlens::analyzer::Frame{"train.py", 42, "step"};
  d.verify = "oomlens verify -- python train.py";
  CHECK(oomlens::lsp::diagnosis_markdown(d) ==
        "### OOM301 empty-cache-in-loop\n\n"
        "torch.cuda.empty_cache() in a training loop\n\n"
        "**In your code:** `train.py:42` in `step`  \n\n"
        "**Evidence:** requested 4.00 GiB · oom events 2\n\n"
        "It frees nothing the next step keeps.\n\n"
        "**Verify**\n\n```sh\noomlens verify -- python train.py\n```\n\n"
        "[OOM301 documentation](https://github.com/oomlens/oomlens/blob/main/rules/docs/OOM301.md)\n");
}

TEST_CASE("code spans hold any text", "[lsp][markdown]") {
  using oomlens::lsp::markdown_code;
  CHECK(markdown_code("train.py:3") == "`train.py:3`");
  CHECK(markdown_code("a`b") == "``a`b``");
  CHECK(markdown_code("`x`") == "`` `x` ``");
  CHECK(markdown_code("two\nlines") == "`two lines`");
}
