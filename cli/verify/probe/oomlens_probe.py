"""The oomlens probe's measuring half, loaded by sitecustomize.py only once
the job imported torch (a process without torch never compiles it).

It asks to be called right after CUDA starts (torch.cuda._lazy_call): there
it attaches PyTorch's out-of-memory observer (attaching before CUDA is
initialised crashes some versions). It writes one JSON report per process
into $OOMLENS_PROBE_DIR: at an OOM, on SIGTERM and at exit. The report holds
what only the process knows: the true peaks (max_memory_reserved/allocated),
allocator retries, OOMs, the allocator settings as PyTorch reads them back,
the torch version and the device. With OOMLENS_PROBE_SNAPSHOT=1 it also
records allocation history and dumps a memory snapshot at the first OOM.

Every step is guarded: a probe that fails stays silent and leaves the job
running exactly as it would have run without it.
"""

import json  # now, not in a signal handler: an import cut short by a signal breaks the next
import os
import sys
import time

_STARTED = time.monotonic()
_OUT = os.environ.get("OOMLENS_PROBE_DIR")
_RUN = os.environ.get("OOMLENS_PROBE_RUN", "run")
_SNAPSHOT = os.environ.get("OOMLENS_PROBE_SNAPSHOT") == "1"
_CONF_VARIABLES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
# Bounded history: a snapshot of a long job stays small, and the Python-only
# stacks cost a fraction of "all" stacks (measured by large-scale users at
# seconds against minutes per dump).
_SNAPSHOT_ENTRIES = 100000


def _environment():
    return {name: os.environ[name] for name in _CONF_VARIABLES if name in os.environ}


_state = {
    "env_at_start": _environment(),
    "env_at_cuda_init": None,
    "cuda_init_seconds": None,
    "ooms": [],
    "snapshot": None,
    "torch": None,
}


def _rank(name):
    value = os.environ.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _device_stats(torch, index):
    stats = torch.cuda.memory_stats(index)
    if not stats:
        return None
    device = {
        "index": index,
        "peak_reserved": stats.get("reserved_bytes.all.peak", 0),
        "peak_allocated": stats.get("allocated_bytes.all.peak", 0),
        "reserved": stats.get("reserved_bytes.all.current", 0),
        "allocated": stats.get("allocated_bytes.all.current", 0),
        "inactive_split": stats.get("inactive_split_bytes.all.current", 0),
        "inactive_split_peak": stats.get("inactive_split_bytes.all.peak", 0),
        "num_alloc_retries": stats.get("num_alloc_retries", 0),
        "num_ooms": stats.get("num_ooms", 0),
    }
    if "max_split_size" in stats:
        device["max_split_size"] = stats["max_split_size"]
    try:
        properties = torch.cuda.get_device_properties(index)
        device["name"] = properties.name
        device["total_memory"] = properties.total_memory
    except Exception:
        pass
    return device


def _allocator(torch):
    """The allocator's settings as PyTorch reads them back, not as the
    environment says: a script may change the variable, or set it after CUDA
    started, and a backend or platform may ignore an option."""
    allocator = {}
    try:
        allocator["backend"] = torch.cuda.get_allocator_backend()
    except Exception:
        pass
    try:
        snapshot = torch.cuda.memory._snapshot()
    except Exception:
        snapshot = None
    if isinstance(snapshot, dict):
        settings = snapshot.get("allocator_settings")
        if isinstance(settings, dict):
            allocator["settings"] = {
                key: value for key, value in settings.items() if isinstance(value, (bool, int, float, str))
            }
        segments = snapshot.get("segments") or []
        if segments and any("is_expandable" in segment for segment in segments):
            allocator["expandable_segments_seen"] = any(segment.get("is_expandable") for segment in segments)
    return allocator


def _report(reason):
    torch = _state["torch"]
    report = {
        "probe": 1,
        "reason": reason,
        "run": _RUN,
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "argv": list(sys.argv),
        "rank": _rank("RANK"),
        "local_rank": _rank("LOCAL_RANK"),
        "world_size": _rank("WORLD_SIZE"),
        "seconds": round(time.monotonic() - _STARTED, 3),
        "torch_version": str(getattr(torch, "__version__", "")),
        "cuda_initialized": False,
        "env_at_start": _state["env_at_start"],
        "env_at_cuda_init": _state["env_at_cuda_init"],
        "env_at_exit": _environment(),
        "cuda_init_seconds": _state["cuda_init_seconds"],
        "ooms": _state["ooms"],
        "snapshot": _state["snapshot"] or None,
    }
    try:
        report["cuda_initialized"] = bool(torch.cuda.is_initialized())
    except Exception:
        pass
    if report["cuda_initialized"]:
        devices = []
        try:
            for index in range(torch.cuda.device_count()):
                device = _device_stats(torch, index)
                if device is not None:
                    devices.append(device)
        except Exception:
            pass
        report["devices"] = devices
        report["allocator"] = _allocator(torch)
    return report


def _dump_snapshot():
    """With OOMLENS_PROBE_SNAPSHOT=1, once: at the first OOM, else when the
    process ends (a run that did not fail still holds its peak in the trace,
    and the two runs of an A/B can then be compared)."""
    if not _SNAPSHOT or _state["snapshot"] is not None:
        return
    _state["snapshot"] = ""  # tried: a failed dump is not retried
    try:
        torch = _state["torch"]
        if not torch.cuda.is_initialized():
            return
        path = os.path.join(_OUT, "snapshot-%s-%d.pickle" % (_RUN, os.getpid()))
        torch.cuda.memory._dump_snapshot(path)
        _state["snapshot"] = path
    except Exception:
        pass


def _write(reason):
    if _state["torch"] is None:
        return
    if reason != "oom":
        _dump_snapshot()
    try:
        report = _report(reason)
        path = os.path.join(_OUT, "probe-%s-%d.json" % (_RUN, os.getpid()))
        partial = path + ".part"
        with open(partial, "w") as f:
            json.dump(report, f)
        os.replace(partial, path)
    except Exception:
        pass


def _on_oom(device, alloc, device_total, device_free):
    # Called by PyTorch after it recorded the failure and before it raises.
    try:
        torch = _state["torch"]
        oom = {
            "device": device,
            "requested": alloc,
            "device_total": device_total,
            "device_free": device_free,
            "seconds": round(time.monotonic() - _STARTED, 3),
        }
        try:
            oom["reserved"] = torch.cuda.memory_reserved(device)
            oom["allocated"] = torch.cuda.memory_allocated(device)
        except Exception:
            pass
        _state["ooms"].append(oom)
        _dump_snapshot()
    except Exception:
        pass
    _write("oom")


def _record_history(torch):
    record = getattr(torch.cuda.memory, "_record_memory_history", None)
    if record is None:
        return
    try:
        record(max_entries=_SNAPSHOT_ENTRIES, stacks="python")  # 2.1 and later
    except TypeError:
        try:
            record(True, trace_alloc_max_entries=_SNAPSHOT_ENTRIES, trace_alloc_record_context=True)  # 2.0
        except Exception:
            pass
    except Exception:
        pass


def _after_cuda_init():
    # Runs inside torch.cuda's lazy initialisation: it must never raise, or
    # the job's first CUDA call would fail.
    try:
        torch = _state["torch"]
        _state["env_at_cuda_init"] = _environment()
        _state["cuda_init_seconds"] = round(time.monotonic() - _STARTED, 3)
        attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
        if attach is not None:
            attach(_on_oom)
        if _SNAPSHOT:
            _record_history(torch)
    except Exception:
        pass


def _on_sigterm(signum, frame):
    # Measured so far, then die of the signal as the job would have. A second
    # SIGTERM (a launcher and oomlens both stopping the job) must not cut the
    # report short: ignored while it is written.
    import signal

    signal.signal(signum, signal.SIG_IGN)
    _write("sigterm")
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def on_torch_imported(torch, env_at_start, started):
    """Called by sitecustomize.py once torch is imported: `env_at_start`, the
    allocator variables the process started with; `started`, time.monotonic()
    at its start."""
    global _STARTED
    _STARTED = started
    _state["env_at_start"] = env_at_start
    _on_torch_imported(torch)


def _on_torch_imported(torch):
    _state["torch"] = torch
    try:
        import atexit

        atexit.register(_write, "exit")
    except Exception:
        pass
    try:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)
    except Exception:
        pass
    try:
        torch.cuda._lazy_call(_after_cuda_init)
    except Exception:
        pass
