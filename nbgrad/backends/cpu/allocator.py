"""A caching allocator for large CPU buffers.

Writing into freshly mapped memory costs a page fault per page: on this kind of
machine filling a new 40 MB array takes about three times as long as filling
one whose pages are already mapped. Large outputs are therefore carved from a
size-bucketed pool of freed buffers.

Smaller arrays come from malloc. glibc's malloc, left to itself, gives the
free top of its heap back to the OS and maps requests above its threshold
afresh, so a training step's arrays of a few hundred KB would fault in their
pages again at every step: ``keep_heap_mapped`` (applied on import) fixes
its thresholds where they stay mapped.

Safety: each buffer handed out is exported through a small ctypes owner
object, and every NumPy view of the buffer keeps that owner alive. The buffer
returns to the pool only from the owner's finalizer, i.e. once no array, view
or alias can reach it any more, so the pool never hands out live memory.
"""
import ctypes
import math
import os
import sys
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

# glibc's mallopt parameters and the values set: the top of the range its malloc
# moves its own thresholds through (it raises the mmap threshold to the size of each
# mapped chunk freed, up to 32 MiB on 64-bit systems, and the trim threshold to twice that).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 32 << 20
_TRIM_THRESHOLD = 64 << 20
_USERS_OWN = ("trim_threshold", "mmap_threshold", "top_pad", "mmap_max")


def keep_heap_mapped():
    """Fix glibc malloc's thresholds where freed memory stays mapped; True
    if they were set (False on another C library, or where the user set
    malloc's parameters through the environment: theirs stand).

    Left dynamic, glibc trims the free top of its heap once it exceeds twice
    the largest mapped chunk freed so far (~1 MB in a training step of the
    demo's CNN) and maps requests above its mmap threshold anew; the next
    step then faults its pages in again, one fault per 4 KiB page: ~420 page
    faults a step, about a third of the step's time here. The values are
    the ones glibc itself reaches after freeing one 32 MiB array; memory is
    given back to the OS only above 64 MiB of free heap top."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if not sys.platform.startswith("linux") or any(
            f"MALLOC_{name.upper()}_" in os.environ or f"glibc.malloc.{name}" in tunables
            for name in _USERS_OWN):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc, not musl)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) and
                mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


heap_kept_mapped = keep_heap_mapped()
