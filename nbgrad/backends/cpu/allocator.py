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
import weakref

import numpy as np

from ..free_lists import FreeLists

POOL_MIN_BYTES = 1 << 20  # smaller arrays come from malloc's own free lists
_SMALL_COUNT = POOL_MIN_BYTES // 16  # elements that are below it for any dtype (complex128 at most)
_BUCKET = 1 << 21  # round to huge-page multiples, so similar sizes share buffers


class BufferPool:
    def __init__(self, max_cached_bytes=1 << 30):
        self.free_lists = FreeLists(max_cached_bytes)

    def empty(self, shape, dtype):
        count = math.prod(shape)
        if count < _SMALL_COUNT:  # fewer bytes than POOL_MIN_BYTES whatever the dtype
            return np.empty(shape, dtype)
        dtype = np.dtype(dtype)
        nbytes = count * dtype.itemsize
        if nbytes < POOL_MIN_BYTES:
            return np.empty(shape, dtype=dtype)
        size = -(-nbytes // _BUCKET) * _BUCKET
        memory = self.free_lists.take(size)
        if memory is None:
            memory = np.empty(size, dtype=np.uint8)
        owner = (ctypes.c_char * size).from_buffer(memory)
        weakref.finalize(owner, self.free_lists.release, memory, size)
        return np.frombuffer(owner, dtype=dtype, count=count).reshape(shape)

    def empty_cache(self):
        self.free_lists.clear()

    def stats(self):
        return self.free_lists.stats()


pool = BufferPool()
