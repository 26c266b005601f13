// The fix "Record a memory snapshot", and the dump edits OOM304 shares.
//
// The loop is wrapped in try/except rather than given an OOM observer
// (`torch._C._cuda_attach_out_of_memory_observer`): the observer is private
// API (torch._C), absent before 2.0 and unsupported by pluggable allocators,
// while `except torch.cuda.OutOfMemoryError` works wherever `_dump_snapshot`
// exists (2.1+). The price is re-indenting the loop, done line by line with
// the indent unit the file already uses; lines that continue a multi-line
// string are left alone, since their leading spaces are part of the string.
#include "rules/source/record_snapshot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <unordered_set>

#include "analyzer/python/training_loop.hpp"

namespace oomlens::rules {

namespace snapshot {
namespace {

using analyzer::python::ByteRange;
using analyzer::python::Call;
using analyzer::python::Import;
using analyzer::python::Loop;
using analyzer::python::Node;
using analyzer::python::Script;

constexpr std::string_view kRecord = "torch.cuda.memory._record_memory_history";
constexpr std::array<std::string_view, 4> kSavers = {
    "torch.cuda.memory._dump_snapshot", "torch.cuda.memory._snapshot", "torch.cuda.memory._save_memory_usage",
    "torch.cuda.memory._save_segment_usage"};
constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// The indentation before `at` when only whitespace precedes it on its line (a
// byte-order mark at the start of the file is not indentation).
std::optional<std::string_view> line_indent(std::string_view src, std::uint32_t at) {
  std::uint32_t begin = at;
  while (begin > 0 && src[begin - 1] != '\n') --begin;
  if (begin == 0 && src.starts_with(kBom) && at >= kBom.size()) begin = kBom.size();
  std::string_view before = src.substr(begin, at - begin);
  if (!std::all_of(before.begin(), before.end(), is_space)) return std::nullopt;
  return before;
}

// Where the line holding `at` ends: at its "\r\n" or "\n", or the end of the file.
std::uint32_t line_end(std::string_view src, std::uint32_t at) {
  std::size_t newline = src.find('\n', at);
  if (newline == std::string_view::npos) return static_cast<std::uint32_t>(src.size());
  if (newline > at && src[newline - 1] == '\r') --newline;
  return static_cast<std::uint32_t>(newline);
}

// What one more level of indentation is in this file: a block's first
// statement's indentation beyond its header's.
std::optional<std::string> block_unit(const Script& s, Node block) {
  Node header = s.parent(block);
  auto statements = block.named_children();
  if (!header || statements.empty()) return std::nullopt;
  auto outer = line_indent(s.source(), header.start_byte());
  auto inner = line_indent(s.source(), statements.front().start_byte());
  if (!outer || !inner || inner->size() <= outer->size() || !inner->starts_with(*outer)) return std::nullopt;
  return std::string(inner->substr(outer->size()));
}

std::string indent_unit(const Script& s, const Loop& loop) {
  if (auto unit = block_unit(s, loop.body)) return *unit;
  for (Node block : s.nodes_of_type("block"))
    if (auto unit = block_unit(s, block)) return *unit;
  return "    ";  // PEP 8 when the file has no indented block
}

// The name `module` is bound to where `at` runs: `t` after `import torch as t`.
std::optional<std::string> module_alias(const Script& s, std::string_view module, Node at) {
  auto at_function = s.enclosing_function(at);
  for (const Import& import : s.imports()) {
    if (import.future || !import.from_module.empty()) continue;
    bool before = import.node.end_byte() <= at.start_byte();
    bool visible = false;
    if (import.top_level) {
      visible = before || at_function.has_value();  // a function body runs after the module's imports
    } else if (auto function = s.enclosing_function(import.node)) {
      visible = before && function->node.range().contains(at.range());
    }
    if (!visible) continue;
    for (const auto& name : import.names)
      if (name.qualified == module) return name.local;
  }
  return std::nullopt;
}

bool distributed_module(std::string_view m) {
  auto under = [m](std::string_view package) {
    return m == package || (m.starts_with(package) && m.size() > package.size() && m[package.size()] == '.');
  };
  return under("torch.distributed") || under("deepspeed") || under("accelerate");
}

// Each rank of a distributed job needs its own file, or the ranks overwrite
// one another's snapshot: the script uses torch.distributed (or a launcher
// library built on it) or reads its rank from the environment.
bool is_distributed(const Script& s) {
  for (const Import& import : s.imports()) {
    if (distributed_module(import.from_module)) return true;
    for (const auto& name : import.names)
      if (distributed_module(name.module) || distributed_module(name.qualified)) return true;
  }
  for (const Call& call : s.calls())
    if (call.qualified_name && (distributed_module(*call.qualified_name) ||
                                *call.qualified_name == "torch.nn.parallel.DistributedDataParallel"))
      return true;
  for (Node node : s.nodes_of_type("string")) {
    // Decoding every string of a long script costs; only one naming RANK can match.
    if (s.text(node).find("RANK") == std::string_view::npos) continue;
    auto literal = s.string_literal(node);
    if (literal && (literal->value == "RANK" || literal->value == "LOCAL_RANK")) return true;
  }
  return false;
}

// What the inserted code calls things, and the imports it needs.
struct Names {
  std::string torch = "torch";
  std::string os = "os";
  std::string atexit = "atexit";
  std::vector<std::string> imports;  // modules to import, sorted
  bool distributed = false;

  std::string file_expression() const {
    if (!distributed) return "\"oom_snapshot.pickle\"";
    return fmt::format("f\"oom_snapshot_rank{{{}.environ.get('RANK', '0')}}.pickle\"", os);
  }
  // Where the snapshot goes and how to read it: the second comment line.
  std::string where_and_how() const {
    if (distributed) return "./oom_snapshot_rank<RANK>.pickle, one per rank (read with `oomlens snapshot FILE`).";
    return "./oom_snapshot.pickle (read it with `oomlens snapshot oom_snapshot.pickle`).";
  }
};

Names names_at(const Script& s, Node at, bool with_atexit) {
  Names names;
  names.distributed = is_distributed(s);
  auto bind = [&](std::string_view module, std::string& local) {
    if (auto alias = module_alias(s, module, at)) local = *alias;
    else names.imports.emplace_back(module);
  };
  if (with_atexit) bind("atexit", names.atexit);
  if (names.distributed) bind("os", names.os);
  bind("torch", names.torch);
  return names;
}

// `import atexit` / `import os` / `import torch` where module imports go:
// before the first import of torch, else after the docstring and __future__.
std::optional<TextEdit> import_edit(const Script& s, const Names& names, std::uint32_t before) {
  if (names.imports.empty()) return std::nullopt;
  std::string_view eol = s.line_ending();
  std::uint32_t at = 0;
  std::string text;
  auto first = s.first_import_of("torch");
  if (first && first->top_level && first->top_level.start_byte() <= before) {
    at = first->top_level.start_byte();
  } else {
    auto point = s.insertion_point();
    at = point.byte;
    if (point.needs_newline) text += eol;
  }
  for (const auto& module : names.imports) text += fmt::format("import {}{}", module, eol);
  return TextEdit{at, at, std::move(text)};
}

// Sorted by position; insertions at one position merged in the order given,
// so that every client applies them alike.
std::vector<TextEdit> normalised(std::vector<TextEdit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) { return a.begin < b.begin; });
  std::vector<TextEdit> out;
  for (auto& e : edits) {
    if (!out.empty() && out.back().begin == e.begin && out.back().end == e.begin && e.end == e.begin)
      out.back().replacement += e.replacement;
    else
      out.push_back(std::move(e));
  }
  return out;
}

// One more `unit` at the start of every line of [begin, end) after the first,
// except blank lines and lines that continue a multi-line string.
void reindent(const Script& s, Node statement, std::uint32_t end, const std::string& unit,
              std::vector<TextEdit>& edits) {
  std::vector<ByteRange> strings;
  statement.walk([&](Node node) {
    if (!node.is("string")) return true;
    if (s.text(node).find('\n') != std::string_view::npos) strings.push_back(node.range());
    return false;
  });
  std::string_view src = s.source();
  for (std::size_t nl = src.find('\n', statement.start_byte()); nl != std::string_view::npos && nl + 1 < end;
       nl = src.find('\n', nl + 1)) {
    auto at = static_cast<std::uint32_t>(nl + 1);
    std::uint32_t content = at;
    while (content < end && is_space(src[content])) ++content;
    if (content == end || src[content] == '\r' || src[content] == '\n') continue;
    bool in_string = std::any_of(strings.begin(), strings.end(),
                                 [at](ByteRange r) { return r.begin < at && at < r.end; });
    if (!in_string) edits.push_back({at, at, unit});
  }
}

}  // namespace

std::vector<Call> recording_calls(const Script& s) {
  std::vector<Call> out;
  for (const Call& call : s.calls_to(kRecord)) {
    // `enabled` is the first parameter in every version (bool before 2.1,
    // 'all' | 'state' | None since); None or False turns recording off.
    Node enabled;
    for (const Node& argument : call.node.field("arguments").named_children()) {
      if (argument.is("keyword_argument")) {
        if (s.text(argument.field("name")) == "enabled") enabled = argument.field("value");
      } else if (!enabled && !argument.is("list_splat") && !argument.is("dictionary_splat")) {
        enabled = argument;
        break;
      }
    }
    bool off = enabled && (enabled.is("none") || enabled.is("false") || s.text(enabled) == "0");
    if (!off) out.push_back(call);
  }
  return out;
}

bool saves_snapshot(const Script& s) {
  for (std::string_view type : {"attribute", "identifier"})
    for (Node node : s.nodes_of_type(type)) {
      std::string_view text = s.text(node);
      bool named = std::any_of(kSavers.begin(), kSavers.end(), [&](std::string_view saver) {
        return text.ends_with(saver.substr(saver.rfind('.') + 1));
      });
      if (!named) continue;
      auto qualified = s.qualified_name(node);
      if (qualified && std::find(kSavers.begin(), kSavers.end(), *qualified) != kSavers.end()) return true;
    }
  return false;
}

std::string snapshot_file(const Script& s) {
  return is_distributed(s) ? "oom_snapshot_rank0.pickle" : "oom_snapshot.pickle";
}

bool runs_before(const Script& s, Node node, std::uint32_t limit) {
  std::vector<Node> work{node};
  std::unordered_set<const void*> seen;
  while (!work.empty()) {
    Node n = work.back();
    work.pop_back();
    if (n.start_byte() < limit) return true;
    auto function = s.enclosing_function(n);
    if (!function || !seen.insert(function->node.id()).second) continue;
    for (const Call& call : s.calls())
      if (call.local_function == function->node) work.push_back(call.node);
  }
  return false;
}

std::optional<std::vector<TextEdit>> dump_on_oom_edits(const Script& s, const Loop& loop, bool record_history) {
  std::string_view src = s.source();
  Node statement = loop.node;
  auto indent_view = line_indent(src, statement.start_byte());
  if (!indent_view) return std::nullopt;
  const std::string indent(*indent_view);
  const std::string unit = indent_unit(s, loop);
  const std::string eol(s.line_ending());
  Names names = names_at(s, statement, false);
  const std::string& t = names.torch;

  std::vector<TextEdit> edits;
  if (auto imports = import_edit(s, names, statement.start_byte())) edits.push_back(std::move(*imports));

  std::string head;
  if (record_history) {
    head += fmt::format("# oomlens: record the CUDA allocator's history; an OOM in this loop dumps it to{}", eol);
  } else {
    head += fmt::format("# oomlens: an OOM in this loop dumps the recorded allocator history to{}", eol);
  }
  head += fmt::format("{}# {}{}", indent, names.where_and_how(), eol);
  // stacks="python": the default, "all", also unwinds the C++ stack of every
  // allocation, which slows the loop and fills the snapshot with frames
  // oomlens folds away; max_entries bounds the trace's ring buffer.
  if (record_history)
    head += fmt::format("{}{}.cuda.memory._record_memory_history(max_entries=100000, stacks=\"python\"){}", indent, t,
                        eol);
  head += fmt::format("{}try:{}{}{}", indent, eol, indent, unit);
  edits.push_back({statement.start_byte(), statement.start_byte(), std::move(head)});

  std::uint32_t end = line_end(src, statement.end_byte());
  reindent(s, statement, end, unit, edits);

  std::string tail = fmt::format("{}{}except {}.cuda.OutOfMemoryError:{}", eol, indent, t, eol);
  tail += fmt::format("{}{}{}.cuda.memory._dump_snapshot({}){}", indent, unit, t, names.file_expression(), eol);
  tail += fmt::format("{}{}raise", indent, unit);
  edits.push_back({end, end, std::move(tail)});
  return normalised(std::move(edits));
}

std::optional<std::vector<TextEdit>> dump_at_exit_edits(const Script& s, const Call& record_call) {
  std::string_view src = s.source();
  Node statement = s.parent(record_call.node);
  if (!statement || !statement.is("expression_statement") || statement.range() != record_call.range) return std::nullopt;
  Node block = s.parent(statement);
  if (!block || !(block.is("block") || block.is("module"))) return std::nullopt;
  auto indent_view = line_indent(src, statement.start_byte());
  if (!indent_view) return std::nullopt;  // `if x: record()`, or after a `;`
  std::uint32_t end = line_end(src, statement.end_byte());
  std::string_view rest = src.substr(statement.end_byte(), end - statement.end_byte());
  std::size_t first = rest.find_first_not_of(" \t\f");
  if (first != std::string_view::npos && rest[first] != '#') return std::nullopt;  // `record(); more()`

  const std::string indent(*indent_view);
  const std::string eol(s.line_ending());
  Names names = names_at(s, record_call.node, true);
  std::vector<TextEdit> edits;
  if (auto imports = import_edit(s, names, statement.start_byte())) edits.push_back(std::move(*imports));
  std::string text = fmt::format("{}{}# oomlens: dump the recorded allocator history when the script exits, "
                                 "after an OOM too,{}",
                                 eol, indent, eol);
  text += fmt::format("{}# to {}{}", indent, names.where_and_how(), eol);
  text += fmt::format("{}{}.register({}.cuda.memory._dump_snapshot, {})", indent, names.atexit, names.torch,
                      names.file_expression());
  edits.push_back({end, end, std::move(text)});
  return normalised(std::move(edits));
}

}  // namespace snapshot

std::optional<Fix> record_snapshot_action(const analyzer::python::Script& script,
                                                   std::optional<std::uint32_t> line) {
  if (script.has_errors()) return std::nullopt;
  std::optional<analyzer::python::Loop> loop;
  if (line) loop = analyzer::python::loop_at_line(script, *line);
  if (!loop) loop = analyzer::python::training_loop(script);
  if (!loop) return std::nullopt;
  // Already recording before the loop ends: the action was applied, or the
  // user records by hand (OOM304 then checks the dump).
  for (const auto& call : snapshot::recording_calls(script))
    if (snapshot::runs_before(script, call.node, loop->node.end_byte())) return std::nullopt;
  auto edits = snapshot::dump_on_oom_edits(script, *loop, true);
  if (!edits) return std::nullopt;
  return edit_fix(fmt::format("Record a memory snapshot around the training loop at line {}",
                              script.point(loop->node.start_byte()).line),
                  FixSafety::unsafe, std::move(*edits));
}

}  // namespace oomlens::rules
