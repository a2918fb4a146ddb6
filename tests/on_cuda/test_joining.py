"""``cat`` and ``stack`` (nbgrad/ops/joining.py) on the device."""
import numpy as np
import pytest

import nbgrad

from .support import MIXED, assert_same, on_both, raised, run_both, same_error, values


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_values_and_gradients(dim):
    def fn(a, b):
        return nbgrad.cat([a, b.t()[:, :2] if dim else b.t()[:1, :3], a * 2], dim=dim)
    run_both(fn, values((2, 3), 1), values((3, 2), 2))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_values_and_gradients(dim):
    run_both(lambda a, b: nbgrad.stack([a, b.t(), a], dim=dim), values((2, 3), 1), values((3, 2), 2))


def test_cat_promotes_and_skips_legacy_empty_tensors():
    def parts(device):
        return [nbgrad.tensor([[1, 2]], device=device), nbgrad.zeros(0, device=device),
                nbgrad.tensor([[0.5, 1.5]], dtype=nbgrad.float64, device=device)]
    assert_same(nbgrad.cat(parts("cuda")), nbgrad.cat(parts("cpu")))

    def fn(a, empty):
        return nbgrad.cat([a, empty], dim=0)
    run_both(fn, values((2, 2), 3), np.zeros(0))


@pytest.mark.parametrize("call", [
    lambda a, b: nbgrad.cat([a, b], dim=2), lambda a, b: nbgrad.cat([a, b[0]]),
    lambda a, b: nbgrad.cat([a, b.t()]), lambda a, b: nbgrad.stack([a, b.t()]),
    lambda a, b: nbgrad.cat([a.sum(), b]), lambda a, b: nbgrad.stack([a, b], dim=4),
], ids=["dim", "ndim", "sizes", "stack-sizes", "zero-dim", "stack-dim"])
def test_joining_errors_as_on_the_cpu(call):
    (a_cpu, a_cuda), (b_cpu, b_cuda) = on_both(values((2, 3), 4)), on_both(values((2, 3), 5))
    same_error(call, (a_cpu, b_cpu), (a_cuda, b_cuda))


def test_mixed_devices_are_refused():
    a, b = nbgrad.ones(2, device="cuda"), nbgrad.ones(2)
    for join in (nbgrad.cat, nbgrad.stack):
        assert str(raised(join, [a, b])) == MIXED.format("cuda:0", "cpu")
        assert str(raised(join, [b, a])) == MIXED.format("cpu", "cuda:0")
