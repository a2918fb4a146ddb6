"""``nbgrad.cuda`` on a machine without CUDA (this process: no GPU, no
simulator): it answers without raising where PyTorch's does, and says why
where it cannot. tests/on_cuda/test_cuda.py covers a machine with CUDA, and
tests/backends/test_cuda_runtime.py what importing touches."""
import pytest

import nbgrad

pytestmark = pytest.mark.skipif(nbgrad.cuda.is_available(), reason="this machine has CUDA")


def test_availability_is_answered_without_raising():
    assert nbgrad.cuda.is_available() is False
    assert nbgrad.cuda.device_count() == 0


def test_what_needs_a_device_says_why():
    with pytest.raises(RuntimeError, match=r"^CUDA is not available: "):
        nbgrad.cuda.synchronize()
    with pytest.raises(RuntimeError, match=r"^CUDA is not available: "):
        nbgrad.cuda.get_device_name()


def test_memory_figures_are_zero_and_seeding_works():
    assert nbgrad.cuda.memory_allocated() == nbgrad.cuda.memory_reserved() == 0
    nbgrad.cuda.manual_seed(3)
    first = nbgrad.rand(3).tolist()
    nbgrad.cuda.manual_seed_all(3)
    assert nbgrad.rand(3).tolist() == first

