// OOM303 invalid-allocator-config: a value of PYTORCH_CUDA_ALLOC_CONF (or
// PYTORCH_ALLOC_CONF, PYTORCH_HIP_ALLOC_CONF) that PyTorch's parser rejects,
// ignores or reads differently from what it says. The script's assignments are
// found by qualified name (`os.environ`, `os.putenv`, whatever the import);
// each problem sits on the exact characters of its option in the literal.
#include <fmt/format.h>

#include "analyzer/alloc_conf.hpp"
#include "rules/source/config_lint.hpp"
#include "rules/source/source_rules.hpp"

namespace oomlens::rules::source {

using analyzer::python::ByteRange;
using analyzer::python::Node;
using analyzer::python::Point;
using analyzer::python::Script;
using analyzer::python::StringLiteral;

namespace {

constexpr std::string_view kExplanation =
    "PyTorch parses `PYTORCH_CUDA_ALLOC_CONF` (`PYTORCH_ALLOC_CONF` in newer releases, "
    "`PYTORCH_HIP_ALLOC_CONF` on ROCm) when the CUDA allocator is first used: comma-separated "
    "`key:value` options, booleans spelled exactly `True`/`False`. An unknown option or a "
    "malformed value raises `RuntimeError` at the first CUDA allocation, far from the line that "
    "set it; an option that the chosen backend ignores, or that is set twice, silently does "
    "something other than what the line says.";

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

// The literal behind an expression: parentheses are looked through.
std::optional<StringLiteral> literal(const Script& s, Node n) {
  while (n && n.is("parenthesized_expression") && n.named_children().size() == 1) n = n.named_children()[0];
  if (!n || !(n.is("string") || n.is("concatenated_string"))) return std::nullopt;
  auto lit = s.string_literal(n);
  if (!lit || lit->is_bytes) return std::nullopt;
  return lit;
}

struct Found {
  std::string variable;  // "" for a runtime setting (_set_allocator_settings)
  StringLiteral value;
};

// `"X": "v"` pairs of a dict display.
void from_dict(const Script& s, Node dict, std::vector<Found>& out) {
  for (Node pair : dict.named_children()) {
    if (!pair.is("pair")) continue;
    auto k = literal(s, pair.field("key"));
    auto v = literal(s, pair.field("value"));
    if (k && v && analyzer::is_alloc_conf_variable(k->value)) out.push_back({k->value, std::move(*v)});
  }
}

bool is_environ(const Script& s, Node n) {
  auto q = n ? s.qualified_name(n) : std::nullopt;
  return q && *q == "os.environ";
}

// Assignments to os.environ[...], and every dict display with an allocator
// variable as a key: os.environ.update({...}), os.environ |= {...},
// subprocess.run(env={**os.environ, "X": ...}).
void from_tree(const Script& s, std::vector<Found>& out) {
  // Node::walk: one cursor, linear in the tree, no recursion on deep nesting.
  s.root().walk([&](Node n) {
    if (n.is("assignment")) {
      Node left = n.field("left"), right = n.field("right");
      if (left && left.is("subscript") && is_environ(s, left.field("value"))) {
        auto k = literal(s, left.field("subscript"));
        auto v = literal(s, right);
        if (k && v && analyzer::is_alloc_conf_variable(k->value)) out.push_back({k->value, std::move(*v)});
      }
    } else if (n.is("dictionary")) {
      from_dict(s, n, out);
    }
    return true;
  });
}

// The runtime entry points that re-run the same parser on their argument.
bool runtime_setter(std::string_view q) {
  return q == "torch.cuda.memory._set_allocator_settings" || q == "torch._C._accelerator_setAllocatorSettings" ||
         q == "torch._C._cuda_cudaCachingAllocator_set_allocator_settings";
}

void from_calls(const Script& s, std::vector<Found>& out) {
  for (const auto& call : s.calls()) {
    Node args = call.node.field("arguments");
    if (!args) continue;
    auto list = args.named_children();
    std::string q = call.qualified_name ? *call.qualified_name : std::string();
    bool dict_call = !call.qualified_name && call.callee.is("identifier") && s.text(call.callee) == "dict";
    if (q == "os.environ.update" || dict_call) {  // update(X="..."), dict(os.environ, X="...")
      for (Node a : list)
        if (a.is("keyword_argument")) {
          std::string name(s.text(a.field("name")));
          auto v = literal(s, a.field("value"));
          if (v && analyzer::is_alloc_conf_variable(name)) out.push_back({name, std::move(*v)});
        }
      continue;
    }
    if (runtime_setter(q)) {
      if (auto v = list.empty() ? std::nullopt : literal(s, list[0])) out.push_back({"", std::move(*v)});
      continue;
    }
    if (q != "os.environ.setdefault" && q != "os.putenv") continue;
    if (list.size() < 2) continue;
    auto k = literal(s, list[0]);
    auto v = literal(s, list[1]);
    if (k && v && analyzer::is_alloc_conf_variable(k->value)) out.push_back({k->value, std::move(*v)});
  }
}

void check(const Script& s, std::vector<SourceDiagnostic>& out) {
  std::vector<Found> found;
  from_tree(s, found);
  from_calls(s, found);
  for (const auto& f : found)
    check_alloc_conf_value(f.variable, f.value, [&s](std::uint32_t b) { return s.point(b); }, !s.has_errors(), {}, out);
}

}  // namespace

void check_alloc_conf_value(std::string_view variable, const StringLiteral& value,
                            const std::function<Point(std::uint32_t)>& point, bool allow_edits,
                            const analyzer::AllocConfContext& context, std::vector<SourceDiagnostic>& out) {
  analyzer::AllocConfContext ctx = context;
  ctx.variable = variable;
  for (const auto& p : analyzer::parse_alloc_conf(value.value, ctx).problems) {
    SourceDiagnostic d;
    d.range = value.source_range(p.range.begin, p.range.end);
    d.start = point(d.range.begin);
    Diagnosis& g = d.diagnosis;
    g.code = "OOM303";
    g.name = "invalid-allocator-config";
    g.severity = severity_of(p.severity);
    g.message = p.message;
    g.explanation = std::string(kExplanation);
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
        d.edits.push_back({r.begin, r.end, *p.replacement});
        d.fix_safety = fix.safety;
      } else {
        fix.kind = FixKind::advice;
        fix.safety = FixSafety::display_only;
      }
      g.fixes.push_back(std::move(fix));
    }
    out.push_back(std::move(d));
  }
}

SourceRule invalid_alloc_conf_rule() {
  return {{"OOM303", "invalid-allocator-config",
           "PYTORCH_CUDA_ALLOC_CONF value that PyTorch rejects, ignores or reads differently from what it says"},
          &check};
}

}  // namespace oomlens::rules::source
