// A snapshot's out-of-memory verdict through the rule of its class. The words
// are the rules' own (rules/docs/OOM101.md ... OOM105.md); what differs from a
// log's incident is where the figures come from: the oom trace entry and the
// segments at dump time instead of the allocator's message.
#include "rules/snapshot/oom_verdict.hpp"

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "analyzer/snapshot/user_frames.hpp"
#include "rules/log/common.hpp"
#include "rules/rule.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules {
namespace {

namespace snap = analyzer::snapshot;
using analyzer::format_size;
using analyzer::OomClass;

const IncidentRule& rule_of(OomClass cls) {
  for (const auto& rule : incident_rules())
    if (rule.cls == cls) return rule;
  return incident_rules().back();  // every class has its rule (registry.cpp); unquantified is last
}

std::vector<Evidence> oom_evidence(const snap::OomAnalysis& o) {
  std::vector<Evidence> out{{"requested_bytes", o.requested}};
  if (o.device_free_known) out.push_back({"device_free_bytes", o.device_free});
  out.push_back({"cached_free_bytes", o.cached_free});
  out.push_back({"largest_free_block_bytes", o.largest_free_block});
  out.push_back({"reserved_bytes", o.reserved});
  out.push_back({"allocated_bytes", o.allocated});
  return out;
}

// The message as the log rules word it for the same class, with the figures a
// snapshot has.
std::string message_of(const snap::OomAnalysis& o) {
  const std::string head =
      o.requested ? fmt::format("tried to allocate {} on GPU {}", format_size(o.requested), o.device)
                  : fmt::format("allocation failed on GPU {}", o.device);
  const std::string free = o.device_free_known ? format_size(o.device_free) : std::string("unknown");
  switch (o.verdict.cls) {
    case OomClass::fragmentation:
      return fmt::format("GPU out of memory from fragmentation: {}; {} is cached but free, the largest free block {}",
                         head, format_size(o.cached_free), format_size(o.largest_free_block));
    case OomClass::capacity:
      return fmt::format("GPU out of memory, capacity: {}; live blocks hold {} of {} reserved, {} free", head,
                         format_size(o.allocated), format_size(o.reserved), free);
    case OomClass::external:
      return fmt::format("GPU out of memory, held elsewhere: {}; memory outside this allocator is in use ({} reserved, "
                         "{} free)",
                         head, format_size(o.reserved), free);
    case OomClass::limit:
      return fmt::format("GPU out of memory at a memory cap: {}; {} still free on the device", head, free);
    case OomClass::unquantified: break;
  }
  return o.device_free_known
             ? fmt::format("GPU out of memory the snapshot cannot explain: {}; {} free on the device", head, free)
             : fmt::format("GPU out of memory without figures: {}; the oom entry records no free memory", head);
}

std::string_view explanation_of(OomClass cls) {
  switch (cls) {
    case OomClass::fragmentation: return docs::OOM101::explanation;
    case OomClass::capacity: return docs::OOM102::explanation;
    // A snapshot names no process: the holder is unknown.
    case OomClass::external: return docs::OOM103::explanation_holder_unknown;
    case OomClass::limit: return docs::OOM104::explanation;
    case OomClass::unquantified: break;
  }
  return docs::OOM105::explanation;
}

// The innermost frame of the user's own code in the failed call's stack.
std::optional<analyzer::Frame> user_frame(const snap::FrameList& frames) {
  if (!frames) return std::nullopt;
  const snap::FoldedStack folded = snap::fold_stack(*frames);
  if (!folded.in_user_code || folded.lead.empty()) return std::nullopt;
  const snap::Frame& f = folded.lead.front();
  return analyzer::Frame{f.filename, f.line > 0 ? static_cast<std::uint64_t>(f.line) : 0, f.name};
}

}  // namespace

Diagnosis diagnose_snapshot_oom(const snap::OomAnalysis& o) {
  const IncidentRule& rule = rule_of(o.verdict.cls);
  Diagnosis d;
  d.code = std::string(rule.info.code);
  d.name = std::string(rule.info.name);
  d.severity = Severity::error;
  d.message = message_of(o);
  d.explanation = std::string(explanation_of(o.verdict.cls)) + "\n\n" + log::verdict_markdown(o.verdict);
  d.evidence = oom_evidence(o);
  d.frame = user_frame(o.frames);
  if (o.verdict.cls == OomClass::external) {
    // The explanation points at the command that tells who holds the memory.
    d.fixes.push_back(log::find_holders_fix());
    d.verify = d.fixes.back().command;
  }
  return d;
}

SnapshotReport diagnose_snapshot(snap::Analysis analysis) {
  SnapshotReport report;
  if (analysis.oom) report.oom = diagnose_snapshot_oom(*analysis.oom);
  report.analysis = std::move(analysis);
  return report;
}

}  // namespace oomlens::rules
