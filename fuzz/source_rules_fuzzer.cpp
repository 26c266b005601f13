// libFuzzer target: any bytes as a training script, a shell script, a .env
// file or a launch.json (the first byte picks which). The source rules and
// their actions must never crash, and every edit they offer must lie inside
// the text, in order and without overlap — an edit outside would corrupt
// the user's file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "analyzer/python/script.hpp"
#include "rules/source/config_lint.hpp"
#include "rules/source/lint.hpp"
#include "rules/source/record_snapshot.hpp"
#include "rules/source/set_alloc_conf.hpp"

namespace {

using oomlens::rules::TextEdit;

void check_edits(std::string_view text, const std::vector<TextEdit>& edits) {
  std::size_t at = 0;
  for (const auto& e : edits) {
    if (e.begin < at || e.end < e.begin || e.end > text.size()) std::abort();
    at = e.end;
  }
  (void)oomlens::rules::apply_edits(text, edits);
}

void check_diagnostics(std::string_view text, const std::vector<oomlens::rules::Diagnosis>& diags) {
  for (const auto& d : diags) {
    const auto& range = d.location.source->range;
    if (range.end < range.begin || range.end > text.size()) std::abort();
    for (const auto& fix : d.fixes) check_edits(text, fix.edits);
  }
  for (bool unsafe : {false, true}) check_edits(text, oomlens::rules::fix_edits(diags, unsafe));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      auto script = oomlens::analyzer::python::parse_script(text);
      check_diagnostics(text, oomlens::rules::lint_script(script));
      if (auto a = oomlens::rules::set_alloc_conf_action(script, "expandable_segments:True")) check_edits(text, a->edits);
      if (auto a = oomlens::rules::record_snapshot_action(script)) check_edits(text, a->edits);
      if (auto a = oomlens::rules::record_snapshot_action(script, 3)) check_edits(text, a->edits);
      break;
    }
    default: {
      auto kind = static_cast<oomlens::rules::ConfigFileKind>(data[0] % 6 - 1);
      check_diagnostics(text, oomlens::rules::lint_config_file(kind, text));
      if (auto a = oomlens::rules::set_alloc_conf_in_config(kind, text, "expandable_segments:True"))
        check_edits(text, a->edits);
      break;
    }
  }
  return 0;
}
