// A snapshot's out-of-memory verdict as the Diagnosis of its class's rule:
// the code and name, the message, the explanation (the rule page's words and
// the verdict's arithmetic), the figures as named evidence, the user's frame.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "analyzer/snapshot/analysis.hpp"
#include "rules/snapshot/oom_verdict.hpp"
#include "tests/analyzer/snapshot/snapshot_fixture.hpp"

namespace snap = oomlens::analyzer::snapshot;
using oomlens::analyzer::OomClass;
using oomlens::rules::diagnose_snapshot;
using oomlens::rules::diagnose_snapshot_oom;
using oomlens::rules::Diagnosis;
using oomlens::rules::Evidence;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024, kGiB = 1024 * kMiB;

snap::OomAnalysis oom_of(OomClass cls) {
  snap::OomAnalysis o;
  o.device = 1;
  o.requested = 4 * kGiB;
  o.device_free = 1 * kGiB;
  o.device_free_known = true;
  o.largest_free_block = 512 * kMiB;
  o.cached_free = 18 * kGiB;
  o.reserved = 72 * kGiB;
  o.allocated = 54 * kGiB;
  o.verdict.cls = cls;
  o.verdict.arithmetic = {"largest free block 512.00 MiB < requested 4.00 GiB"};
  o.verdict.notes = {"the free blocks are the segments' state when the snapshot was dumped"};
  return o;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("snapshot verdict: each class is its log rule", "[rules][snapshot]") {
  struct Case {
    OomClass cls;
    const char* code;
    const char* name;
    const char* message;
  };
  const Case cases[] = {
      {OomClass::fragmentation, "OOM101", "allocator-fragmentation",
       "GPU out of memory from fragmentation: tried to allocate 4.00 GiB on GPU 1; 18.00 GiB is cached but free, the "
       "largest free block 512.00 MiB"},
      {OomClass::capacity, "OOM102", "",
       "GPU out of memory, capacity: tried to allocate 4.00 GiB on GPU 1; live blocks hold 54.00 GiB of 72.00 GiB "
       "reserved, 1024.00 MiB free"},
      {OomClass::external, "OOM103", "",
       "GPU out of memory, held elsewhere: tried to allocate 4.00 GiB on GPU 1; memory outside this allocator is in use "
       "(72.00 GiB reserved, 1024.00 MiB free)"},
      {OomClass::limit, "OOM104", "",
       "GPU out of memory at a memory cap: tried to allocate 4.00 GiB on GPU 1; 1024.00 MiB still free on the device"},
      {OomClass::unquantified, "OOM105", "",
       "GPU out of memory the snapshot cannot explain: tried to allocate 4.00 GiB on GPU 1; 1024.00 MiB free on the "
       "device"},
  };
  for (const auto& c : cases) {
    INFO(c.code);
    const Diagnosis d = diagnose_snapshot_oom(oom_of(c.cls));
    CHECK(d.code == c.code);
    if (*c.name) CHECK(d.name == c.name);
    CHECK_FALSE(d.name.empty());
    CHECK(d.severity == oomlens::rules::Severity::error);
    CHECK(d.message == c.message);
    // The failed call stays with the snapshot report, not in the Diagnosis.
    CHECK(std::holds_alternative<std::monostate>(d.subject));
  }
}

TEST_CASE("snapshot verdict: the figures are named evidence", "[rules][snapshot]") {
  const Diagnosis d = diagnose_snapshot_oom(oom_of(OomClass::fragmentation));
  CHECK(d.evidence == std::vector<Evidence>{{"requested_bytes", 4 * kGiB},
                                            {"device_free_bytes", 1 * kGiB},
                                            {"cached_free_bytes", 18 * kGiB},
                                            {"largest_free_block_bytes", 512 * kMiB},
                                            {"reserved_bytes", 72 * kGiB},
                                            {"allocated_bytes", 54 * kGiB}});
  CHECK(d.evidence_of("cached_free_bytes") == 18 * kGiB);
  CHECK_FALSE(d.evidence_of("total_bytes"));

  SECTION("free memory the oom entry did not record is no evidence") {
    snap::OomAnalysis o = oom_of(OomClass::unquantified);
    o.device_free_known = false;
    o.device_free = 0;
    const Diagnosis u = diagnose_snapshot_oom(o);
    CHECK_FALSE(u.evidence_of("device_free_bytes"));
    CHECK(u.evidence.size() == 5);
    CHECK(u.message ==
          "GPU out of memory without figures: tried to allocate 4.00 GiB on GPU 1; the oom entry records no free memory");
  }
}

TEST_CASE("snapshot verdict: the explanation is the rule page's, then the arithmetic", "[rules][snapshot]") {
  const Diagnosis d = diagnose_snapshot_oom(oom_of(OomClass::fragmentation));
  CHECK(d.explanation.starts_with("The caching allocator holds enough free memory for this request"));
  CHECK(has(d.explanation, "\n- largest free block 512.00 MiB < requested 4.00 GiB\n"));
  CHECK(has(d.explanation, "\nthe free blocks are the segments' state when the snapshot was dumped\n"));
  CHECK(d.fixes.empty());
  CHECK(d.verify.empty());

  // A snapshot names no process: the holder is unknown, and the command that
  // lists the holders is the fix and the next step.
  const Diagnosis e = diagnose_snapshot_oom(oom_of(OomClass::external));
  CHECK(e.explanation.starts_with("The device uses far more memory than this process reserved."));
  REQUIRE(e.fixes.size() == 1);
  CHECK(e.fixes[0].kind == oomlens::rules::FixKind::command);
  CHECK(has(e.verify, "nvidia-smi"));
  CHECK(e.verify == e.fixes[0].command);
}

TEST_CASE("snapshot verdict: the user's frame of the failed call", "[rules][snapshot]") {
  snap::OomAnalysis o = oom_of(OomClass::capacity);
  CHECK_FALSE(diagnose_snapshot_oom(o).frame);
  o.frames = std::make_shared<const std::vector<snap::Frame>>(std::vector<snap::Frame>{
      {"/opt/conda/lib/python3.11/site-packages/torch/nn/modules/linear.py", 125, "forward"},
      {"/home/kai/train.py", 42, "step"},
      {"/home/kai/train.py", 80, "main"}});
  const auto frame = diagnose_snapshot_oom(o).frame;
  REQUIRE(frame);
  CHECK(frame->file == "/home/kai/train.py");
  CHECK(frame->line == 42);
  CHECK(frame->function == "step");
}

TEST_CASE("snapshot verdict: from the fixtures", "[rules][snapshot]") {
  const snap::Snapshot fragmented = snap::testing::snapshot_fixture("fragmentation_p4.pickle");
  const auto report = diagnose_snapshot(snap::analyze(fragmented));
  REQUIRE(report.oom);
  CHECK(report.oom->code == "OOM101");
  CHECK(report.oom->evidence_of("largest_free_block_bytes") == 512 * kMiB);
  CHECK(report.oom->evidence_of("cached_free_bytes") == 19364953088u);
  REQUIRE(report.analysis.oom);
  CHECK(&report.oom_entry() == &*report.analysis.oom);
  CHECK(report.oom_entry().verdict.cls == OomClass::fragmentation);

  const snap::Snapshot healthy = snap::testing::snapshot_fixture("no_oom_p4.pickle");
  const auto none = diagnose_snapshot(snap::analyze(healthy));
  CHECK_FALSE(none.oom);
  CHECK_FALSE(none.analysis.devices.empty());
}
