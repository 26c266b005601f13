"""A job whose live tensors need more than the device holds: no allocator
setting helps."""
import torch

GIB = 1 << 30
held = [torch.cuda.allocate(6 * GIB) for _ in range(3)]
print("training finished")
