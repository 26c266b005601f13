// `oomlens lint [--fix] [--diff] [--format text|json] PATH...`, after ruff:
// `file:line:col: CODE message`; exit 0 clean, 1 found, 2 usage/input error.
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
#include "rules/source/lint.hpp"

namespace oomlens::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLintHelp = R"(Usage: oomlens lint [OPTIONS] PATH...

Checks Python training scripts for patterns that waste or misuse GPU memory
(rules OOM3xx; `oomlens explain CODE` shows a rule's page). Directories are
walked for *.py files (hidden directories and __pycache__ skipped).

Options:
  --fix                 Apply safe fixes in place
  --diff                Print the fixes as a unified diff; write nothing
  --format text|json    Output format (default: text)
  -h, --help            Print help

Output (text): file:line:col: CODE message

Exit status: 0 nothing found, 1 something found (with --fix: something left
unfixed; with --diff: a fix to show), 2 usage or input error.
)";

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
  out = ss.str();
  return true;
}

bool skip_dir(const fs::path& p) {
  auto name = p.filename().string();
  return (name.size() > 1 && name[0] == '.') || name == "__pycache__";
}

const char* severity_name(rules::Severity s) { return rules::to_string(s); }

}  // namespace

int lint_command(const Args& args) {
  bool fix = false, diff = false;
  std::string format = "text";
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kLintHelp;
      return kExitClean;
    } else if (a == "--fix") {
      fix = true;
    } else if (a == "--diff") {
      diff = true;
    } else if (a == "--format" || a.rfind("--format=", 0) == 0) {
      if (a == "--format") {
        if (i + 1 >= args.size()) {
          std::cerr << "oomlens lint: error: --format needs a value (text or json)\n";
          return kExitUsage;
        }
        format = args[++i];
      } else {
        format = a.substr(9);
      }
      if (format != "text" && format != "json") {
        std::cerr << "oomlens lint: error: unknown format '" << format << "' (expected text or json)\n";
        return kExitUsage;
      }
    } else if (a == "--") {
      paths.insert(paths.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else if (a.size() > 1 && a[0] == '-') {
      std::cerr << "oomlens lint: error: unknown option '" << a << "'\n\n" << kLintHelp;
      return kExitUsage;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty()) {
    std::cerr << "oomlens lint: error: no PATH given\n\n" << kLintHelp;
    return kExitUsage;
  }
  if (fix && diff) fix = false;  // as ruff: --diff shows and writes nothing

  // Expand directories; every named path must exist.
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      std::cerr << "oomlens lint: error: " << p << ": " << std::strerror(ENOENT) << "\n";
      return kExitUsage;
    }
    if (fs::is_directory(st)) {
      std::vector<std::string> found;
      fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec)) {
          if (skip_dir(it->path())) it.disable_recursion_pending();
          continue;
        }
        if (it->path().extension() == ".py" && it->is_regular_file(ec)) found.push_back(it->path().string());
      }
      if (ec) {
        std::cerr << "oomlens lint: error: " << p << ": " << ec.message() << "\n";
        return kExitUsage;
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }

  nlohmann::json jdiags = nlohmann::json::array();
  std::size_t reported = 0, fixed = 0;
  bool changes = false;
  for (const auto& file : files) {
    std::string source, error;
    if (!read_file(file, source, error)) {
      std::cerr << "oomlens lint: error: " << file << ": " << error << "\n";
      return kExitUsage;
    }
    auto script = analyzer::python::parse_script(source);
    auto diags = rules::lint_script(script);
    if (fix || diff) {
      auto edits = rules::fix_edits(diags);
      if (!edits.empty()) {
        changes = true;
        if (diff) {
          std::cout << rules::unified_diff(file, source, edits);
          continue;
        }
        std::string fixed_source = rules::apply_edits(source, edits);
        {
          std::ofstream outf(file, std::ios::binary | std::ios::trunc);
          outf << fixed_source;
          if (!outf) {
            std::cerr << "oomlens lint: error: " << file << ": cannot write: " << std::strerror(errno) << "\n";
            return kExitUsage;
          }
        }
        std::size_t before = diags.size();
        script = analyzer::python::parse_script(fixed_source);
        diags = rules::lint_script(script);
        fixed += before > diags.size() ? before - diags.size() : 0;
      }
      if (diff) continue;
    }
    for (const auto& e : script.syntax_errors()) {
      ++reported;
      if (format == "json") {
        jdiags.push_back({{"file", file}, {"line", e.start.line}, {"column", e.start.column}, {"code", "E999"},
                          {"name", "syntax-error"}, {"message", "SyntaxError: " + e.message}, {"severity", "error"},
                          {"fix", nullptr}});
      } else {
        std::cout << file << ":" << e.start.line << ":" << e.start.column << ": E999 SyntaxError: " << e.message << "\n";
      }
    }
    for (const auto& d : diags) {
      ++reported;
      if (format == "json") {
        nlohmann::json jfix = nullptr;
        if (d.fix_safety) {
          nlohmann::json edits = nlohmann::json::array();
          for (const auto& e : d.edits)
            edits.push_back({{"begin", e.begin}, {"end", e.end}, {"replacement", e.replacement}});
          jfix = {{"safety", rules::to_string(*d.fix_safety)}, {"edits", edits}};
        }
        jdiags.push_back({{"file", file}, {"line", d.start.line}, {"column", d.start.column},
                          {"code", d.diagnosis.code}, {"name", d.diagnosis.name}, {"message", d.diagnosis.message},
                          {"severity", severity_name(d.diagnosis.severity)}, {"fix", jfix}});
      } else {
        std::cout << file << ":" << d.start.line << ":" << d.start.column << ": " << d.diagnosis.code << " "
                  << d.diagnosis.message << "\n";
      }
    }
  }
  if (diff) return changes ? kExitFound : kExitClean;
  if (format == "json") {
    nlohmann::json j = {{"diagnostics", jdiags}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else if (fix && (fixed > 0 || reported > 0)) {
    std::cerr << "Found " << (fixed + reported) << " diagnostic(s) (" << fixed << " fixed, " << reported
              << " remaining).\n";
  }
  return reported > 0 ? kExitFound : kExitClean;
}

}  // namespace oomlens::cli
