"""The CUDA backend's caching allocator: live memory is never handed out
again, freed buffers are reused, and the figures follow both."""
import gc

import numpy as np
from cuda_support import B

from nbgrad.backends.cuda.allocator import _bucket, pool


def _pointer(a):
    return B.data_pointer(a)


def test_sizes_round_to_buckets():
    assert _bucket(1) == 512 and _bucket(8000) == 8192
    assert _bucket(1 << 20) == 1 << 21 and _bucket((1 << 21) + 1) == 1 << 22


def test_memory_stats_follow_live_buffers():
    gc.collect()
    before = B.memory_stats()
    a = B.empty((1000,), np.float64)
    during = B.memory_stats()
    assert during["allocated_bytes"] - before["allocated_bytes"] == 8192
    assert during["peak_allocated_bytes"] >= during["allocated_bytes"]
    assert during["hits"] + during["misses"] == before["hits"] + before["misses"] + 1
    view = a[10:20]
    del a
    gc.collect()
    assert B.memory_stats()["allocated_bytes"] == during["allocated_bytes"]  # the view keeps it
    del view
    gc.collect()
    after = B.memory_stats()
    assert after["allocated_bytes"] == before["allocated_bytes"]
    assert after["cached_bytes"] >= 8192


def test_a_freed_buffer_is_reused_and_a_live_one_never_is():
    B.empty_cache()
    gc.collect()
    first = B.empty((300,), np.float32)
    address = _pointer(first)
    alive = B.empty((300,), np.float32)  # same bucket, while `first` lives
    assert _pointer(alive) != address
    view = first[1:]
    del first
    gc.collect()
    again = B.empty((300,), np.float32)
    assert _pointer(again) != address  # a view still reaches it
    del view
    gc.collect()
    hits = B.memory_stats()["hits"]
    reused = B.empty((260,), np.float32)  # any size in the same bucket
    assert _pointer(reused) == address and B.memory_stats()["hits"] == hits + 1
    reused[...] = 3.0
    assert B.to_numpy(alive).shape == (300,) and (B.to_numpy(reused) == 3.0).all()


def test_empty_cache_gives_cached_buffers_back():
    a = B.empty((1000,), np.float32)
    del a
    gc.collect()
    assert B.memory_stats()["cached_bytes"] > 0
    B.empty_cache()
    assert B.memory_stats()["cached_bytes"] == 0 and not pool.free_lists._free
