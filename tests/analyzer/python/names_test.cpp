#include <catch2/catch.hpp>

#include "analyzer/python/script.hpp"
#include "tests/analyzer/python/helpers.hpp"

using namespace oomlens::analyzer::python;
using oomlens::analyzer::python::testing::find;
using oomlens::analyzer::python::testing::find_call;
using oomlens::analyzer::python::testing::qualified;

TEST_CASE("python names: every import form resolves to the qualified name") {
  Script s = parse_script(
      "import torch\n"
      "import torch as t\n"
      "import torch.cuda as tc\n"
      "from torch import cuda\n"
      "from torch.cuda import empty_cache\n"
      "from torch.cuda import empty_cache as ec, memory_allocated\n"
      "from torch.cuda import (memory as mem,)\n"
      "torch.cuda.empty_cache()\n"
      "t.cuda.empty_cache()\n"
      "tc.empty_cache()\n"
      "cuda.empty_cache()\n"
      "empty_cache()\n"
      "ec()\n"
      "mem._record_memory_history(max_entries=100000)\n"
      "t.cuda.memory._dump_snapshot('x.pickle')\n");
  CHECK_FALSE(s.has_errors());
  CHECK(qualified(s, "torch.cuda.empty_cache()") == "torch.cuda.empty_cache");
  CHECK(qualified(s, "t.cuda.empty_cache()") == "torch.cuda.empty_cache");
  CHECK(qualified(s, "tc.empty_cache()") == "torch.cuda.empty_cache");
  CHECK(qualified(s, "cuda.empty_cache()", 2) == "torch.cuda.empty_cache");
  CHECK(qualified(s, "empty_cache()", 4) == "torch.cuda.empty_cache");
  CHECK(qualified(s, "ec()") == "torch.cuda.empty_cache");
  CHECK(qualified(s, "mem._record") == "torch.cuda.memory._record_memory_history");
  CHECK(qualified(s, "t.cuda.memory._dump") == "torch.cuda.memory._dump_snapshot");
  CHECK(s.calls_to("torch.cuda.empty_cache").size() == 6);
}

TEST_CASE("python names: `import a.b` binds the package, not the submodule") {
  Script s = parse_script("import torch.cuda\ntorch.cuda.empty_cache()\ncuda.empty_cache()\n");
  CHECK(qualified(s, "torch.cuda.empty_cache()") == "torch.cuda.empty_cache");
  CHECK(qualified(s, "cuda.empty_cache()", 1) == "<none>");
  REQUIRE(s.imports().size() == 1);
  CHECK(s.imports()[0].names[0].local == "torch");
  CHECK(s.imports()[0].names[0].qualified == "torch");
  CHECK(s.imports()[0].names[0].module == "torch.cuda");
}

TEST_CASE("python names: attribute chains, spaces and parentheses") {
  Script s = parse_script(
      "import torch . cuda as tc\n"
      "import os\n"
      "(tc).memory._record_memory_history()\n"
      "tc.memory.\\\n    _dump_snapshot()\n"
      "os.environ.setdefault('A', 'b')\n"
      "tc.current_device().foo()\n");
  CHECK(qualified(s, "(tc).memory") == "torch.cuda.memory._record_memory_history");
  CHECK(qualified(s, "tc.memory.\\") == "torch.cuda.memory._dump_snapshot");
  CHECK(qualified(s, "os.environ.setdefault") == "os.environ.setdefault");
  // A call result is not a name: nothing to resolve through it.
  CHECK(qualified(s, "tc.current_device().foo()") == "<none>");
  CHECK(qualified(s, "tc.current_device()") == "torch.cuda.current_device");
  CHECK(s.qualified_name(find(s, "os.environ", "attribute")) == "os.environ");
}

TEST_CASE("python names: relative and wildcard imports") {
  Script s = parse_script("from . import util\nfrom ..pkg.mod import f as g\nfrom torch.cuda import *\n"
                          "util.run()\ng()\nempty_cache()\n");
  CHECK(qualified(s, "util.run()") == ".util.run");
  CHECK(qualified(s, "g()") == "..pkg.mod.f");
  // What a wildcard brings in is not known without the module: not guessed.
  CHECK(qualified(s, "empty_cache()") == "<none>");
  REQUIRE(s.imports().size() == 3);
  CHECK(s.imports()[2].wildcard);
  CHECK(s.imports()[2].from_module == "torch.cuda");
  CHECK(s.imports()[1].from_module == "..pkg.mod");
}

TEST_CASE("python names: a local def of the same name shadows the import") {
  SECTION("module level, in source order") {
    Script s = parse_script(
        "from torch.cuda import empty_cache\n"
        "empty_cache()\n"
        "def empty_cache():\n"
        "    pass\n"
        "empty_cache()\n");
    CHECK(qualified(s, "empty_cache()") == "torch.cuda.empty_cache");
    Call after = find_call(s, "empty_cache()", 2);  // occurrence 1 is the def
    CHECK_FALSE(after.qualified_name);
    CHECK(after.local_function == find(s, "def empty_cache", "function_definition"));
  }
  SECTION("a function body sees every module binding: disagreeing ones resolve to nothing") {
    Script s = parse_script(
        "from torch.cuda import empty_cache\n"
        "def train():\n"
        "    empty_cache()\n"
        "def empty_cache():\n"
        "    pass\n");
    CHECK(qualified(s, "empty_cache()") == "<none>");
  }
  SECTION("without an import, a local def is never torch's") {
    Script s = parse_script("def empty_cache():\n    pass\nfor i in range(3):\n    empty_cache()\n");
    CHECK(s.calls_to("torch.cuda.empty_cache").empty());
    CHECK(find_call(s, "empty_cache()", 1).local_function);
  }
  SECTION("a parameter or local of the same name") {
    Script s = parse_script(
        "import torch\n"
        "def f(torch):\n"
        "    torch.cuda.empty_cache()\n"
        "def g():\n"
        "    torch = make()\n"
        "    torch.cuda.empty_cache()\n"
        "def h():\n"
        "    torch.cuda.empty_cache()\n");
    CHECK(qualified(s, "torch.cuda.empty_cache()", 0) == "<none>");
    CHECK(qualified(s, "torch.cuda.empty_cache()", 1) == "<none>");
    CHECK(qualified(s, "torch.cuda.empty_cache()", 2) == "torch.cuda.empty_cache");
  }
  SECTION("use before a local binding in the same function is not the import") {
    Script s = parse_script(
        "import torch\n"
        "def f():\n"
        "    torch.cuda.empty_cache()\n"
        "    torch = None\n");
    CHECK(qualified(s, "torch.cuda.empty_cache()") == "<none>");
  }
}

TEST_CASE("python names: a reassigned name no longer resolves") {
  Script s = parse_script(
      "from torch.cuda import empty_cache\n"
      "empty_cache = lambda: None\n"
      "empty_cache()\n"
      "import torch\n"
      "torch = None\n"
      "torch.cuda.empty_cache()\n");
  CHECK(s.calls_to("torch.cuda.empty_cache").empty());
}

TEST_CASE("python names: imports and aliases inside functions; global and nonlocal") {
  Script s = parse_script(
      "def f():\n"
      "    import torch.cuda as tc\n"
      "    tc.empty_cache()\n"
      "def g():\n"
      "    tc.empty_cache()\n"
      "import torch\n"
      "cuda = torch.cuda\n"
      "flush = cuda.empty_cache\n"
      "def h():\n"
      "    flush()\n"
      "def k():\n"
      "    global torch\n"
      "    torch = None\n"
      "    torch.cuda.empty_cache()\n");
  CHECK(qualified(s, "tc.empty_cache()", 0) == "torch.cuda.empty_cache");
  CHECK(qualified(s, "tc.empty_cache()", 1) == "<none>");  // f's import is f's own
  CHECK(qualified(s, "flush()") == "torch.cuda.empty_cache");
  // `global torch` makes the assignment in k a module binding that disagrees with the import.
  CHECK(qualified(s, "torch.cuda.empty_cache()") == "<none>");
}

TEST_CASE("python names: class bodies and comprehensions") {
  Script s = parse_script(
      "import torch\n"
      "class Trainer:\n"
      "    torch = None\n"
      "    x = torch\n"
      "    def step(self):\n"
      "        torch.cuda.empty_cache()\n"
      "ys = [torch.cuda.synchronize() for torch in range(3)]\n"
      "zs = [torch.cuda.empty_cache() for i in range(3)]\n");
  // Methods do not see class-level names.
  CHECK(qualified(s, "torch.cuda.empty_cache()", 0) == "torch.cuda.empty_cache");
  // A comprehension variable is local to the comprehension.
  CHECK(qualified(s, "torch.cuda.synchronize()") == "<none>");
  CHECK(qualified(s, "torch.cuda.empty_cache()", 1) == "torch.cuda.empty_cache");
}

TEST_CASE("python names: self.method() calls resolve to the method of the class") {
  Script s = parse_script(
      "class Trainer:\n"
      "    def fit(self):\n"
      "        for b in self.loader:\n"
      "            self.step(b)\n"
      "    def step(self, b):\n"
      "        pass\n"
      "    @staticmethod\n"
      "    def helper():\n"
      "        self.step(1)\n");
  Call call = find_call(s, "self.step(b)");
  CHECK(call.local_function == find(s, "def step", "function_definition"));
  CHECK_FALSE(find_call(s, "self.step(1)").local_function);  // no `self` parameter there
}

TEST_CASE("python names: first module-level import of a package") {
  Script s = parse_script(
      "import os\n"
      "def f():\n"
      "    import torch\n"
      "import torchvision\n"
      "try:\n"
      "    from torch import nn\n"
      "except ImportError:\n"
      "    pass\n"
      "import torch\n");
  auto first = s.first_import_of("torch");
  REQUIRE(first);
  CHECK(s.text(first->node) == "from torch import nn");
  CHECK(first->top_level.is("try_statement"));
  CHECK(s.point(first->node.start_byte()).line == 6);
  CHECK_FALSE(s.first_import_of("numpy"));
  auto os = s.first_import_of("os");
  REQUIRE(os);
  CHECK(os->top_level == os->node);
}

TEST_CASE("python names: __future__ imports are recorded, not bound") {
  Script s = parse_script("from __future__ import annotations, division\nimport torch\n");
  REQUIRE(s.imports().size() == 2);
  CHECK(s.imports()[0].future);
  CHECK(s.imports()[0].names.size() == 2);
  CHECK(s.imports()[0].names[0].qualified == "__future__.annotations");
  CHECK_FALSE(s.imports()[1].future);
}

TEST_CASE("python names: nested functions see the enclosing function's imports") {
  Script s = parse_script(
      "def outer():\n"
      "    import torch as t\n"
      "    def inner():\n"
      "        t.cuda.empty_cache()\n"
      "    def rebinds():\n"
      "        nonlocal t\n"
      "        t = None\n"
      "    return inner\n"
      "def other():\n"
      "    t.cuda.empty_cache()\n");
  // `nonlocal t` in rebinds() adds a second, disagreeing binding of outer's t.
  CHECK(qualified(s, "t.cuda.empty_cache()", 0) == "<none>");
  CHECK(qualified(s, "t.cuda.empty_cache()", 1) == "<none>");

  Script plain = parse_script(
      "def outer():\n"
      "    import torch as t\n"
      "    def inner():\n"
      "        t.cuda.empty_cache()\n");
  CHECK(qualified(plain, "t.cuda.empty_cache()") == "torch.cuda.empty_cache");
}

TEST_CASE("python names: an `except ImportError` fallback does not shadow the import") {
  Script s = parse_script(
      "try:\n"
      "    import torch\n"
      "except ImportError:\n"
      "    torch = None\n"
      "torch.cuda.empty_cache()\n"
      "try:\n"
      "    import numpy as np\n"
      "except Exception:\n"
      "    np = None\n"
      "np.zeros(1)\n");
  CHECK(qualified(s, "torch.cuda.empty_cache()") == "torch.cuda.empty_cache");
  CHECK(qualified(s, "np.zeros(1)") == "<none>");  // any other handler is a real rebinding
}

TEST_CASE("python names: a method called on an instance of an imported class") {
  Script s = parse_script(
      "from utils.memory import MemoryManager\n"
      "import torch\n"
      "mm = MemoryManager(limit=1)\n"
      "mm.flush()\n"
      "MemoryManager.release()\n"
      "x = torch.randn(3)\n"
      "x.cuda()\n"
      "def step():\n"
      "    mm.flush()\n"
      "other = mm\n"
      "other.flush()\n"
      "y = 3\n"
      "y.flush()\n");
  CHECK_FALSE(s.has_errors());
  auto first = find_call(s, "mm.flush()");
  CHECK_FALSE(first.qualified_name);  // the instance is a local, not the class
  CHECK(first.instance_method == "utils.memory.MemoryManager.flush");
  CHECK(find_call(s, "mm.flush()", 1).instance_method == "utils.memory.MemoryManager.flush");  // seen from a def
  CHECK(qualified(s, "MemoryManager.release()") == "utils.memory.MemoryManager.release");
  CHECK(find_call(s, "x.cuda()").instance_method == "torch.randn.cuda");
  CHECK(find_call(s, "other.flush()").instance_method == "utils.memory.MemoryManager.flush");  // an alias of it
  CHECK_FALSE(find_call(s, "y.flush()").instance_method);
  CHECK_FALSE(find_call(s, "MemoryManager(limit=1)").instance_method);
}

TEST_CASE("python names: an instance rebound to something else is no instance seen from a def") {
  Script s = parse_script(
      "from utils.memory import MemoryManager\n"
      "mm = MemoryManager()\n"
      "def step():\n"
      "    mm.flush()\n"
      "mm = None\n");
  CHECK_FALSE(find_call(s, "mm.flush()").instance_method);
}
