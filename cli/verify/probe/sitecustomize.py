"""The oomlens probe: measures a training run's GPU memory from inside it.

`oomlens verify` puts the folder holding this file first on PYTHONPATH, so
every Python process of the job (each rank a launcher starts, too) loads it as
`sitecustomize` at start-up. It then loads the `sitecustomize` the process
would have loaded without it, so nothing the user set up is lost.

It does nothing until the job imports torch, and never initialises CUDA
itself: once torch is imported it loads its measuring half (oomlens_probe.py,
beside it). This half is kept small, since every Python process of the job
runs it, torch or not.
"""

import os
import sys
import time

_STARTED = time.monotonic()
_HERE = os.path.dirname(os.path.abspath(__file__))
_CONF_VARIABLES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
# The allocator variables as the process started with them (the job may change them later).
_ENV_AT_START = {name: os.environ[name] for name in _CONF_VARIABLES if name in os.environ}


def _load(name, directories):
    """A module from `directories` by the import system already loaded at
    start-up (importlib.util alone would add milliseconds to every process)."""
    import importlib.machinery

    spec = importlib.machinery.PathFinder.find_spec(name, directories)
    if spec is None or spec.loader is None:
        return None
    module = type(sys)(spec.name)
    module.__spec__, module.__loader__, module.__file__ = spec, spec.loader, spec.origin
    module.__cached__ = getattr(spec, "cached", None)
    return spec, module


def _on_torch_imported(torch):
    try:
        found = _load("oomlens_probe", [_HERE])
        if found is not None:
            spec, module = found
            spec.loader.exec_module(module)
            module.on_torch_imported(torch, _ENV_AT_START, _STARTED)
    except Exception:
        pass


class _TorchWatch:
    """A finder that sees `import torch` go by, lets the real finders find
    it, and runs the probe's set-up once the module finished loading."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            return None
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        loader = getattr(spec, "loader", None)
        original = getattr(loader, "exec_module", None)
        if original is None:
            return spec

        def exec_module(module):
            original(module)
            try:
                _on_torch_imported(module)
            except Exception:
                pass

        loader.exec_module = exec_module
        return spec


def _load_user_sitecustomize():
    """The sitecustomize this process would have loaded without the probe.
    Its errors surface as they would have (site reports them)."""
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]
    found = _load("sitecustomize", sys.path)
    if found is None:
        return
    spec, module = found
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if os.environ.get("OOMLENS_PROBE_DIR") and "torch" not in sys.modules:
    sys.meta_path.insert(0, _TorchWatch())
_load_user_sitecustomize()
