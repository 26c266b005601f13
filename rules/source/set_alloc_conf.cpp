#include "rules/source/set_alloc_conf.hpp"

#include <fmt/format.h>

#include "analyzer/alloc_conf.hpp"
#include "rules/source/statement_edits.hpp"

namespace oomlens::rules {

using analyzer::python::Import;
using analyzer::python::Node;
using analyzer::python::Script;
using source::AllocConfAssignment;

namespace {

// A Python string literal of `value` in the quote style of `like` (a
// literal of the script), prefixes dropped: an allocator value needs no
// raw or unicode prefix.
std::string quoted(std::string_view value, std::string_view like) {
  char quote = like.find('\'') < like.find('"') ? '\'' : '"';
  std::string out(1, quote);
  for (char c : value) {
    if (c == quote || c == '\\') out += '\\';
    out += c;
  }
  out += quote;
  return out;
}

// The byte where the first module-level `import torch` statement's line
// starts; nothing when torch is not imported at module level.
std::optional<std::uint32_t> torch_import_line(const Script& s) {
  auto import = s.first_import_of("torch");
  if (!import || !import->top_level) return std::nullopt;
  return source::line_start(s.source(), import->top_level.start_byte());
}

// The leftmost name of `os.environ[...]`, `environ.setdefault(...)`, `o.putenv(...)`.
Node root_name(Node n) {
  while (n && !n.is("identifier")) {
    if (n.is("attribute")) n = n.field("object");
    else if (n.is("subscript")) n = n.field("value");
    else if (n.is("call")) n = n.field("function");
    else if (n.is("assignment") || n.is("augmented_assignment")) n = n.field("left");
    else if (n.is("expression_statement") && !n.named_children().empty()) n = n.named_children()[0];
    else return {};
  }
  return n;
}

// The import binding `name` at module level before `limit`; else any import
// binding it (to copy); else nothing.
struct Binding {
  const Import* import = nullptr;
  bool bound_before = false;
};
Binding binding_of(const Script& s, std::string_view name, std::uint32_t limit) {
  Binding found;
  for (const auto& import : s.imports())
    for (const auto& n : import.names) {
      if (n.local != name) continue;
      if (import.top_level && import.top_level.start_byte() < limit) return {&import, true};
      if (!found.import) found.import = &import;
    }
  return found;
}

bool binds_os(const Script& s, std::uint32_t limit) {
  for (const auto& import : s.imports())
    if (import.top_level && import.top_level.start_byte() < limit)
      for (const auto& n : import.names)
        if (n.local == "os" && n.qualified == "os") return true;
  return false;
}

}  // namespace

namespace source {

std::optional<std::vector<TextEdit>> move_before_torch_import(const Script& s, const AllocConfAssignment& a,
                                                              std::optional<std::string> new_value) {
  if (s.has_errors() || !a.literal || !a.only_entry) return std::nullopt;
  auto insert_at = torch_import_line(s);
  if (!insert_at || *insert_at >= a.statement.start_byte()) return std::nullopt;
  bool pass = only_statement_of_block(s, a.statement);
  auto removal = remove_statement_edit(s, a.statement, pass);
  // Only a statement alone on its line(s) moves: the removal then starts the line.
  if (!removal || (!pass && removal->begin != line_start(s.source(), a.statement.start_byte()))) return std::nullopt;
  std::string_view stmt = s.text(a.statement);
  if (stmt.find('\n') != std::string_view::npos) return std::nullopt;

  std::string eol(s.line_ending());
  std::string moved;
  Node name = root_name(a.statement);
  if (!name) return std::nullopt;
  Binding b = binding_of(s, s.text(name), *insert_at);
  if (!b.import) return std::nullopt;
  if (!b.bound_before) {
    std::string_view import_text = s.text(b.import->node);
    if (import_text.find('\n') != std::string_view::npos) return std::nullopt;
    moved += std::string(import_text) + eol;
  }
  // The statement, its value replaced when merging.
  std::uint32_t begin = a.statement.start_byte();
  std::string text(stmt);
  if (new_value) {
    auto v = a.value.range();
    text = std::string(s.text({begin, v.begin})) + quoted(*new_value, s.text(a.value)) +
           std::string(s.text({v.end, a.statement.end_byte()}));
  }
  // A trailing comment travels with the statement.
  std::string_view src = s.source();
  std::uint32_t line_end = a.statement.end_byte();
  while (line_end < src.size() && src[line_end] != '\n' && src[line_end] != '\r') ++line_end;
  std::string_view rest = s.text({a.statement.end_byte(), line_end});
  if (rest.find('#') != std::string_view::npos && !pass) text += std::string(rest);
  moved += text + eol;
  return std::vector<TextEdit>{{*insert_at, *insert_at, moved}, *removal};
}

}  // namespace source

std::optional<Fix> set_alloc_conf_action(const Script& s, std::string_view option, std::string_view variable) {
  if (s.has_errors() || option.find(':') == std::string_view::npos) return std::nullopt;
  bool imports_torch = false;
  for (const auto& import : s.imports()) {
    imports_torch |= import.from_module == "torch" || import.from_module.starts_with("torch.");
    for (const auto& n : import.names) imports_torch |= n.module == "torch" || n.module.starts_with("torch.");
  }
  if (!imports_torch) return std::nullopt;

  auto assignments = source::alloc_conf_assignments(s);
  auto steps = s.execution_order();
  auto uses = source::cuda_uses(s);
  // An assignment the script already makes: the option joins its value. The
  // one PyTorch reads is the last one run; a computed one cannot be merged.
  if (!assignments.empty()) {
    const AllocConfAssignment* target = nullptr;
    for (const auto& a : assignments)
      if (source::step_of(steps, a.statement) || !target) target = &a;
    if (!target->literal) return std::nullopt;
    std::string merged = analyzer::merge_alloc_conf(target->literal->value, option);
    bool late = source::lateness(s, steps, uses, *target).why != source::Lateness::Why::in_time;
    std::uint32_t line = s.point(target->statement.start_byte()).line;
    if (late) {
      auto edits = source::move_before_torch_import(s, *target, merged);
      if (!edits) return std::nullopt;
      return edit_fix(fmt::format("Set {} to \"{}\" before `import torch` (moved from line {})", target->variable,
                                      merged, line),
                          FixSafety::unsafe, std::move(*edits));
    }
    if (merged == target->literal->value) return std::nullopt;  // already set: nothing to do
    auto r = target->value.range();
    return edit_fix(fmt::format("Add {} to {} at line {}", option, target->variable, line), FixSafety::unsafe,
                        {{r.begin, r.end, quoted(merged, s.text(target->value))}});
  }

  auto insert_at = torch_import_line(s);
  auto point = s.insertion_point();
  std::uint32_t at = insert_at && *insert_at >= point.byte ? *insert_at : point.byte;
  std::string eol(s.line_ending());
  std::string text = point.needs_newline && at == point.byte ? eol : "";
  if (!binds_os(s, at)) text += "import os" + eol;
  text += fmt::format("os.environ.setdefault({}, {})", quoted(variable, "\""), quoted(option, "\"")) + eol;
  return edit_fix(fmt::format("Set {}={} before `import torch`", variable, option), FixSafety::unsafe,
                      {{at, at, std::move(text)}});
}

}  // namespace oomlens::rules
