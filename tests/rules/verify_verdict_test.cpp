#include <catch2/catch.hpp>

#include "rules/verify/ab_verdict.hpp"
#include "rules/verify/command_line.hpp"
#include "rules/verify/setting_in_effect.hpp"

namespace v = oomlens::rules::verify;
using oomlens::analyzer::OomClass;

namespace {

constexpr std::uint64_t GiB = 1ull << 30;

v::ProcessMeasure cuda_process(std::uint64_t peak_reserved, std::uint64_t retries = 0, std::uint64_t ooms = 0) {
  v::ProcessMeasure p;
  p.pid = 100;
  p.cuda_initialized = true;
  p.torch_version = "2.5.1";
  p.allocator.backend = "native";
  p.devices.push_back({0, "GPU", 80 * GiB, peak_reserved, peak_reserved / 2, 0, retries, ooms});
  return p;
}

v::RunMeasure run(const char* label, int exit_code, std::optional<OomClass> oom, v::ProcessMeasure p) {
  v::RunMeasure r;
  r.label = label;
  r.started = true;
  r.exit_code = exit_code;
  r.wall_seconds = 10;
  if (oom) r.oom = v::LoggedOom{*oom, "OOM101", "..."};
  r.processes.push_back(std::move(p));
  return r;
}

const std::vector<v::Setting> kExpandable = {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}};

v::ProcessMeasure expandable(v::ProcessMeasure p, bool on = true) {
  p.env_at_cuda_init = std::map<std::string, std::string>{{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}};
  p.allocator.settings["expandable_segments"] = on ? "true" : "false";
  return p;
}

}  // namespace

TEST_CASE("verify: A ran out of memory and B did not is fixed", "[verify]") {
  auto a = run("A", 1, OomClass::fragmentation, cuda_process(70 * GiB, 3, 1));
  auto b = run("B", 0, std::nullopt, expandable(cuda_process(60 * GiB)));
  auto verdict = v::decide(b, a, kExpandable);
  CHECK(verdict.kind == v::VerdictKind::fixed);
  CHECK(v::exit_status(verdict.kind) == 0);
  CHECK(verdict.summary.find("fragmentation, OOM101") != std::string::npos);
}

TEST_CASE("verify: B still running out of memory is not fixed", "[verify]") {
  auto a = run("A", 1, OomClass::capacity, cuda_process(70 * GiB, 0, 1));
  auto b = run("B", 1, OomClass::capacity, expandable(cuda_process(70 * GiB, 0, 1)));
  auto verdict = v::decide(b, a, kExpandable);
  CHECK(verdict.kind == v::VerdictKind::not_fixed);
  CHECK(v::exit_status(verdict.kind) == 1);
}

TEST_CASE("verify: an OOM the probe counted is an OOM even when the log shows none", "[verify]") {
  auto b = run("B", 0, std::nullopt, expandable(cuda_process(70 * GiB, 0, 2)));  // caught and retried by the job
  CHECK(v::decide(b, std::nullopt, kExpandable).kind == v::VerdictKind::not_fixed);
}

TEST_CASE("verify: lower peak or fewer retries without OOMs is improved; the same is inconclusive", "[verify]") {
  auto a = run("A", 0, std::nullopt, cuda_process(70 * GiB, 12));
  SECTION("peak down 10%") {
    auto b = run("B", 0, std::nullopt, expandable(cuda_process(63 * GiB, 12)));
    auto verdict = v::decide(b, a, kExpandable);
    CHECK(verdict.kind == v::VerdictKind::improved);
    CHECK(verdict.summary.find("-10%") != std::string::npos);
  }
  SECTION("retries down, peak the same") {
    auto b = run("B", 0, std::nullopt, expandable(cuda_process(70 * GiB, 0)));
    CHECK(v::decide(b, a, kExpandable).kind == v::VerdictKind::improved);
  }
  SECTION("within noise") {
    auto b = run("B", 0, std::nullopt, expandable(cuda_process(68 * GiB, 12)));
    auto verdict = v::decide(b, a, kExpandable);
    CHECK(verdict.kind == v::VerdictKind::inconclusive);
    CHECK(v::exit_status(verdict.kind) == 3);
  }
}

TEST_CASE("verify: B stopped by the time limit counts only past A's failure", "[verify]") {
  auto a_process = cuda_process(70 * GiB, 0, 1);
  a_process.ooms.push_back({0, 4 * GiB, 120.0});
  auto a = run("A", 1, OomClass::fragmentation, a_process);
  auto b = run("B", -1, std::nullopt, expandable(cuda_process(60 * GiB)));
  b.timed_out = true;
  SECTION("stopped before") {
    b.wall_seconds = 60;
    auto verdict = v::decide(b, a, kExpandable);
    CHECK(verdict.kind == v::VerdictKind::inconclusive);
    CHECK(verdict.summary.find("before the point where A failed (120.0 s in)") != std::string::npos);
  }
  SECTION("stopped after") {
    b.wall_seconds = 300;
    CHECK(v::decide(b, a, kExpandable).kind == v::VerdictKind::fixed);
  }
}

TEST_CASE("verify: a setting PyTorch did not take is inconclusive, whatever happened", "[verify]") {
  auto a = run("A", 1, OomClass::fragmentation, cuda_process(70 * GiB, 3, 1));
  SECTION("read back off (an unsupported platform)") {
    auto b = run("B", 0, std::nullopt, expandable(cuda_process(60 * GiB), false));
    auto verdict = v::decide(b, a, kExpandable);
    CHECK(verdict.kind == v::VerdictKind::inconclusive);
    REQUIRE(verdict.reasons.size() == 1);
    CHECK(verdict.reasons[0] == "pid 100: PyTorch reports expandable_segments off (this build or platform does not "
                                "support it: Windows, or ROCm before 2.12)");
  }
  SECTION("the job changed the variable before CUDA started") {
    auto p = cuda_process(60 * GiB);
    p.rank = 3;
    p.env_at_cuda_init = std::map<std::string, std::string>{{"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:64"}};
    auto b = run("B", 1, OomClass::fragmentation, p);
    auto verdict = v::decide(b, a, kExpandable);
    CHECK(verdict.kind == v::VerdictKind::inconclusive);
    CHECK(verdict.reasons.at(0) ==
          "rank 3 (pid 100) changed PYTORCH_CUDA_ALLOC_CONF to 'max_split_size_mb:64' before CUDA started");
  }
  SECTION("an option the allocator does not know") {
    auto b = run("B", 1, std::nullopt, cuda_process(60 * GiB));
    auto verdict = v::decide(b, a, {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segment:True"}});
    CHECK(verdict.kind == v::VerdictKind::inconclusive);
    CHECK(verdict.reasons.at(0).find("is not a valid setting") != std::string::npos);
  }
}

TEST_CASE("verify: max_split_size_mb is compared in bytes as torch reports it", "[verify]") {
  auto p = cuda_process(10 * GiB);
  p.allocator.settings["max_split_size"] = std::to_string(512ull << 20);
  v::RunMeasure b = run("B", 0, std::nullopt, p);
  CHECK(v::check_setting(b, "PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512").in_effect);
  auto other = v::check_setting(b, "PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128");
  CHECK_FALSE(other.in_effect);
  CHECK(other.reasons.at(0) == "pid 100: PyTorch reports max_split_size 536870912 bytes, not 128 MiB");
}

TEST_CASE("verify: an old torch that cannot report its settings is trusted on the environment, and says so",
          "[verify]") {
  auto p = cuda_process(10 * GiB);
  p.torch_version = "1.13.1";
  p.allocator = {};
  p.env_at_cuda_init = std::map<std::string, std::string>{{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}};
  auto check = v::check_setting(run("B", 0, std::nullopt, p), "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  CHECK(check.in_effect);
  CHECK(check.reasons.at(0).starts_with("torch 1.13.1 cannot report its allocator settings"));
}

TEST_CASE("verify: without a baseline, a clean run passes and a stopped one cannot tell", "[verify]") {
  auto b = run("run", 0, std::nullopt, expandable(cuda_process(10 * GiB)));
  CHECK(v::decide(b, std::nullopt, kExpandable).kind == v::VerdictKind::passed);
  b.timed_out = true;
  CHECK(v::decide(b, std::nullopt, kExpandable).kind == v::VerdictKind::inconclusive);
  auto crashed = run("run", 2, std::nullopt, expandable(cuda_process(10 * GiB)));
  CHECK(v::decide(crashed, std::nullopt, kExpandable).kind == v::VerdictKind::inconclusive);
  v::RunMeasure no_probe = crashed;
  no_probe.exit_code = 0;
  no_probe.processes.clear();
  CHECK(v::decide(no_probe, std::nullopt, kExpandable).kind == v::VerdictKind::inconclusive);
}

TEST_CASE("verify: the command every diagnosis ends with", "[verify]") {
  CHECK(v::verify_command("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", "python train.py") ==
        "oomlens verify --baseline --conf expandable_segments:True -- python train.py");
  CHECK(v::verify_command("TF_GPU_ALLOCATOR", "cuda_malloc_async", "python train.py") ==
        "oomlens verify --baseline --env TF_GPU_ALLOCATOR=cuda_malloc_async -- python train.py");
  CHECK(v::verify_command("CUDA_LAUNCH_BLOCKING", "1", "python train.py", false) ==
        "oomlens verify --env CUDA_LAUNCH_BLOCKING=1 -- python train.py");
  CHECK(v::verify_command("", "", "python 'my train.py'") == "oomlens verify -- python 'my train.py'");
  CHECK(v::shell_quote("a b'c") == "'a b'\\''c'");
}
