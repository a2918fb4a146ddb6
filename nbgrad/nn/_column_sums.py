"""Column sums of a 2-D CPU array in one compiled pass: the bias gradient of a
linear or convolution layer (the sum of its output gradient over the rows).

``np.add.reduce(a, axis=0)`` adds the rows of a C-contiguous array one after
another into a zeroed result; this loop adds them in the same order, so the
sums are the same to the bit, in about half the time on a training step's
arrays (a (256, 256) float32 gradient: 4.5 us against 9.4; (256, 10): 1.7
against 4.9).
"""
import numpy as np

from ..backends.kernel_source import lazy_module

_SOURCE = '''import numba


@numba.njit(cache=True, nogil=True, error_model="numpy")
def column_sums(a, out):
    """out[j] = ((0 + a[0, j]) + a[1, j]) + ..., left to right; from +0 as
    NumPy's reduce (a column of -0.0 sums to +0.0)."""
    rows, cols = a.shape
    for j in range(cols):
        out[j] = 0
    for i in range(rows):
        for j in range(cols):
            out[j] = out[j] + a[i, j]
'''

_kernels = lazy_module(_SOURCE, "column_sums")


def column_sums(a):
    """The sums over axis 0 of a 2-D array, as ``np.add.reduce(a, axis=0)``
    gives them. Only C-contiguous float arrays with more than one column go
    to the loop: there NumPy adds whole rows in order; along a
    contiguous axis (one column, a transposed array) it sums pairwise."""
    if not (a.flags.c_contiguous and a.shape[1] > 1 and a.dtype.kind == "f"):
        return np.add.reduce(a, axis=0)
    out = np.empty(a.shape[1], a.dtype)
    _kernels().column_sums(a, out)
    return out
