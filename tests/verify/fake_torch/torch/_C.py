"""torch._C: the native entry points the probe reaches for."""

_oom_observers = []


def _cuda_attach_out_of_memory_observer(observer):
    from . import cuda

    if not cuda.is_initialized():
        # PyTorch crashes here; the stand-in fails loudly instead.
        raise RuntimeError("observer attached before CUDA was initialised")
    _oom_observers.append(observer)
