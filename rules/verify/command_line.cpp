#include "rules/verify/command_line.hpp"

#include <fmt/format.h>

#include <cctype>

namespace oomlens::rules::verify {

std::string shell_quote(std::string_view word) {
  bool plain = !word.empty();
  for (char c : word)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("/._-+:,=@%").find(c) != std::string_view::npos))
      plain = false;
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string verify_command(std::string_view variable, std::string_view value, std::string_view run, bool baseline) {
  if (variable.empty()) return fmt::format("oomlens verify -- {}", run);
  std::string mode = baseline ? "--baseline " : "";
  if (variable == "PYTORCH_CUDA_ALLOC_CONF")
    return fmt::format("oomlens verify {}--conf {} -- {}", mode, shell_quote(value), run);
  return fmt::format("oomlens verify {}--env {} -- {}", mode, shell_quote(fmt::format("{}={}", variable, value)), run);
}

}  // namespace oomlens::rules::verify
