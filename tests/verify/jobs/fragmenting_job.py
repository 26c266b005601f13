"""A training job that fragments the caching allocator, as PyTorch would:
seven 2 GiB blocks are freed and replaced by 1.2 GiB ones, each splitting a
cached segment; a 4 GiB request then finds 5.6 GiB free only in pieces.
With expandable_segments:True the freed memory is reused and it fits.
Prints a progress bar with bare carriage returns, as tqdm does."""
import sys
import time

import torch

GIB = 1 << 30
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for step in range(steps):
    sys.stdout.write("\rstep %d/%d |%s|" % (step + 1, steps, "#" * (step + 1)))
    sys.stdout.flush()
    time.sleep(0.05)
print()
big = [torch.cuda.allocate(2 * GIB) for _ in range(7)]
for block in big:
    torch.cuda.free(block)
pieces = [torch.cuda.allocate(int(1.2 * GIB)) for _ in range(7)]
extra = torch.cuda.allocate(4 * GIB)
print("training finished")
