// Helpers shared by the tests of the fix "Record a memory snapshot" and
// OOM304: fixture files, byte-exact goldens, and running Python on the result.
#pragma once

#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace snapshot_test {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out);
}

// The golden file, or, with OOMLENS_REGENERATE=1 in the environment, the
// result written as the new golden (review the diff like code).
inline std::string golden(const std::filesystem::path& path, const std::string& actual) {
  if (std::getenv("OOMLENS_REGENERATE")) write_file(path, actual);
  return read_file(path);
}

inline std::filesystem::path scratch_dir(const std::string& name) {
  std::string leaf = "oomlens-test-";
  leaf += name;
  leaf += '-';
  leaf += std::to_string(::getpid());
  auto dir = std::filesystem::temp_directory_path() / leaf;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Built by appending: GCC 12 at -O3 warns (-Wrestrict, a false positive, GCC
// bug 105329) on "literal" + std::string temporaries.
inline std::string quoted(const std::filesystem::path& p) {
  std::string s = "'";
  s += p.string();
  s += '\'';
  return s;
}

// `python3 -m py_compile FILE`, its bytecode kept out of the source tree.
inline bool py_compiles(const std::filesystem::path& file) {
  auto cache = scratch_dir("pycache");
  std::string command =
      "PYTHONPYCACHEPREFIX=" + quoted(cache) + " python3 -m py_compile " + quoted(file) + " >/dev/null 2>&1";
  bool ok = std::system(command.c_str()) == 0;
  std::filesystem::remove_all(cache);
  return ok;
}

// A stand-in for torch with just what the inserted code calls, so that the
// edited script can run here (no GPU, no PyTorch): `.backward()` of a Loss
// raises torch.cuda.OutOfMemoryError, and _dump_snapshot writes a pickle that
// records the history it was asked to keep.
constexpr const char* kTorchStub = R"(import pickle
import types

_history = {"max_entries": None}


class OutOfMemoryError(RuntimeError):
    pass


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0, device=None):
    _history["max_entries"] = max_entries if enabled else None


def _dump_snapshot(filename="dump_snapshot.pickle"):
    with open(filename, "wb") as f:
        pickle.dump({"segments": [], "device_traces": [[{"action": "oom"}]], "recorded": _history["max_entries"]}, f)


class Loss:
    def backward(self):
        raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.")


cuda = types.SimpleNamespace(
    OutOfMemoryError=OutOfMemoryError,
    memory=types.SimpleNamespace(_record_memory_history=_record_memory_history, _dump_snapshot=_dump_snapshot),
)
)";

struct PythonRun {
  int status = 0;
  std::string output;  // stdout and stderr
};

// Runs `script` with the stub torch first on the path, in `dir`, with `env`
// ("RANK=3 " etc.) before the command.
inline PythonRun run_with_stub_torch(const std::filesystem::path& dir, const std::string& script,
                                     const std::string& env = "") {
  std::filesystem::create_directories(dir / "torch");
  write_file(dir / "torch" / "__init__.py", kTorchStub);
  write_file(dir / "train.py", script);
  std::string command = "cd " + quoted(dir) + " && " + env + "PYTHONPATH=" + quoted(dir) +
                        " PYTHONDONTWRITEBYTECODE=1 python3 train.py >out.txt 2>&1";
  PythonRun run;
  run.status = std::system(command.c_str());
  run.output = read_file(dir / "out.txt");
  return run;
}

}  // namespace snapshot_test
