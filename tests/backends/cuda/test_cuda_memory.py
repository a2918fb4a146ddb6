"""Copies, fills, scatter-add with repeated indices (``np.add.at``), along-axis
gathers and scatters, concatenate/stack/split, add_into and the
write_into_view that CopySlices and view backward use (including
overlapping expand views, which accumulate with atomics)."""
import numpy as np
import pytest

from cuda_support import B, assert_close, cpu, dev, host


def test_zeros_full_empty():
    assert_close(B.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))
    assert_close(B.full((4,), 2.5, np.float64), np.full(4, 2.5))
    assert_close(B.full((2, 2), 3.9, np.int64), np.full((2, 2), 3.9).astype(np.int64))
    assert_close(B.full((), True, np.bool_), np.array(True))
    e = B.empty((3, 0, 2), np.float32)
    assert e.shape == (3, 0, 2) and e.dtype == np.float32


def test_copy_of_views_is_c_contiguous_and_equal():
    a = np.arange(24.0).reshape(2, 3, 4)
    d = dev(a)
    for view in (lambda x: x.transpose(2, 0, 1), lambda x: x[:, ::-1, 1::2],
                 lambda x: x[1, None]):
        c = B.copy(view(d))
        assert c.flags.c_contiguous
        assert_close(c, np.ascontiguousarray(view(a)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_add_at_accumulates_repeated_indices(dtype):
    a = np.zeros((4, 3), dtype)
    d = dev(a)
    key = (np.array([0, 2, 0, 0, 3]), slice(None))
    values = np.arange(15).reshape(5, 3).astype(dtype)
    B.add_at(d, key, dev(values))
    np.add.at(a, key, values)
    assert_close(d, a)
    B.add_at(d, (np.array([1, 1]), np.array([2, 2])), 1)  # a scalar value
    np.add.at(a, (np.array([1, 1]), np.array([2, 2])), 1)
    assert_close(d, a)


def test_add_at_into_a_strided_view():
    base = np.zeros((5, 6))
    d = dev(base)
    view_d, view_a = d[1:, ::2], base[1:, ::2]
    mask = np.array([[True, False, True], [False, False, True], [True, True, True], [False] * 3])
    B.add_at(view_d, (mask,), dev(np.arange(6.0)))
    np.add.at(view_a, (mask,), np.arange(6.0))
    assert_close(d, base)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_and_put_along_axis(axis):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4))
    idx = np.argsort(a, axis=axis)[(slice(None),) * (axis % 2) + (slice(0, 2),)]
    assert_close(B.take_along_axis(dev(a), dev(idx), axis), np.take_along_axis(a, idx, axis))
    out = np.zeros_like(a)
    dout = dev(out)
    values = rng.normal(size=idx.shape)
    B.put_along_axis(dout, dev(idx), dev(values), axis)
    np.put_along_axis(out, idx, values, axis)
    assert_close(dout, out)


def test_take_along_axis_of_a_transposed_view_and_negative_indices():
    a = np.arange(12.0).reshape(3, 4)
    idx = np.array([[-1], [0], [2], [-3]])
    assert_close(B.take_along_axis(dev(a).T, dev(idx), 1), np.take_along_axis(a.T, idx, 1))


def test_argmax_backward_pattern():
    """ExtremumDimBackward: zeros with the gradient put at the argmax."""
    a = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    g = np.array([10.0, 20.0])
    idx = B.argmax(dev(a), 1, True)
    out = B.zeros(a.shape, np.float64)
    B.put_along_axis(out, idx, B.expand_dims(dev(g), 1), 1)
    assert_close(out, [[0, 10, 0], [20, 0, 0]])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_stack_split(axis):
    parts = [np.arange(6.0).reshape(2, 3), np.arange(6, 12, dtype=np.float32).reshape(2, 3).T.copy().T,
             np.ones((2, 3), np.float32)]
    devs = [dev(p) for p in parts]
    devs[1] = dev(parts[1].T).T  # a transposed view
    got = B.concatenate(devs, axis)
    assert_close(got, np.concatenate(parts, axis))
    assert got.dtype == np.float64
    assert_close(B.stack(devs, axis), np.stack(parts, axis))
    pieces = B.split(got, [2, 3], axis)
    for p, e in zip(pieces, np.split(np.concatenate(parts, axis), [2, 3], axis)):
        assert_close(p, e)
        assert B.may_share_memory(p, got) or p.size == 0
    with pytest.raises(ValueError, match="must match exactly"):
        B.concatenate([dev(np.ones((2, 3))), dev(np.ones((3, 3)))], 1)


def test_add_and_add_into_broadcast():
    a = np.arange(6.0).reshape(2, 3)
    b = np.array([10.0, 20.0, 30.0])
    assert_close(B.add(dev(a), dev(b)), a + b)
    d = dev(a)
    B.add_into(d, dev(b))
    assert_close(d, a + b)
    B.add_into(d[:, 1], d[:, 0])
    a2 = a + b
    a2[:, 1] += a2[:, 0]
    assert_close(d, a2)


VIEW_FNS = {
    "slice": lambda z: z[1:, ::2],
    "select": lambda z: z[2],
    "transpose": lambda z: z.T,
    "reshape": lambda z: z.reshape(2, 2, 6),
    "expand": lambda z: z[:, :1].broadcast_to((4, 5)) if hasattr(z, "estrides") else
    np.broadcast_to(z[:, :1], (4, 5)),
}


@pytest.mark.parametrize("name", VIEW_FNS)
def test_write_into_view_matches_cpu(name):
    view_fn = VIEW_FNS[name]
    shape = view_fn(np.zeros((4, 6))).shape
    grad = np.random.default_rng(1).normal(size=shape)
    start = np.random.default_rng(2).normal(size=(4, 6))
    expected = start.copy()
    cpu.write_into_view(expected, view_fn, grad)
    got = dev(start)
    B.write_into_view(got, view_fn, dev(grad))
    assert_close(got, expected)
    if name == "expand":  # the overlapping view accumulated every column into one
        assert np.allclose(host(got)[:, 0] - start[:, 0], grad.sum(axis=1))
