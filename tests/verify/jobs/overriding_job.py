"""A job that sets its own allocator configuration before CUDA starts,
replacing what it was given."""
import os

import torch

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"
GIB = 1 << 30
big = [torch.cuda.allocate(2 * GIB) for _ in range(7)]
for block in big:
    torch.cuda.free(block)
pieces = [torch.cuda.allocate(int(1.2 * GIB)) for _ in range(7)]
extra = torch.cuda.allocate(4 * GIB)
