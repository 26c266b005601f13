// OOM304 (its words: rules/docs/OOM304.md): the script records the CUDA
// allocator's history (torch.cuda.memory._record_memory_history) but nothing in
// the file saves it (_dump_snapshot, _snapshot, ...): the history dies with the
// process, the OOM it was meant to explain included. The fix adds the dump:
// around the training loop as the fix "Record a memory snapshot" writes it,
// else an atexit registration after the record call (atexit also runs after
// an uncaught OOM).
#include <fmt/format.h>

#include "analyzer/python/training_loop.hpp"
#include "rules/source/record_snapshot.hpp"
#include "rules/source/source_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::source {
namespace {

using analyzer::python::Call;
using analyzer::python::Script;

// The fix: around the training loop the recording call starts before, else at exit.
std::optional<std::vector<TextEdit>> dump_edits(const Script& s, const Call& record, std::string& how) {
  if (auto loop = analyzer::python::training_loop(s);
      loop && snapshot::runs_before(s, record.node, loop->node.end_byte())) {
    how = fmt::format("an `except torch.cuda.OutOfMemoryError` around the training loop at line {} dumps the "
                      "snapshot and re-raises",
                      s.point(loop->node.start_byte()).line);
    if (auto edits = snapshot::dump_on_oom_edits(s, *loop, false)) return edits;
  }
  how = "an `atexit` registration after the recording call dumps the snapshot when the script exits";
  return snapshot::dump_at_exit_edits(s, record);
}

void check(const Script& s, const ProjectContext&, std::vector<Diagnosis>& out) {
  auto recordings = snapshot::recording_calls(s);
  if (recordings.empty() || snapshot::saves_snapshot(s)) return;
  bool first = true;
  for (const Call& call : recordings) {
    Diagnosis d;
    d.location = source_location(call.range, call.start);
    d.code = docs::OOM304::code;
    d.name = docs::OOM304::name;
    d.severity = Severity::warning;
    d.message =
        "memory history is recorded but never dumped: no `torch.cuda.memory._dump_snapshot()` in this file";
    d.explanation = std::string(docs::OOM304::explanation);
    d.verify = "oomlens snapshot " + snapshot::snapshot_file(s);
    Fix f;
    f.title = "Dump the memory snapshot when an OOM escapes";
    f.kind = FixKind::advice;
    f.safety = FixSafety::display_only;
    f.detail = "add `torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\")` where the script fails";
    // One fix per file: two would add two dumps.
    if (first && !s.has_errors()) {
      std::string how;
      if (auto edits = dump_edits(s, call, how)) {
        f.kind = FixKind::edit;
        f.safety = FixSafety::unsafe;
        f.detail = how + "; unsafe: it changes what the script does";
        f.edits = std::move(*edits);
      }
    }
    first = false;
    d.fixes.push_back(std::move(f));
    out.push_back(std::move(d));
  }
}

}  // namespace

SourceRule snapshot_never_dumped_rule() {
  return {rule_info<docs::OOM304>(), &check};
}

}  // namespace oomlens::rules::source
