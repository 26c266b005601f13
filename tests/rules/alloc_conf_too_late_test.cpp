#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "analyzer/python/script.hpp"
#include "rules/source/lint.hpp"
#include "tests/rules/fixture_files.hpp"
#include "tests/rules/automatic_fix.hpp"

using namespace oomlens::rules;
using oomlens::testing::read_fixture;
using oomlens::analyzer::python::parse_script;

namespace {

std::vector<Diagnosis> oom302(std::string_view src) {
  auto all = lint_script(parse_script(src));
  std::erase_if(all, [](const Diagnosis& d) { return d.code != "OOM302"; });
  return all;
}

std::string fixed(std::string_view src, bool unsafe) { return apply_edits(src, fix_edits(lint_script(parse_script(src)), unsafe)); }

}  // namespace

TEST_CASE("OOM302: fixtures, safe run changes nothing, unsafe run moves the assignment; idempotent") {
  for (const char* stem : {"alloc_conf_too_late", "alloc_conf_too_late_in_function", "alloc_conf_in_time"}) {
    INFO(stem);
    std::string before = read_fixture(std::string(stem) + ".py");
    CHECK(fixed(before, false) == read_fixture(std::string(stem) + ".fixed.py"));
    if (std::string(stem) == "alloc_conf_in_time") {
      CHECK(oom302(before).empty());
      continue;
    }
    std::string after = read_fixture(std::string(stem) + ".unsafe-fixed.py");
    CHECK(fixed(before, true) == after);
    CHECK(oom302(after).empty());
    CHECK(fixed(after, true) == after);
  }
}

TEST_CASE("OOM302: position, message and fix safety") {
  auto d = oom302("import os\nimport torch\nx = torch.zeros(2).cuda()\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].location.source->start.line == 4);
  CHECK(d[0].location.source->start.column == 1);
  CHECK(d[0].severity == Severity::warning);
  CHECK(d[0].message ==
        "`PYTORCH_CUDA_ALLOC_CONF` is set after CUDA is first used at line 3 (`torch.zeros(2).cuda()`): the allocator "
        "has already read its settings, so this has no effect");
  REQUIRE(fix_safety_of(d[0]));
  CHECK(*fix_safety_of(d[0]) == FixSafety::unsafe);
}

TEST_CASE("OOM302: what counts as a CUDA use") {
  const std::string set = "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n";
  auto after = [&](const std::string& use) { return oom302("import os\nimport torch\n" + use + "\n" + set).size(); };
  CHECK(after("model.cuda()") == 1);
  CHECK(after("model.to('cuda:1')") == 1);
  CHECK(after("model.to(device='cuda')") == 1);
  CHECK(after("t = torch.ones(3, device=f'cuda:{rank}')") == 1);
  CHECK(after("dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nm = net.to(dev)") == 1);
  CHECK(after("torch.cuda.set_device(0)") == 1);
  CHECK(after("free, total = torch.cuda.mem_get_info()") == 1);
  CHECK(after("import torch.cuda as tc\ntc.synchronize()") == 1);
  // Not CUDA initialisation.
  CHECK(after("ok = torch.cuda.is_available()") == 0);
  CHECK(after("n = torch.cuda.device_count()") == 0);
  CHECK(after("model.to('cpu')") == 0);
  CHECK(after("dev = torch.device('cuda')") == 0);  // naming a device allocates nothing
  CHECK(after("def f():\n    model.cuda()") == 0);  // never called
  CHECK(after("x = 'cudaMallocAsync'") == 0);
}

TEST_CASE("OOM302: backend is read at import; other options until the first CUDA use") {
  CHECK(oom302("import torch\nimport os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'backend:cudaMallocAsync'\n").size() == 1);
  CHECK(oom302("import torch\nimport os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n").empty());
  CHECK(oom302("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'backend:cudaMallocAsync'\nimport torch\n").empty());
}

TEST_CASE("OOM302: every assignment form, through a function called from main") {
  for (const char* form : {"os.environ['PYTORCH_ALLOC_CONF'] = 'expandable_segments:True'",
                           "os.environ.setdefault('PYTORCH_CUDA_ALLOC_CONF', 'expandable_segments:True')",
                           "os.environ.update({'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'})",
                           "os.environ.update(PYTORCH_HIP_ALLOC_CONF='expandable_segments:True')",
                           "os.environ |= {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'}",
                           "os.putenv('PYTORCH_CUDA_ALLOC_CONF', 'expandable_segments:True')"}) {
    INFO(form);
    std::string src = std::string("import os\nimport torch\n\ndef setup():\n    torch.cuda.init()\n    ") + form +
                      "\n\nif __name__ == '__main__':\n    setup()\n";
    CHECK(oom302(src).size() == 1);
  }
}

TEST_CASE("OOM302: no edit when the move cannot be exact") {
  // Shares its line with another statement.
  auto d = oom302("import os, torch\nx = torch.zeros(1).cuda(); os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'a:b'\n");
  REQUIRE(d.size() == 1);
  CHECK(edits_of(d[0]).empty());
  // A computed value.
  d = oom302("import os\nimport torch\nx = torch.zeros(1).cuda()\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = conf\n");
  REQUIRE(d.size() == 1);
  CHECK(edits_of(d[0]).empty());
  REQUIRE(!d[0].fixes.empty());
  CHECK(d[0].fixes[0].safety == FixSafety::display_only);
}
