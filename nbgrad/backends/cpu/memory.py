"""Copies and sums of gradients, as the engine moves them: a leaf's copy of a
gradient it may not keep, the sum of two gradients for one input. For large
arrays NumPy's would run on one thread and write into freshly mapped pages;
these run one ``prange`` pass into the pool's memory (or in place). Sums of
small arrays run a serial loop: compiled, so inf + -inf is a quiet NaN, as in
PyTorch, where NumPy would warn."""
import numpy as np

from ..kernel_source import lazy_module
from .allocator import pool

_SOURCE = '''import numba
from numba import prange


@numba.njit(parallel=True, cache=True, nogil=True)
def copy(dst, src):
    for i in prange(dst.shape[0]):
        dst[i] = src[i]


@numba.njit(parallel=True, cache=True, nogil=True)
def add(dst, a, b):
    for i in prange(dst.shape[0]):
        dst[i] = a[i] + b[i]


@numba.njit(cache=True, nogil=True)
def add_serial(dst, a, b):
    for i in range(dst.shape[0]):
        dst[i] = a[i] + b[i]
'''

_kernels = lazy_module(_SOURCE, "memory")


def _flat(*arrays):
    """1-D views of same-shape, same-dtype, C-contiguous float arrays, or None."""
    first = arrays[0]
    if first.dtype.kind != "f":
        return None
    for a in arrays:
        if a.shape != first.shape or a.dtype != first.dtype or not a.flags.c_contiguous:
            return None
    return [a.reshape(-1) for a in arrays]


def copy(a, threshold):
    """A C-contiguous copy of ``a``; in parallel from ``threshold`` elements."""
    if a.size >= threshold and _flat(a):
        out = pool.empty(a.shape, a.dtype)
        _kernels().copy(out.reshape(-1), a.reshape(-1))
        return out
    return np.array(a, copy=True, order="C")


def add(a, b, threshold):
    """``a + b`` as a new array (NumPy's broadcasting and promotion where the
    compiled passes do not apply)."""
    flat = _flat(a, b)
    if flat:
        out = pool.empty(a.shape, a.dtype)
        kernels = _kernels()
        (kernels.add if a.size >= threshold else kernels.add_serial)(out.reshape(-1), *flat)
        return out
    with np.errstate(all="ignore"):
        return np.asarray(np.add(a, b))  # 0-d inputs: an array, not a NumPy scalar


def add_into(dst, src, threshold):
    """``dst += src``."""
    flat = _flat(dst, src)
    if flat:
        kernels = _kernels()
        (kernels.add if dst.size >= threshold else kernels.add_serial)(flat[0], flat[0], flat[1])
        return
    with np.errstate(all="ignore"):
        np.add(dst, src, out=dst)
