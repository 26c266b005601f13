#include <array>
#include <string>

#include "analyzer/parse/parser.hpp"
#include "analyzer/traceback.hpp"

namespace oomlens::analyzer::parse {

const std::vector<std::string>& anchor_literals() {
  // Each parser's trigger text contains one of these (case-insensitively).
  // Chosen to be rare in ordinary training output: a frequent anchor costs a
  // region (cleaning and parsing a few hundred lines) per hit.
  static const std::vector<std::string> literals = {
      "memory",            // every "out of memory" form, workspace, CPU allocator, illegal memory access
      "xhausted",          // RESOURCE_EXHAUSTED, Resource exhausted, ResourceExhaustedError
      "status_alloc_failed",  // CUBLAS_/CUDNN_STATUS_ALLOC_FAILED
      "oom when",          // TensorFlow "OOM when allocating tensor"
      "oom-kill", "oom_kill", "oomkill",  // kernel and Kubernetes OOM killers
      "killed",            // bash's "Killed", DataLoader worker killed by signal
      "signal",            // SIGTERM/SIGKILL of ranks, Signals.SIGKILL
      "watchdog",          // NCCL watchdog timeouts
      "childfailederror",  // torchrun's summary
      "exitcode",          // torchrun's "exitcode: -9"
      "device-side assert",
      "_alloc_conf",       // PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF / PYTORCH_HIP_ALLOC_CONF
      "xla_python_client", // JAX memory settings
      "tf_gpu_allocator",  // TensorFlow allocator setting
      "unhandled cuda error",  // NCCL
      "cache flush",       // DeepSpeed allocator cache flushes
      "bad_alloc",         // std::bad_alloc from host allocations
      "misaligned address",  // a CUDA bug often mistaken for memory trouble
      "exited unexpectedly",  // DataLoader workers
      "tf_force_gpu_allow_growth",
  };
  return literals;
}

const std::vector<bool>& anchors_needing_traceback() {
  // OOM messages need the lines above them (the traceback); signals,
  // settings and warnings are read from their own line and the ones after.
  static const std::vector<bool> deep = [] {
    std::vector<bool> v;
    for (const auto& literal : anchor_literals())
      v.push_back(literal == "memory" || literal == "xhausted" || literal == "status_alloc_failed" ||
                  literal == "oom when" || literal == "unhandled cuda error");
    return v;
  }();
  return deep;
}

void parse_region(const Region& region, Parsed& out) {
  static constexpr std::array<Parser, 10> kParsers = {
      parse_pytorch_allocator, parse_cuda_malloc_async, parse_mps,      parse_cuda_library,
      parse_xla,               parse_tensorflow,        parse_pressure_warning, parse_lookalike,
      parse_collateral,        parse_allocator_setting};
  std::size_t consumed_until = 0;  // anchors at or below a claimed message's last line are its own
  bool consumed_any = false;
  for (std::size_t at : region.anchors) {
    if (consumed_any && at <= consumed_until) continue;
    for (Parser parser : kParsers) {
      std::size_t before = out.ooms.size();
      if (auto last = parser(region, at, out)) {
        for (std::size_t k = before; k < out.ooms.size(); ++k) out.ooms[k].traceback = traceback_before(region, at);
        consumed_until = *last;
        consumed_any = true;
        break;
      }
    }
  }
}

}  // namespace oomlens::analyzer::parse
