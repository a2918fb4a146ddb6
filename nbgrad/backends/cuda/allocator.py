"""A caching allocator for device memory, as PyTorch's.

``cudaMalloc``/``cudaFree`` cost tens of microseconds and ``cudaFree``
synchronizes the device, which an eager runtime allocating one buffer per op
cannot afford. Freed buffers are kept in size-bucketed free lists and handed
out again.

Safety: the pool keeps each raw byte buffer and hands out a typed view of it.
The raw buffer returns to its free list only from the finalizer of that view,
i.e. once no DeviceArray (every view holds it) can reach the memory. Kernels
run in order on the default stream, so a kernel launched for the previous
owner has finished with the memory before any kernel of the next owner runs.
When an allocation fails, the cached buffers are freed and it is retried once.
"""
import weakref

import numpy as np

from ..free_lists import FreeLists
from . import _runtime

_SMALL = 1 << 20           # below 1 MiB sizes round up to 512 bytes ...
_SMALL_ROUND = 512
_LARGE_ROUND = 1 << 21     # ... above, to 2 MiB, so similar sizes share buffers


def _bucket(nbytes):
    step = _SMALL_ROUND if nbytes < _SMALL else _LARGE_ROUND
    return -(-nbytes // step) * step


class DevicePool:
    def __init__(self):
        self.free_lists = FreeLists()

    def allocate(self, count, dtype):
        """A 1-D device array of ``count`` elements (at least one) of ``dtype``."""
        _runtime.require()
        count = max(int(count), 1)
        size = _bucket(count * dtype.itemsize)
        raw = self.free_lists.take(size)
        if raw is None:
            raw = self._new(size)
        buf = raw.view(dtype)[:count]
        weakref.finalize(buf, self.free_lists.release, raw, size)
        return buf

    def _new(self, size):
        cuda = _runtime.cuda()
        try:
            return cuda.device_array(size, dtype=np.uint8)
        except Exception as error:  # out of memory: give back what is cached, then retry
            if not self.free_lists.cached_bytes or "OUT_OF_MEMORY" not in str(error).upper():
                raise
            self.empty_cache()
            return cuda.device_array(size, dtype=np.uint8)

    def empty_cache(self):
        """Give the cached buffers back to the driver."""
        self.free_lists.clear()
        if _runtime._ready and not _runtime.simulator():
            _runtime.cuda().current_context().deallocations.clear()  # Numba defers frees

    def stats(self):
        return self.free_lists.stats()


pool = DevicePool()
