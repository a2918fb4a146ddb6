"""Softmax and log-softmax over the last axis of a C-contiguous CPU array, one
pass over each row in a Numba kernel.

NumPy needs five or six whole-array passes and a temporary per step (max,
subtract, exp, sum, log, subtract), each paying its call overhead: on a
classifier's (256, 10) logits that is about 30 us for what one loop does in a
few. Rows are independent, so the loops are serial: the arrays these serve
(logits, attention rows) are small, and a thread pool costs more to wake than
the work. Sums accumulate in float64 (as PyTorch's CPU kernels accumulate
float32 in double). The backend's softmax functions call these where ``applies``.
"""
import numpy as np

from ..kernel_source import lazy_module

# The kernels, compiled from a file in nbgrad's kernel cache (kernel_source): its
# name hashes this source together with nbgrad's scalar math, so an edited exp
# never runs from stale machine code in Numba's on-disk cache.
_SOURCE = '''import math

import numba
import numpy as np

from nbgrad.declarations import scalar_math as sm

# nbgrad's vectorizable exp (plain arithmetic, see scalar_math): the exps run in one
# flat loop over the whole array, which LLVM vectorizes; libm's scalar expf in the
# row loops cost about 2.5 ns per element, most of the kernel's time.
_exp = numba.njit(inline="always")(sm.exp)


@numba.njit(inline="always")
def _shift_rows(x, out):
    """out = x - (row maximum): NaN for a row holding a NaN or only -inf (x - max
    is NaN there, as in NumPy). The maximum keeps the array's dtype."""
    rows, cols = x.shape
    for i in range(rows):
        m = x[i, 0]
        for j in range(1, cols):
            v = x[i, j]
            if v > m or v != v:
                m = v
            if m != m:
                break
        if m == -np.inf:
            m = m - m  # NaN of the row's dtype
        for j in range(cols):
            out[i, j] = x[i, j] - m


@numba.njit(inline="always")
def _exp_into(src, dst):
    """dst = exp(src), elementwise over two C-contiguous arrays of one shape."""
    a, b = src.reshape(-1), dst.reshape(-1)
    for k in range(a.shape[0]):
        b[k] = _exp(a[k])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _log_softmax(x, out):
    rows, cols = x.shape
    _shift_rows(x, out)
    e = np.empty_like(out)
    _exp_into(out, e)
    for i in range(rows):
        s = 0.0
        for j in range(cols):
            s += e[i, j]
        log_sum = math.log(s)
        for j in range(cols):
            out[i, j] = out[i, j] - log_sum


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _softmax(x, out):
    rows, cols = x.shape
    _shift_rows(x, out)
    _exp_into(out, out)
    for i in range(rows):
        s = 0.0
        for j in range(cols):
            s += out[i, j]
        scale = 1.0 / s
        for j in range(cols):
            out[i, j] = out[i, j] * scale


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _log_softmax_backward(g, y, out):
    """grad - exp(y) * sum(grad), per row. The sums start at -0., as
    PyTorch's last-axis kernel starts from a row's first element: a row of
    -0. gradients sums to -0., not +0. (so each input gradient is +0.)."""
    rows, cols = g.shape
    _exp_into(y, out)
    for i in range(rows):
        s = -0.0
        for j in range(cols):
            s += g[i, j]
        for j in range(cols):
            out[i, j] = g[i, j] - out[i, j] * s


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _softmax_backward(g, y, out):
    """y * (grad - sum(grad * y)), per row (the sums start at -0., as above)."""
    rows, cols = g.shape
    for i in range(rows):
        s = -0.0
        for j in range(cols):
            s += g[i, j] * y[i, j]
        for j in range(cols):
            out[i, j] = y[i, j] * (g[i, j] - s)
'''

_kernels = lazy_module(_SOURCE, "softmax")


def applies(axis, x, y=None):
    """Whether the row kernels serve this call: the last axis of C-contiguous
    float arrays (``x``, and ``y`` if given) of one dtype and shape, at least
    one row and one column. (Written out, without a generator: it runs on
    every softmax and its backward.)"""
    if (type(x) is not np.ndarray or axis != x.ndim - 1 or not x.size or x.dtype.kind != "f"
            or x.dtype.itemsize < 4 or not x.flags.c_contiguous):  # (float16: the rows compute it)
        return False
    return y is None or (type(y) is np.ndarray and y.flags.c_contiguous and y.dtype == x.dtype
                         and y.shape == x.shape)


def _as_matrix(a):
    return a.reshape(-1, a.shape[-1])


def log_softmax(x):
    out = np.empty(x.shape, x.dtype)
    _kernels()._log_softmax(_as_matrix(x), _as_matrix(out))
    return out


def softmax(x):
    out = np.empty(x.shape, x.dtype)
    _kernels()._softmax(_as_matrix(x), _as_matrix(out))
    return out


def log_softmax_backward(grad, y):
    out = np.empty(grad.shape, grad.dtype)
    _kernels()._log_softmax_backward(_as_matrix(grad), _as_matrix(y), _as_matrix(out))
    return out


def softmax_backward(grad, y):
    out = np.empty(grad.shape, grad.dtype)
    _kernels()._softmax_backward(_as_matrix(grad), _as_matrix(y), _as_matrix(out))
    return out
