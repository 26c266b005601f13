#include "analyzer/log/event.hpp"

namespace oomlens::analyzer {

const char* to_string(Device d) {
  switch (d) {
    case Device::cuda: return "cuda";
    case Device::hip: return "hip";
    case Device::mps: return "mps";
    case Device::xpu: return "xpu";
    case Device::tpu: return "tpu";
    case Device::mlu: return "mlu";
    case Device::npu: return "npu";
    case Device::gcu: return "gcu";
    case Device::hpu: return "hpu";
    case Device::musa: return "musa";
    case Device::unknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(Framework f) {
  switch (f) {
    case Framework::pytorch: return "pytorch";
    case Framework::jax: return "jax";
    case Framework::tensorflow: return "tensorflow";
    case Framework::unknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(OomFamily f) {
  switch (f) {
    case OomFamily::pytorch_allocator: return "pytorch_allocator";
    case OomFamily::cuda_malloc_async: return "cuda_malloc_async";
    case OomFamily::mps: return "mps";
    case OomFamily::cuda_runtime: return "cuda_runtime";
    case OomFamily::cublas: return "cublas";
    case OomFamily::cudnn: return "cudnn";
    case OomFamily::nccl: return "nccl";
    case OomFamily::xla: return "xla";
    case OomFamily::tensorflow: return "tensorflow";
    case OomFamily::memory_summary: return "memory_summary";
    case OomFamily::generic: return "generic";
  }
  return "unknown";
}

const char* to_string(FindingKind k) {
  switch (k) {
    case FindingKind::allocator_pressure: return "allocator_pressure";
    case FindingKind::host_oom_kill: return "host_oom_kill";
    case FindingKind::dataloader_killed: return "dataloader_killed";
    case FindingKind::cpu_alloc_failure: return "cpu_alloc_failure";
    case FindingKind::not_memory_error: return "not_memory_error";
    case FindingKind::collateral: return "collateral";
    case FindingKind::allocator_setting: return "allocator_setting";
  }
  return "unknown";
}

}  // namespace oomlens::analyzer
