#include "analyzer/log/warm_up.hpp"

#include <string_view>

#include "analyzer/log/analyzer.hpp"

namespace oomlens::analyzer {
namespace {

// One message of each family, in the formats of the runtimes that print them
// (docs/ and the parsers' comments give each), behind the prefixes launchers
// and loggers add, with a progress bar's redraws: every parser's trigger
// and the line reader's prefix paths are met at least once.
constexpr std::string_view kSample =
    "[rank0]:2026-03-01 12:00:00,001 INFO [train.py:301] epoch 0 step 10 loss 9.4161 lr 3.00e-04\n"
    "Epoch 1:  12%|#         | 120/1000 [00:10<01:20, 11.0it/s]\rEpoch 1:  13%|#         | 130/1000 [00:11<01:19, "
    "11.0it/s]\n"
    "[rank0]: Traceback (most recent call last):\n"
    "[rank0]:   File \"/work/train.py\", line 42, in <module>\n"
    "[rank0]:     loss = model(batch).sum()\n"
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
    "of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in "
    "use. Of the allocated memory 70.50 GiB is allocated by PyTorch, and 6.40 GiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
    "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
    "RuntimeError: CUDA error: out of memory\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
    "be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n"
    "RuntimeError: DataLoader worker (pid 5351) is killed by signal: Killed.\n"
    "RuntimeError: DataLoader worker (pid(s) 5351) exited unexpectedly\n"
    "[Mon Mar  1 12:00:05 2026] Out of memory: Killed process 4242 (python) total-vm:123456kB, "
    "anon-rss:654321kB, file-rss:0kB\n"
    "[Mon Mar  1 12:00:05 2026] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
    "global_oom,task_memcg=/,task=python,pid=4242,uid=0\n"
    "./run.sh: line 12:  4242 Killed                  python train.py\n"
    "RuntimeError: DefaultCPUAllocator: can't allocate memory: you tried to allocate 1073741824 bytes. Error "
    "code 12 (Cannot allocate memory)\n"
    "MemoryError\n"
    "[rank3]:[E301 12:10:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
    "600123 milliseconds before timing out.\n"
    "W0301 12:10:01.000000 4242 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 4243 "
    "closing signal SIGTERM\n"
    "E0301 12:10:02.000000 4242 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) "
    "local_rank: 0 (pid: 4243) of binary: /usr/bin/python\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    "============================================================\n"
    "train.py FAILED\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : -9 (pid: 4243)\n"
    "  traceback : Signal 9 (SIGKILL) received by PID 4243\n"
    "============================================================\n"
    "[2026-03-01 12:00:03,000] [WARNING] [stage3.py:1850:step] 4 pytorch allocator cache flushes since last "
    "step. this happens when there is high memory pressure and is detrimental to performance.\n"
    "2026-03-01 12:00:04.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:290] Garbage collection: "
    "deallocate free memory regions (i.e., allocations) so that we can re-allocate a larger region to avoid "
    "OOM due to memory fragmentation.\n"
    "2026-03-01 12:00:04.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) "
    "ran out of memory trying to allocate 2.00GiB (rounded to 2147483648)requested by op MatMul\n"
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
    "shape[1024,1024,512] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator "
    "GPU_0_bfc\n"
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
    "2147483648 bytes.\n"
    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:128\n";

}  // namespace

void warm_up() { (void)analyze_text(kSample); }

std::string_view warm_up_sample() { return kSample; }

}  // namespace oomlens::analyzer
