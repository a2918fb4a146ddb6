"""The bias-gradient column sums equal NumPy's ``np.add.reduce(a, axis=0)``
bit for bit: same order of additions from +0 (a column of -0.0 sums to +0.0),
NaN and infinities; strided, transposed and broadcast inputs, one column and
no rows; NumPy itself sums the arrays it would not sum row by row."""
import numpy as np
import pytest

from nbgrad.nn._column_sums import column_sums


def _cases(dtype):
    rng = np.random.default_rng(11)
    big = (rng.standard_normal((257, 13)) * 10.0 ** rng.integers(-8, 8, (257, 13))).astype(dtype)
    special = np.array([[-0.0, 0.0, np.inf, np.nan, -np.inf], [-0.0, -0.0, -np.inf, 1.0, 2.0]],
                       dtype)
    return [
        big, big[::3], big.T.copy(), big.T, special, special[:1],
        np.broadcast_to(rng.standard_normal(7).astype(dtype), (5, 7)),  # a SumBackward gradient
        np.zeros((0, 4), dtype), rng.standard_normal((1, 1)).astype(dtype),
        rng.standard_normal((300, 1)).astype(dtype),  # one column: NumPy sums it pairwise
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sums_equal_numpys_reduce(dtype):
    for a in _cases(dtype):
        ours = column_sums(a)
        with np.errstate(invalid="ignore"):  # inf + -inf
            expected = np.add.reduce(a, axis=0)
        assert ours.dtype == expected.dtype and ours.shape == expected.shape
        np.testing.assert_array_equal(ours, expected)
        assert np.array_equal(np.signbit(ours), np.signbit(expected))


def test_integer_arrays_go_to_numpy():
    a = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(column_sums(a), a.sum(axis=0))


def test_the_loop_serves_row_major_arrays(monkeypatch):
    from nbgrad.nn import _column_sums
    calls = []
    module = _column_sums._kernels()
    real = module.column_sums
    monkeypatch.setattr(module, "column_sums", lambda *args: calls.append(1) or real(*args))
    a = np.ones((4, 3), np.float32)
    for b in (a, a[:0], a[::2], a.T, a[:, :1], np.ones((4, 3), np.int64)):
        column_sums(b)
    assert len(calls) == 2
