"""torch.cuda: lazy initialisation and one simulated device."""

import os

from . import memory  # noqa: F401

GIB = 1 << 30
TOTAL = 16 * GIB

_initialized = False
_queued_calls = []
_settings = {}
_segments = []  # [size, used]: one block a segment, the rest of it free
_stats = {"num_alloc_retries": 0, "num_ooms": 0, "reserved_peak": 0, "allocated_peak": 0}


def _lazy_call(callable, **kwargs):
    if os.environ.get("FAKE_TORCH_WITHOUT_HOOKS"):
        # A torch whose internals moved: the probe must carry on without them.
        raise AttributeError("_lazy_call")
    if _initialized:
        callable()
    else:
        _queued_calls.append(callable)


def _lazy_init():
    global _initialized
    if _initialized:
        return
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    for entry in filter(None, (e.strip() for e in conf.split(","))):
        key, _, value = entry.partition(":")
        if key not in ("expandable_segments", "max_split_size_mb", "backend", "garbage_collection_threshold"):
            raise RuntimeError("Unrecognized CachingAllocator option: " + key)
        _settings[key] = value
    _initialized = True
    for call in _queued_calls:
        call()


def is_initialized():
    return _initialized


def is_available():
    return True


def device_count():
    return 1


class _Properties:
    name = "Fake GPU 16GB"
    total_memory = TOTAL


def get_device_properties(index):
    return _Properties()


def get_allocator_backend():
    return "cudaMallocAsync" if _settings.get("backend") == "cudaMallocAsync" else "native"


def _expandable():
    return _settings.get("expandable_segments") == "True" and get_allocator_backend() == "native"


def _reserved():
    return sum(size for size, _ in _segments)


def _allocated():
    return sum(used for _, used in _segments)


def _gib(n):
    return "%.2f GiB" % (n / GIB)


def _fail(size):
    from .. import OutOfMemoryError, _C

    _stats["num_ooms"] += 1
    for observer in _C._oom_observers:
        observer(0, size, TOTAL, TOTAL - _reserved())
    raise OutOfMemoryError(
        "CUDA out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of which %s is free. "
        "Including non-PyTorch memory, this process has %s memory in use. Of the allocated memory %s is allocated "
        "by PyTorch, and %s is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
        "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
        "for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
        % (_gib(size), _gib(TOTAL), _gib(TOTAL - _reserved()), _gib(_reserved()), _gib(_allocated()),
           _gib(_reserved() - _allocated()))
    )


def allocate(size):
    """Returns a handle for `size` bytes of simulated device memory."""
    _lazy_init()
    if _expandable():
        if _allocated() + size > TOTAL:
            _fail(size)
        # One growing segment: freed memory is reused for any size.
        if not _segments:
            _segments.append([0, 0])
        segment = _segments[0]
        segment[1] += size
        segment[0] = max(segment[0], segment[1])
        handle = (0, size)
    else:
        handle = None
        for index, segment in enumerate(_segments):
            if segment[1] == 0 and segment[0] >= size:
                segment[1] = size  # split: the tail stays free in this segment
                handle = (index, size)
                break
        if handle is None:
            if _reserved() + size > TOTAL:
                # The expensive path: free every empty segment and retry.
                _stats["num_alloc_retries"] += 1
                _segments[:] = [s if s[1] else [0, 0] for s in _segments]
                if _reserved() + size > TOTAL:
                    _fail(size)
            _segments.append([size, size])
            handle = (len(_segments) - 1, size)
    _stats["reserved_peak"] = max(_stats["reserved_peak"], _reserved())
    _stats["allocated_peak"] = max(_stats["allocated_peak"], _allocated())
    return handle


def free(handle):
    index, size = handle
    _segments[index][1] -= size


def memory_reserved(device=None):
    return _reserved()


def memory_allocated(device=None):
    return _allocated()


def memory_stats(device=None):
    if not _initialized:
        return {}
    return {
        "reserved_bytes.all.peak": _stats["reserved_peak"],
        "reserved_bytes.all.current": _reserved(),
        "allocated_bytes.all.peak": _stats["allocated_peak"],
        "allocated_bytes.all.current": _allocated(),
        "inactive_split_bytes.all.current": _reserved() - _allocated(),
        "inactive_split_bytes.all.peak": _reserved() - _allocated(),
        "num_alloc_retries": _stats["num_alloc_retries"],
        "num_ooms": _stats["num_ooms"],
    }
