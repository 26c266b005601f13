// A project: the Python files under one root (the directory `oomlens lint`
// is given, the editor's workspace folder), read through the front end, and
// the facts of each file (rules/source/module_facts.hpp), parsed once and
// kept. It answers the source rules' questions about a script's imports
// (rules/source/project_context.hpp) from those facts, following imports
// transitively; an import cycle is cut where it closes (Python hands the
// importer the partly run module).
//
// Safe from several threads: the editor's analyses and its edits share one.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analyzer/python/script.hpp"
#include "rules/source/module_facts.hpp"
#include "rules/source/project_context.hpp"

namespace oomlens::rules::source {

// How a front end reaches the project's files; paths are relative to the
// root, with '/' ("pkg/__init__.py").
class ProjectFiles {
 public:
  virtual ~ProjectFiles() = default;
  virtual bool exists(std::string_view relative) const = 0;
  // The file's text; nothing when it cannot be read.
  virtual std::optional<std::string> read(const std::string& relative) const = 0;
  // Where the front end names the file in related places.
  virtual std::string path(const std::string& relative) const = 0;
};

class Project {
 public:
  explicit Project(std::unique_ptr<ProjectFiles> files);
  Project(const Project&) = delete;
  Project& operator=(const Project&) = delete;
  ~Project();

  // The questions of the script at `relative`; lives as long as the project.
  std::unique_ptr<ProjectContext> context_for(std::string relative);

  // Reads and parses `relative` and, first, every project file it imports
  // (transitively) not read yet; calls `visit` with each one's text and
  // script, a file after those it imports, so that each is parsed once and
  // linted with its imports' facts at hand. Nothing for a file read before,
  // nor for one read past a bound on the scripts held at once (a chain of
  // hundreds of imports): those are left to the caller. `visit` returns
  // false to stop.
  using Visit = std::function<bool(const std::string& relative, std::string text, analyzer::python::Script script)>;
  void visit_in_import_order(const std::string& relative, const Visit& visit);

  // Takes a file's facts from the script the front end analysed (the
  // editor's text): forgets what its earlier text said.
  void keep_facts(const std::string& relative, const analyzer::python::Script& script);
  // Forgets what a file said (it changed): read again when next asked.
  // What it imported still counts for imports() until then. Never waits
  // for an analysis under way (the editor's thread calls it on each edit).
  void forget(const std::string& relative);
  // Forgets what every file said: which files exist changed (one was
  // created or deleted), and with it what any import resolves to.
  void forget_all();
  // Whether `importer`'s imports reach `file`, through the facts kept.
  // Never waits for an analysis under way either.
  bool imports(const std::string& importer, const std::string& file) const;

 private:
  class ScriptContext;
  const ModuleFacts& facts(const std::string& relative);
  ModuleFacts facts_of(const std::string& relative, const analyzer::python::Script& script) const;
  std::optional<ImportedCudaStart> cuda_start(const analyzer::python::Import& import, const std::string& importer);
  std::optional<ImportedCudaStart> cuda_start_of(const std::string& file, std::unordered_set<std::string>& visiting);
  std::optional<ImportedFlush> flush_through(const analyzer::python::Call& call, const std::string& importer);
  std::optional<ImportedCudaStart> cuda_start_through(const analyzer::python::Call& call, const std::string& importer);
  // The project function a call in `importer` runs, when it is in another file.
  std::optional<analyzer::python::ProjectFunction> callee_in_project(const analyzer::python::Call& call,
                                                                      const std::string& importer);
  // What calling a project function leads to, as `own` finds it in one
  // function's facts: that function's own, else the first of the project
  // functions it calls, else what the name re-exports.
  template <class Found, class Own>
  std::optional<Found> follow(const analyzer::python::ProjectFunction& function,
                              std::unordered_map<std::string, std::optional<Found>>& known, const Own& own,
                              std::unordered_set<std::string>& visiting);
  template <class Found, class Own>
  std::optional<Found> follow_further(const analyzer::python::ProjectFunction& function, const ModuleFacts& facts,
                                      std::unordered_map<std::string, std::optional<Found>>& known, const Own& own,
                                      std::unordered_set<std::string>& visiting);
  ProjectPlace place(const std::string& file, SourcePlace where) const;
  void apply_forgotten();  // under mutex_
  const ModuleFacts& store(const std::string& relative, ModuleFacts facts);  // under mutex_

  std::unique_ptr<ProjectFiles> files_;
  analyzer::python::ProjectFileExists exists_;
  mutable std::recursive_mutex mutex_;
  std::unordered_map<std::string, ModuleFacts> facts_;
  std::unordered_set<std::string> stale_;  // forgotten: read again on the next ask
  // What each file imports, as its facts say, under a lock of its own.
  mutable std::mutex edges_mutex_;
  std::unordered_map<std::string, std::vector<std::string>> imports_;
  // Files forgotten since the last question, applied by the next one.
  std::mutex forgotten_mutex_;
  std::vector<std::string> forgotten_;
  bool forgotten_all_ = false;
  // Conclusions drawn across files; cleared when any file's facts change.
  std::unordered_map<std::string, std::optional<ImportedCudaStart>> cuda_starts_;
  std::unordered_map<std::string, std::optional<ImportedFlush>> flushes_;
  std::unordered_map<std::string, std::optional<ImportedCudaStart>> function_cuda_starts_;  // by "file:function"
  // What a qualified name in a file stands for (by "file\nname"): it
  // depends on which files exist, not on their text.
  std::unordered_map<std::string, std::optional<analyzer::python::ProjectFunction>> functions_;
};

}  // namespace oomlens::rules::source
