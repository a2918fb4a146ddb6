"""The bookkeeping both caching allocators share: size-bucketed free lists
of released buffers, and the figures ``memory_stats()`` reports. What a
buffer is (host bytes, a device array) and how a new one is made is the
allocator's business; this only keeps, hands back and counts them."""
import threading


class FreeLists:
    def __init__(self, max_cached_bytes=None):
        self.max_cached_bytes = max_cached_bytes  # None: no limit
        self._free = {}
        self._lock = threading.Lock()
        self.allocated_bytes = 0
        self.peak_allocated_bytes = 0
        self.cached_bytes = 0
        self.hits = 0
        self.misses = 0

    def take(self, size):
        """A cached buffer of ``size`` bytes, or None (the caller makes one);
        either way ``size`` bytes now count as allocated."""
        with self._lock:
            free = self._free.get(size)
            memory = free.pop() if free else None
            if memory is None:
                self.misses += 1
            else:
                self.cached_bytes -= size
                self.hits += 1
            self.allocated_bytes += size
            self.peak_allocated_bytes = max(self.peak_allocated_bytes, self.allocated_bytes)
        return memory

    def release(self, memory, size):
        """``memory`` is no longer reachable: keep it for reuse (within the limit)."""
        with self._lock:
            self.allocated_bytes -= size
            if self.max_cached_bytes is None or self.cached_bytes + size <= self.max_cached_bytes:
                self._free.setdefault(size, []).append(memory)
                self.cached_bytes += size

    def clear(self):
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
