"""``nbgrad.cuda``: on a machine without CUDA (no GPU, no simulator) it
answers without raising where PyTorch's does, and says why where it cannot;
where CUDA kernels run (the ``cuda`` tests) it reports the device and its
memory. tests/backends/test_cuda_runtime.py covers what importing touches."""
import gc

import pytest

import nbgrad
from helpers import cuda_only

without_cuda = pytest.mark.skipif(nbgrad.cuda.is_available(), reason="this machine has CUDA")


@without_cuda
def test_availability_is_answered_without_raising():
    assert nbgrad.cuda.is_available() is False
    assert nbgrad.cuda.device_count() == 0


@without_cuda
def test_what_needs_a_device_says_why():
    with pytest.raises(RuntimeError, match=r"^CUDA is not available: "):
        nbgrad.cuda.synchronize()
    with pytest.raises(RuntimeError, match=r"^CUDA is not available: "):
        nbgrad.cuda.get_device_name()


@without_cuda
def test_memory_figures_are_zero_and_seeding_works():
    assert nbgrad.cuda.memory_allocated() == nbgrad.cuda.memory_reserved() == 0
    nbgrad.cuda.manual_seed(3)
    first = nbgrad.rand(3).tolist()
    nbgrad.cuda.manual_seed_all(3)
    assert nbgrad.rand(3).tolist() == first


# --------------------------------------- where CUDA kernels run (a GPU, or the simulator)
@cuda_only
def test_the_device_is_there(device):
    assert nbgrad.cuda.is_available() is True and nbgrad.cuda.device_count() >= 1
    assert nbgrad.cuda.current_device() == 0
    assert isinstance(nbgrad.cuda.get_device_name(), str)
    nbgrad.cuda.synchronize()


@cuda_only
def test_memory_figures_follow_tensors(device):
    gc.collect()
    before = nbgrad.cuda.memory_allocated()
    t = nbgrad.zeros(1000, device=device)  # 4000 bytes: a 4096-byte bucket
    assert nbgrad.cuda.memory_allocated() == before + 4096
    assert nbgrad.cuda.max_memory_allocated() >= nbgrad.cuda.memory_allocated()
    assert nbgrad.cuda.memory_reserved() >= nbgrad.cuda.memory_allocated()
    stats = nbgrad.cuda.memory_stats()
    assert stats["peak_allocated_bytes"] >= stats["allocated_bytes"]
    del t
    gc.collect()
    assert nbgrad.cuda.memory_allocated() == before
    assert nbgrad.cuda.memory_stats()["cached_bytes"] >= 4096
    nbgrad.cuda.empty_cache()
    assert nbgrad.cuda.memory_stats()["cached_bytes"] == 0


@cuda_only
def test_seeding_makes_cuda_random_tensors_repeat(device):
    nbgrad.cuda.manual_seed(7)
    first = nbgrad.randn(4, device=device).tolist()
    nbgrad.cuda.manual_seed_all(7)
    assert nbgrad.randn(4, device=device).tolist() == first
