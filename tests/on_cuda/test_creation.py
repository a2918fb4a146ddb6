"""Creation functions (nbgrad/creation.py) with ``device="cuda"``, and
``nbgrad.cuda`` (nbgrad/cuda.py)."""
import numpy as np
import pytest

import nbgrad

from .support import assert_same, host, raised

MAKERS = {
    "zeros": lambda d: nbgrad.zeros(2, 3, device=d),
    "ones": lambda d: nbgrad.ones((2, 3), dtype=nbgrad.float64, device=d),
    "full": lambda d: nbgrad.full((2,), 7, device=d),
    "full-float": lambda d: nbgrad.full((3, 1), 1.5, device=d),
    "eye": lambda d: nbgrad.eye(3, 2, device=d),
    "arange": lambda d: nbgrad.arange(1, 7, 2, device=d),
    "arange-float": lambda d: nbgrad.arange(0, 1, 0.25, device=d),
    "linspace": lambda d: nbgrad.linspace(-1, 1, 5, device=d),
    "tensor": lambda d: nbgrad.tensor([[1, 2], [3, 4]], device=d),
    "tensor-bool": lambda d: nbgrad.tensor([True, False], device=d),
    "tensor-scalar": lambda d: nbgrad.tensor(2.5, device=d),
    "tensor-empty": lambda d: nbgrad.tensor([], device=d),
    "as_tensor": lambda d: nbgrad.as_tensor(np.arange(4.0), device=d),
    "zeros-empty": lambda d: nbgrad.zeros(0, 3, device=d),
    "zeros_like": lambda d: nbgrad.zeros_like(nbgrad.ones(2, dtype=nbgrad.int64, device=d)),
    "ones_like": lambda d: nbgrad.ones_like(nbgrad.ones(2, device=d)),
    "full_like": lambda d: nbgrad.full_like(nbgrad.ones(2, device=d), 4.0),
}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_creation_on_the_device_matches_the_cpu(name):
    cuda, cpu = MAKERS[name]("cuda"), MAKERS[name]("cpu")
    assert_same(cuda, cpu)
    assert cuda.is_leaf and not cuda.requires_grad


@pytest.mark.parametrize("device", ["cuda", "cuda:0", nbgrad.device("cuda"),
                                    nbgrad.device("cuda", 0)], ids=str)
def test_device_spellings(device):
    t = nbgrad.ones(2, device=device)
    assert t.device == nbgrad.device("cuda:0") and t.is_cuda


def test_random_creation_draws_the_same_values_as_on_the_cpu():
    for make in (lambda d: nbgrad.rand(2, 3, device=d), lambda d: nbgrad.randn(3, device=d),
                 lambda d: nbgrad.randint(0, 5, (2, 2), device=d)):
        nbgrad.manual_seed(3)
        cpu = make("cpu")
        nbgrad.manual_seed(3)
        assert_same(make("cuda"), cpu)
    nbgrad.manual_seed(0)
    like = nbgrad.rand_like(nbgrad.ones(2, 2, device="cuda"))
    assert like.is_cuda and like.shape == (2, 2)


def test_empty_on_the_device():
    t = nbgrad.empty(2, 3, device="cuda", dtype=nbgrad.float64)
    assert t.is_cuda and t.shape == (2, 3) and t.dtype is nbgrad.float64
    assert nbgrad.empty_like(t).is_cuda


def test_requires_grad_leaves_on_the_device():
    t = nbgrad.zeros(2, device="cuda", requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad is None
    error = raised(lambda: nbgrad.zeros(2, dtype=nbgrad.int64, device="cuda", requires_grad=True))
    assert str(error) == "Only Tensors of floating point and complex dtype can require gradients"


def test_tensor_of_a_tensor_keeps_or_changes_the_device():
    cuda = nbgrad.tensor([1.0, 2.0], device="cuda")
    copy = nbgrad.tensor(cuda)
    assert copy.is_cuda and host(copy).tolist() == [1.0, 2.0]
    copy[0] = 5.0  # a copy, not an alias
    assert cuda[0].item() == 1.0
    assert not nbgrad.tensor(cuda, device="cpu").is_cuda
    assert nbgrad.tensor(nbgrad.ones(2), device="cuda").is_cuda
    assert nbgrad.as_tensor(cuda) is cuda
    moved = nbgrad.as_tensor(cuda, device="cpu")
    assert not moved.is_cuda and moved.tolist() == [1.0, 2.0]


def test_only_device_zero():
    error = raised(lambda: nbgrad.zeros(2, device="cuda:1"))
    assert isinstance(error, RuntimeError) and "cuda:0" in str(error)


def test_nbgrad_cuda_module():
    assert nbgrad.cuda.is_available() is True
    assert nbgrad.cuda.device_count() >= 1
    assert nbgrad.cuda.current_device() == 0
    assert isinstance(nbgrad.cuda.get_device_name(), str)
    nbgrad.cuda.synchronize()
    before = nbgrad.cuda.memory_allocated()
    t = nbgrad.zeros(256, device="cuda", dtype=nbgrad.float64)
    assert nbgrad.cuda.memory_allocated() >= before + 256 * 8
    stats = nbgrad.cuda.memory_stats()
    assert stats["peak_allocated_bytes"] >= stats["allocated_bytes"]
    del t
    nbgrad.cuda.empty_cache()
