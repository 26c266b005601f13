// `oomlens lint [--fix] [--unsafe-fixes] [--diff] [--format text|json|sarif]
// PATH...`, after ruff: `file:line:col: CODE [*] message`; exit 0 clean, 1
// found, 2 usage/input error.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unordered_map>
#include <utility>
#include <nlohmann/json.hpp>

#include "analyzer/python/script.hpp"
#include "cli/commands.hpp"
#include "cli/lint_project.hpp"
#include "cli/report.hpp"
#include "analyzer/notebook.hpp"
#include "report/diagnosis_json.hpp"
#include "report/files.hpp"
#include "report/json_text.hpp"
#include "report/notebook_edit.hpp"
#include "report/sarif.hpp"
#include "rules/source/config_lint.hpp"
#include "rules/source/file_kind.hpp"
#include "rules/source/lint.hpp"

namespace oomlens::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAbout = R"(Checks Python training scripts and Jupyter notebooks, and the files that set
PYTORCH_CUDA_ALLOC_CONF (shell and SLURM scripts, .env files,
.vscode/launch.json, Dockerfiles, Kubernetes and Compose YAML), for patterns
that waste or misuse GPU memory (rules OOM3xx; `oomlens explain CODE` shows a
rule's page). A file's kind comes from its name, else from its first lines (a
shebang, #SBATCH lines, YAML keys); a file named here that is of no kind
oomlens reads gets a note on standard error and is not checked. Directories
are walked for *.py, *.ipynb, *.sh, *.bash, *.sbatch, *.slurm, .env, *.env,
.vscode/launch.json, Dockerfile*, *.dockerfile, *.yaml and *.yml (other
hidden directories and __pycache__ skipped). With `-` (and --stdin-filename
NAME), the text comes from standard input.

Output (text): file:line:col: CODE [*] message   ([*]: a fix --fix applies)
A notebook's: file: cell N, line L, column C: CODE [*] message (cells from 1);
its code cells are read in order as one script, IPython lines blanked, and
--fix rewrites only the source of the cells it changes.

Exit status: 0 nothing found, 1 something found (with --fix: something left
unfixed; with --diff: a fix to show), 2 usage or input error (also when
every file named was of a kind oomlens does not read: nothing was checked).)";

struct Options {
  bool fix = false;
  bool unsafe = false;
  bool diff = false;
  std::string format = "text";
  std::vector<std::string> paths;
  std::string stdin_name;  // --stdin-filename
};

// Hidden directories are skipped, except .vscode (launch configurations).
bool skip_dir(const fs::path& p) {
  auto name = p.filename().string();
  return (name.size() > 1 && name[0] == '.' && name != ".vscode") || name == "__pycache__";
}

bool lintable(const fs::path& p) { return rules::lint_file_kind_by_name(p.string()).kind != rules::LintKind::other; }

struct PathToLint {
  std::string path;
  bool named = false;  // on the command line (its kind may come from its content)
  std::optional<ProjectMember> member;  // found under a named directory: its project
};

struct PathsToLint {
  std::vector<PathToLint> files;
  std::vector<std::string> roots;  // the directories named: one project each
};

// Every file to lint, or nothing with the reason printed.
std::optional<PathsToLint> expand_paths(const std::vector<std::string>& paths) {
  PathsToLint out;
  auto& files = out.files;
  for (const auto& p : paths) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      // The real reason (a symlink loop, a denied directory), else "No such file".
      std::string why = ec && ec.value() != ENOENT ? ec.message() : std::strerror(ENOENT);
      std::cerr << "oomlens lint: error: " << p << ": " << why << "\n";
      return std::nullopt;
    }
    if (!fs::is_directory(st)) {
      files.push_back({p, true, std::nullopt});
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec)) {
        if (skip_dir(it->path())) it.disable_recursion_pending();
        continue;
      }
      if (lintable(it->path()) && it->is_regular_file(ec)) found.push_back(it->path().string());
    }
    if (ec) {
      std::cerr << "oomlens lint: error: " << p << ": " << ec.message() << "\n";
      return std::nullopt;
    }
    std::sort(found.begin(), found.end());
    for (auto& f : found) {
      ProjectMember member{out.roots.size(), fs::path(f).lexically_relative(p).generic_string()};
      files.push_back({std::move(f), false, std::move(member)});
    }
    out.roots.push_back(p);
  }
  return out;
}

// One diagnostic as lint prints it, a line: "path:line:col: CODE message", a
// notebook's place spelled out by cell (counted from 1, as a notebook shows
// them); " [*] " after the code when a fix would apply.
void print_diagnostic(std::ostream& out, const std::string& path, const rules::Diagnosis& d,
                      std::optional<std::size_t> cell, bool fixable) {
  if (cell)
    out << path << ": cell " << *cell + 1 << ", line " << d.location.line << ", column "
        << d.location.source->start.column << ": ";
  else
    out << path << ":" << d.location.line << ":" << d.location.source->start.column << ": ";
  out << d.code << (fixable ? " [*] " : " ") << d.message << "\n";
}

// The diagnostics of one file's text (syntax errors of a script as E999).
// In a project, what its imports do in the project's other files counts too;
// `parsed` is the text's script when it was parsed already.
std::vector<rules::Diagnosis> lint_text(const rules::LintFileKind& kind, std::string_view text,
                                        const rules::source::ProjectContext& project,
                                        std::optional<analyzer::python::Script> parsed = std::nullopt) {
  if (kind.config) return rules::lint_config_file(*kind.config, text);
  auto script = parsed ? std::move(*parsed) : analyzer::python::parse_script(text);
  auto diags = rules::lint_script(script, project);
  for (const auto& e : script.syntax_errors()) {
    rules::Diagnosis d;
    d.location = rules::source_location(e.range, e.start);
    d.code = "E999";
    d.name = "syntax-error";
    d.severity = rules::Severity::error;
    d.message = "SyntaxError: " + e.message;
    diags.push_back(std::move(d));
  }
  rules::sort_in_source_order(diags);
  return diags;
}

// A notebook's code cells as one script, and its diagnostics.
struct NotebookLint {
  analyzer::notebook::Notebook notebook;
  analyzer::notebook::Script script;
  std::vector<rules::Diagnosis> diagnostics;
};
NotebookLint lint_notebook(std::string_view text, const rules::source::ProjectContext& project) {
  NotebookLint n;
  n.notebook = analyzer::notebook::parse(text);
  n.script = analyzer::notebook::code_script(n.notebook);
  n.diagnostics = lint_text({rules::LintKind::python, std::nullopt}, n.script.text, project);
  return n;
}

// Script positions to cell positions: the line in the cell, byte offsets in
// the cell's source; the cell's index goes beside each diagnostic.
std::vector<std::size_t> to_cells(NotebookLint& n) {
  std::vector<std::size_t> cells;
  for (auto& d : n.diagnostics) {
    auto& source = *d.location.source;
    const auto* span = n.script.span_at(source.range.begin);
    if (!span) {
      cells.push_back(0);
      continue;
    }
    cells.push_back(span->cell);
    source.start.line -= span->first_line - 1;
    d.location.line = d.location.end_line = source.start.line;
    d.message = report::cell_lines_in_message(d.message, n.script);
    auto shift = [&](std::size_t& at) { at = at >= span->begin ? at - span->begin : 0; };
    std::size_t b = source.range.begin, e = source.range.end;
    shift(b), shift(e);
    source.range = {static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e)};
    for (auto& fix : d.fixes)
      for (auto& edit : fix.edits) shift(edit.begin), shift(edit.end);
  }
  return cells;
}

// A linted script or configuration file: its diagnostics in source order,
// a syntax error as code E999 (with no fix).
struct LintedFile {
  std::string path;
  std::vector<rules::Diagnosis> diagnostics;
  // A notebook's: the cell of each diagnostic (index in the notebook's cells,
  // from 0), whose positions are then in that cell. Empty for other files.
  std::vector<std::size_t> cells;
  std::string diff;  // with --diff: what the fixes change

  std::optional<std::size_t> cell(std::size_t i) const { return cells.empty() ? std::nullopt : std::optional(cells[i]); }
};

// One run of `oomlens lint` over its files. A project's scripts are linted
// in import order (a file after those it imports, each parsed once); the
// results are kept by file and written in the order the files were named.
class LintRun {
 public:
  LintRun(const Options& o, PathsToLint paths)
      : o_(o), files_(std::move(paths.files)), results_(files_.size()), done_(files_.size(), false) {
    std::vector<std::optional<ProjectMember>> members;
    for (const auto& f : files_) members.push_back(f.member);
    projects_ = lint_projects(paths.roots, members);
  }

  // Lints every file; an exit status when the run stops early.
  std::optional<int> run() {
    for (std::size_t i = 0; i < files_.size(); ++i) {
      if (done_[i]) continue;
      if (const auto& m = files_[i].member; m && m->relative.ends_with(".py")) {
        std::optional<int> stop;
        LintProject& project = projects_[m->project];
        project.project->visit_in_import_order(
            m->relative, [&](const std::string& relative, std::string text, analyzer::python::Script script) {
              auto j = project.file_index.find(relative);
              if (j == project.file_index.end() || done_[j->second]) return true;
              stop = lint_file(j->second, std::move(text), std::move(script));
              return !stop;
            });
        if (stop) return stop;
      }
      if (!done_[i])  // not read in import order: named alone, not a script, or not readable
        if (auto stop = lint_file(i, std::nullopt, std::nullopt)) return stop;
    }
    return std::nullopt;
  }

  std::vector<LintedFile> linted() {
    std::vector<LintedFile> out;
    for (auto& r : results_)
      if (r) out.push_back(std::move(*r));
    return out;
  }

  std::size_t fixed = 0, fixable = 0, hidden_unsafe = 0, skipped = 0;
  bool changes = false;

 private:
  const rules::source::ProjectContext& context_of(std::size_t i) {
    const auto& m = files_[i].member;
    if (!m) return rules::source::no_project();
    auto& context = contexts_[i];
    if (!context) context = projects_[m->project].project->context_for(m->relative);
    return *context;
  }

  // One file: its text read here unless given (with its script when parsed).
  std::optional<int> lint_file(std::size_t i, std::optional<std::string> given,
                               std::optional<analyzer::python::Script> parsed) {
    done_[i] = true;
    const auto& [file, named, member] = files_[i];
    bool from_stdin = o_.paths.front() == "-";
    report::FileError error;
    auto read = given ? std::move(given) : report::read_file(from_stdin ? "-" : file, error, /*dash_is_stdin=*/true);
    if (!read) {
      std::cerr << "oomlens lint: error: " << file << ": " << error.reason << "\n";
      return kExitUsage;
    }
    const std::string& source = *read;
    // Standard input without a name is a script, as it always was.
    auto kind = file == "-" ? rules::LintFileKind{rules::LintKind::python, std::nullopt}
                : named     ? rules::lint_file_kind(file, source)
                            : rules::lint_file_kind_by_name(file);
    if (kind.kind == rules::LintKind::other) {
      std::cerr << "oomlens lint: note: " << file << ": not checked: not a kind of file oomlens reads; it reads "
                << rules::kReadableKinds << "\n";
      if (from_stdin && o_.fix) std::cout << source;  // the text back unchanged, as for a clean file
      ++skipped;
      return std::nullopt;
    }
    const auto& project = context_of(i);
    // A notebook is linted as the script of its code cells; fixes go back
    // into the cells they fall in (report/notebook_edit.hpp).
    bool notebook = kind.kind == rules::LintKind::notebook;
    NotebookLint cells;
    auto check = [&](std::string_view text) {
      if (!notebook) return lint_text(kind, text, project, std::exchange(parsed, std::nullopt));
      cells = lint_notebook(text, project);
      return cells.diagnostics;
    };
    auto apply = [&](std::string_view text, const std::vector<rules::TextEdit>& edits) {
      return notebook ? report::apply_notebook_edits(text, cells.notebook, cells.script, edits)
                      : rules::apply_edits(text, edits);
    };
    auto diags = check(source);
    if (notebook && !cells.notebook.valid) {
      std::cerr << "oomlens lint: error: " << file
                << ": not a Jupyter notebook (a JSON object with a \"cells\" list)\n";
      return kExitUsage;
    }
    LintedFile& out = results_[i].emplace();
    out.path = file;
    if (o_.fix || o_.diff) {
      // Fixes that overlap wait for the next pass, as in ruff; a few passes
      // settle every real file.
      std::string current = source;
      for (int pass = 0; pass < 8; ++pass) {
        auto edits = rules::fix_edits(diags, o_.unsafe);
        if (edits.empty()) break;
        std::size_t before = diags.size();
        std::string next = apply(current, edits);
        if (next == current) break;  // only edits a notebook's cells cannot take
        current = std::move(next);
        diags = check(current);
        fixed += before > diags.size() ? before - diags.size() : 0;
      }
      if (from_stdin && o_.fix) {
        // As ruff: the fixed text on standard output, the diagnostics left on standard error.
        std::cout << current;
        for (const auto& d : diags) print_diagnostic(std::cerr, file, d, std::nullopt, false);
        return diags.empty() ? kExitClean : kExitFound;
      }
      if (current != source) {
        changes = true;
        if (o_.diff) {
          out.diff = rules::unified_diff(file, source, rules::line_edits(source, current));
          return std::nullopt;
        }
        std::ofstream written(file, std::ios::binary | std::ios::trunc);
        written << current;
        if (!written) {
          std::cerr << "oomlens lint: error: " << file << ": cannot write: " << std::strerror(errno) << "\n";
          return kExitUsage;
        }
      }
      if (o_.diff) return std::nullopt;
    }
    for (const auto& d : diags) {
      if (report::fix_applies(d, o_.unsafe)) ++fixable;
      else if (report::fix_applies(d, true)) ++hidden_unsafe;
    }
    if (notebook) {
      out.cells = to_cells(cells);
      out.diagnostics = std::move(cells.diagnostics);
    } else {
      out.diagnostics = std::move(diags);
    }
    return std::nullopt;
  }

  const Options& o_;
  std::vector<PathToLint> files_;
  std::vector<LintProject> projects_;
  std::vector<std::optional<LintedFile>> results_;
  std::vector<bool> done_;
  std::unordered_map<std::size_t, std::unique_ptr<rules::source::ProjectContext>> contexts_;
};

int lint(Options o) {
  if (o.fix && o.diff) o.fix = false;  // as ruff: --diff shows and writes nothing
  bool from_stdin = o.paths.front() == "-";
  std::optional<PathsToLint> paths;
  if (from_stdin) paths = PathsToLint{{{o.stdin_name.empty() ? "-" : o.stdin_name, true, std::nullopt}}, {}};
  else paths = expand_paths(o.paths);
  if (!paths) return kExitUsage;
  std::size_t count = paths->files.size();
  LintRun run(o, std::move(*paths));
  if (auto stop = run.run()) return *stop;
  auto linted = run.linted();
  const std::size_t fixed = run.fixed, fixable = run.fixable, hidden_unsafe = run.hidden_unsafe;
  if (run.skipped > 0 && run.skipped == count) return kExitUsage;  // nothing was checked
  if (o.diff) {
    for (const auto& f : linted) std::cout << f.diff;
    return run.changes ? kExitFound : kExitClean;
  }

  std::size_t reported = 0;
  for (const auto& f : linted) reported += f.diagnostics.size();
  if (o.format == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& f : linted)
      for (std::size_t i = 0; i < f.diagnostics.size(); ++i) {
        auto j = report::diagnosis_json(f.diagnostics[i], f.path, report::DiagnosisContract::lint);
        j["fix"] = report::automatic_fix_json(f.diagnostics[i], o.unsafe);
        if (auto cell = f.cell(i)) j["cell_index"] = *cell;
        all.push_back(std::move(j));
      }
    std::cout << report::json_text(nlohmann::json{{"diagnostics", all}}, 2)
              << "\n";
  } else if (o.format == "sarif") {
    std::vector<report::SarifResult> results;
    for (const auto& f : linted)
      for (std::size_t i = 0; i < f.diagnostics.size(); ++i) results.push_back({&f.diagnostics[i], f.path, f.cell(i)});
    std::cout << report::json_text(report::sarif_json(results, true), 2) << "\n";
  } else {
    for (const auto& f : linted)
      for (std::size_t i = 0; i < f.diagnostics.size(); ++i) {
        const auto& d = f.diagnostics[i];
        print_diagnostic(std::cout, f.path, d, f.cell(i), report::fix_applies(d, o.unsafe));
      }
    // The summary goes to stderr: stdout stays one diagnostic per line.
    if (reported > 0 || fixed > 0) {
      std::cerr << "Found " << (reported + fixed) << " diagnostic(s)";
      if (o.fix) std::cerr << " (" << fixed << " fixed, " << reported << " remaining)";
      std::cerr << ".\n";
      if (fixable > 0) std::cerr << "[*] " << fixable << " fixable with the --fix option";
      if (hidden_unsafe > 0)
        std::cerr << (fixable > 0 ? " (" : "") << hidden_unsafe
                  << " hidden fix(es) can be enabled with the --unsafe-fixes option" << (fixable > 0 ? ")" : "");
      if (fixable > 0 || hidden_unsafe > 0) std::cerr << ".\n";
    }
  }
  return reported > 0 ? kExitFound : kExitClean;
}

}  // namespace

void add_lint(CLI::App& app, Action& action) {
  auto o = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "lint", "Check Python training scripts (e.g. empty_cache in a loop) and fix them");
  command->add_option("PATH", o->paths, "Scripts and configuration files, or directories of them; '-' standard input")
      ->required()
      ->type_name("");
  command->add_flag("--fix", o->fix, "Apply safe fixes in place");
  command->add_flag("--unsafe-fixes", o->unsafe,
                    "Also apply (with --fix) or show (with --diff) fixes that may change behaviour");
  command->add_flag("--diff", o->diff, "Print the fixes as a unified diff; write nothing");
  add_format_option(*command, o->format, {"text", "json", "sarif"}, "Output format [default: text]");
  command->add_option("--stdin-filename", o->stdin_name,
                      "With `-`: the name of the text read from standard input (in messages, and to tell a script "
                      "from a shell script or launch.json); with --fix the fixed text goes to standard output")
      ->type_name("NAME");
  command->footer(kAbout);
  command->callback([o, &action] {
    const auto& paths = o->paths;
    if (paths.size() > 1 && std::find(paths.begin(), paths.end(), "-") != paths.end())
      throw CLI::ValidationError("PATH", "`-` (standard input) cannot be mixed with other paths");
    action = [o] { return lint(*o); };
  });
}

}  // namespace oomlens::cli
