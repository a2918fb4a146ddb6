"""Reductions and the softmax family (nbgrad/ops/reductions.py) on the
device: values, indices and gradients as on the CPU (ties and NaN included)."""
import numpy as np
import pytest

import nbgrad

from .support import assert_same, on_both, run_both, same_error, values

DIMS = [dict(), dict(dim=0), dict(dim=1, keepdim=True), dict(dim=-1), dict(dim=(0, 2)),
        dict(dim=(1,), keepdim=True)]
dim_ids = ["all", "0", "1-keep", "-1", "0,2", "(1,)-keep"]


@pytest.mark.parametrize("kwargs", DIMS, ids=dim_ids)
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin"])
def test_reductions_over_dims(name, kwargs):
    run_both(lambda x: getattr(x, name)(**kwargs), values((2, 3, 2), 1), dtype=nbgrad.float64)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("kwargs", [dict(dim=0), dict(dim=1, keepdim=True), dict(dim=-1)],
                         ids=["0", "1-keep", "-1"])
def test_max_min_along_a_dim_return_values_and_indices(name, kwargs):
    def fn(x):
        return getattr(x, name)(**kwargs).values
    run_both(fn, values((3, 4), 2))
    cpu, cuda = on_both(values((3, 4), 2))
    got, want = getattr(cuda, name)(**kwargs), getattr(cpu, name)(**kwargs)
    assert_same(got.indices, want.indices)
    assert got.indices.dtype is nbgrad.int64


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_ties_share_the_gradient_as_on_the_cpu(name):
    tied = np.array([[1.0, 3.0, 3.0], [0.5, -1.0, -1.0]])
    run_both(lambda x: getattr(x, name)(), tied)
    if name in ("amax", "amin"):
        run_both(lambda x: getattr(x, name)(dim=1), tied)
    else:
        run_both(lambda x: getattr(x, name)(dim=1).values, tied)


def test_nan_propagates_through_max_and_min():
    with_nan = np.array([[1.0, np.nan, 2.0], [3.0, 0.0, -1.0]])
    for name in ("max", "min", "amax"):
        run_both(lambda x: getattr(x, name)(), with_nan)
    cpu, cuda = on_both(with_nan)
    assert_same(cuda.max(dim=1).indices, cpu.max(dim=1).indices)
    assert_same(cuda.sum(dim=0), cpu.sum(dim=0))


def test_reductions_of_views_and_zero_dim_tensors():
    run_both(lambda x: x.t()[::2].sum(dim=0) + x[1:].mean(), values((3, 4), 3))
    run_both(lambda x: x.sum() * x.max(dim=0).values, np.float64(1.5))
    run_both(lambda x: x.amax() * x.softmax(0), np.float64(-0.5))
    run_both(lambda x: x.amin() * x.log_softmax(0), np.float64(-0.5))


def test_integer_and_bool_sums():
    cpu, cuda = on_both(np.array([[1, 2, 3], [4, 5, 6]]))
    for kwargs in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
        assert_same(cuda.sum(**kwargs), cpu.sum(**kwargs))
        assert_same((cuda > 2).sum(**kwargs), (cpu > 2).sum(**kwargs))
    assert_same(cuda.max(), cpu.max())
    assert_same(cuda.sum(dtype=nbgrad.float64), cpu.sum(dtype=nbgrad.float64))
    assert_same(cuda.float().mean(dim=1), cpu.float().mean(dim=1))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family(name, dim):
    run_both(lambda x: getattr(x, name)(dim), values((3, 4), 4), dtype=nbgrad.float32)
    run_both(lambda x: getattr(x, name)(dim) * x, values((3, 4), 5), dtype=nbgrad.float64)


def test_softmax_of_a_transposed_view_and_large_values():
    big = values((2, 3), 6) * 1000
    run_both(lambda x: x.t().softmax(1), big, dtype=nbgrad.float64)
    run_both(lambda x: x.log_softmax(0, dtype=nbgrad.float64), big, dtype=nbgrad.float32)


@pytest.mark.parametrize("call", [
    lambda t: t.sum(dim=3), lambda t: t.mean(dim=(0, 0)), lambda t: t.max(dim=(0, 1)),
    lambda t: t[:0].max(), lambda t: t.long().mean(), lambda t: t.long().softmax(0),
    lambda t: t.softmax(),
], ids=["dim-range", "dup-dims", "max-tuple", "empty-max", "int-mean", "int-softmax", "no-dim"])
def test_reduction_errors_as_on_the_cpu(call):
    cpu, cuda = on_both(values((2, 3), 7))
    same_error(call, (cpu,), (cuda,))


def test_empty_reductions():
    cpu, cuda = on_both(np.zeros((0, 3)))
    assert_same(cuda.sum(dim=0), cpu.sum(dim=0))
    assert_same(cuda.mean(dim=0), cpu.mean(dim=0))  # NaN
    assert_same(cuda.amax(dim=1), cpu.amax(dim=1))
