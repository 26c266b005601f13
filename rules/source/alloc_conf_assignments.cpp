#include "rules/source/alloc_conf_assignments.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "analyzer/alloc_conf.hpp"

namespace oomlens::rules::source {

using analyzer::python::Node;
using analyzer::python::Script;
using analyzer::python::StringLiteral;

namespace {

using Form = AllocConfAssignment::Form;

// The statement of the module or a block that holds `n`.
Node statement_of(const Script& s, Node n) {
  for (Node at = n; at; at = s.parent(at)) {
    Node up = s.parent(at);
    if (up && (up.is("module") || up.is("block"))) return at;
  }
  return {};
}

bool is_environ(const Script& s, Node n) {
  auto q = n ? s.qualified_name(n) : std::nullopt;
  return q && *q == "os.environ";
}

void add(const Script& s, Form form, Node key, Node value, Node at, bool only_entry,
         std::vector<AllocConfAssignment>& out) {
  auto k = string_value(s, key);
  if (!k || !analyzer::is_alloc_conf_variable(k->value) || !value) return;
  out.push_back({form, k->value, statement_of(s, at), value, string_value(s, value), only_entry});
}

void from_dict(const Script& s, Form form, Node dict, Node at, std::vector<AllocConfAssignment>& out) {
  auto pairs = dict.named_children();
  std::size_t entries = std::count_if(pairs.begin(), pairs.end(), [](Node p) { return !p.is("comment"); });
  for (Node pair : pairs)
    if (pair.is("pair")) add(s, form, pair.field("key"), pair.field("value"), at, entries == 1, out);
}

void from_assignments(const Script& s, std::vector<AllocConfAssignment>& out) {
  for (Node n : s.nodes_of_type("assignment")) {
    Node left = n.field("left");
    if (left && left.is("subscript") && is_environ(s, left.field("value")))
      add(s, Form::subscript, left.field("subscript"), n.field("right"), n, true, out);
  }
  for (Node n : s.nodes_of_type("augmented_assignment")) {
    Node right = n.field("right");
    if (is_environ(s, n.field("left")) && right && right.is("dictionary") && s.text(n.field("operator")) == "|=")
      from_dict(s, Form::merge_operator, right, n, out);
  }
}

void from_calls(const Script& s, std::vector<AllocConfAssignment>& out) {
  for (const auto& call : s.calls()) {
    if (!call.qualified_name) continue;
    const std::string& q = *call.qualified_name;
    Node args = call.node.field("arguments");
    if (!args) continue;
    auto list = args.named_children();
    std::erase_if(list, [](Node a) { return a.is("comment"); });
    if (q == "os.environ.update") {
      for (Node a : list) {
        if (a.is("dictionary")) from_dict(s, Form::update, a, call.node, out);
        if (a.is("keyword_argument")) {
          std::string name(s.text(a.field("name")));
          if (analyzer::is_alloc_conf_variable(name))
            out.push_back({Form::update, name, statement_of(s, call.node), a.field("value"),
                           string_value(s, a.field("value")), list.size() == 1});
        }
      }
    } else if ((q == "os.environ.setdefault" || q == "os.putenv") && list.size() >= 2) {
      add(s, q == "os.putenv" ? Form::putenv : Form::setdefault, list[0], list[1], call.node, true, out);
    }
  }
}

// Whether an expression names the CUDA device: a string "cuda"/"cuda:N"
// (also in an f-string or a conditional), or one of `names` (those this file
// assigns such a value at module level).
bool mentions_cuda(const Script& s, Node n, const std::set<std::string_view>& names) {
  if (!n) return false;
  if (n.is("string")) {
    std::string_view text = s.text(n);
    std::size_t q = text.find_first_of("\"'");
    if (q == std::string_view::npos) return false;
    text.remove_prefix(q);
    while (!text.empty() && (text.front() == '"' || text.front() == '\'')) text.remove_prefix(1);
    return text.starts_with("cuda") && (text.size() == 4 || !std::isalnum(static_cast<unsigned char>(text[4])));
  }
  if (n.is("identifier")) return names.count(s.text(n)) > 0;
  for (Node c : n.named_children())
    if (mentions_cuda(s, c, names)) return true;
  return false;
}

// Module-level names assigned a value that mentions the CUDA device
// (`device = torch.device("cuda" if ... else "cpu")`), through up to three
// names referring to each other.
std::set<std::string_view> cuda_device_names(const Script& s) {
  std::vector<std::pair<std::string_view, Node>> assignments;
  for (Node st : s.module_statements()) {
    Node e = st.is("expression_statement") && !st.named_children().empty() ? st.named_children()[0] : Node{};
    if (e && e.is("assignment") && e.field("left").is("identifier") && e.field("right"))
      assignments.emplace_back(s.text(e.field("left")), e.field("right"));
  }
  std::set<std::string_view> names;
  for (int round = 0; round < 3; ++round) {
    std::size_t before = names.size();
    for (const auto& [name, value] : assignments)
      if (!names.count(name) && mentions_cuda(s, value, names)) names.insert(name);
    if (names.size() == before) break;
  }
  return names;
}

// torch.cuda functions that run torch.cuda._lazy_init: the allocator reads
// its settings when CUDA is initialised, and never again.
constexpr std::array kInitialisingCalls = {
    "torch.cuda.init",          "torch.cuda.set_device",          "torch.cuda.current_device",
    "torch.cuda.mem_get_info",  "torch.cuda.memory_allocated",    "torch.cuda.memory_reserved",
    "torch.cuda.max_memory_allocated", "torch.cuda.max_memory_reserved", "torch.cuda.memory_stats",
    "torch.cuda.memory_summary", "torch.cuda.reset_peak_memory_stats", "torch.cuda.empty_cache",
    "torch.cuda.synchronize",   "torch.cuda.get_device_properties", "torch.cuda.get_device_name",
    "torch.cuda.get_device_capability", "torch.cuda.set_per_process_memory_fraction",
    "torch.cuda.memory._record_memory_history", "torch.cuda.Stream", "torch.cuda.current_stream",
};

std::string short_text(const Script& s, Node n) {
  std::string_view t = s.text(n);
  t = t.substr(0, t.find('\n'));
  if (t.size() > 60) return std::string(t.substr(0, 57)) + "...";
  return std::string(t);
}

}  // namespace

std::optional<StringLiteral> string_value(const Script& s, Node n) {
  while (n && n.is("parenthesized_expression") && n.named_children().size() == 1) n = n.named_children()[0];
  if (!n || !(n.is("string") || n.is("concatenated_string"))) return std::nullopt;
  auto lit = s.string_literal(n);
  if (!lit || lit->is_bytes) return std::nullopt;
  return lit;
}

std::vector<AllocConfAssignment> alloc_conf_assignments(const Script& s) {
  std::vector<AllocConfAssignment> out;
  from_assignments(s, out);
  from_calls(s, out);
  std::erase_if(out, [](const AllocConfAssignment& a) { return !a.statement; });
  std::stable_sort(out.begin(), out.end(), [](const AllocConfAssignment& a, const AllocConfAssignment& b) {
    return a.value.start_byte() < b.value.start_byte();
  });
  return out;
}

std::vector<CudaUse> cuda_uses(const Script& s) {
  std::vector<CudaUse> out;
  const auto names = cuda_device_names(s);
  for (const auto& call : s.calls()) {
    bool uses = false;
    if (call.qualified_name) {
      uses = std::find(kInitialisingCalls.begin(), kInitialisingCalls.end(), *call.qualified_name) !=
             kInitialisingCalls.end();
    } else if (call.callee.is("attribute")) {
      std::string_view method = s.text(call.callee.field("attribute"));
      Node args = call.node.field("arguments");
      if (method == "cuda") uses = true;  // model.cuda(), tensor.cuda(0)
      else if (method == "to" && args) uses = mentions_cuda(s, args, names);
    }
    if (!uses)
      if (Node args = call.node.field("arguments"))
        for (Node a : args.named_children())
          if (a.is("keyword_argument") && s.text(a.field("name")) == "device" && mentions_cuda(s, a.field("value"), names))
            uses = true;
    if (uses) out.push_back({call.node, short_text(s, call.node)});
  }
  return out;
}

Lateness lateness(const Script& s, const std::vector<analyzer::python::Step>& steps, const std::vector<CudaUse>& uses,
                  const AllocConfAssignment& a, const ProjectContext& project) {
  auto at = step_of(steps, a.statement);
  if (!at) return {};
  std::optional<std::size_t> first_use;
  Lateness late;
  for (const auto& use : uses) {
    auto step = step_of(steps, use.call);
    if (step && *step < *at && (!first_use || *step < *first_use)) {
      first_use = step;
      late = {Lateness::Why::after_cuda_use, use.call, use.description, std::nullopt};
    }
  }
  // Only the imports before the first use found can start CUDA earlier.
  for (const auto& import : s.imports()) {
    auto step = step_of(steps, import.node);
    if (!step || *step >= *at || (first_use && *step >= *first_use)) continue;
    if (auto start = project.cuda_start(import)) {
      first_use = step;
      late = {Lateness::Why::after_cuda_use, import.node, short_text(s, import.node), std::move(start)};
    }
  }
  // And calls of functions of other project files that use CUDA (a
  // `setup_distributed()` that calls torch.cuda.set_device).
  for (const auto& call : s.calls()) {
    if (call.local_function) continue;
    auto step = step_of(steps, call.node);
    if (!step || *step >= *at || (first_use && *step >= *first_use)) continue;
    if (auto start = project.cuda_start_through(call)) {
      first_use = step;
      late = {Lateness::Why::after_cuda_use, call.node, short_text(s, call.node), std::move(start)};
    }
  }
  if (first_use) return late;
  bool sets_backend = false;
  if (a.literal)
    for (const auto& o : analyzer::parse_alloc_conf(a.literal->value).options) sets_backend |= o.key == "backend";
  if (!sets_backend) return {};
  for (const auto& import : s.imports()) {
    bool torch = import.from_module == "torch" || import.from_module.starts_with("torch.");
    for (const auto& n : import.names) torch |= n.module == "torch" || n.module.starts_with("torch.");
    auto step = torch ? step_of(steps, import.node) : std::nullopt;
    if (step && *step < *at)
      return {Lateness::Why::backend_after_import, import.node, short_text(s, import.node), std::nullopt};
  }
  return {};
}

std::optional<std::size_t> step_of(const std::vector<analyzer::python::Step>& steps, Node node) {
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].range.contains(node.range())) return i;
  return std::nullopt;
}

}  // namespace oomlens::rules::source
