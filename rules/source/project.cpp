#include "rules/source/project.hpp"

#include <algorithm>

namespace oomlens::rules::source {

using analyzer::python::Call;
using analyzer::python::Import;
using analyzer::python::ProjectFunction;
using analyzer::python::Script;

namespace {

class NoProject final : public ProjectContext {
 public:
  std::optional<ImportedCudaStart> cuda_start(const Import&) const override { return std::nullopt; }
  std::optional<ImportedCudaStart> cuda_start_through(const Call&) const override { return std::nullopt; }
  std::optional<ImportedFlush> flush_through(const Call&) const override { return std::nullopt; }
};

// Bounds the work of one question: the imports walked for a CUDA start, the
// functions (helpers calling helpers, re-exports) followed for a flush, one
// level of recursion each. Far beyond real code; cuts pathological input.
constexpr std::size_t kMaxFollowed = 100000;
constexpr std::size_t kMaxFunctionsFollowed = 256;
// How many parsed scripts an import-order walk holds at once (the chain of
// imports being opened). Real import chains are far shorter; past it, a
// file's facts are read without keeping its script (it is parsed again when
// linted), so memory stays bounded whatever the import graph.
constexpr std::size_t kMaxOpenScripts = 256;

}  // namespace

const ProjectContext& no_project() {
  static const NoProject none;
  return none;
}

class Project::ScriptContext final : public ProjectContext {
 public:
  ScriptContext(Project& project, std::string relative) : project_(project), relative_(std::move(relative)) {}
  std::optional<ImportedCudaStart> cuda_start(const Import& import) const override {
    return project_.cuda_start(import, relative_);
  }
  std::optional<ImportedCudaStart> cuda_start_through(const Call& call) const override {
    return project_.cuda_start_through(call, relative_);
  }
  std::optional<ImportedFlush> flush_through(const Call& call) const override {
    return project_.flush_through(call, relative_);
  }

 private:
  Project& project_;
  std::string relative_;
};

Project::Project(std::unique_ptr<ProjectFiles> files)
    : files_(std::move(files)), exists_([this](std::string_view relative) { return files_->exists(relative); }) {}

Project::~Project() = default;

std::unique_ptr<ProjectContext> Project::context_for(std::string relative) {
  return std::make_unique<ScriptContext>(*this, std::move(relative));
}

ModuleFacts Project::facts_of(const std::string& relative, const Script& script) const {
  return module_facts(script, relative, exists_);
}

const ModuleFacts& Project::facts(const std::string& relative) {
  auto it = facts_.find(relative);
  if (it != facts_.end() && !stale_.count(relative)) return it->second;
  ModuleFacts facts;
  if (auto text = files_->read(relative)) facts = facts_of(relative, analyzer::python::parse_script(*text));
  stale_.erase(relative);
  return store(relative, std::move(facts));
}

void Project::visit_in_import_order(const std::string& relative, const Visit& visit) {
  std::lock_guard lock(mutex_);
  apply_forgotten();
  struct Open {
    std::string relative;
    std::string text;
    Script script;
    std::size_t next = 0;  // the next of its dependencies to open
  };
  // Reads, parses and keeps the facts of a file not read before.
  auto open = [&](const std::string& file) -> std::optional<Open> {
    if (facts_.count(file)) return std::nullopt;
    auto text = files_->read(file);
    if (!text) {
      store(file, ModuleFacts{});
      return std::nullopt;
    }
    Script script = analyzer::python::parse_script(*text);
    store(file, facts_of(file, script));
    return Open{file, std::move(*text), std::move(script)};
  };
  std::vector<Open> stack;  // the chain of imports being opened: no recursion on the project's depth
  if (auto first = open(relative)) stack.push_back(std::move(*first));
  while (!stack.empty()) {
    Open& top = stack.back();
    const auto& dependencies = facts_.at(top.relative).dependencies;
    if (top.next < dependencies.size()) {
      const std::string& dependency = dependencies[top.next++];
      if (stack.size() >= kMaxOpenScripts) facts(dependency);  // its facts only; not visited
      else if (auto next = open(dependency)) stack.push_back(std::move(*next));
      continue;
    }
    Open done = std::move(top);
    stack.pop_back();
    if (!visit(done.relative, std::move(done.text), std::move(done.script))) return;
  }
}

void Project::keep_facts(const std::string& relative, const Script& script) {
  ModuleFacts facts = facts_of(relative, script);
  std::lock_guard lock(mutex_);
  apply_forgotten();
  store(relative, std::move(facts));
  stale_.erase(relative);
  cuda_starts_.clear();
  flushes_.clear();
  function_cuda_starts_.clear();
}

void Project::forget(const std::string& relative) {
  std::lock_guard lock(forgotten_mutex_);
  forgotten_.push_back(relative);
}

void Project::forget_all() {
  std::lock_guard lock(forgotten_mutex_);
  forgotten_all_ = true;
}

void Project::apply_forgotten() {
  std::vector<std::string> forgotten;
  bool all = false;
  {
    std::lock_guard lock(forgotten_mutex_);
    forgotten.swap(forgotten_);
    std::swap(all, forgotten_all_);
  }
  if (forgotten.empty() && !all) return;
  for (const auto& relative : forgotten)
    if (facts_.count(relative)) stale_.insert(relative);
  if (all)
    for (const auto& [relative, facts] : facts_) stale_.insert(relative);
  cuda_starts_.clear();
  flushes_.clear();
  function_cuda_starts_.clear();
  functions_.clear();
}

const ModuleFacts& Project::store(const std::string& relative, ModuleFacts facts) {
  {
    std::lock_guard lock(edges_mutex_);
    imports_.insert_or_assign(relative, facts.dependencies);
  }
  return facts_.insert_or_assign(relative, std::move(facts)).first->second;
}

bool Project::imports(const std::string& importer, const std::string& file) const {
  std::lock_guard lock(edges_mutex_);
  std::vector<const std::string*> stack{&importer};
  std::unordered_set<std::string_view> seen{importer};
  while (!stack.empty()) {
    auto it = imports_.find(*stack.back());
    stack.pop_back();
    if (it == imports_.end()) continue;
    for (const auto& dependency : it->second) {
      if (dependency == file) return true;
      if (seen.insert(dependency).second) stack.push_back(&dependency);
    }
  }
  return false;
}

ProjectPlace Project::place(const std::string& file, SourcePlace where) const {
  return {file, files_->path(file), where.line, where.column};
}

std::optional<ImportedCudaStart> Project::cuda_start(const Import& import, const std::string& importer) {
  std::lock_guard lock(mutex_);
  apply_forgotten();
  std::unordered_set<std::string> visiting{importer};
  for (const auto& file : analyzer::python::files_loaded(import, importer, exists_))
    if (auto start = cuda_start_of(file, visiting)) return start;
  return std::nullopt;
}

// The first CUDA use running `file` brings about: its own, or one in a
// project module it imports before that. Depth-first along the imports, with
// an explicit stack (an import chain can be as long as the project).
std::optional<ImportedCudaStart> Project::cuda_start_of(const std::string& file,
                                                        std::unordered_set<std::string>& visiting) {
  struct Frame {
    std::string file;
    std::size_t step = 0;  // the next step of its facts
    std::size_t load = 0;  // the next file that step loads
  };
  std::vector<Frame> stack;
  std::optional<ImportedCudaStart> found;
  auto enter = [&](const std::string& f) {
    if (auto known = cuda_starts_.find(f); known != cuda_starts_.end()) {
      found = known->second;
      return;
    }
    if (visiting.insert(f).second) stack.push_back({f});  // else: a cycle, cut here
  };
  enter(file);
  std::size_t followed = 0;
  while (!stack.empty() && !found && ++followed < kMaxFollowed) {
    Frame& top = stack.back();
    const auto& steps = facts(top.file).steps;
    if (top.step == steps.size()) {
      cuda_starts_.emplace(top.file, std::nullopt);
      stack.pop_back();
      continue;
    }
    const auto& step = steps[top.step];
    if (step.cuda) {
      found = ImportedCudaStart{place(top.file, step.where), step.what};
      break;
    }
    if (top.load == step.loads.size()) {
      ++top.step, top.load = 0;
      continue;
    }
    enter(step.loads[top.load++]);
  }
  // Every module on the chain starts CUDA where its import of the next one does.
  if (found)
    for (const auto& frame : stack) cuda_starts_.insert_or_assign(frame.file, found);
  return found;
}

std::optional<ProjectFunction> Project::callee_in_project(const Call& call, const std::string& importer) {
  const auto& callee = callee_name(call);
  if (call.local_function || !callee) return std::nullopt;
  auto [known, fresh] = functions_.try_emplace(importer + "\n" + *callee);
  if (fresh) known->second = analyzer::python::project_function(*callee, importer, exists_);
  if (!known->second || known->second->file == importer) return std::nullopt;
  return known->second;
}

// Past a function's own facts: the project functions it calls, else what
// its name re-exports, else the method of a re-exported class.
template <class Found, class Own>
std::optional<Found> Project::follow_further(const ProjectFunction& function, const ModuleFacts& facts,
                                             std::unordered_map<std::string, std::optional<Found>>& known,
                                             const Own& own, std::unordered_set<std::string>& visiting) {
  if (auto calls = facts.calls_out.find(function.name); calls != facts.calls_out.end()) {
    for (const auto& callee : calls->second)
      if (auto found = follow(callee, known, own, visiting)) return found;
    return std::nullopt;
  }
  if (auto named = facts.reexports.find(function.name); named != facts.reexports.end())
    return follow(named->second, known, own, visiting);
  auto dot = function.name.find('.');
  if (dot == std::string::npos) return std::nullopt;
  // A method of a re-exported class: `from .memory import Manager`, then Manager.flush.
  auto cls = facts.reexports.find(function.name.substr(0, dot));
  if (cls == facts.reexports.end()) return std::nullopt;
  return follow(ProjectFunction{cls->second.file, cls->second.name + function.name.substr(dot)}, known, own,
                visiting);
}

template <class Found, class Own>
std::optional<Found> Project::follow(const ProjectFunction& function,
                                     std::unordered_map<std::string, std::optional<Found>>& known, const Own& own,
                                     std::unordered_set<std::string>& visiting) {
  std::string key = function.file + ":" + function.name;
  if (auto it = known.find(key); it != known.end()) return it->second;
  if (!visiting.insert(key).second || visiting.size() > kMaxFunctionsFollowed) return std::nullopt;
  const ModuleFacts& facts = this->facts(function.file);
  std::optional<Found> found = own(function, facts);
  if (!found) found = follow_further(function, facts, known, own, visiting);
  known.insert_or_assign(key, found);
  return found;
}

std::optional<ImportedFlush> Project::flush_through(const Call& call, const std::string& importer) {
  std::lock_guard lock(mutex_);
  apply_forgotten();
  auto target = callee_in_project(call, importer);
  if (!target) return std::nullopt;
  std::unordered_set<std::string> visiting;
  auto own = [this](const ProjectFunction& f, const ModuleFacts& facts) -> std::optional<ImportedFlush> {
    auto it = facts.flushes.find(f.name);
    if (it == facts.flushes.end()) return std::nullopt;
    const auto& flush = it->second;
    return ImportedFlush{place(f.file, flush.where), flush.flush, flush.function, flush.periodic};
  };
  return follow(*target, flushes_, own, visiting);
}

std::optional<ImportedCudaStart> Project::cuda_start_through(const Call& call, const std::string& importer) {
  std::lock_guard lock(mutex_);
  apply_forgotten();
  auto target = callee_in_project(call, importer);
  if (!target) return std::nullopt;
  std::unordered_set<std::string> visiting;
  auto own = [this](const ProjectFunction& f, const ModuleFacts& facts) -> std::optional<ImportedCudaStart> {
    auto it = facts.cuda_calls.find(f.name);
    if (it == facts.cuda_calls.end()) return std::nullopt;
    return ImportedCudaStart{place(f.file, it->second.where), it->second.what};
  };
  return follow(*target, function_cuda_starts_, own, visiting);
}

}  // namespace oomlens::rules::source
