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


def copy(a, threshold):
    """A C-contiguous copy of ``a``; in parallel from ``threshold`` elements."""
    if a.size >= threshold and a.dtype.kind == "f" and a.itemsize > 2 and a.flags.c_contiguous:
        out = pool.empty(a.shape, a.dtype)
        _kernels().copy(out.reshape(-1), a.reshape(-1))
        return out
    return np.array(a, copy=True, order="C")


def _same_floats(a, b):
    """Same shape and float dtype, both C-contiguous: the compiled passes apply."""
    return (a.shape == b.shape and a.dtype == b.dtype and a.dtype.kind == "f" and a.itemsize > 2
            and a.flags.c_contiguous and b.flags.c_contiguous)


def add(a, b, threshold):
    """``a + b`` as a new array (NumPy's broadcasting and promotion where the
    compiled passes do not apply)."""
    if _same_floats(a, b):
        out = pool.empty(a.shape, a.dtype)
        if a.ndim != 1:
            a, b, flat = a.reshape(-1), b.reshape(-1), out.reshape(-1)
        else:
            flat = out
        kernels = _kernels()
        (kernels.add if flat.shape[0] >= threshold else kernels.add_serial)(flat, a, b)
        return out
    with np.errstate(all="ignore"):
        return np.asarray(np.add(a, b))  # 0-d inputs: an array, not a NumPy scalar


def add_into(dst, src, threshold):
    """``dst += src``."""
    if _same_floats(dst, src):
        if dst.ndim != 1:
            dst, src = dst.reshape(-1), src.reshape(-1)
        kernels = _kernels()
        (kernels.add if dst.shape[0] >= threshold else kernels.add_serial)(dst, dst, src)
        return
    with np.errstate(all="ignore"):
        np.add(dst, src, out=dst)
