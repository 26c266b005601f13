// `oomlens lint [--fix] [--unsafe-fixes] [--diff] [--format text|json|sarif]
// PATH...`, after ruff: `file:line:col: CODE [*] message`; exit 0 clean, 1
// found, 2 usage/input error.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer/python/script.hpp"
#include "cli/commands.hpp"
#include "cli/report.hpp"
#include "rules/source/config_lint.hpp"
#include "rules/source/lint.hpp"

namespace oomlens::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLintHelp = R"(Usage: oomlens lint [OPTIONS] PATH...
       oomlens lint [OPTIONS] --stdin-filename NAME -

Checks Python training scripts, and the shell scripts, .env files and
.vscode/launch.json that set PYTORCH_CUDA_ALLOC_CONF, for patterns that waste
or misuse GPU memory (rules OOM3xx; `oomlens explain CODE` shows a rule's
page). Directories are walked for *.py, *.sh, *.bash, .env, *.env and
.vscode/launch.json (other hidden directories and __pycache__ skipped).

Options:
  --fix                     Apply safe fixes in place
  --unsafe-fixes            Also apply (with --fix) or show (with --diff) fixes
                            that may change behaviour
  --diff                    Print the fixes as a unified diff; write nothing
  --format text|json|sarif  Output format (default: text)
  --stdin-filename NAME     With `-`: the name of the text read from standard
                            input (in messages, and to tell a script from a
                            shell script or launch.json); with --fix the
                            fixed text goes to standard output
  -h, --help                Print help

Output (text): file:line:col: CODE [*] message   ([*]: a fix --fix applies)

Exit status: 0 nothing found, 1 something found (with --fix: something left
unfixed; with --diff: a fix to show), 2 usage or input error.
)";

struct Options {
  bool fix = false;
  bool unsafe = false;
  bool diff = false;
  std::string format = "text";
  std::vector<std::string> paths;
  std::string stdin_name;  // --stdin-filename
};

bool read_file(const std::string& path, std::string& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = std::strerror(errno);
    return false;
  }
  out = std::move(ss).str();
  return true;
}

// Hidden directories are skipped, except .vscode (launch configurations).
bool skip_dir(const fs::path& p) {
  auto name = p.filename().string();
  return (name.size() > 1 && name[0] == '.' && name != ".vscode") || name == "__pycache__";
}

bool lintable(const fs::path& p) { return p.extension() == ".py" || rules::config_file_kind(p.string()); }

// Every file to lint, or nothing with the reason printed.
std::optional<std::vector<std::string>> expand_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
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
      files.push_back(p);  // named explicitly: linted whatever its name
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
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// The diagnostics of one file's text (syntax errors of a script as E999).
std::vector<rules::SourceDiagnostic> lint_text(const std::string& path, std::string_view text) {
  if (auto kind = rules::config_file_kind(path)) return rules::lint_config_file(*kind, text);
  auto script = analyzer::python::parse_script(text);
  auto diags = rules::lint_script(script);
  for (const auto& e : script.syntax_errors()) {
    rules::SourceDiagnostic d;
    d.range = e.range;
    d.start = e.start;
    d.diagnosis.code = "E999";
    d.diagnosis.name = "syntax-error";
    d.diagnosis.severity = rules::Severity::error;
    d.diagnosis.message = "SyntaxError: " + e.message;
    diags.push_back(std::move(d));
  }
  std::stable_sort(diags.begin(), diags.end(), [](const auto& a, const auto& b) { return a.range.begin < b.range.begin; });
  return diags;
}

bool applicable(const rules::SourceDiagnostic& d, bool unsafe) {
  return d.fix_safety && !d.edits.empty() &&
         (*d.fix_safety == rules::FixSafety::safe || (unsafe && *d.fix_safety == rules::FixSafety::unsafe));
}

nlohmann::json diagnostic_json(const std::string& file, const rules::SourceDiagnostic& d, bool unsafe) {
  nlohmann::json fix = nullptr;
  if (d.fix_safety) {
    nlohmann::json edits = nlohmann::json::array();
    for (const auto& e : d.edits) edits.push_back({{"begin", e.begin}, {"end", e.end}, {"replacement", e.replacement}});
    fix = {{"safety", rules::to_string(*d.fix_safety)},
           {"title", d.diagnosis.fixes.empty() ? std::string() : d.diagnosis.fixes.front().title},
           {"applicable", applicable(d, unsafe)},
           {"edits", edits}};
  }
  return {{"file", file},  {"line", d.start.line}, {"column", d.start.column}, {"code", d.diagnosis.code},
          {"name", d.diagnosis.name}, {"message", d.diagnosis.message},
          {"severity", rules::to_string(d.diagnosis.severity)}, {"fix", fix}};
}

// Parses the arguments; an exit status when they are wrong (or help was asked).
std::optional<int> parse_options(const Args& args, Options& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kLintHelp;
      return kExitClean;
    } else if (a == "--fix") {
      o.fix = true;
    } else if (a == "--unsafe-fixes") {
      o.unsafe = true;
    } else if (a == "--diff") {
      o.diff = true;
    } else if (a == "--format" || a.rfind("--format=", 0) == 0) {
      if (a == "--format" && i + 1 >= args.size()) {
        std::cerr << "oomlens lint: error: --format needs a value (text, json or sarif)\n";
        return kExitUsage;
      }
      o.format = a == "--format" ? args[++i] : a.substr(9);
      if (o.format != "text" && o.format != "json" && o.format != "sarif") {
        std::cerr << "oomlens lint: error: unknown format '" << o.format << "' (expected text, json or sarif)\n";
        return kExitUsage;
      }
    } else if (a == "--stdin-filename" || a.rfind("--stdin-filename=", 0) == 0) {
      if (a == "--stdin-filename" && i + 1 >= args.size()) {
        std::cerr << "oomlens lint: error: --stdin-filename needs a value\n";
        return kExitUsage;
      }
      o.stdin_name = a == "--stdin-filename" ? args[++i] : a.substr(17);
    } else if (a == "-") {
      o.paths.push_back(a);
    } else if (a == "--") {
      o.paths.insert(o.paths.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else if (a.size() > 1 && a[0] == '-') {
      std::cerr << "oomlens lint: error: unknown option '" << a << "'\n\n" << kLintHelp;
      return kExitUsage;
    } else {
      o.paths.push_back(a);
    }
  }
  if (o.paths.empty()) {
    std::cerr << "oomlens lint: error: no PATH given\n\n" << kLintHelp;
    return kExitUsage;
  }
  if (o.fix && o.diff) o.fix = false;  // as ruff: --diff shows and writes nothing
  bool reads_stdin = std::find(o.paths.begin(), o.paths.end(), "-") != o.paths.end();
  if (reads_stdin && o.paths.size() > 1) {
    std::cerr << "oomlens lint: error: `-` (standard input) cannot be mixed with other paths\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace

int lint_command(const Args& args) {
  Options o;
  if (auto status = parse_options(args, o)) return *status;
  bool from_stdin = o.paths.front() == "-";
  auto files = from_stdin ? std::optional<std::vector<std::string>>{{o.stdin_name.empty() ? "-" : o.stdin_name}}
                          : expand_paths(o.paths);
  if (!files) return kExitUsage;

  std::vector<LintedFile> linted;
  std::size_t fixed = 0, fixable = 0, hidden_unsafe = 0;
  bool changes = false;
  for (const auto& file : *files) {
    std::string source, error;
    if (from_stdin) {
      std::ostringstream in;
      in << std::cin.rdbuf();
      source = std::move(in).str();
    } else if (!read_file(file, source, error)) {
      std::cerr << "oomlens lint: error: " << file << ": " << error << "\n";
      return kExitUsage;
    }
    auto diags = lint_text(file, source);
    if (o.fix || o.diff) {
      // Fixes that overlap wait for the next pass, as in ruff; a few passes
      // settle every real file.
      std::string current = source;
      for (int pass = 0; pass < 8; ++pass) {
        auto edits = rules::fix_edits(diags, o.unsafe);
        if (edits.empty()) break;
        std::size_t before = diags.size();
        current = rules::apply_edits(current, edits);
        diags = lint_text(file, current);
        fixed += before > diags.size() ? before - diags.size() : 0;
      }
      if (from_stdin && o.fix) {
        // As ruff: the fixed text on standard output, the diagnostics left on standard error.
        std::cout << current;
        for (const auto& d : diags)
          std::cerr << file << ":" << d.start.line << ":" << d.start.column << ": " << d.diagnosis.code << " "
                    << d.diagnosis.message << "\n";
        return diags.empty() ? kExitClean : kExitFound;
      }
      if (current != source) {
        changes = true;
        if (o.diff) {
          std::cout << rules::unified_diff(file, source, rules::line_edits(source, current));
          continue;
        }
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << current;
        if (!out) {
          std::cerr << "oomlens lint: error: " << file << ": cannot write: " << std::strerror(errno) << "\n";
          return kExitUsage;
        }
      }
      if (o.diff) continue;
    }
    for (const auto& d : diags) {
      if (applicable(d, o.unsafe)) ++fixable;
      else if (applicable(d, true)) ++hidden_unsafe;
    }
    linted.push_back({file, std::move(diags)});
  }
  if (o.diff) return changes ? kExitFound : kExitClean;

  std::size_t reported = 0;
  for (const auto& f : linted) reported += f.diagnostics.size();
  if (o.format == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& f : linted)
      for (const auto& d : f.diagnostics) all.push_back(diagnostic_json(f.path, d, o.unsafe));
    std::cout << nlohmann::json{{"diagnostics", all}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else if (o.format == "sarif") {
    std::cout << lint_sarif(linted).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    for (const auto& f : linted)
      for (const auto& d : f.diagnostics)
        std::cout << f.path << ":" << d.start.line << ":" << d.start.column << ": " << d.diagnosis.code
                  << (applicable(d, o.unsafe) ? " [*] " : " ") << d.diagnosis.message << "\n";
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

}  // namespace oomlens::cli
