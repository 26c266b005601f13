// The one result type every front end renders (see DESIGN.md, "Data flow"):
// a log's incidents and findings, a script's or configuration file's
// diagnostics and a memory snapshot's verdict are all a Diagnosis, so each
// output format is written once over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analyzer/log/event.hpp"
#include "analyzer/log/incident.hpp"
#include "analyzer/python/position.hpp"

namespace oomlens::rules {

enum class Severity { error, warning, information, hint };
enum class FixKind { env, edit, command, advice };
// In ruff's sense: safe keeps behaviour, unsafe may change it, display-only is
// advice a person has to carry out.
enum class FixSafety { safe, unsafe, display_only };

// A byte-range edit on a source file: replace [begin, end) with replacement.
// The bytes are those of the exact text the diagnosis was made from: the
// editor sends them against that document version only.
struct TextEdit {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string replacement;
  friend bool operator==(const TextEdit&, const TextEdit&) = default;
};

struct Fix {
  std::string title;
  FixKind kind = FixKind::advice;
  FixSafety safety = FixSafety::display_only;
  std::string env_name;   // kind env
  std::string env_value;  // kind env: the full value to set (merged with what the log showed)
  std::string command;    // kind command
  std::string detail;     // why, caveats
  // Kind edit: the edits that carry the fix out, sorted and non-overlapping;
  // empty when the fix has to be made by hand (the text does not parse).
  std::vector<TextEdit> edits = {};
};

// A fix of kind edit: `edits` on the text the diagnosis was made from.
Fix edit_fix(std::string title, FixSafety safety, std::vector<TextEdit> edits);

// A number the message rests on, by name ("requested_bytes").
struct Evidence {
  std::string name;
  std::uint64_t value = 0;
  friend bool operator==(const Evidence&, const Evidence&) = default;
};

// Where a script's or configuration file's diagnosis stands: the bytes it
// covers and the point they start at.
struct SourceSpan {
  analyzer::python::ByteRange range;
  analyzer::python::Point start;
};

// Where a diagnosis stands in the input it was read from: the '\n' lines
// [line, end_line] (1-based) of input `file` (a job's input index, as
// OomEvent::file; 0 for a single input), and for a source file its bytes.
struct Location {
  std::uint32_t file = 0;
  std::uint64_t line = 0;
  std::uint64_t end_line = 0;
  std::optional<SourceSpan> source;
};

// A place that belongs to a diagnosis besides its own lines: another rank's
// report of the same failure, a consequence, a warning before it, a repeat;
// for a script, the place in another file of its project that makes the
// diagnosis true (`cause`: where an imported module starts CUDA, the flush
// a helper of another file makes).
struct RelatedPlace {
  enum class Kind { failure, echo, collateral, warning, repeat, cause };
  Kind kind = Kind::echo;
  std::uint32_t file = 0;
  std::uint64_t line = 0;
  std::uint64_t end_line = 0;
  std::string message;
  // A place in another file of a script's project: that file as the front
  // end finds it (as printed, or an absolute path), and the 1-based column.
  std::string path = {};
  std::uint32_t column = 0;
};

struct Diagnosis {
  std::string code;         // stable rule code, e.g. "OOM101"
  std::string name;         // the pattern's name, e.g. "allocator-fragmentation"
  Severity severity = Severity::error;
  std::string message;      // one line carrying the key numbers
  std::string explanation;  // a short Markdown explanation
  std::vector<Evidence> evidence;
  Location location;
  std::optional<analyzer::Frame> frame;  // the user's own code the failure was raised in
  std::vector<RelatedPlace> related;
  std::vector<Fix> fixes;
  std::string verify;       // a command to run next

  // What a log rule read, for the facts only a log has (an incident's ranks,
  // echoes and settings; a finding's repeats). A snapshot's verdict keeps its
  // failed call beside it instead (rules/snapshot/oom_verdict.hpp), so that
  // this type does not carry the snapshot reader's model.
  std::variant<std::monostate, analyzer::Incident, analyzer::LogFinding> subject;
  const analyzer::Incident& incident() const { return std::get<analyzer::Incident>(subject); }
  const analyzer::LogFinding& finding() const { return std::get<analyzer::LogFinding>(subject); }

  // The evidence named `name`; nothing when the input did not give it.
  std::optional<std::uint64_t> evidence_of(std::string_view name) const;

  // The fix that applies by itself: the first fix of kind edit that has its
  // edits; null when there is none.
  const Fix* automatic_fix() const;
};

// A diagnosis on a script or configuration file, at `range` starting at `start`.
Location source_location(analyzer::python::ByteRange range, analyzer::python::Point start);

const char* to_string(Severity s);
const char* to_string(FixKind k);
const char* to_string(FixSafety s);

}  // namespace oomlens::rules
