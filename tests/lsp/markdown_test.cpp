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
