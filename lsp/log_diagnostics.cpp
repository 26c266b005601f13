#include "lsp/log_diagnostics.hpp"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>

#include "lsp/action_support.hpp"
#include "lsp/local_files.hpp"
#include "rules/diagnose_log.hpp"

namespace oomlens::lsp {
namespace {

DiagnosticRelatedInformation related(Location where, std::string message) { return {std::move(where), std::move(message)}; }

// Where the lines of the job's inputs are: this document's from its own
// text, the others' as the caller found them.
class Places {
 public:
  Places(const DocumentAnalysis& a, const OtherFiles* others) : a_(a), others_(others) {}

  std::optional<Location> operator()(std::uint32_t file, std::uint64_t first, std::uint64_t last) const {
    if (file == a_.file) return Location{a_.doc->uri, a_.doc->lines().range_of(bytes(first, last), a_.encoding)};
    if (others_ && others_->locate) return others_->locate(file, first, last);
    return std::nullopt;
  }
  ByteRange bytes(std::uint64_t first, std::uint64_t last) const { return a_.doc->lines().newline_lines_bytes(first, last); }
  std::string label(std::uint32_t file) const {
    return others_ && file < others_->labels.size() ? others_->labels[file] : std::string("another file");
  }

 private:
  const DocumentAnalysis& a_;
  const OtherFiles* others_;
};

// Where an incident whose message was read from another file of the job
// stands on this document: its first echo here (another rank's OOM, the same
// message printed again), else its first collateral failure here.
struct Anchor {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::optional<int> rank;
  bool echo = false;
};

std::optional<Anchor> anchor_of(const analyzer::Incident& inc, std::uint32_t self) {
  if (inc.primary.file == self) return Anchor{inc.primary.line, inc.primary.end_line, inc.primary.rank, true};
  for (const auto& e : inc.echoes)
    if (e.file == self) return Anchor{e.line, e.end_line, e.rank, true};
  for (const auto& f : inc.collateral)
    if (f.file == self) return Anchor{f.line, f.line, f.rank, false};
  return std::nullopt;
}

// The message of an incident anchored here although it was read elsewhere:
// what this file shows, then which rank failed first and in which file.
std::string elsewhere_message(const analyzer::Incident& inc, const Anchor& here, const Places& places,
                              const std::string& diagnosis_message) {
  std::string what = here.echo ? (here.rank ? fmt::format("rank {} also ran out of memory", *here.rank)
                                            : std::string("the same failure, reported again"))
                               : (here.rank ? fmt::format("rank {} failed as a consequence", *here.rank)
                                            : std::string("a consequence of this failure"));
  std::uint32_t first_file = inc.primary.file;
  for (const auto& r : inc.per_rank)
    if (inc.first_failing_rank && r.rank == inc.first_failing_rank) first_file = r.file;
  std::string first = inc.first_failing_rank ? fmt::format("rank {} failed first", *inc.first_failing_rank)
                                             : std::string("it failed first");
  return fmt::format("{}; {}, in {}: {}", what, first, places.label(first_file), diagnosis_message);
}

// How many related places a diagnostic lists at most, by kind: a job of
// many ranks would otherwise send thousands.
std::size_t related_cap(rules::RelatedPlace::Kind kind) {
  switch (kind) {
    case rules::RelatedPlace::Kind::echo: return 32;
    case rules::RelatedPlace::Kind::collateral: return 48;
    case rules::RelatedPlace::Kind::warning: return 56;
    default: return SIZE_MAX;
  }
}

// The diagnosis' related places that can be located, after those in `rel`;
// `skip`: a place that is the diagnostic itself.
template <class Skip>
void add_related(const rules::Diagnosis& item, const Places& places, std::vector<DiagnosticRelatedInformation>& rel,
                 Skip&& skip) {
  for (const auto& p : item.related) {
    if (rel.size() >= related_cap(p.kind) || skip(p)) continue;
    if (auto where = places(p.file, p.line, p.end_line)) rel.push_back(related(*where, p.message));
  }
}

std::optional<Diagnostic> incident_diagnostic(const DocumentAnalysis& a, std::size_t index, const Places& places) {
  const auto& item = a.report.incidents[index];
  const auto& inc = item.incident();
  auto here = anchor_of(inc, a.file);
  if (!here) return std::nullopt;  // nothing of it in this file
  const bool elsewhere = item.location.file != a.file;
  Diagnostic d = diagnostic_of(a, item, places.bytes(here->first, here->last), fmt::format("incident:{}", index));
  std::vector<DiagnosticRelatedInformation> rel;
  if (elsewhere) {
    d.message = elsewhere_message(inc, *here, places, item.message);
    // A rank that failed because another ran out of memory is not where
    // the fix goes: a warning, the cause's file has the error.
    if (!here->echo) d.severity = lsp_severity(rules::Severity::warning);
    if (auto where = places(item.location.file, item.location.line, item.location.end_line))
      rel.push_back(related(*where, inc.primary.rank ? fmt::format("rank {} ran out of memory{}", *inc.primary.rank,
                                                                   inc.primary.rank == inc.first_failing_rank ? " first" : "")
                                                     : std::string("the out-of-memory failure")));
  }
  if (item.frame) {
    if (auto uri = file_uri_from_path(item.frame->file)) {
      std::uint32_t line = item.frame->line > 0 ? static_cast<std::uint32_t>(item.frame->line - 1) : 0;
      rel.push_back(related({*uri, Range{{line, 0}, {line, 0}}},
                            fmt::format("the failing call in your code{}",
                                        item.frame->function.empty() ? "" : " (" + item.frame->function + ")")));
    }
  }
  add_related(item, places, rel, [&](const rules::RelatedPlace& p) {
    return elsewhere && p.file == a.file && p.line == here->first;  // the diagnostic itself
  });
  if (!rel.empty()) d.related_information = std::move(rel);
  return d;
}

std::optional<Diagnostic> finding_diagnostic(const DocumentAnalysis& a, std::size_t index, const Places& places) {
  const auto& item = a.report.findings[index];
  if (item.location.file != a.file) return std::nullopt;  // another file's: shown there
  Diagnostic d = diagnostic_of(a, item, fmt::format("finding:{}", index));
  // One diagnostic for all the repeats of one cause: it always says where
  // they are, even when none could be located.
  if (item.finding().count > 1) {
    std::vector<DiagnosticRelatedInformation> rel;
    add_related(item, places, rel, [](const rules::RelatedPlace&) { return false; });
    d.related_information = std::move(rel);
  }
  return d;
}

}  // namespace

std::vector<Diagnostic> log_diagnostics(const DocumentAnalysis& a, const OtherFiles* others) {
  Places places(a, others);
  std::vector<Diagnostic> out;
  for (std::size_t i = 0; i < a.report.incidents.size(); ++i)
    if (auto d = incident_diagnostic(a, i, places)) out.push_back(std::move(*d));
  for (std::size_t i = 0; i < a.report.findings.size(); ++i)
    if (auto d = finding_diagnostic(a, i, places)) out.push_back(std::move(*d));
  // More OOM messages than the analyzer keeps: the diagnostics above are not
  // all there is. Said on the first line, as a note about the whole file.
  if (std::string note = rules::not_analysed_note(a.report); !note.empty()) {
    Diagnostic d;
    d.severity = lsp_severity(rules::Severity::warning);
    d.message = std::move(note);
    d.data.ref = "not-analysed";
    d.data.version = a.doc->version;
    out.push_back(std::move(d));
  }
  return out;
}

bool incident_covers(const DocumentAnalysis& a, const analyzer::Incident& inc, std::uint64_t line) {
  auto within = [&](std::uint32_t file, std::uint64_t first, std::uint64_t last) {
    return file == a.file && line >= first && line <= last;
  };
  if (within(inc.primary.file, inc.primary.line, inc.primary.end_line)) return true;
  if (std::any_of(inc.echoes.begin(), inc.echoes.end(),
                  [&](const analyzer::EchoPlace& e) { return within(e.file, e.line, e.end_line); }))
    return true;
  // Read elsewhere: the line its diagnostic here is anchored on.
  auto here = inc.primary.file == a.file ? std::nullopt : anchor_of(inc, a.file);
  return here && line >= here->first && line <= here->last;
}

}  // namespace oomlens::lsp
