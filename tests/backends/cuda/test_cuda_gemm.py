"""The tiled shared-memory matmul against NumPy: sizes that are and are not
multiples of the tile, transposed and strided operands (read through their
strides), batches that broadcast, vectors, integer and mixed dtypes; and the
backward pattern of MatmulBackward (matmul with swap_last views)."""
import numpy as np
import pytest

from cuda_support import B, assert_close, dev

CASES = [
    ((1, 1), (1, 1)),
    ((5, 7), (7, 3)),     # not multiples of the tile
    ((8, 4), (4, 8)),     # multiples of the simulator's tile
    ((2, 3, 4), (4, 5)),  # batch against a matrix
    ((2, 1, 3, 4), (5, 4, 2)),  # batches broadcast both ways
    ((6,), (6, 2)),       # vector @ matrix
    ((3, 6), (6,)),       # matrix @ vector
    ((4,), (4,)),         # vector @ vector: a 0-d result
    ((2, 3, 0), (0, 2)),  # empty inner dimension: zeros
    ((0, 3), (3, 2)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa,sb", CASES, ids=[f"{a}@{b}" for a, b in CASES])
def test_matmul_matches_numpy(sa, sb, dtype):
    rng = np.random.default_rng(0)
    a = rng.normal(size=sa).astype(dtype)
    b = rng.normal(size=sb).astype(dtype)
    got = B.matmul(dev(a), dev(b))
    expected = np.matmul(a, b)
    assert got.dtype == expected.dtype
    assert_close(got, expected)


def test_operands_are_read_through_their_strides():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(9, 10))
    b = rng.normal(size=(3, 7, 9))
    da, db = dev(a), dev(b)
    # transposed, sliced with steps, and a batch dim broadcast with stride 0
    assert_close(B.matmul(da[::2, 1:8].T, db[1, ::-1, 2:7].T), a[::2, 1:8].T @ b[1, ::-1, 2:7].T)
    assert_close(B.matmul(B.swap_last(db)[:, :4], da[:7, :5]),
                 np.swapaxes(b, -1, -2)[:, :4] @ a[:7, :5])
    expanded = B.broadcast_to(da[:7, :3], (3, 7, 3))
    assert_close(B.matmul(db[:, :, :7], expanded), b[:, :, :7] @ np.broadcast_to(a[:7, :3], (3, 7, 3)))
    assert_close(da[:2, :3] @ da[:3, :2], a[:2, :3] @ a[:3, :2])


def test_backward_pattern():
    """grad_a = g @ b^T, grad_b = a^T @ g: the products MatmulBackward takes."""
    rng = np.random.default_rng(2)
    a, b, g = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(2, 3, 5))
    assert_close(B.matmul(dev(g), B.swap_last(dev(b))), g @ b.T)
    grad_b = B.sum_to_shape(B.matmul(B.swap_last(dev(a)), dev(g)), b.shape)
    assert_close(grad_b, (np.swapaxes(a, -1, -2) @ g).sum(axis=0))


def test_integer_and_mixed_dtypes_follow_numpy():
    a = np.arange(6).reshape(2, 3)
    b = np.arange(12).reshape(3, 4)
    got = B.matmul(dev(a), dev(b))
    assert got.dtype == np.int64
    assert_close(got, a @ b)
    mixed = B.matmul(dev(a.astype(np.float32)), dev(b.astype(np.float64)))
    assert mixed.dtype == np.float64
    assert_close(mixed, a.astype(np.float32) @ b.astype(np.float64))


def test_errors():
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        B.matmul(dev(np.ones((2, 3))), dev(np.ones((4, 2))))
    with pytest.raises(ValueError, match="not have enough dimensions"):
        B.matmul(dev(np.ones(())), dev(np.ones(2)))
    with pytest.raises(ValueError):
        B.matmul(dev(np.ones((2, 2, 3))), dev(np.ones((3, 3, 2))))
