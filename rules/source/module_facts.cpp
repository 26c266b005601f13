#include "rules/source/module_facts.hpp"

#include <algorithm>
#include <unordered_set>

#include "analyzer/python/training_loop.hpp"
#include "rules/source/alloc_conf_assignments.hpp"
#include "rules/source/cache_flushes.hpp"

namespace oomlens::rules::source {

using analyzer::python::Call;
using analyzer::python::Node;
using analyzer::python::ProjectFunction;
using analyzer::python::Script;

namespace {

SourcePlace place_of(const Script& s, Node node) {
  auto p = s.point(node.start_byte());
  return {p.line, p.column};
}

// The name other modules reach a def by: "free" for a module-level def,
// "Manager.flush" for a method of a module-level class; nothing for one
// inside a def or lambda, or a nested class.
std::optional<std::string> reachable_name(const Script& s, const analyzer::python::Function& def) {
  std::string name = def.name;
  bool in_class = false;
  for (Node up = s.parent(def.node); up; up = s.parent(up)) {
    if (up.is("function_definition") || up.is("lambda")) return std::nullopt;
    if (up.is("class_definition")) {
      if (in_class) return std::nullopt;
      in_class = true;
      name = std::string(s.text(up.field("name"))) + "." + name;
    }
  }
  return name;
}


void add_steps(const Script& s, std::string_view path, const analyzer::python::ProjectFileExists& exists,
               const std::vector<CudaUse>& uses, ModuleFacts& facts) {
  std::vector<std::pair<const analyzer::python::Import*, std::vector<std::string>>> loading;
  for (const auto& import : s.imports())
    if (auto loads = analyzer::python::files_loaded(import, path, exists); !loads.empty())
      loading.emplace_back(&import, std::move(loads));
  bool nested = std::any_of(loading.begin(), loading.end(), [](const auto& l) { return !l.first->top_level; });
  if (uses.empty() && !nested) {
    // Nothing to order the imports against: the module-level ones, in source
    // order (most modules; the execution order costs more than the rest).
    // An import inside a def runs where module-level code calls the def
    // (`setup()`), which only the execution order tells.
    for (auto& [import, loads] : loading)
      if (import->top_level) facts.steps.push_back({std::move(loads), false, place_of(s, import->node), {}});
    return;
  }
  auto order = s.execution_order();
  std::optional<std::size_t> first_use;
  const CudaUse* use = nullptr;
  for (const auto& u : uses) {
    auto step = step_of(order, u.call);
    if (step && (!first_use || *step < *first_use)) {
      first_use = step;
      use = &u;
    }
  }
  std::vector<std::pair<std::size_t, ModuleFacts::Step>> imports;
  for (auto& [import, loads] : loading) {
    auto step = step_of(order, import->node);
    if (!step || (first_use && *step > *first_use)) continue;
    imports.emplace_back(*step, ModuleFacts::Step{std::move(loads), false, place_of(s, import->node), {}});
  }
  std::stable_sort(imports.begin(), imports.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [step, fact] : imports) facts.steps.push_back(std::move(fact));
  if (use) facts.steps.push_back({{}, true, place_of(s, use->call), use->description});
}

// What each module-level def reaches through calls of this file: the first
// flush, the first CUDA use, and the calls to functions of other project files.
class FunctionWalk {
 public:
  FunctionWalk(const Script& s, std::string_view path, const analyzer::python::ProjectFileExists& exists,
               const std::vector<CudaUse>& uses)
      : s_(s), path_(path), exists_(exists) {
    for (const auto& use : uses) cuda_by_call_.emplace(use.call.id(), &use);
    auto flushes = cache_flushes(s);
    std::optional<std::vector<analyzer::python::Loop>> training;
    for (auto& [call, name] : flushes) {
      if (!training) training = analyzer::python::training_loops(s);
      // A flush after its own function's training loop is a teardown, once per run.
      if (analyzer::python::after_loop_in_own_function(s, *training, call.node)) continue;
      flush_by_call_.emplace(call.node.id(), std::string(name));
    }
  }

  // Whether any call of the file flushes, uses CUDA or runs a function of
  // another project file: else no function here leads to either (most modules).
  bool leads_anywhere() {
    if (!flush_by_call_.empty() || !cuda_by_call_.empty()) return true;
    for (const auto& call : s_.calls())
      if (!call.local_function && callee_name(call) && resolve(*callee_name(call))) return true;
    return false;
  }

  void index_calls() {
    for (std::size_t i = 0; i < s_.calls().size(); ++i)
      if (auto owner = s_.enclosing_function(s_.calls()[i].node)) calls_by_function_[owner->node.id()].push_back(i);
  }

  void add(const analyzer::python::Function& function, const std::string& name, ModuleFacts& facts) {
    std::vector<Node> stack{function.node};
    std::unordered_set<const void*> seen{function.node.id()};
    std::optional<ModuleFacts::Flush> flush;
    std::optional<ModuleFacts::CudaCall> cuda;
    std::vector<ProjectFunction> out;
    while (!stack.empty()) {
      Node def = stack.back();
      stack.pop_back();
      auto calls = calls_by_function_.find(def.id());
      if (calls == calls_by_function_.end()) continue;
      for (std::size_t i : calls->second) {
        const Call& call = s_.calls()[i];
        if (auto f = flush_by_call_.find(call.node.id()); f != flush_by_call_.end() && !flush) {
          auto owner = s_.enclosing_function(call.node);
          flush = ModuleFacts::Flush{place_of(s_, call.node), f->second, owner ? owner->name : function.name,
                                     periodic_guard(s_, call.node)};
        }
        if (auto u = cuda_by_call_.find(call.node.id()); u != cuda_by_call_.end() && !cuda)
          cuda = ModuleFacts::CudaCall{place_of(s_, call.node), u->second->description};
        if (call.local_function) {
          if (seen.insert(call.local_function.id()).second) stack.push_back(call.local_function);
        } else if (callee_name(call)) {
          if (auto target = resolve(*callee_name(call));
              target && std::find(out.begin(), out.end(), *target) == out.end())
            out.push_back(std::move(*target));
        }
      }
    }
    if (flush) facts.flushes.emplace(name, std::move(*flush));
    if (cuda) facts.cuda_calls.emplace(name, std::move(*cuda));
    if (!out.empty()) facts.calls_out.emplace(name, std::move(out));
  }

  std::optional<ProjectFunction> resolve(const std::string& qualified) {
    auto [it, fresh] = resolved_.try_emplace(qualified);
    if (fresh) {
      it->second = analyzer::python::project_function(qualified, path_, exists_);
      if (it->second && it->second->file == path_) it->second.reset();
    }
    return it->second;
  }

 private:
  const Script& s_;
  std::string_view path_;
  const analyzer::python::ProjectFileExists& exists_;
  std::unordered_map<const void*, std::vector<std::size_t>> calls_by_function_;
  std::unordered_map<const void*, std::string> flush_by_call_;
  std::unordered_map<const void*, const CudaUse*> cuda_by_call_;
  std::unordered_map<std::string, std::optional<ProjectFunction>> resolved_;
};

}  // namespace

const std::optional<std::string>& callee_name(const Call& call) {
  return call.qualified_name ? call.qualified_name : call.instance_method;
}

ModuleFacts module_facts(const Script& s, std::string_view path, const analyzer::python::ProjectFileExists& exists) {
  ModuleFacts facts;
  for (const auto& import : s.imports())
    for (auto& file : analyzer::python::files_loaded(import, path, exists))
      if (file != path && std::find(facts.dependencies.begin(), facts.dependencies.end(), file) == facts.dependencies.end())
        facts.dependencies.push_back(std::move(file));
  const auto uses = cuda_uses(s);
  add_steps(s, path, exists, uses, facts);
  // No function leads to a flush or a CUDA use.
  if (facts.dependencies.empty() && uses.empty() && cache_flushes(s).empty()) return facts;
  FunctionWalk walk(s, path, exists, uses);
  for (const auto& import : s.imports()) {
    if (!import.top_level || import.from_module.empty()) continue;
    for (const auto& name : import.names)
      if (auto target = walk.resolve(name.qualified)) facts.reexports.emplace(name.local, std::move(*target));
  }
  if (!walk.leads_anywhere()) return facts;
  walk.index_calls();
  for (const auto& function : s.functions())
    if (auto name = reachable_name(s, function)) walk.add(function, *name, facts);
  return facts;
}

}  // namespace oomlens::rules::source
