"""The CPU backend's gradient plumbing (nbgrad.backends.cpu.memory): copies
and sums equal NumPy's, in parallel for large float arrays, NumPy's own path
(broadcasting, promotion, layouts) otherwise."""
import numpy as np
import pytest

from nbgrad.backends import cpu
from nbgrad.backends.cpu import memory

THRESHOLD = 1000  # small, so the tests stay fast; the backend passes PARALLEL_THRESHOLD


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [THRESHOLD - 1, THRESHOLD, 3 * THRESHOLD + 7])
def test_copy_add_and_add_into_match_numpy(dtype, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n,)).astype(dtype)
    b = rng.standard_normal((n,)).astype(dtype)
    c = memory.copy(a, THRESHOLD)
    assert c.dtype == dtype and c.flags.c_contiguous and not np.shares_memory(c, a)
    np.testing.assert_array_equal(c, a)
    s = memory.add(a, b, THRESHOLD)
    assert s.dtype == dtype
    np.testing.assert_array_equal(s, a + b)
    dst = a.copy()
    memory.add_into(dst, b, THRESHOLD)
    np.testing.assert_array_equal(dst, a + b)


def test_large_multidimensional_arrays_take_the_parallel_pass():
    a = np.arange(4 * THRESHOLD, dtype=np.float32).reshape(4, -1)
    c = memory.copy(a, THRESHOLD)
    np.testing.assert_array_equal(c, a)
    assert c.shape == a.shape


@pytest.mark.parametrize("make", [
    lambda a: a.T,                                  # not C-contiguous
    lambda a: a.astype(np.int64),                   # not float
])
def test_other_arrays_copy_as_numpy_does(make):
    a = make(np.arange(4 * THRESHOLD, dtype=np.float32).reshape(4, -1))
    c = memory.copy(a, THRESHOLD)
    assert c.flags.c_contiguous and c.dtype == a.dtype
    np.testing.assert_array_equal(c, a)


def test_add_keeps_numpy_broadcasting_and_promotion():
    a = np.ones((3, THRESHOLD), np.float32)
    b = np.arange(THRESHOLD, dtype=np.float64)
    out = memory.add(a, b, THRESHOLD)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, a + b)
    zero_d = memory.add(np.array(1.0, np.float32),
                        np.array(2.0, np.float32), THRESHOLD)
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == () and zero_d == 3


def test_add_into_a_strided_destination():
    dst = np.zeros((2, 2 * THRESHOLD), np.float32)[:, ::2]
    memory.add_into(dst, np.ones_like(dst), THRESHOLD)
    np.testing.assert_array_equal(dst, 1)


def test_the_backend_uses_them_from_its_parallel_threshold(monkeypatch):
    calls = []
    kernels = memory._kernels
    monkeypatch.setattr(memory, "_kernels", lambda: calls.append(1) or kernels())
    n = cpu.elementwise.PARALLEL_THRESHOLD
    a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal(cpu.copy(a), a)
    np.testing.assert_array_equal(cpu.add(a, a), a + a)
    assert len(calls) == 2
    cpu.copy(a[:-1])
    assert len(calls) == 2  # below the threshold: NumPy's copy


def test_write_into_view_copies_and_sums_where_the_view_overlaps_itself():
    base = np.ones((3, 4))
    values = np.arange(12.0).reshape(3, 4)
    cpu.write_into_view(base, lambda z: np.broadcast_to(z[:, :1], (3, 4)), values)
    np.testing.assert_array_equal(base[:, 0], 1 + values.sum(axis=1))  # every column into one
    np.testing.assert_array_equal(base[:, 1:], 1)
    cpu.write_into_view(base, lambda z: z[1:, ::2], -values[1:, :2] * 0.0)  # a plain view: copied
    np.testing.assert_array_equal(np.signbit(base[1:, ::2]), np.signbit(-values[1:, :2] * 0.0))
