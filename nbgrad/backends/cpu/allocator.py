"""A caching allocator for large CPU buffers.

Writing into freshly mapped memory costs a page fault per page: on this kind of
machine filling a new 40 MB array takes about three times as long as filling
one whose pages are already mapped. Large outputs are therefore carved from a
size-bucketed pool of freed buffers.

Safety: each buffer handed out is exported through a small ctypes owner
object, and every NumPy view of the buffer keeps that owner alive. The buffer
returns to the pool only from the owner's finalizer, i.e. once no array, view
or alias can reach it any more, so the pool never hands out live memory.
"""
import ctypes
import math
import threading
import weakref

import numpy as np

POOL_MIN_BYTES = 1 << 20  # smaller arrays come from malloc's own free lists
_SMALL_COUNT = POOL_MIN_BYTES // 16  # elements that are below it for any dtype (complex128 at most)
_BUCKET = 1 << 21  # round to huge-page multiples, so similar sizes share buffers


class BufferPool:
    def __init__(self, max_cached_bytes=1 << 30):
        self.max_cached_bytes = max_cached_bytes
        self._free = {}
        self._lock = threading.Lock()
        self.allocated_bytes = 0
        self.peak_allocated_bytes = 0
        self.cached_bytes = 0
        self.hits = 0
        self.misses = 0

    def empty(self, shape, dtype):
        count = math.prod(shape)
        if count < _SMALL_COUNT:  # fewer bytes than POOL_MIN_BYTES whatever the dtype
            return np.empty(shape, dtype)
        dtype = np.dtype(dtype)
        nbytes = count * dtype.itemsize
        if nbytes < POOL_MIN_BYTES:
            return np.empty(shape, dtype=dtype)
        size = -(-nbytes // _BUCKET) * _BUCKET
        with self._lock:
            free = self._free.get(size)
            if free:
                memory = free.pop()
                self.cached_bytes -= size
                self.hits += 1
            else:
                memory = None
                self.misses += 1
            self.allocated_bytes += size
            self.peak_allocated_bytes = max(self.peak_allocated_bytes, self.allocated_bytes)
        if memory is None:
            memory = np.empty(size, dtype=np.uint8)
        owner = (ctypes.c_char * size).from_buffer(memory)
        weakref.finalize(owner, self._release, memory, size)
        return np.frombuffer(owner, dtype=dtype, count=count).reshape(shape)

    def _release(self, memory, size):
        with self._lock:
            self.allocated_bytes -= size
            if self.cached_bytes + size <= self.max_cached_bytes:
                self._free.setdefault(size, []).append(memory)
                self.cached_bytes += size

    def empty_cache(self):
        with self._lock:
            self._free.clear()
            self.cached_bytes = 0

    def stats(self):
        with self._lock:
            return {
                "allocated_bytes": self.allocated_bytes,
                "peak_allocated_bytes": self.peak_allocated_bytes,
                "cached_bytes": self.cached_bytes,
                "hits": self.hits,
                "misses": self.misses,
            }


pool = BufferPool()
