// The fix "Set the allocator configuration": set it before `import torch`.
#include <catch2/catch.hpp>

#include "analyzer/python/script.hpp"
#include "rules/source/lint.hpp"
#include "rules/source/set_alloc_conf.hpp"

using namespace oomlens::rules;
using oomlens::analyzer::python::parse_script;

namespace {

// The script after the action, or "" when none is offered.
std::string applied(std::string_view src, std::string_view option = "expandable_segments:True") {
  auto action = set_alloc_conf_action(parse_script(src), option);
  if (!action) return "";
  CHECK(action->safety == FixSafety::unsafe);
  return apply_edits(src, action->edits);
}

}  // namespace

TEST_CASE("set allocator config: inserted before import torch, after docstring, future imports, shebang") {
  std::string src =
      "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\n"
      "import sys\nimport torch\n";
  std::string want =
      "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\n"
      "import sys\nimport os\nos.environ.setdefault(\"PYTORCH_CUDA_ALLOC_CONF\", \"expandable_segments:True\")\n"
      "import torch\n";
  CHECK(applied(src) == want);
  CHECK(applied(want).empty());  // idempotent
}

TEST_CASE("set allocator config: reuses an earlier import os, keeps CRLF, in try/except imports") {
  CHECK(applied("import os\r\ntry:\r\n    import torch\r\nexcept ImportError:\r\n    torch = None\r\n") ==
        "import os\r\nos.environ.setdefault(\"PYTORCH_CUDA_ALLOC_CONF\", \"expandable_segments:True\")\r\n"
        "try:\r\n    import torch\r\nexcept ImportError:\r\n    torch = None\r\n");
}

TEST_CASE("set allocator config: merges into the value the script already sets") {
  CHECK(applied("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:512'\nimport torch\n") ==
        "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:512,expandable_segments:True'\nimport torch\n");
  CHECK(applied("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:False'\nimport torch\n") ==
        "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\nimport torch\n");
  // The newer variable name is the one PyTorch reads: merged there, not added beside it.
  CHECK(applied("import os\nos.environ.setdefault(\"PYTORCH_ALLOC_CONF\", \"max_split_size_mb:128\")\nimport torch\n") ==
        "import os\nos.environ.setdefault(\"PYTORCH_ALLOC_CONF\", \"max_split_size_mb:128,expandable_segments:True\")\nimport torch\n");
  // Already there: nothing to do.
  CHECK(applied("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\nimport torch\n").empty());
}

TEST_CASE("set allocator config: an assignment made too late is merged and moved") {
  std::string src = "import os\nimport torch\nm = torch.nn.Linear(2, 2).cuda()\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:512'\n";
  std::string out = applied(src);
  CHECK(out == "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:512,expandable_segments:True'\n"
               "import torch\nm = torch.nn.Linear(2, 2).cuda()\n");
  CHECK(applied(out).empty());
  auto late = lint_script(parse_script(out));
  CHECK(std::none_of(late.begin(), late.end(), [](const Diagnosis& d) { return d.code == "OOM302"; }));
}

TEST_CASE("set allocator config: not offered") {
  CHECK(applied("import numpy as np\nx = np.zeros(3)\n").empty());                       // no torch
  CHECK(applied("import torch\nfor x in y:\n    pass(\n").empty());                     // does not parse
  CHECK(applied("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = conf\nimport torch\n").empty());  // computed
  CHECK(applied("import torch\n", "not-an-option").empty());
}
