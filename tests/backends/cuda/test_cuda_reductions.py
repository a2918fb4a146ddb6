"""Device reductions against NumPy: sum/max/min over any axes with keepdims,
of strided, transposed and broadcast views; argmax/argmin (first index,
NaN wins); both kernel shapes (a block per output with a shared-memory tree,
split into chunks plus a combining pass when outputs are few; a thread per
output for column-like reductions); sum_to_shape. (Softmax is an op formula over
these: tests/ops/test_reductions.py runs it on every device.)"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuda_support import B, assert_close, cpu, dev

SHAPES = [(), (7,), (3, 5), (2, 3, 4), (1, 6, 1)]


@st.composite
def _array_and_axes(draw):
    shape = draw(st.sampled_from(SHAPES[1:] + [(4, 1, 3, 2)]))
    ndim = len(shape)
    axes = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1),
                          st.sets(st.integers(0, ndim - 1), max_size=ndim).map(tuple)))
    view = draw(st.sampled_from(["plain", "T", "reversed"]))
    return shape, axes, view, draw(st.booleans())


def _view(x, view):
    return {"plain": x, "T": x.T, "reversed": x[::-1]}[view]


@given(_array_and_axes(), st.sampled_from(["sum", "max", "min"]))
def test_value_reductions_match_numpy(case, op):
    shape, axes, view, keepdims = case
    a = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    d = _view(dev(a), view)
    a = _view(a, view)
    fn = {"sum": B.reduce_sum, "max": B.reduce_max, "min": B.reduce_min}[op]
    expected = getattr(np, op)(a, axis=axes, keepdims=keepdims)
    got = fn(d, axes, keepdims)
    assert got.dtype == expected.dtype
    assert_close(got, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
def test_sum_dtypes(dtype):
    a = (np.arange(24).reshape(4, 6) % 5).astype(dtype)
    d = dev(a)
    for axis in (None, 0, 1, (0, 1)):
        expected = np.sum(a, axis=axis)
        got = B.reduce_sum(d, axis, False)
        assert got.dtype == expected.dtype
        assert_close(got, expected)
    assert_close(B.reduce_sum(dev(a), 1, True, np.float64), np.sum(a, 1, keepdims=True,
                                                                   dtype=np.float64))
    assert_close(d.sum(axis=0), a.sum(axis=0))


@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_max_min_of_int_and_bool(dtype):
    a = (np.arange(20).reshape(4, 5) * 7 % 9 - 3).astype(dtype)
    for axis in (None, 0, 1):
        assert_close(B.reduce_max(dev(a), axis, False), np.max(a, axis=axis))
        assert_close(B.reduce_min(dev(a), axis, False), np.min(a, axis=axis))


def test_max_min_propagate_nan():
    a = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, -np.inf], [-np.inf, -np.inf, -np.inf]])
    for axis in (None, 0, 1):
        assert_close(B.reduce_max(dev(a), axis, False), np.max(a, axis=axis))
        assert_close(B.reduce_min(dev(a), axis, False), np.min(a, axis=axis))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reductions_first_index_and_nan(op):
    a = np.array([[3.0, 1.0, 3.0, 1.0], [np.nan, 5.0, np.nan, -1.0], [2.0, 2.0, 2.0, 2.0]])
    fn = getattr(B, op)
    for x in (a, a.T, a[:, ::-1]):
        for axis in (None, 0, 1):
            for keepdims in (False, True):
                expected = getattr(np, op)(x, axis=axis, keepdims=keepdims)
                got = fn(B.asarray(x), axis, keepdims)
                assert got.dtype == np.int64
                assert_close(got, expected)


def test_max_with_indices_gives_values_and_indices_in_one_pass():
    a = np.random.default_rng(1).integers(0, 4, (5, 6)).astype(np.float32)
    values, indices = B.max_with_indices(dev(a), 1, keepdims=False)
    assert_close(values, a.max(axis=1))
    assert_close(indices, a.argmax(axis=1))
    values, indices = B.min_with_indices(dev(a), 0, keepdims=True)
    assert_close(values, a.min(axis=0, keepdims=True))
    assert_close(indices, a.argmin(axis=0, keepdims=True))


class TestKernelShapes:
    """Sizes chosen to take each path in the simulator (and still right on a GPU)."""

    def test_few_outputs_many_elements_split_into_chunks(self):
        a = np.random.default_rng(2).normal(size=(2, 301))
        a[1, 250] = 50.0
        a[0, 7] = np.nan
        d = dev(a)
        assert_close(B.reduce_sum(d, 1, False), a.sum(axis=1))
        assert_close(B.reduce_sum(d, None, False), a.sum())
        assert_close(B.reduce_max(d, 1, False), a.max(axis=1))
        assert_close(B.argmax(d, 1, False), a.argmax(axis=1))
        assert_close(B.argmin(d, None, False), np.nanargmin(a) * 0 + a.argmin())

    def test_many_outputs_strided_reduction_use_a_thread_each(self):
        a = np.random.default_rng(3).normal(size=(5, 70)).astype(np.float32)
        d = dev(a)
        assert_close(B.reduce_sum(d, 0, False), a.sum(axis=0))
        assert_close(B.reduce_min(d, 0, True), a.min(axis=0, keepdims=True))
        assert_close(B.argmax(d, 0, False), a.argmax(axis=0))
        assert_close(B.reduce_sum(d.T, 1, False), a.T.sum(axis=1))

    def test_broadcast_input(self):
        a = np.arange(4.0)
        d = B.broadcast_to(dev(a), (3, 4))
        assert_close(B.reduce_sum(d, 0, False), np.broadcast_to(a, (3, 4)).sum(axis=0))
        assert_close(B.reduce_sum(d, 1, False), np.broadcast_to(a, (3, 4)).sum(axis=1))


def test_empty_reductions():
    d = dev(np.zeros((0, 3)))
    assert_close(B.reduce_sum(d, 0, False), np.zeros(3))
    assert B.reduce_max(d, 1, False).shape == (0,)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        B.reduce_max(d, 0, False)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        B.reduce_sum(dev(np.ones((2, 2))), (0, -2), False)


@pytest.mark.parametrize("grad_shape,shape", [((4, 3), (3,)), ((4, 3), (4, 1)), ((2, 4, 3), (1, 3)),
                                              ((2, 3), (2, 3)), ((5,), ()), ((2, 1, 3), (1, 1))])
def test_sum_to_shape_matches_cpu(grad_shape, shape):
    g = np.random.default_rng(4).normal(size=grad_shape)
    assert_close(B.sum_to_shape(dev(g), shape), cpu.sum_to_shape(g, shape))
