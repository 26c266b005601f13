// A reader for the part of shell syntax that sets environment variables: words
// with their quoting, the commands they form, and the assignments among them.
// Not a full shell parser: control structures are seen as their commands, and
// expansions make a value non-constant rather than being evaluated.
#include <algorithm>
#include <cctype>

#include "analyzer/config/env_assignments.hpp"
#include "analyzer/config/literal_builder.hpp"

namespace oomlens::analyzer::config {
namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }
bool operator_char(char c) {
  return c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')';
}
bool word_end(char c) { return blank(c) || c == '\n' || c == '\r' || operator_char(c); }
bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Words that open a compound command or prefix one: the command proper follows.
bool reserved_prefix(std::string_view w) {
  return w == "if" || w == "then" || w == "else" || w == "elif" || w == "do" || w == "while" || w == "until" ||
         w == "{" || w == "!" || w == "time";
}

std::size_t skip_balanced(std::string_view t, std::size_t i, char open, char close) {
  int depth = 0;
  for (; i < t.size(); ++i) {
    if (t[i] == '\\') {
      ++i;
    } else if (t[i] == open) {
      ++depth;
    } else if (t[i] == close && --depth == 0) {
      return i + 1;
    }
  }
  return t.size();
}

// The end of the word that starts at `i`.
std::size_t word_end_at(std::string_view t, std::size_t i) {
  while (i < t.size()) {
    char c = t[i];
    if (c == '\\') {
      i = std::min(t.size(), i + 2);
    } else if (c == '\'') {
      auto j = t.find('\'', i + 1);
      i = j == std::string_view::npos ? t.size() : j + 1;
    } else if (c == '"') {
      ++i;
      while (i < t.size() && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
      i = std::min(t.size(), i + 1);
    } else if (c == '$' && i + 1 < t.size() && (t[i + 1] == '(' || t[i + 1] == '{')) {
      i = skip_balanced(t, i + 1, t[i + 1], t[i + 1] == '(' ? ')' : '}');
    } else if (c == '`') {
      auto j = t.find('`', i + 1);
      i = j == std::string_view::npos ? t.size() : j + 1;
    } else if (word_end(c)) {
      break;
    } else {
      ++i;
    }
  }
  return i;
}

struct Decoded {
  python::StringLiteral value;
  bool constant = true;
};

// The word's bytes [from, end) with the quoting removed, as the shell reads them.
Decoded decode(std::string_view t, std::size_t from, std::size_t end) {
  LiteralBuilder b;
  bool constant = true;
  std::size_t i = from;
  while (i < end) {
    char c = t[i];
    if (c == '\\') {
      if (i + 1 >= end) {
        b.verbatim(i, t.substr(i, 1));
        ++i;
      } else {
        if (t[i + 1] != '\n') b.decoded(i, i + 2, t.substr(i + 1, 1));  // `\x` is x; `\`+newline is nothing
        i += 2;
      }
    } else if (c == '\'') {
      auto j = std::min(end, t.find('\'', i + 1));
      b.verbatim(i + 1, t.substr(i + 1, j - i - 1));
      i = j + 1;
    } else if (c == '"') {
      ++i;
      while (i < end && t[i] != '"') {
        if (t[i] == '\\' && i + 1 < end && std::string_view("$`\"\\\n").find(t[i + 1]) != std::string_view::npos) {
          if (t[i + 1] != '\n') b.decoded(i, i + 2, t.substr(i + 1, 1));
          i += 2;
          continue;
        }
        if (t[i] == '$' || t[i] == '`') constant = false;
        b.verbatim(i, t.substr(i, 1));
        ++i;
      }
      ++i;
    } else {
      if (c == '$' || c == '`') constant = false;
      b.verbatim(i, t.substr(i, 1));
      ++i;
    }
  }
  return {b.finish(from, std::min(end, t.size())), constant};
}

// `NAME=` at the start of the word, unquoted: the offset of `=`.
std::optional<std::size_t> assignment_eq(std::string_view t, std::size_t begin, std::size_t end) {
  if (begin >= end || !name_start(t[begin])) return std::nullopt;
  std::size_t i = begin + 1;
  while (i < end && name_char(t[i])) ++i;
  if (i < end && t[i] == '=') return i;
  return std::nullopt;
}

class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}

  void run() {
    std::size_t i = 0;
    while (i < t_.size()) {
      char c = t_[i];
      if (blank(c) || c == '\r') {
        ++i;
      } else if (c == '\\' && i + 1 < t_.size() && t_[i + 1] == '\n') {
        i += 2;
      } else if (c == '\n') {
        end_command();
        i = skip_heredocs(i + 1);
        line_ = i;
      } else if (c == '#') {
        while (i < t_.size() && t_[i] != '\n') ++i;
      } else if (c == '<' && t_.substr(i, 2) == "<<" && t_.substr(i, 3) != "<<<") {
        i = heredoc_operator(i + 2);
      } else if (c == '<' || c == '>') {
        // A redirection: its target word is no argument.
        while (i < t_.size() && (t_[i] == '<' || t_[i] == '>' || t_[i] == '&' || t_[i] == '|')) ++i;
        while (i < t_.size() && blank(t_[i])) ++i;
        if (i < t_.size() && !word_end(t_[i])) i = word_end_at(t_, i);
      } else if (operator_char(c)) {
        end_command();
        ++i;
      } else {
        std::size_t e = word_end_at(t_, i);
        word(i, std::max(e, i + 1));
        i = std::max(e, i + 1);
      }
    }
    end_command();
  }

  std::vector<EnvAssignment> assignments;
  std::vector<ShellCommand> commands;

 private:
  enum class Mode { start, declare, env, env_skip_next, args };

  void word(std::size_t b, std::size_t e) {
    auto eq = assignment_eq(t_, b, e);
    switch (mode_) {
      case Mode::start:
        if (eq) {
          start(b);
          add(b, *eq, e, AssignmentForm::command_prefix);
          prefix_.push_back(assignments.size() - 1);
          return;
        }
        {
          std::string w = decode(t_, b, e).value.value;
          if (reserved_prefix(w)) {
            begin_ = npos;
            prefix_.clear();
            return;
          }
          start(b);
          program_ = w;
          if (w == "export" || w == "declare" || w == "typeset" || w == "local" || w == "readonly") {
            mode_ = Mode::declare;
            declare_exports_ = w == "export";
          } else {
            mode_ = w == "env" ? Mode::env : Mode::args;
          }
        }
        return;
      case Mode::declare:
        if (t_[b] == '-') {
          if (t_.substr(b, e - b).find('x') != std::string_view::npos) declare_exports_ = true;
        } else if (eq) {
          add(b, *eq, e, declare_exports_ ? AssignmentForm::exported : AssignmentForm::plain);
        }
        return;
      case Mode::env_skip_next:
        mode_ = Mode::env;
        return;
      case Mode::env:
        if (t_[b] == '-') {
          auto w = t_.substr(b, e - b);
          if (w == "-u" || w == "--unset" || w == "-C" || w == "--chdir" || w == "-S") mode_ = Mode::env_skip_next;
          return;
        }
        if (eq) return add(b, *eq, e, AssignmentForm::env_command);
        mode_ = Mode::args;
        words_.push_back(decode(t_, b, e).value.value);
        return;
      case Mode::args:
        words_.push_back(decode(t_, b, e).value.value);
        return;
    }
  }

  void start(std::size_t b) {
    if (begin_ != npos) return;
    begin_ = b;
    begin_line_ = line_;
  }

  void add(std::size_t b, std::size_t eq, std::size_t e, AssignmentForm form) {
    EnvAssignment a;
    a.name = std::string(t_.substr(b, eq - b));
    auto d = decode(t_, eq + 1, e);
    a.value = std::move(d.value);
    a.constant = d.constant;
    a.name_begin = b;
    a.statement_begin = begin_ == npos ? b : begin_;
    a.form = form;
    assignments.push_back(std::move(a));
  }

  void end_command() {
    if (mode_ == Mode::start)
      for (auto i : prefix_) assignments[i].form = AssignmentForm::plain;  // no command: a shell variable
    if (!program_.empty()) commands.push_back({begin_, begin_line_, program_, std::move(words_)});
    mode_ = Mode::start;
    begin_ = npos;
    prefix_.clear();
    program_.clear();
    words_.clear();
    declare_exports_ = false;
  }

  // After `<<` or `<<-`: read the delimiter; its body starts on the next line.
  std::size_t heredoc_operator(std::size_t i) {
    bool strip_tabs = i < t_.size() && t_[i] == '-';
    if (strip_tabs) ++i;
    while (i < t_.size() && blank(t_[i])) ++i;
    std::size_t e = word_end_at(t_, i);
    if (e > i) heredocs_.push_back({decode(t_, i, e).value.value, strip_tabs});
    return e;
  }

  // Skips the bodies of pending here-documents, starting at a line start.
  std::size_t skip_heredocs(std::size_t i) {
    for (const auto& [delim, strip_tabs] : heredocs_) {
      while (i < t_.size()) {
        auto nl = t_.find('\n', i);
        std::size_t le = nl == std::string_view::npos ? t_.size() : nl;
        std::string_view line = t_.substr(i, le - i);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (strip_tabs)
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        i = nl == std::string_view::npos ? t_.size() : nl + 1;
        if (line == delim) break;
      }
    }
    heredocs_.clear();
    return i;
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::string_view t_;
  Mode mode_ = Mode::start;
  std::size_t begin_ = npos;
  std::size_t line_ = 0;        // where the current logical line starts (after a real newline)
  std::size_t begin_line_ = 0;  // the logical line of begin_
  std::vector<std::size_t> prefix_;
  std::string program_;
  std::vector<std::string> words_;
  bool declare_exports_ = false;
  std::vector<std::pair<std::string, bool>> heredocs_;
};

}  // namespace

std::vector<EnvAssignment> shell_assignments(std::string_view text) {
  Scanner s(text);
  s.run();
  return std::move(s.assignments);
}

std::vector<ShellCommand> shell_commands(std::string_view text) {
  Scanner s(text);
  s.run();
  return std::move(s.commands);
}

}  // namespace oomlens::analyzer::config
