"""torch.cuda.memory: the snapshot entry points."""

import pickle

_recording = {"on": False}


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0, device=None):
    _recording["on"] = True


def _snapshot(device=None):
    from . import _segments, _settings, get_allocator_backend

    expandable = _settings.get("expandable_segments") == "True" and get_allocator_backend() == "native"
    split = _settings.get("max_split_size_mb")
    return {
        "segments": [
            {"device": 0, "total_size": size, "allocated_size": used, "is_expandable": expandable, "blocks": []}
            for size, used in _segments
            if size
        ],
        "device_traces": [[]],
        "allocator_settings": {
            "PYTORCH_CUDA_ALLOC_CONF": ",".join("%s:%s" % kv for kv in _settings.items()),
            "expandable_segments": expandable,
            "max_split_size": int(split) << 20 if split else -1,
        },
    }


def _dump_snapshot(filename="dump_snapshot.pickle"):
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f, protocol=4)
