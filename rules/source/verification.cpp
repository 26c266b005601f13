#include "rules/source/verification.hpp"

#include <fmt/format.h>

#include <cctype>

namespace oomlens::rules {

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

Verification verification_commands(const analyzer::python::Script& script, std::string_view script_path,
                                   std::string_view variable, std::string_view option) {
  bool distributed = !script.calls_to("torch.distributed.init_process_group").empty();
  std::string launcher = distributed ? "torchrun --nproc_per_node=gpu" : "python";
  std::string run = fmt::format("{} {}", launcher, shell_quote(script_path));
  return {fmt::format("{}={} {}", variable, shell_quote(option), run), fmt::format("env -u {} {}", variable, run)};
}

}  // namespace oomlens::rules
