"""The caching allocator reuses only memory that nothing can reach any more."""
import gc
import resource

import numpy as np
import pytest

import nbgrad
from nbgrad.backends.cpu import allocator
from nbgrad.backends.cpu.allocator import POOL_MIN_BYTES, BufferPool

LARGE = (POOL_MIN_BYTES // 4 + 1000,)  # float32 elements, above the pooling threshold


def test_small_arrays_bypass_the_pool():
    pool = BufferPool()
    a = pool.empty((10,), np.float32)
    assert a.shape == (10,) and pool.stats()["misses"] == 0


def test_buffer_is_reused_after_the_last_view_dies():
    pool = BufferPool()
    a = pool.empty(LARGE, np.float32)
    address = a.__array_interface__["data"][0]
    view = a[10:20]
    del a
    gc.collect()
    assert pool.stats()["cached_bytes"] == 0  # the view keeps the buffer alive
    b = pool.empty(LARGE, np.float32)
    assert not np.shares_memory(b, view)
    b_address = b.__array_interface__["data"][0]
    del view, b
    gc.collect()
    c = pool.empty(LARGE, np.float32)
    assert pool.stats()["hits"] == 1
    assert c.__array_interface__["data"][0] in {address, b_address}


def test_live_tensor_memory_is_never_handed_out():
    x = nbgrad.randn(*LARGE)
    outputs = [x.exp() for _ in range(4)]
    for i, a in enumerate(outputs):
        for b in outputs[i + 1:]:
            assert not np.shares_memory(a.numpy(), b.numpy())
    expected = np.exp(x.numpy())
    for out in outputs:
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_detached_alias_keeps_memory_alive():
    x = nbgrad.randn(*LARGE)
    alias = x.exp().detach()
    snapshot = alias.numpy().copy()
    gc.collect()
    others = [x.sin() for _ in range(3)]
    np.testing.assert_array_equal(alias.numpy(), snapshot)
    assert all(not np.shares_memory(alias.numpy(), o.numpy()) for o in others)


def test_memory_stats_track_allocation_and_cache():
    pool = BufferPool()
    a = pool.empty(LARGE, np.float32)
    stats = pool.stats()
    assert stats["allocated_bytes"] >= a.nbytes and stats["misses"] == 1
    del a
    gc.collect()
    stats = pool.stats()
    assert stats["allocated_bytes"] == 0 and stats["cached_bytes"] > 0
    pool.empty_cache()
    assert pool.stats()["cached_bytes"] == 0
    assert set(nbgrad.memory_stats()) == set(stats)


def test_cache_limit_is_respected():
    pool = BufferPool(max_cached_bytes=0)
    a = pool.empty(LARGE, np.float32)
    del a
    gc.collect()
    assert pool.stats()["cached_bytes"] == 0


@pytest.mark.skipif(not allocator.heap_kept_mapped,
                    reason="glibc's malloc, where the environment does not tune it")
def test_freed_heap_memory_stays_mapped():
    """Arrays below the pool's threshold, allocated, written and freed as a
    training step does, reuse mapped pages: no page fault once warm (glibc's
    own dynamic thresholds fault ~500 times an iteration here)."""
    def step():
        arrays = [np.ones(1 << 17, np.float32) for _ in range(4)]  # 4 x 512 KiB, written
        del arrays

    for _ in range(3):
        step()
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    for _ in range(20):
        step()
    assert resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before < 20
