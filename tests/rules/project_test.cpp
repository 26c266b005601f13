#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>

#include "analyzer/python/script.hpp"
#include "rules/source/lint.hpp"
#include "rules/source/project.hpp"

using namespace oomlens::rules;
using oomlens::analyzer::python::parse_script;
using oomlens::rules::source::Project;

namespace {

// A project held in memory; counts the reads, to show each file is read once.
class MemoryFiles final : public source::ProjectFiles {
 public:
  MemoryFiles(std::map<std::string, std::string> files, std::shared_ptr<int> reads)
      : files_(std::move(files)), reads_(std::move(reads)) {}
  bool exists(std::string_view relative) const override { return files_.count(std::string(relative)) > 0; }
  std::optional<std::string> read(const std::string& relative) const override {
    ++*reads_;
    auto it = files_.find(relative);
    return it == files_.end() ? std::nullopt : std::optional(it->second);
  }
  std::string path(const std::string& relative) const override { return "root/" + relative; }

 private:
  std::map<std::string, std::string> files_;
  std::shared_ptr<int> reads_;
};

struct TestProject {
  std::map<std::string, std::string> files;
  std::shared_ptr<int> reads = std::make_shared<int>(0);
  std::unique_ptr<Project> project;

  explicit TestProject(std::map<std::string, std::string> f) : files(std::move(f)) {
    project = std::make_unique<Project>(std::make_unique<MemoryFiles>(files, reads));
  }

  std::vector<Diagnosis> lint(const std::string& relative) {
    auto script = parse_script(files.at(relative));
    return lint_script(script, *project->context_for(relative));
  }
};

const Diagnosis* find(const std::vector<Diagnosis>& all, std::string_view code) {
  for (const auto& d : all)
    if (d.code == code) return &d;
  return nullptr;
}

constexpr const char* kSetting = "os.environ[\"PYTORCH_CUDA_ALLOC_CONF\"] = \"expandable_segments:True\"\n";

}  // namespace

TEST_CASE("an import of a package whose __init__ starts CUDA comes before the setting: too late") {
  TestProject p({{"train.py", std::string("import os\nimport gpu\nimport torch\n") + kSetting},
                 {"gpu/__init__.py", "import torch\n\ntorch.cuda.set_device(0)\n"}});
  auto all = p.lint("train.py");
  const Diagnosis* d = find(all, "OOM302");
  REQUIRE(d);
  CHECK(d->message.find("`import gpu`, which runs `torch.cuda.set_device(0)` in gpu/__init__.py at line 3") !=
        std::string::npos);
  REQUIRE(d->related.size() == 1);
  CHECK(d->related[0].path == "root/gpu/__init__.py");
  CHECK(d->related[0].line == 3);
  CHECK(d->related[0].column == 1);
  CHECK(d->location.line == 4);
  // Moving the setting above `import torch` would leave it below `import gpu`: no edit.
  CHECK(d->automatic_fix() == nullptr);
  CHECK(d->fixes.at(0).title == "Move the `PYTORCH_CUDA_ALLOC_CONF` assignment above `import gpu`");
}

TEST_CASE("when the import that starts CUDA comes after `import torch`, the move above it is the fix") {
  TestProject p({{"train.py", std::string("import os\nimport torch\nimport gpu\n") + kSetting},
                 {"gpu/__init__.py", "import torch\n\ntorch.cuda.set_device(0)\n"}});
  auto all = p.lint("train.py");
  const Diagnosis* d = find(all, "OOM302");
  REQUIRE(d);
  REQUIRE(d->automatic_fix());
  CHECK(apply_edits(p.files.at("train.py"), d->automatic_fix()->edits) ==
        std::string("import os\n") + kSetting + "import torch\nimport gpu\n");
}

TEST_CASE("the import after the setting is in time; a module that starts nothing is no cause") {
  TestProject p({{"train.py", std::string("import os\n") + kSetting + "import gpu\nimport quiet\n"},
                 {"other.py", std::string("import os\nimport quiet\n") + kSetting},
                 {"gpu/__init__.py", "import torch\ntorch.cuda.set_device(0)\n"},
                 {"quiet.py", "import torch\nif torch.cuda.is_available():\n    pass\n"}});
  CHECK_FALSE(find(p.lint("train.py"), "OOM302"));
  CHECK_FALSE(find(p.lint("other.py"), "OOM302"));
}

TEST_CASE("CUDA started through a chain of imports with a cycle is found once, each file read once") {
  TestProject p({{"serve.py", std::string("import os\nfrom app import create\n") + kSetting},
                 {"app/__init__.py", "from .routes import create\n"},
                 {"app/routes.py", "from . import models\n\ndef create():\n    pass\n"},
                 {"app/models.py", "import torch\nfrom app import routes  # a cycle\nW = torch.ones(2, device='cuda:0')\n"}});
  auto all = p.lint("serve.py");
  const Diagnosis* d = find(all, "OOM302");
  REQUIRE(d);
  CHECK(d->related.at(0).path == "root/app/models.py");
  CHECK(d->related.at(0).line == 3);
  CHECK(*p.reads == 3);
  p.lint("serve.py");
  CHECK(*p.reads == 3);  // the facts are kept
}

TEST_CASE("a helper of another file that flushes the cache, called in the training loop") {
  const std::string train =
      "import torch\nfrom utils import free_memory\nimport utils.memory as mem\n\n"
      "for step in range(10):\n    loss.backward()\n    opt.step()\n    free_memory()\n    mem.release()\n"
      "free_memory()\n";
  TestProject p({{"train.py", train},
                 {"utils/__init__.py", "from .memory import free_memory\n"},
                 {"utils/memory.py",
                  "import torch\n\ndef _flush():\n    torch.cuda.empty_cache()\n\ndef free_memory():\n    _flush()\n\n"
                  "def release():\n    free_memory()\n"}});
  auto all = p.lint("train.py");
  std::vector<const Diagnosis*> found;
  for (const auto& d : all)
    if (d.code == "OOM301") found.push_back(&d);
  REQUIRE(found.size() == 2);  // the two calls in the loop, not the one after it
  CHECK(found[0]->location.line == 8);
  CHECK(found[0]->severity == Severity::warning);
  CHECK(found[0]->message ==
        "`torch.cuda.empty_cache()` runs on every iteration of the `for` loop at line 5: `free_memory()` calls it in "
        "utils/memory.py at line 4");
  REQUIRE(found[0]->related.size() == 1);
  CHECK(found[0]->related[0].path == "root/utils/memory.py");
  CHECK(found[0]->related[0].line == 4);
  CHECK(found[0]->related[0].message == "`torch.cuda.empty_cache()` is called here, in `_flush()`");
  CHECK(found[0]->automatic_fix() == nullptr);
  CHECK(found[1]->location.line == 9);
}

TEST_CASE("a periodic flush in a helper is a hint; a teardown after the helper's own loop is none") {
  TestProject p({{"train.py",
                  "from helpers import maybe_flush, train\nfor step in range(10):\n    maybe_flush(step)\n"
                  "for trial in range(3):\n    train()\n"},
                 {"helpers.py",
                  "import torch\n\ndef maybe_flush(step):\n    if step % 100 == 0:\n        torch.cuda.empty_cache()\n\n"
                  "def train():\n    for batch in range(10):\n        loss.backward()\n        opt.step()\n"
                  "    torch.cuda.empty_cache()\n"}});
  auto all = p.lint("train.py");
  REQUIRE(all.size() == 1);
  CHECK(all[0].severity == Severity::hint);
  CHECK(all[0].location.line == 3);
}

TEST_CASE("visited in import order: a file after those it imports, each parsed once") {
  TestProject p({{"a.py", "import b\nimport c\n"}, {"b.py", "import c\n"}, {"c.py", "import a\n"}});
  std::vector<std::string> order;
  p.project->visit_in_import_order("a.py", [&](const std::string& f, std::string, auto) {
    order.push_back(f);
    return true;
  });
  CHECK(order == std::vector<std::string>{"c.py", "b.py", "a.py"});
  p.project->visit_in_import_order("b.py", [&](const std::string& f, std::string, auto) {
    order.push_back(f);
    return true;
  });
  CHECK(order.size() == 3);  // read before: not again
  CHECK(*p.reads == 3);
  CHECK(p.project->imports("a.py", "c.py"));
  CHECK(p.project->imports("c.py", "b.py"));  // c imports a, which imports b
}

TEST_CASE("a chain of hundreds of imports: CUDA at its end is found, the walk holds a bounded number of scripts") {
  std::map<std::string, std::string> files;
  constexpr int kChain = 400;
  auto module = [](int i) { return fmt::format("m{}", i); };
  for (int i = 0; i < kChain; ++i) files[module(i) + ".py"] = fmt::format("import {}\n", module(i + 1));
  files[module(kChain) + ".py"] = "import torch\ntorch.cuda.init()\n";
  files["main.py"] = std::string("import os\nimport m0\n") + kSetting;
  TestProject p(files);
  std::size_t visited = 0;
  p.project->visit_in_import_order("main.py", [&](const std::string&, std::string, auto) {
    ++visited;
    return true;
  });
  CHECK(visited < files.size());  // the deepest files' facts were read alone: they are linted on their own
  CHECK(visited >= 200);
  auto all = p.lint("main.py");
  const Diagnosis* d = find(all, "OOM302");
  REQUIRE(d);
  CHECK(d->related.at(0).path == "root/m400.py");
  CHECK(*p.reads == static_cast<int>(files.size()));  // each file read once
}

TEST_CASE("a method of another file's class that flushes, called on the class or an instance in the loop") {
  const std::string train =
      "from utils import MemoryManager\nfrom utils.memory import MemoryManager as Manager\n\n"
      "memory = Manager()\nfor step in range(10):\n    loss.backward()\n    opt.step()\n"
      "    memory.stats()\n    memory.flush()\n    MemoryManager.release()\n";
  TestProject p({{"train.py", train},
                 {"utils/__init__.py", "from .memory import MemoryManager\n"},
                 {"utils/memory.py",
                  "import torch\n\nclass MemoryManager:\n    def flush(self):\n        self._release()\n\n"
                  "    def _release(self):\n        torch.cuda.empty_cache()\n\n    def stats(self):\n        return 1\n\n"
                  "    @staticmethod\n    def release():\n        torch.cuda.empty_cache()\n"}});
  auto all = p.lint("train.py");
  std::vector<const Diagnosis*> found;
  for (const auto& d : all)
    if (d.code == "OOM301") found.push_back(&d);
  REQUIRE(found.size() == 2);  // not stats()
  CHECK(found[0]->location.line == 9);
  REQUIRE(found[0]->related.size() == 1);
  CHECK(found[0]->related[0].path == "root/utils/memory.py");
  CHECK(found[0]->related[0].line == 8);
  CHECK(found[0]->related[0].message == "`torch.cuda.empty_cache()` is called here, in `_release()`");
  CHECK(found[1]->location.line == 10);  // through the package's re-export of the class
  REQUIRE(found[1]->related.size() == 1);
  CHECK(found[1]->related[0].line == 15);
}

TEST_CASE("methods of classes in two files calling each other in a cycle: cut, nothing found") {
  TestProject p({{"train.py",
                  "from a import A\nx = A()\nfor step in range(10):\n    loss.backward()\n    x.go()\n"},
                 {"a.py", "from b import B\nclass A:\n    def go(self):\n        b = B()\n        b.go()\n"},
                 {"b.py", "from a import A\nclass B:\n    def go(self):\n        a = A()\n        a.go()\n"}});
  CHECK(p.lint("train.py").empty());
}

TEST_CASE("an imported module whose module-level call runs an import that starts CUDA") {
  TestProject p({{"train.py", std::string("import os\nimport launcher\n") + kSetting},
                 {"launcher.py", "def setup():\n    import gpu\n\n\ndef unused():\n    import other\n\n\nsetup()\n"},
                 {"other.py", "import torch\ntorch.cuda.init()\n"},
                 {"gpu/__init__.py", "import torch\n\ntorch.cuda.set_device(0)\n"}});
  auto all = p.lint("train.py");
  const Diagnosis* d = find(all, "OOM302");
  REQUIRE(d);
  CHECK(d->message.find("`import launcher`, which runs `torch.cuda.set_device(0)` in gpu/__init__.py at line 3") !=
        std::string::npos);
  // A def no module-level code calls imports nothing when the module runs.
  TestProject q({{"train.py", std::string("import os\nimport launcher\n") + kSetting},
                 {"launcher.py", "def unused():\n    import other\n"},
                 {"other.py", "import torch\ntorch.cuda.init()\n"}});
  CHECK_FALSE(find(q.lint("train.py"), "OOM302"));
}
