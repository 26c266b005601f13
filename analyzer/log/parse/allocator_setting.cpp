// Allocator settings as the log shows them (PyTorch's, JAX's and TensorFlow's):
// the fix advice depends on what was already set. One allocator_setting
// finding per setting, detail "NAME=VALUE", from any of
//
//   export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True       (shell, env dumps, docker -e)
//   PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True'
//   {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True', ...}  (a printed os.environ / dict)
//   os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
//   - name: PYTORCH_CUDA_ALLOC_CONF / value: expandable_segments:True   (Kubernetes, two lines)
//
// and PyTorch ≈2.8-2.11's warning "PYTORCH_CUDA_ALLOC_CONF is deprecated, use
// PYTORCH_ALLOC_CONF instead", which also says the old name is set and in
// effect (PyTorch warns only when PYTORCH_ALLOC_CONF is absent).
//
// Hints that merely name a setting are not settings: PyTorch's OOM message
// ("try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid
// fragmentation"), TF's BFC hint ("'TF_GPU_ALLOCATOR=cuda_malloc_async'
// will improve the situation"), MPS's watermark hint. Nor is a shell
// reference ("$PYTORCH_CUDA_ALLOC_CONF", "${...:-default}").
#include <re2/re2.h>

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/parser.hpp"
#include "analyzer/log/text.hpp"

namespace oomlens::analyzer::parse {
namespace {

using re2::StringPiece;

constexpr std::size_t kMaxSettingsPerLine = 16;  // a hostile line may repeat one forever

// The settings the advice depends on.
constexpr std::string_view kNames =
    R"(PYTORCH_(?:CUDA_|HIP_)?ALLOC_CONF|PYTORCH_NO_CUDA_MEMORY_CACHING)"
    R"(|XLA_PYTHON_CLIENT_(?:MEM_FRACTION|PREALLOCATE|ALLOCATOR)|TF_GPU_ALLOCATOR|TF_FORCE_GPU_ALLOW_GROWTH)";

// A quoted or bare value: three alternative captures.
constexpr std::string_view kValue = R"re((?:'([^']*)'|"([^"]*)"|([^\s'";)}\]]*)))re";

std::string pattern(std::string_view before, std::string_view names, std::string_view after) {
  return std::string(before) + std::string(names) + std::string(after);
}

LogFinding setting_at(const Line& line, std::string detail) {
  return finding_at(line, FindingKind::allocator_setting, std::move(detail));
}

std::string value_of(StringPiece single, StringPiece dbl, StringPiece bare) {
  if (single.data()) return std::string(view(single));
  if (dbl.data()) return std::string(view(dbl));
  std::string_view v = view(bare);
  while (!v.empty() && (v.back() == '.' || v.back() == ',')) v.remove_suffix(1);  // end of a sentence or list
  return std::string(v);
}

bool is_advice(std::string_view text) {
  static const RE2 advice(
      R"((?i)out of memory|try setting|to avoid fragmentation|documentation for memory management)"
      R"(|improve the situation|to disable upper limit)",
      RE2::Latin1);
  return RE2::PartialMatch(text, advice);
}

bool deprecation(const Line& line, Parsed& out) {
  static const RE2 re(R"((PYTORCH_\w*ALLOC_CONF) is deprecated, use (PYTORCH_\w*ALLOC_CONF) instead)", RE2::Latin1);
  StringPiece old_name, new_name;
  if (!RE2::PartialMatch(line.text, re, &old_name, &new_name)) return false;
  out.findings.push_back(setting_at(
      line, fmt::format("deprecated: {} is set and in effect ({} is not set); use {} instead", view(old_name),
                        view(new_name), view(new_name))));
  return true;
}

// Kubernetes env entries: "- name: NAME" and, on the next line, "value: VALUE".
std::optional<std::size_t> kubernetes_env(const Region& region, std::size_t at, Parsed& out) {
  static const RE2 name_line(pattern(R"(^\s*-?\s*name:\s*['"]?()", kNames, R"()['"]?\s*$)"), RE2::Latin1);
  static const RE2 value_line(pattern(R"(^\s*value:\s*)", kValue, ""), RE2::Latin1);
  StringPiece name, single, dbl, bare;
  if (at + 1 >= region.lines.size() || !RE2::PartialMatch(region.lines[at].text, name_line, &name)) return std::nullopt;
  if (!RE2::PartialMatch(region.lines[at + 1].text, value_line, &single, &dbl, &bare)) return std::nullopt;
  out.findings.push_back(
      setting_at(region.lines[at], fmt::format("{}={}", view(name), value_of(single, dbl, bare))));
  return at + 1;
}

}  // namespace

std::optional<std::size_t> parse_allocator_setting(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  // Every form below names one of the variables (kNames); most anchor lines name none.
  if (!FoldedText(line.text).has_any({"alloc_conf", "pytorch_no_cuda_memory_caching", "xla_python_client_",
                                      "tf_gpu_allocator", "tf_force_gpu_allow_growth"}))
    return std::nullopt;
  if (deprecation(line, out)) return at;
  if (is_advice(line.text)) return std::nullopt;
  if (auto last = kubernetes_env(region, at, out)) return last;

  // name, then an optional closing quote/bracket ("os.environ['X'] ="), ':' or '=', the value.
  static const RE2 setting(pattern(R"(\b()", kNames, std::string(R"()['"]?\]?\s*[:=]\s*)") + std::string(kValue)),
                           RE2::Latin1);
  StringPiece input(line.text);
  StringPiece name, single, dbl, bare;
  std::size_t found = 0;
  for (std::size_t tries = 0; found < kMaxSettingsPerLine && tries < 4 * kMaxSettingsPerLine &&
                              RE2::FindAndConsume(&input, setting, &name, &single, &dbl, &bare);
       ++tries) {
    std::size_t pos = static_cast<std::size_t>(name.data() - line.text.data());
    char before = pos > 0 ? line.text[pos - 1] : ' ';
    if (before == '$' || before == '{') continue;  // a shell reference, not an assignment
    out.findings.push_back(setting_at(line, fmt::format("{}={}", view(name), value_of(single, dbl, bare))));
    ++found;
  }
  if (found == 0) return std::nullopt;
  return at;
}

}  // namespace oomlens::analyzer::parse
