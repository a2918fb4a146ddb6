"""The CPU backend's compiled loops against NumPy (and PyTorch for the
per-row gather): ``column_sums`` equals ``np.add.reduce(a, axis=0)`` bit for
bit (same order of additions from +0, so a column of -0.0 sums to +0.0; NaN
and infinities; strided, transposed and broadcast inputs, one column, no
rows; NumPy itself sums the arrays it would not sum row by row);
``picked_sum``, ``take_per_row`` and ``put_per_row`` pick and place one
element per row."""
import numpy as np
import pytest
import torch

from nbgrad.backends import cpu
from nbgrad.backends.cpu import loops


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
        ours = cpu.column_sums(a)
        with np.errstate(invalid="ignore"):  # inf + -inf
            expected = np.add.reduce(a, axis=0)
        assert ours.dtype == expected.dtype and ours.shape == expected.shape
        np.testing.assert_array_equal(ours, expected)
        assert np.array_equal(np.signbit(ours), np.signbit(expected))


def test_integer_arrays_go_to_numpy():
    a = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(cpu.column_sums(a), a.sum(axis=0))


def test_the_loop_serves_row_major_arrays(monkeypatch):
    calls = []
    module = loops.kernels()
    real = module.column_sums
    monkeypatch.setattr(module, "column_sums", lambda *args: calls.append(1) or real(*args))
    a = np.ones((4, 3), np.float32)
    for b in (a, a[:0], a[::2], a.T, a[:, :1], np.ones((4, 3), np.int64)):
        cpu.column_sums(b)
    assert len(calls) == 2


_A = np.arange(12.0).reshape(4, 3) - 5.5


@pytest.mark.parametrize("index, skip, expected", [
    ([0, 2, 1, 2], -100, (-5.5 + -0.5 + 1.5 + 5.5, 4, -1)),
    ([0, -100, 1, -100], -100, (-5.5 + 1.5, 2, -1)),
    ([1, 1, 1, 1], 1, (0.0, 0, -1)),
    ([0, 3, 1, 2], -100, (-5.5, 1, 1)),  # the first bad row, sums so far
    ([0, 1, -1, 0], -100, (-5.5 + -1.5, 2, 2)),
])
def test_picked_sum_sums_one_element_per_row_and_finds_the_first_bad_row(index, skip, expected):
    for a in (_A, _A.astype(np.float32), np.asfortranarray(_A)):
        assert cpu.picked_sum(a, np.array(index, np.int64), skip) == expected


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_take_per_row_gathers_as_torchs_gather(dtype):
    a = _A.astype(dtype)
    index = np.array([[2], [0], [0], [1]], np.int64)
    ours = cpu.take_per_row(a, index)
    theirs = torch.gather(torch.tensor(a), 1, torch.tensor(index)).reshape(-1).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(cpu.take_per_row(np.asfortranarray(a), index), theirs)


@pytest.mark.parametrize("values", [np.float64(-0.25), np.array([1.0, -2.0, 3.0, 0.5])],
                         ids=["scalar", "array"])
def test_put_per_row_scatters_as_torchs_scatter(values, monkeypatch):
    """One NumPy scalar for every row takes the compiled loop; an array NumPy's indexing."""
    calls = []
    module = loops.kernels()
    real = module.put_value
    monkeypatch.setattr(module, "put_value", lambda *args: calls.append(1) or real(*args))
    index = np.array([[2], [0], [0], [1]], np.int64)
    out = np.zeros((4, 3))
    cpu.put_per_row(out, index, values)
    src = torch.tensor(np.broadcast_to(values, (4,)).reshape(4, 1).copy())
    expected = torch.zeros(4, 3, dtype=torch.float64).scatter_(1, torch.tensor(index), src)
    np.testing.assert_array_equal(out, expected.numpy())
    assert len(calls) == (1 if np.ndim(values) == 0 else 0)


@pytest.mark.parametrize("count, dtype", [(1, np.uint8), (255, np.uint8), (256, np.int64)])
def test_pool_index_dtype_is_one_byte_while_offsets_fit(count, dtype):
    assert cpu.pool_index_dtype(count) == dtype
