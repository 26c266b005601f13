// The report for people: one block per incident, ruff/rustc style.
#include <algorithm>
#include <fmt/format.h>

#include "analyzer/size.hpp"
#include "cli/report.hpp"
#include "rules/breakdown.hpp"
#include "rules/diagnose_log.hpp"

namespace oomlens::cli {
namespace {

using analyzer::format_size;
using rules::MemoryPart;

struct Paint {
  bool on;
  std::string operator()(const char* code, const std::string& s) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : s;
  }
};

const char* part_color(MemoryPart::Kind k) {
  switch (k) {
    case MemoryPart::Kind::allocated: return "34";             // blue: live tensors
    case MemoryPart::Kind::reserved_unallocated: return "33";  // yellow: cached, free
    case MemoryPart::Kind::non_pytorch: return "35";           // magenta
    case MemoryPart::Kind::other_processes: return "31";       // red
    case MemoryPart::Kind::unaccounted: return "90";
    case MemoryPart::Kind::free: return "32";
  }
  return "0";
}

const char* severity_color(rules::Severity s) {
  switch (s) {
    case rules::Severity::error: return "1;31";
    case rules::Severity::warning: return "1;33";
    default: return "1;36";
  }
}

void render_bar(std::ostream& out, const analyzer::MemoryNumbers& n, const TextStyle& style, const Paint& paint) {
  auto b = rules::memory_breakdown(n);
  if (b.parts.empty()) return;
  std::string bar;
  std::size_t drawn = 0;
  for (auto k : rules::bar_cells(b, style.bar_width)) {
    bar += paint(part_color(k), k == MemoryPart::Kind::free && style.color ? "·" : rules::bar_glyph(k));
    ++drawn;
  }
  bar.append(style.bar_width > drawn ? style.bar_width - drawn : 0, ' ');
  out << fmt::format("  memory{}: [{}]\n", b.total_is_device ? " of " + format_size(b.total) : "", bar);
  std::string legend;
  for (const auto& p : b.parts)
    legend += fmt::format("   {} {} {}", paint(part_color(p.kind), p.kind == MemoryPart::Kind::free ? "·" : rules::bar_glyph(p.kind)),
                          p.label, format_size(p.bytes));
  out << "         " << legend << "\n";
}

std::string location_of(const std::string& path, std::uint64_t line) {
  return fmt::format("{}:{}", path == "-" ? "<stdin>" : path, line);
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

std::string ranks_line(const analyzer::Incident& inc) {
  if (!inc.first_failing_rank && inc.oom_ranks.empty()) return {};
  std::string s;
  if (inc.first_failing_rank) {
    s = fmt::format("first failing rank {}", *inc.first_failing_rank);
    switch (inc.order) {
      case analyzer::FailureOrder::timestamps: s += " (by timestamps)"; break;
      case analyzer::FailureOrder::launcher: s += " (by the launcher's summary)"; break;
      case analyzer::FailureOrder::print_order: s += " (printed first; no timestamps)"; break;
      default: break;
    }
  } else {
    s = "first failing rank unknown";
  }
  if (inc.oom_ranks.size() > 1) s += fmt::format("; OOM on ranks {}", join(inc.oom_ranks));
  if (!inc.collateral_ranks.empty()) s += fmt::format("; collateral failures on ranks {}", join(inc.collateral_ranks));
  return s;
}

// The numbers a rank's own message gives, briefly.
std::string key_numbers(const analyzer::MemoryNumbers& n) {
  std::string s;
  auto add = [&](const char* what, const std::optional<std::uint64_t>& v) {
    if (v) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", what, format_size(*v));
  };
  add("requested", n.requested);
  add("allocated", n.allocated);
  add("reserved-unallocated", n.reserved_unallocated);
  add("free", n.free);
  add("limit", n.limit);
  return s;
}

void render_ranks(std::ostream& out, const FileReport& file, const analyzer::Incident& inc) {
  if (inc.per_rank.size() > 1) {
    constexpr std::size_t kRanksShown = 16;
    out << "  per rank:\n";
    for (std::size_t i = 0; i < inc.per_rank.size() && i < kRanksShown; ++i) {
      const auto& r = inc.per_rank[i];
      std::string who = r.rank ? fmt::format("rank {}", *r.rank) : std::string("no rank");
      std::string numbers = key_numbers(r.numbers);
      out << fmt::format("    {:<8} {:<13} {}{}\n", who, analyzer::to_string(r.cls),
                         location_of(file.path_of(r.file), r.line), numbers.empty() ? "" : "  " + numbers);
    }
    if (inc.per_rank.size() > kRanksShown)
      out << fmt::format("    ... and {} more ranks (all in --format json)\n", inc.per_rank.size() - kRanksShown);
  }
  if (!inc.collateral.empty()) {
    constexpr std::size_t kShown = 8;
    out << "  launcher and other ranks:\n";
    for (std::size_t i = 0; i < inc.collateral.size() && i < kShown; ++i) {
      const auto& f = inc.collateral[i];
      out << fmt::format("    {}{}  {}\n", location_of(file.path_of(f.file), f.line),
                         f.rank ? fmt::format(" (rank {})", *f.rank) : "", f.detail.empty() ? f.text : f.detail);
    }
    if (inc.collateral.size() > kShown) out << fmt::format("    ... and {} more\n", inc.collateral.size() - kShown);
  }
}

// A diagnosis' first line: where, its severity and rule, its message.
void render_headline(std::ostream& out, const FileReport& file, const rules::Diagnosis& d, const Paint& paint) {
  out << paint("1", location_of(file.path_of(d.location.file), d.location.line)) << ": "
      << paint(severity_color(d.severity), fmt::format("{}[{}]", rules::to_string(d.severity), d.code)) << " "
      << d.message << "\n";
}

void render_incident(std::ostream& out, const FileReport& file, const rules::Diagnosis& d, const TextStyle& style,
                     const Paint& paint) {
  const auto& inc = d.incident();
  render_headline(out, file, d, paint);
  out << fmt::format("  class: {} ({})\n", paint("1", analyzer::to_string(inc.verdict.cls)), d.name);
  if (d.frame)
    out << fmt::format("  in your code: {}:{}{}\n", d.frame->file, d.frame->line,
                       d.frame->function.empty() ? "" : " in " + d.frame->function);
  if (auto r = ranks_line(inc); !r.empty()) out << "  ranks: " << r << "\n";
  render_ranks(out, file, inc);
  render_bar(out, inc.primary.numbers, style, paint);
  if (!inc.verdict.arithmetic.empty() || !inc.verdict.secondary.empty()) {
    out << "  why:\n";
    for (const auto& a : inc.verdict.arithmetic)
      if (!a.empty()) out << "    - " << a << "\n";
    for (const auto& c : inc.verdict.secondary)
      out << fmt::format("    - also {}: {}{}\n", analyzer::to_string(c.cls), c.bytes ? format_size(c.bytes) + " " : "",
                         c.what);
  }
  for (const auto& note : inc.verdict.notes) out << "  note: " << note << "\n";
  for (const auto& note : inc.notes) out << "  note: " << note << "\n";
  if (!d.fixes.empty()) {
    out << "  fixes:\n";
    for (const auto& f : d.fixes) {
      const char* color = f.safety == rules::FixSafety::safe ? "32" : f.safety == rules::FixSafety::unsafe ? "33" : "90";
      out << fmt::format("    {} {}\n", paint(color, fmt::format("{:<14}", fmt::format("[{}]", rules::to_string(f.safety)))),
                         f.title);
      if (!f.command.empty()) out << "                   $ " << f.command << "\n";
    }
  }
  if (!d.verify.empty()) out << "  verify:\n    $ " << d.verify << "\n";
  out << "\n";
}

}  // namespace

void render_text(std::ostream& out, const std::vector<FileReport>& files, const TextStyle& style) {
  Paint paint{style.color};
  std::size_t incidents = 0, findings = 0;
  for (const auto& file : files) {
    // The incidents first, then the other findings, each cause once (its
    // repeats counted): a log with thousands of warnings does not bury its
    // failures.
    const auto& rep = file.report;
    for (const auto& item : rep.incidents) render_incident(out, file, item, style, paint);
    for (const auto& f : rep.findings) {
      render_headline(out, file, f, paint);
      out << "\n";
    }
    // Past the analyzer's bound the messages are only counted: say so,
    // rather than present the incidents above as all there is.
    if (std::string note = rules::not_analysed_note(rep); !note.empty())
      out << fmt::format("{}: {}: {}\n\n", file.path == "-" ? "standard input" : file.path, paint("33", "warning"),
                         note);
    incidents += rep.incidents.size();
    findings += rep.findings.size();
  }
  std::size_t inputs = 0;
  for (const auto& f : files) inputs += std::max<std::size_t>(1, f.inputs.size());
  std::string where = files.size() == 1 ? (files[0].path == "-" ? "standard input" : files[0].path)
                                        : fmt::format("{} inputs", inputs);
  if (files.size() == 1 && files[0].inputs.size() > 1) where += fmt::format(", {} files of one job", inputs);
  std::uint64_t lines = 0;
  for (const auto& f : files) lines += f.report.lines;
  if (incidents == 0)
    out << fmt::format("No GPU out-of-memory failure in {} ({} lines){}.\n", where, lines,
                       findings ? fmt::format("; {} other finding{}", findings, findings == 1 ? "" : "s") : "");
  else
    out << fmt::format("{} GPU out-of-memory incident{} in {} ({} lines){}.\n", incidents, incidents == 1 ? "" : "s",
                       where, lines, findings ? fmt::format("; {} other finding{}", findings, findings == 1 ? "" : "s") : "");
}

}  // namespace oomlens::cli
