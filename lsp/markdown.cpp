#include "lsp/markdown.hpp"

#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "rules/breakdown.hpp"
#include "rules/rule.hpp"

namespace oomlens::lsp {
namespace {

std::string join(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

// Backticks inside inline code would end it early: use a longer fence.
std::string code(const std::string& s) {
  return s.find('`') == std::string::npos ? "`" + s + "`" : "`` " + s + " ``";
}

std::string bar_block(const analyzer::MemoryNumbers& n) {
  auto b = rules::memory_breakdown(n);
  if (b.parts.empty()) return {};
  std::string legend;
  for (const auto& p : b.parts)
    legend += fmt::format("{}{} {} {}", legend.empty() ? "" : "  ",
                          p.kind == rules::MemoryPart::Kind::free ? "·" : rules::bar_glyph(p.kind), p.label,
                          analyzer::format_size(p.bytes));
  std::string bar = rules::text_bar(b, 40);
  // Free cells are blank in the bar; a middle dot keeps them visible.
  std::string shown;
  for (std::size_t i = 0; i < bar.size(); ++i) shown += bar[i] == ' ' && i > 0 && i + 1 < bar.size() ? "·" : std::string(1, bar[i]);
  return fmt::format("```text\nmemory{}\n{}\n{}\n```\n\n",
                     b.total_is_device ? " of " + analyzer::format_size(b.total) : "", shown, legend);
}

std::string fixes_markdown(const std::vector<rules::Fix>& fixes) {
  if (fixes.empty()) return {};
  std::string md = "**Fixes**\n\n";
  for (const auto& f : fixes) {
    md += fmt::format("- `{}` {}", rules::to_string(f.safety), f.title);
    if (f.kind == rules::FixKind::env) md += " — " + code(f.env_name + "=" + f.env_value);
    if (!f.command.empty()) md += " — " + code(f.command);
    if (!f.detail.empty()) md += "  \n  " + f.detail;
    md += "\n";
  }
  return md + "\n";
}

}  // namespace

std::string incident_markdown(const rules::Diagnosis& d) {
  const auto& inc = d.incident();
  std::string md = fmt::format("### {} {} · {}\n\n{}\n\n", d.code, d.name, analyzer::to_string(inc.verdict.cls), d.message);
  if (d.frame)
    md += fmt::format("**In your code:** {}{}  \n", code(fmt::format("{}:{}", d.frame->file, d.frame->line)),
                      d.frame->function.empty() ? "" : " in " + code(d.frame->function));
  if (inc.first_failing_rank) {
    md += fmt::format("**Ranks:** first failing {}", *inc.first_failing_rank);
    if (inc.oom_ranks.size() > 1) md += "; out of memory on " + join(inc.oom_ranks);
    if (!inc.collateral_ranks.empty()) md += "; collateral failures on " + join(inc.collateral_ranks);
    md += "\n";
  }
  md += '\n';
  md += bar_block(inc.primary.numbers);
  md += d.explanation + "\n\n";
  md += fixes_markdown(d.fixes);
  if (!d.verify.empty()) md += fmt::format("**Verify**\n\n```sh\n{}\n```\n\n", d.verify);
  md += fmt::format("[{} documentation]({})\n", d.code, rules::rule_doc_url(d.code));
  return md;
}

std::string finding_markdown(const rules::Diagnosis& d) {
  return fmt::format("### {} {}\n\n{}\n\n{}\n\n```text\n{}\n```\n\n[{} documentation]({})\n", d.code, d.name, d.message,
                     d.explanation, d.finding().text, d.code, rules::rule_doc_url(d.code));
}

std::string markdown_to_plaintext(std::string_view markdown) {
  std::string out;
  std::size_t pos = 0;
  while (pos <= markdown.size()) {
    std::size_t nl = markdown.find('\n', pos);
    std::string_view line = markdown.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? markdown.size() + 1 : nl + 1;
    if (line.starts_with("```")) continue;  // fences go, their content stays
    if (line.starts_with("#")) {
      while (line.starts_with("#")) line.remove_prefix(1);
      if (line.starts_with(" ")) line.remove_prefix(1);
    }
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line.substr(i, 2) == "**") {
        ++i;
        continue;
      }
      if (line[i] == '`') continue;
      if (line[i] == '[') {  // [label](url) -> label (url)
        auto close = line.find("](", i);
        auto end = close == std::string_view::npos ? close : line.find(')', close);
        if (end != std::string_view::npos) {
          text += std::string(line.substr(i + 1, close - i - 1)) + " (" + std::string(line.substr(close + 2, end - close - 2)) + ")";
          i = end;
          continue;
        }
      }
      text += line[i];
    }
    if (text.size() >= 2 && text.ends_with("  ")) text.resize(text.size() - 2);  // Markdown hard breaks
    out += text;
    out += '\n';
  }
  while (out.ends_with("\n\n")) out.pop_back();
  return out;
}

std::string report_markdown(const rules::LogReport& report) {
  if (report.incidents.empty() && report.findings.empty())
    return fmt::format("No GPU out-of-memory failure found ({} lines).\n", report.lines);
  std::string md;
  for (const auto& item : report.incidents) md += incident_markdown(item) + "\n---\n\n";
  for (const auto& item : report.findings) md += finding_markdown(item) + "\n---\n\n";
  return md;
}

}  // namespace oomlens::lsp
