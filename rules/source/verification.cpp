#include "rules/source/verification.hpp"

#include <fmt/format.h>

#include "rules/verify/command_line.hpp"

namespace oomlens::rules {

std::string verification_command(const analyzer::python::Script& script, std::string_view script_path,
                                 std::string_view variable, std::string_view option) {
  bool distributed = !script.calls_to("torch.distributed.init_process_group").empty();
  std::string launcher = distributed ? "torchrun --nproc_per_node=gpu" : "python";
  return verify::verify_command(variable, option,
                                fmt::format("{} {}", launcher, verify::shell_quote(script_path)));
}

}  // namespace oomlens::rules
