"""Medians and modes along one axis, as compiled loops over the lines of a
2-D array (the axis moved last).

- The median selects without sorting: a quickselect on a copy of each line,
  then one pass for its position: of tied values, the one a stable sort
  would put at the median's place (PyTorch leaves it unspecified). A NaN
  makes the median NaN (the first NaN and its position, as PyTorch's); the
  nan-ignoring median selects among the other values, and a line of NaNs
  gives NaN at position 0, as PyTorch's.
- The mode sorts a copy of each line and keeps the longest run of equal
  values: of equally long runs the first (the smallest value), at the last
  position of that value in the line (PyTorch's CPU kernel keeps whichever
  its unstable sort puts last; mostly that one). NaNs are never equal, so
  each is a run of one.
"""
import numpy as np

from ..kernel_source import lazy_module
from .sorting import axis_last

_SOURCE = '''import numba
import numpy as np
from numba import prange


@numba.njit(cache=True, nogil=True)
def _select(v, m, k):
    """Reorder the first ``m`` values of ``v`` (no NaN) so that position ``k``
    holds the k-th smallest: Hoare's partition around the middle value."""
    lo = 0
    hi = m - 1
    while lo < hi:
        pivot = v[(lo + hi) // 2]
        i = lo
        j = hi
        while i <= j:
            while v[i] < pivot:
                i += 1
            while pivot < v[j]:
                j -= 1
            if i <= j:
                t = v[i]
                v[i] = v[j]
                v[j] = t
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return


@numba.njit(cache=True, nogil=True)
def _position(line, value, rank):
    """The position of the ``rank``-th (from 0) element equal to ``value``."""
    for k in range(line.shape[0]):
        if line[k] == value:
            if rank == 0:
                return k
            rank -= 1
    return -1


@numba.njit(cache=True, nogil=True)
def _median_line(line, v, ignore_nan):
    """(value, position) of the lower median of ``line``; ``v`` is scratch.
    Ties: the position a stable sort would put at the median's place."""
    m = 0
    first_nan = -1
    for k in range(line.shape[0]):
        e = line[k]
        if e != e:
            if first_nan < 0:
                first_nan = k
            continue
        v[m] = e
        m += 1
    if first_nan >= 0 and (not ignore_nan or m == 0):
        at = first_nan if not ignore_nan else 0
        return line[at], at
    k = (m - 1) // 2
    _select(v, m, k)
    value = v[k]
    below = 0
    for j in range(k):  # after selection, the smaller values lie before k
        if v[j] < value:
            below += 1
    return value, _position(line, value, k - below)


@numba.njit(cache=True, nogil=True)
def _mode_line(line, v):
    """(value, position) of the mode of ``line``; ``v`` is scratch."""
    n = line.shape[0]
    v[:] = line
    v.sort()  # NaNs last, each a run of one
    best_run = 0
    run = 0
    value = v[0]
    for k in range(n):
        run += 1
        if k == n - 1 or v[k] != v[k + 1]:
            if run > best_run:
                best_run = run
                value = v[k]
            run = 0
    if value != value:  # a line of NaNs: the first
        for k in range(n):
            if line[k] != line[k]:
                return value, k
    for k in range(n - 1, -1, -1):
        if line[k] == value:
            return value, k
    return value, 0


@numba.njit(cache=True, nogil=True)
def median_all(x, ignore_nan):
    """The lower median of a 1-D array (a copy is selected in)."""
    v = np.empty(x.shape[0], x.dtype)
    return _median_line(x, v, ignore_nan)[0]
'''

_LINES = '''
@numba.njit(cache=True, nogil=True{parallel})
def median_lines{suffix}(x, values, indices, scratch, ignore_nan):
    for r in {loop}(x.shape[0]):
        values[r], indices[r] = _median_line(x[r], scratch[r], ignore_nan)


@numba.njit(cache=True, nogil=True{parallel})
def mode_lines{suffix}(x, values, indices, scratch):
    for r in {loop}(x.shape[0]):
        values[r], indices[r] = _mode_line(x[r], scratch[r])
'''


def _source():
    return _SOURCE + "".join(_LINES.format(suffix=suffix, loop=loop, parallel=parallel)
                             for suffix, loop, parallel in (("", "range", ""),
                                                            ("_parallel", "prange", ", parallel=True")))


kernels = lazy_module(_source(), "cpu_selection")
PARALLEL_THRESHOLD = 1 << 15  # elements from which the lines are shared among threads
_PARTITION_FROM = 1 << 14  # whole-array medians from this size take NumPy's partition


def _lines(a, axis):
    """``a`` with ``axis`` moved last, C-contiguous, as 2-D lines (and the kept shape)."""
    moved = axis_last(a, axis)
    lines = np.ascontiguousarray(moved).reshape(-1, a.shape[axis])
    if lines.dtype.kind == "f" and lines.dtype.itemsize < 4:
        lines = lines.astype(np.float32)
    return lines, moved.shape[:-1]


def _run(name, a, axis, *extra):
    lines, kept = _lines(a, axis)
    values = np.empty(lines.shape[0], lines.dtype)
    indices = np.empty(lines.shape[0], np.int64)
    if lines.size:
        parallel = lines.size >= PARALLEL_THRESHOLD and lines.shape[0] > 1
        getattr(kernels(), f"{name}_lines_parallel" if parallel else f"{name}_lines")(
            lines, values, indices, np.empty(lines.shape, lines.dtype), *extra)
    return values.reshape(kept).astype(a.dtype, copy=False), indices.reshape(kept)


def median_with_indices(a, axis, ignore_nan=False):
    """(values, indices) of the lower median along ``axis`` (removed)."""
    return _run("median", a, axis, ignore_nan)


def mode_with_indices(a, axis):
    """(values, indices) of the most frequent value along ``axis`` (removed)."""
    return _run("mode", a, axis)


def reduce_median(a, ignore_nan=False):
    """The lower median of all of ``a``'s elements, a 0-d array (NaN as above)."""
    flat = np.ascontiguousarray(a).reshape(-1)
    if flat.dtype.kind == "f" and flat.dtype.itemsize < 4:
        flat = flat.astype(np.float32)
    if flat.size == 0:
        return np.array(np.nan, a.dtype)
    if flat.size < _PARTITION_FROM:
        return np.array(kernels().median_all(flat, ignore_nan), a.dtype)
    if flat.dtype.kind == "f":  # NumPy's introselect (2x the loop's speed on 10^7 elements)
        nan = np.isnan(flat)
        if nan.any():
            if not ignore_nan:
                return np.array(np.nan, a.dtype)
            flat = flat[~nan]
            if flat.size == 0:
                return np.array(np.nan, a.dtype)
    k = (flat.size - 1) // 2
    return np.array(np.partition(flat, k)[k], a.dtype)
