"""The CPU backend: NumPy arrays, Numba-compiled elementwise kernels, NumPy's
BLAS for products. Functions take and return raw arrays."""
import numba
import numpy as np

from . import elementwise
from .allocator import pool

name = "cpu"
elementwise_forward = elementwise.forward
elementwise_backward = elementwise.backward


def empty(shape, dtype):
    return pool.empty(shape, dtype)


def memory_stats():
    return pool.stats()


def empty_cache():
    pool.empty_cache()


def set_num_threads(n):
    numba.set_num_threads(n)


def get_num_threads():
    return numba.get_num_threads()


def zeros(shape, dtype):
    return np.zeros(shape, dtype=dtype)


def full(shape, value, dtype):
    return np.full(shape, value, dtype=dtype)


def asarray(data, dtype):
    return np.asarray(data, dtype=dtype)


def cast(a, dtype):
    return a.astype(dtype)


def copy(a):
    return np.array(a, copy=True, order="C")


def add(a, b):
    return np.add(a, b)


def add_into(dst, src):
    np.add(dst, src, out=dst)


def sum_to_shape(grad, shape):
    """Undo broadcasting: sum the leading dimensions ``shape`` lacks and the
    dimensions where ``shape`` has size one."""
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, n in enumerate(shape) if n == 1 and grad.shape[lead + k] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)


def scatter_into_view(base_shape, dtype, view_fn, grad):
    """Zeros of ``base_shape`` with ``grad`` added where ``view_fn`` looks."""
    out = np.zeros(base_shape, dtype=dtype)
    region = view_fn(out)
    if region.flags.writeable and 0 not in region.strides:
        region[...] = grad
    else:  # an overlapping view (expand): accumulate through flat indices
        index = view_fn(np.arange(out.size).reshape(base_shape))
        np.add.at(out.reshape(-1), index, grad)
    return out


def may_share_memory(a, b):
    return np.may_share_memory(a, b)


def matmul(a, b):
    return np.matmul(a, b)


def swap_last(a):
    return np.swapaxes(a, -1, -2)


def reduce_sum(a, axis, keepdims, dtype=None):
    return np.sum(a, axis=axis, keepdims=keepdims, dtype=dtype)


def reduce_max(a, axis, keepdims):
    return np.max(a, axis=axis, keepdims=keepdims)


def reduce_min(a, axis, keepdims):
    return np.min(a, axis=axis, keepdims=keepdims)


def argmax(a, axis, keepdims):
    return np.argmax(a, axis=axis, keepdims=keepdims)


def argmin(a, axis, keepdims):
    return np.argmin(a, axis=axis, keepdims=keepdims)


def broadcast_to(a, shape):
    return np.broadcast_to(a, shape)
