#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "analyzer/python/module_resolution.hpp"
#include "analyzer/python/script.hpp"

using namespace oomlens::analyzer::python;

namespace {

// A project of these files (paths relative to its root).
ProjectFileExists files(std::set<std::string> paths) {
  return [paths = std::move(paths)](std::string_view p) { return paths.count(std::string(p)) > 0; };
}

const ProjectFileExists kProject = files({
    "train.py",
    "pkg/__init__.py",
    "pkg/mod.py",
    "pkg/sub/__init__.py",
    "pkg/sub/deep.py",
    "nspkg/inner.py",  // a namespace package: no __init__.py
    "src/lib/__init__.py",
    "src/lib/core.py",
    "scripts/run.py",
    "scripts/helpers.py",
});

// The files the first import statement of `source` (written in `importer`) runs.
std::vector<std::string> loaded(std::string_view source, std::string_view importer) {
  Script s = parse_script(source);
  REQUIRE(!s.imports().empty());
  return files_loaded(s.imports().front(), importer, kProject);
}

using Files = std::vector<std::string>;

}  // namespace

TEST_CASE("an absolute import runs each package on the way, then the module") {
  CHECK(loaded("import pkg.sub.deep\n", "train.py") == Files{"pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/deep.py"});
  CHECK(loaded("import pkg.mod as m\n", "train.py") == Files{"pkg/__init__.py", "pkg/mod.py"});
  CHECK(loaded("import pkg, torch\n", "train.py") == Files{"pkg/__init__.py"});
}

TEST_CASE("from a package, a submodule named in the import runs too") {
  CHECK(loaded("from pkg import mod, helper\n", "train.py") == Files{"pkg/__init__.py", "pkg/mod.py"});
  CHECK(loaded("from pkg.sub import deep\n", "train.py") == Files{"pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/deep.py"});
  CHECK(loaded("from pkg.mod import f\n", "train.py") == Files{"pkg/__init__.py", "pkg/mod.py"});
}

TEST_CASE("relative imports go from the importing file's package") {
  CHECK(loaded("from .mod import f\n", "pkg/__init__.py") == Files{"pkg/mod.py"});
  CHECK(loaded("from . import mod\n", "pkg/__init__.py") == Files{"pkg/mod.py"});
  CHECK(loaded("from .. import mod\n", "pkg/sub/deep.py") == Files{"pkg/mod.py"});
  CHECK(loaded("from ..sub import deep\n", "pkg/sub/__init__.py") == Files{"pkg/sub/__init__.py", "pkg/sub/deep.py"});
  CHECK(loaded("from ... import x\n", "pkg/mod.py").empty());  // above the root
}

TEST_CASE("a src layout's packages are importable, and namespace packages resolve") {
  CHECK(loaded("import lib.core\n", "train.py") == Files{"src/lib/__init__.py", "src/lib/core.py"});
  CHECK(loaded("from lib import core\n", "train.py") == Files{"src/lib/__init__.py", "src/lib/core.py"});
  CHECK(loaded("import nspkg.inner\n", "train.py") == Files{"nspkg/inner.py"});
}

TEST_CASE("a script's own directory comes first; library modules resolve to nothing") {
  CHECK(loaded("import helpers\n", "scripts/run.py") == Files{"scripts/helpers.py"});
  CHECK(loaded("import helpers\n", "train.py").empty());
  CHECK(loaded("import torch.cuda\n", "train.py").empty());
  CHECK(loaded("from os import environ\n", "train.py").empty());
  CHECK(loaded("from __future__ import annotations\n", "train.py").empty());
}

TEST_CASE("a qualified name resolves to a function of a project module") {
  CHECK(project_function("pkg.mod.free", "train.py", kProject) == ProjectFunction{"pkg/mod.py", "free"});
  CHECK(project_function("pkg.free", "train.py", kProject) == ProjectFunction{"pkg/__init__.py", "free"});
  CHECK(project_function(".mod.free", "pkg/__init__.py", kProject) == ProjectFunction{"pkg/mod.py", "free"});
  CHECK(project_function("lib.core.step", "train.py", kProject) == ProjectFunction{"src/lib/core.py", "step"});
  CHECK_FALSE(project_function("torch.cuda.empty_cache", "train.py", kProject));
  CHECK_FALSE(project_function("pkg", "train.py", kProject));
  // A method of a module's class; one level of class only.
  CHECK(project_function("pkg.mod.Manager.flush", "train.py", kProject) == ProjectFunction{"pkg/mod.py", "Manager.flush"});
  CHECK(project_function("pkg.Manager.flush", "train.py", kProject) == ProjectFunction{"pkg/__init__.py", "Manager.flush"});
  CHECK_FALSE(project_function("pkg.mod.A.B.flush", "train.py", kProject));
  CHECK_FALSE(project_function("torch.cuda.Stream.synchronize", "train.py", kProject));
  CHECK(module_file("pkg.sub", "train.py", kProject) == "pkg/sub/__init__.py");
  CHECK_FALSE(module_file("pkg.missing", "train.py", kProject));
}
