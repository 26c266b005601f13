"""A stand-in for torch, for testing `oomlens verify` without a GPU.

It has exactly the surface the oomlens probe touches (torch.cuda's lazy
initialisation and queued calls, memory_stats, the out-of-memory observer,
_snapshot's allocator_settings) and a small caching allocator that behaves as
PyTorch's does where the tests need it: the allocator settings are read from
PYTORCH_CUDA_ALLOC_CONF once, when CUDA starts; without expandable segments
freed blocks stay in their segments, so a large request fails although
enough memory is free in pieces; with them it fits. Failures print
PyTorch 2.2's message format.
"""

__version__ = "2.5.1+fake"

from . import _C, cuda  # noqa: E402,F401


class OutOfMemoryError(RuntimeError):
    pass


cuda.OutOfMemoryError = OutOfMemoryError
