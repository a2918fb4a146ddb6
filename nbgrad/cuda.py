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
    """The caching allocator's figures: ``allocated_bytes`` (live tensors),
    ``peak_allocated_bytes``, ``cached_bytes`` (kept for reuse), ``hits``, ``misses``."""
    return _backend.memory_stats()


def memory_allocated():
    return _backend.memory_stats()["allocated_bytes"]


def max_memory_allocated():
    return _backend.memory_stats()["peak_allocated_bytes"]


def memory_reserved():
    """Bytes held from the driver: live buffers plus the cached ones."""
    stats = _backend.memory_stats()
    return stats["allocated_bytes"] + stats["cached_bytes"]


def empty_cache():
    """Give the cached device buffers back to the driver."""
    _backend.empty_cache()


def manual_seed(seed):
    """Seed the generator CUDA tensors draw from (on the device); as
    ``nbgrad.manual_seed``, it seeds the CPU's too."""
    from .creation import manual_seed as seed_all
    seed_all(seed)


manual_seed_all = manual_seed
