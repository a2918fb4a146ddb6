"""``nbgrad.cuda``: what PyTorch's ``torch.cuda`` offers for nbgrad's CUDA
device. Nothing here touches the driver until it is called."""
from .backends import cuda as _backend


def is_available():
    """True when CUDA tensors can be made here (a GPU and its driver, or
    Numba's CUDA simulator). Never raises."""
    return _backend.is_available()


def device_count():
    """GPUs visible to this process (nbgrad places tensors on the first)."""
    return _backend.device_count()


def synchronize():
    """Wait until every kernel launched so far has finished."""
    _backend.synchronize()


def get_device_name(device=None):
    return _backend.device_name()


def current_device():
    return 0


def memory_stats():
    """Bytes held by live CUDA tensors (``allocated_bytes``, ``peak_allocated_bytes``)."""
    return _backend.memory_stats()


def memory_allocated():
    return _backend.memory_stats()["allocated_bytes"]


def empty_cache():
    """Return the memory of dead device buffers to the driver now."""
    _backend.empty_cache()
