"""``nbgrad.cuda`` where CUDA kernels run (a GPU, or the simulator)."""
import gc

import nbgrad


def test_the_device_is_there():
    assert nbgrad.cuda.is_available() and nbgrad.cuda.device_count() >= 1
    assert nbgrad.cuda.current_device() == 0
    assert isinstance(nbgrad.cuda.get_device_name(), str)
    nbgrad.cuda.synchronize()


def test_memory_figures_follow_tensors():
    gc.collect()
    before = nbgrad.cuda.memory_allocated()
    t = nbgrad.zeros(1000, device="cuda")  # 4000 bytes: a 4096-byte bucket
    assert nbgrad.cuda.memory_allocated() == before + 4096
    assert nbgrad.cuda.max_memory_allocated() >= nbgrad.cuda.memory_allocated()
    assert nbgrad.cuda.memory_reserved() >= nbgrad.cuda.memory_allocated()
    del t
    gc.collect()
    assert nbgrad.cuda.memory_allocated() == before
    assert nbgrad.cuda.memory_stats()["cached_bytes"] >= 4096
    nbgrad.cuda.empty_cache()
    assert nbgrad.cuda.memory_stats()["cached_bytes"] == 0


def test_seeding_makes_cuda_random_tensors_repeat():
    nbgrad.cuda.manual_seed(7)
    first = nbgrad.randn(4, device="cuda").tolist()
    nbgrad.cuda.manual_seed_all(7)
    assert nbgrad.randn(4, device="cuda").tolist() == first
