// OOM303 (its words: rules/docs/OOM303.md): a value of PYTORCH_CUDA_ALLOC_CONF
// (or PYTORCH_ALLOC_CONF, PYTORCH_HIP_ALLOC_CONF) that PyTorch's parser
// rejects, ignores or reads differently from what it says. The script's
// assignments are found by qualified name (`os.environ`, `os.putenv`, whatever
// the import); each problem sits on the exact characters of its option in the
// literal.
#include <fmt/format.h>

#include <set>

#include "analyzer/alloc_conf.hpp"
#include "rules/source/alloc_conf_assignments.hpp"
#include "rules/source/config_lint.hpp"
#include "rules/source/source_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::source {

using analyzer::python::ByteRange;
using analyzer::python::Node;
using analyzer::python::Point;
using analyzer::python::Script;
using analyzer::python::StringLiteral;

namespace {

// Whether the value bytes [b, e) come from one run of source bytes: an edit of
// that run cannot swallow the quotes between two concatenated literals.
bool contiguous(const StringLiteral& lit, std::size_t b, std::size_t e) {
  const StringLiteral::Piece* prev = nullptr;
  for (const auto& p : lit.pieces) {
    if (p.value_begin + p.value_size <= b || p.value_begin >= e) continue;
    if (prev && prev->source.end != p.source.begin) return false;
    prev = &p;
  }
  return true;
}

Severity severity_of(analyzer::ConfSeverity s) {
  return s == analyzer::ConfSeverity::error ? Severity::error : Severity::warning;
}

struct Found {
  std::string variable;  // "" for a runtime setting (_set_allocator_settings)
  StringLiteral value;
  analyzer::ConfPlatform platform = analyzer::ConfPlatform::unknown;
};

// A condition that holds only on Windows: `sys.platform == "win32"`,
// `sys.platform.startswith("win")`, `os.name == "nt"`,
// `platform.system() == "Windows"` (spaces and quote style aside).
bool windows_only(std::string_view condition) {
  std::string compact;
  for (char c : condition)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') compact += c == '\'' ? '"' : c;
  for (std::string_view test : {"sys.platform==\"win32\"", "\"win32\"==sys.platform", "sys.platform.startswith(\"win\")",
                                "os.name==\"nt\"", "\"nt\"==os.name", "platform.system()==\"Windows\""})
    if (compact == test) return true;
  return false;
}

// The platform an assignment is known to run on: Windows inside the `if`
// branch of a Windows-only condition (PyTorch's Windows builds lack the CUDA
// driver API that expandable segments need, and ignore the option).
analyzer::ConfPlatform platform_of(const Script& s, Node statement) {
  for (const auto& g : s.guards(statement))
    if (g.branch != analyzer::python::Guard::Branch::else_branch && g.condition && windows_only(s.text(g.condition)))
      return analyzer::ConfPlatform::windows;
  return analyzer::ConfPlatform::unknown;
}

// The runtime entry points that re-run the same parser on their argument.
bool runtime_setter(std::string_view q) {
  return q == "torch.cuda.memory._set_allocator_settings" || q == "torch._C._accelerator_setAllocatorSettings" ||
         q == "torch._C._cuda_cudaCachingAllocator_set_allocator_settings";
}

// Every constant value of an allocator variable the script writes: the
// assignments to its own environment (alloc_conf_assignments), and beyond
// them any dict display or dict(...) call keyed by one of the variables
// (subprocess.run(env={**os.environ, "X": ...}), dict(os.environ, X=...)),
// and the runtime setters' argument.
std::vector<Found> values_set(const Script& s) {
  std::vector<Found> found;
  std::set<std::uint32_t> seen;  // value starts already found
  for (auto& a : alloc_conf_assignments(s))
    if (a.literal) {
      seen.insert(a.value.start_byte());
      found.push_back({a.variable, std::move(*a.literal), platform_of(s, a.statement)});
    }
  auto add = [&](std::string name, Node value) {
    if (!analyzer::is_alloc_conf_variable(name) || !value || seen.count(value.start_byte())) return;
    if (auto v = string_value(s, value)) {
      seen.insert(value.start_byte());
      found.push_back({std::move(name), std::move(*v)});
    }
  };
  for (Node dict : s.nodes_of_type("dictionary"))
    for (Node pair : dict.named_children())
      if (pair.is("pair"))
        if (auto k = string_value(s, pair.field("key"))) add(k->value, pair.field("value"));
  for (const auto& call : s.calls()) {
    Node args = call.node.field("arguments");
    if (!args) continue;
    auto list = args.named_children();
    if (!call.qualified_name && call.callee.is("identifier") && s.text(call.callee) == "dict") {
      for (Node a : list)
        if (a.is("keyword_argument")) add(std::string(s.text(a.field("name"))), a.field("value"));
    } else if (call.qualified_name && runtime_setter(*call.qualified_name) && !list.empty()) {
      if (auto v = string_value(s, list[0])) found.push_back({"", std::move(*v)});
    }
  }
  return found;
}

void check(const Script& s, const ProjectContext&, std::vector<Diagnosis>& out) {
  for (const auto& f : values_set(s)) {
    analyzer::AllocConfContext context;
    context.platform = f.platform;
    check_alloc_conf_value(f.variable, f.value, [&s](std::uint32_t b) { return s.point(b); }, !s.has_errors(), context,
                           out);
  }
}

}  // namespace

void check_alloc_conf_value(std::string_view variable, const StringLiteral& value,
                            const std::function<Point(std::uint32_t)>& point, bool allow_edits,
                            const analyzer::AllocConfContext& context, std::vector<Diagnosis>& out) {
  analyzer::AllocConfContext ctx = context;
  ctx.variable = variable;
  for (const auto& p : analyzer::parse_alloc_conf(value.value, ctx).problems) {
    Diagnosis g;
    ByteRange at = value.source_range(p.range.begin, p.range.end);
    g.location = source_location(at, point(at.begin));
    g.code = docs::OOM303::code;
    g.name = docs::OOM303::name;
    g.severity = severity_of(p.severity);
    g.message = p.message;
    g.explanation = std::string(docs::OOM303::explanation);
    if (p.replacement) {
      Fix fix;
      fix.kind = FixKind::edit;
      fix.safety = p.fix_keeps_behaviour ? FixSafety::safe : FixSafety::unsafe;
      std::string_view removed(value.value.data() + p.fix_range.begin, p.fix_range.end - p.fix_range.begin);
      fix.title = p.replacement->empty() ? fmt::format("Remove `{}`", removed)
                                         : fmt::format("Replace `{}` with `{}`", removed, *p.replacement);
      fix.detail = p.fix_keeps_behaviour ? "keeps behaviour: PyTorch reads the value the same way"
                                         : "changes what PyTorch reads: check the result is the setting you meant";
      bool editable = allow_edits && contiguous(value, p.fix_range.begin, p.fix_range.end);
      if (editable) {
        ByteRange r = value.source_range(p.fix_range.begin, p.fix_range.end);
        fix.edits.push_back({r.begin, r.end, *p.replacement});
      } else {
        fix.kind = FixKind::advice;
        fix.safety = FixSafety::display_only;
      }
      g.fixes.push_back(std::move(fix));
    }
    out.push_back(std::move(g));
  }
}

SourceRule invalid_alloc_conf_rule() {
  return {rule_info<docs::OOM303>(), &check};
}

}  // namespace oomlens::rules::source
