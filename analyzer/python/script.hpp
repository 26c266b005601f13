// A parsed view of one Python script: what the source rules ask of it.
//
// The parse is tree-sitter's (tree-sitter-python 0.21, compiled in); this
// layer adds what the rules match on: names resolved to qualified names
// (TorchFix's lesson: `t.cuda.empty_cache()` after `import torch as t` is
// `torch.cuda.empty_cache`; a local `def empty_cache` is not), the loops and
// `if` guards around a node, calls into functions of the same file, the
// module's statements in execution order, and where new module-level code may
// be inserted. No rules here, no LSP, no JSON.
//
// Scripts with syntax errors still parse: tree-sitter recovers with ERROR
// nodes, `syntax_errors()` lists them, and every query answers from what it
// could read. Rules must not offer edits for such a file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/python/node.hpp"
#include "analyzer/python/strings.hpp"

namespace oomlens::analyzer::python {

namespace detail {
class NameIndex;
struct TypeIndex;
}

struct SyntaxError {
  ByteRange range;
  Point start;
  std::string message;  // "invalid syntax" or "missing ')'"
};

struct ImportedName {
  std::string local;      // the name bound in the scope: "t", "torch", "ec"
  std::string qualified;  // what it stands for: "torch", "torch.cuda.empty_cache"
  std::string module;     // the module path imported ("torch.cuda" for `import torch.cuda`)
  Node node;              // the dotted_name or aliased_import
};

struct Import {
  Node node;               // import_statement, import_from_statement or future_import_statement
  Node top_level;          // the module-level statement holding it; null inside a def or class
  std::string from_module; // "torch.cuda" for `from torch.cuda import x`, ".pkg" for relative; "" for `import`
  std::vector<ImportedName> names;
  bool wildcard = false;   // from m import *
  bool future = false;     // from __future__ import ...
};

struct Call {
  Node node;    // the call expression
  Node callee;  // its `function` child
  ByteRange range;
  Point start;
  // What the callee resolves to: "torch.cuda.empty_cache". Empty when it is
  // not a (chain of attributes on a) name bound by an import.
  std::optional<std::string> qualified_name;
  // A method called on an instance of an imported class: "utils.MemoryManager.flush"
  // for `mm.flush()` after `mm = MemoryManager()` (from utils import MemoryManager).
  std::optional<std::string> instance_method;
  // The function_definition of this file it calls (`train(...)`,
  // `self.step(...)` in a method of the same class); null otherwise.
  Node local_function;
};

struct Function {
  Node node;  // function_definition
  std::string name;
  Node body;
};

// A comprehension counts as a loop: its element expression and conditions run
// once per item, just as a `for` body does (its first iterable runs once and
// is not inside the loop). `async for` loops are for loops with is_async set.
enum class LoopKind { for_loop, while_loop, comprehension };

struct Loop {
  Node node;  // for_statement, while_statement, or the comprehension
  LoopKind kind = LoopKind::for_loop;
  bool is_async = false;
  Node body;  // the block (or the comprehension's element expression)
};

// How a node gets executed on every iteration of `loop`: directly (through is
// empty) or via calls to functions of this file, listed from the call in the
// loop body down to the call into the function that holds the node.
struct LoopPath {
  Loop loop;
  std::vector<Call> through;
};

// An `if` (or `elif`/`else`) branch a node sits in.
struct Guard {
  enum class Branch { then_branch, elif_branch, else_branch };
  Node statement;  // the if_statement
  Branch branch = Branch::then_branch;
  // The condition of the branch taken; for `else`, the `if`'s own condition
  // (which is then false).
  Node condition;
};

// A `counter % period` test inside a condition, as in `if step % 100 == 0:`.
struct Periodic {
  Node modulo;   // the binary_operator
  Node counter;  // step, (step + 1), self.global_step
  Node period;   // 100, args.flush_every
};

// One unit of the module's execution: a simple statement, or the header of a
// compound one (`if torch.cuda.is_available():` up to its body). `via` names
// the calls to functions of this file that led into it.
struct Step {
  Node statement;
  ByteRange range;        // the header only, when header_only
  bool header_only = false;
  std::vector<Call> via;
};

// Where module-level code may be inserted: the start of the line after the
// shebang, the encoding declaration, the module docstring and the
// `from __future__` imports, whichever come last.
struct InsertionPoint {
  std::uint32_t byte = 0;
  Point position;
  bool needs_newline = false;  // inserting at the end of a file without a final newline
};

class Script {
 public:
  Script(Script&&) noexcept;
  Script& operator=(Script&&) noexcept;
  ~Script();

  std::string_view source() const { return source_; }
  Node root() const;
  std::string_view text(Node node) const;
  std::string_view text(ByteRange range) const;
  Point point(std::uint32_t byte) const;
  // "\r\n" when the first line ends so, else "\n" (the style edits must keep).
  std::string_view line_ending() const;
  // The smallest named node covering the range.
  Node node_at(ByteRange range) const;
  // Every named node of a grammar type ("assignment", "string", "block"),
  // in source order (outer before inner). Indexed on first use, with one walk
  // of the tree for all types: rules that would each walk the whole tree for
  // one kind of node ask here instead. Safe from several threads.
  const std::vector<Node>& nodes_of_type(std::string_view type) const;
  // The node's parent, in constant time (Node::parent() walks down from the root).
  Node parent(Node node) const;

  bool has_errors() const { return !errors_.empty(); }
  const std::vector<SyntaxError>& syntax_errors() const { return errors_; }

  // --- Names
  // The qualified name an identifier or attribute chain stands for, resolved
  // through imports and simple aliases (`cuda = torch.cuda`) with Python's
  // scopes: module, function, class body, comprehension. Empty when the name
  // is local (a def, a parameter, any other assignment), unbound, or bound in
  // ways that disagree (an import and a later reassignment seen from a
  // function body).
  std::optional<std::string> qualified_name(Node expression) const;
  const std::vector<Import>& imports() const;
  // The first module-level import (outside defs and classes; inside `if` or
  // `try` counts) of `module` or a submodule: `import torch`,
  // `import torch.nn as nn`, `from torch import cuda` for "torch".
  std::optional<Import> first_import_of(std::string_view module) const;

  // --- Calls and functions
  // Every call in the file, in source order.
  const std::vector<Call>& calls() const;
  // The calls whose callee resolves to `qualified`. Re-exports count as the same function: torch.cuda.memory.empty_cache is
  // torch.cuda.empty_cache (canonical_name).
  std::vector<Call> calls_to(std::string_view qualified) const;
  // Every function_definition, in source order (methods and nested ones too).
  const std::vector<Function>& functions() const;
  // The innermost def whose body holds the node (lambdas are looked through).
  std::optional<Function> enclosing_function(Node node) const;

  // --- Control flow
  // The loops whose every iteration executes the node, innermost first; the
  // search stops at the body of the enclosing def or lambda (its defaults and
  // decorators are still outside it). A `for` iterable, a `while` condition
  // and `else:` clauses are not loop bodies.
  std::vector<Loop> enclosing_loops(Node node) const;
  std::optional<Loop> enclosing_loop(Node node) const;
  // Every loop that executes the node per iteration, directly or through
  // calls to functions of this file (transitively, recursion cut), shortest
  // call chains first.
  std::vector<LoopPath> loops_reaching(Node node) const;
  // The if/elif/else branches around the node, innermost first, up to `stop`
  // (exclusive; e.g. the loop) or the enclosing def/lambda body.
  std::vector<Guard> guards(Node node, Node stop = {}) const;

  // --- Module layout
  // The module's top-level statements in source order (comments excluded).
  std::vector<Node> module_statements() const;
  // The module's statements in execution order: top-level statements, the
  // blocks of module-level if/for/while/try/with/match and class bodies (both
  // branches of an `if`, in source order), and the body of a function of
  // this file at its first call from there, placed before the statement that
  // calls it. Function bodies never called at module level are not included.
  std::vector<Step> execution_order() const;
  InsertionPoint insertion_point() const;

  // --- Literals
  std::optional<StringLiteral> string_literal(Node node) const;

 private:
  friend Script parse_script(std::string_view source, const Script* previous);
  Script();

  struct TreeDeleter {
    void operator()(TSTree* tree) const;
  };

  std::string source_;
  std::unique_ptr<TSTree, TreeDeleter> tree_;
  std::vector<std::uint32_t> line_starts_;
  std::vector<SyntaxError> errors_;
  std::unique_ptr<detail::NameIndex> names_;
  std::unique_ptr<detail::TypeIndex> types_;  // filled on first use (nodes_of_type)
};

// Parses a script (UTF-8). Never throws for bad input: a script that does not
// parse has syntax_errors(). Throws std::runtime_error only if the compiled-in
// grammar is incompatible with the tree-sitter runtime.
//
// With `previous` (an earlier version of the same document) the parse is
// incremental: the difference between the two texts is applied to a copy of
// the previous tree with tree-sitter's edit API, and unchanged subtrees are
// reused. The result is the same as a fresh parse.
Script parse_script(std::string_view source, const Script* previous = nullptr);

// The name a re-exported function is known by: torch.cuda.memory.X (public
// X) -> torch.cuda.X; any other name as it is.
std::string canonical_name(std::string_view qualified);

// The grammar's ABI version (14 for tree-sitter-python 0.21.0) and the range
// the linked runtime accepts.
std::uint32_t grammar_abi_version();
std::uint32_t runtime_min_abi_version();
std::uint32_t runtime_max_abi_version();

// The `% period` test in an `if` condition (through and/or/not, parentheses
// and comparisons), as in `step % 100 == 0`, `not step % N`,
// `(i + 1) % every == 0 and i > 0`. A string on the left (`"%d" % x`) is
// formatting, not a period.
std::optional<Periodic> periodic_condition(Node condition);

}  // namespace oomlens::analyzer::python
