#include "lsp/markdown.hpp"

#include <algorithm>
#include <variant>

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
    if (f.kind == rules::FixKind::env) md += " — " + markdown_code(f.env_name + "=" + f.env_value);
    if (!f.command.empty()) md += " — " + markdown_code(f.command);
    if (!f.detail.empty()) md += "  \n  " + f.detail;
    md += "\n";
  }
  return md + "\n";
}

// "requested_bytes" -> "requested 4.00 GiB"; a figure that is no size as it is.
std::string evidence_item(const rules::Evidence& e) {
  std::string_view name = e.name;
  const bool bytes = name.ends_with("_bytes");
  if (bytes) name.remove_suffix(6);
  std::string label(name);
  for (char& c : label)
    if (c == '_') c = ' ';
  return label + " " + (bytes ? analyzer::format_size(e.value) : std::to_string(e.value));
}

// An incident's ranks: which failed first, which ran out, which followed.
std::string ranks_line(const analyzer::Incident& inc) {
  if (!inc.first_failing_rank) return {};
  std::string md = fmt::format("**Ranks:** first failing {}", *inc.first_failing_rank);
  if (inc.oom_ranks.size() > 1) md += "; out of memory on " + join(inc.oom_ranks);
  if (!inc.collateral_ranks.empty()) md += "; collateral failures on " + join(inc.collateral_ranks);
  return md + "\n";
}

std::string figures_line(const std::vector<rules::Evidence>& evidence) {
  if (evidence.empty()) return {};
  std::string md = "**Evidence:** ";
  for (std::size_t i = 0; i < evidence.size(); ++i) md += (i ? " · " : "") + evidence_item(evidence[i]);
  return md + "\n\n";
}

}  // namespace

std::string markdown_code(std::string_view text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  std::string cleaned;
  for (char c : text) cleaned += (c == '\n' || c == '\r') ? ' ' : c;
  bool pad = !cleaned.empty() && (cleaned.front() == '`' || cleaned.back() == '`');
  return fence + (pad ? " " : "") + cleaned + (pad ? " " : "") + fence;
}

std::string diagnosis_markdown(const rules::Diagnosis& d) {
  const bool incident = std::holds_alternative<analyzer::Incident>(d.subject);
  const bool finding = std::holds_alternative<analyzer::LogFinding>(d.subject);
  std::string md = fmt::format("### {} {}", d.code, d.name);
  if (incident) md += " · " + std::string(analyzer::to_string(d.incident().verdict.cls));
  md += fmt::format("\n\n{}\n\n", d.message);
  if (d.frame)
    md += fmt::format("**In your code:** {}{}  \n", markdown_code(fmt::format("{}:{}", d.frame->file, d.frame->line)),
                      d.frame->function.empty() ? "" : " in " + markdown_code(d.frame->function));
  // The evidence as its input shows it best: an incident's memory as a bar,
  // a finding's line as the log printed it, otherwise the named figures.
  if (incident) {
    md += ranks_line(d.incident()) + "\n" + bar_block(d.incident().primary.numbers);
  } else {
    if (d.frame) md += "\n";
    if (!finding) md += figures_line(d.evidence);
  }
  md += d.explanation + "\n\n";
  if (finding) md += fmt::format("```text\n{}\n```\n\n", d.finding().text);
  md += fixes_markdown(d.fixes);
  if (!d.verify.empty()) md += fmt::format("**Verify**\n\n```sh\n{}\n```\n\n", d.verify);
  md += fmt::format("[{} documentation]({})\n", d.code, rules::rule_doc_url(d.code));
  return md;
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
  for (const auto& item : report.incidents) md += diagnosis_markdown(item) + "\n---\n\n";
  for (const auto& item : report.findings) md += diagnosis_markdown(item) + "\n---\n\n";
  return md;
}

}  // namespace oomlens::lsp
