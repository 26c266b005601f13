"""One rank of a job: rank 1 fragments the allocator (as fragmenting_job),
the others stay well within memory."""
import os

import torch

GIB = 1 << 30
if os.environ.get("RANK") == "1":
    big = [torch.cuda.allocate(2 * GIB) for _ in range(7)]
    for block in big:
        torch.cuda.free(block)
    pieces = [torch.cuda.allocate(int(1.2 * GIB)) for _ in range(7)]
    extra = torch.cuda.allocate(4 * GIB)
else:
    torch.cuda.allocate(3 * GIB)
print("rank done")
