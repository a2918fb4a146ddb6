"""The CUDA backend's layer, loss and optimizer primitives against the CPU
backend's: column sums, the per-row gather and scatter of the NLL loss (no
single-pass picked sum: None), the max-pooling index dtype, and the fused
optimizer updates (one launch per parameter, ``foreach`` too)."""
import numpy as np
import pytest

from cuda_support import B, FLOATS, assert_close, dev, host
from nbgrad.backends import cpu
from nbgrad.declarations.optimizer_updates import ADAM, SGD


@pytest.mark.parametrize("dtype", FLOATS)
def test_column_sums_match_the_cpu(dtype):
    a = np.random.default_rng(0).standard_normal((9, 5)).astype(dtype)
    for x in (a, a[::2], a.T):
        assert_close(B.column_sums(dev(x)), cpu.column_sums(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_per_row_gather_and_scatter_match_the_cpu(dtype):
    a = np.random.default_rng(1).standard_normal((4, 3)).astype(dtype)
    index = np.array([[2], [0], [0], [1]], np.int64)
    assert_close(B.take_per_row(dev(a), dev(index)), cpu.take_per_row(a, index))
    for values in (np.full((), -0.5, dtype), np.arange(4, dtype=dtype)):
        ours, expected = B.zeros((4, 3), dtype), np.zeros((4, 3), dtype)
        B.put_per_row(ours, dev(index), dev(values))
        cpu.put_per_row(expected, index, values[()] if values.ndim == 0 else values)
        assert_close(ours, expected)


def test_no_single_pass_picked_sum_and_int64_pool_indices():
    assert B.picked_sum(dev(np.ones((2, 2))), np.array([0, 1]), -100) is None
    assert B.pool_index_dtype(4) == np.int64
    assert B.update_foreach_below == 0


def _scalars(update, t):
    if update is SGD:
        return (t(-0.1), t(0.01), t(0.9), t(0.7), True, False, True, False)
    w1 = t(0.1)
    return (t(0.02), t(1 - 0.01 * 0.02), True, w1, t(1) - w1, t(0.999), t(1 - 0.999),
            t(-0.1), t(0.03), t(1e-8), True, True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("update", [SGD, ADAM], ids=["sgd", "adam"])
def test_optimizer_updates_match_the_cpu(update, dtype):
    rng = np.random.default_rng(2)
    count = update.kinds.count("a")
    params = [tuple(np.abs(rng.standard_normal(n)).astype(dtype) for _ in range(count))
              for n in (7, 3)]
    scalars = _scalars(update, dtype)
    on_device = [tuple(dev(a) for a in arrays) for arrays in params]
    B.optimizer_update(update, on_device[0], scalars)
    B.optimizer_update_foreach(update, tuple(zip(on_device[1])), scalars)
    cpu.optimizer_update(update, params[0], scalars)
    cpu.optimizer_update_foreach(update, tuple(zip(params[1])), scalars)
    for ours, expected in zip(on_device, params):
        for a, b in zip(ours, expected):
            assert_close(a, b)
    assert isinstance(host(on_device[0][0]), np.ndarray)
