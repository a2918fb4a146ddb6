"""Gathers and scatters along an axis (PyTorch's gather/scatter family and
index_select/index_add), bounds checks of index arrays, positions of nonzero
elements, binary searches and histograms: compiled loops over strided
operands.

Every operand is passed as a 1-D buffer starting at its first element plus
its element strides, so views (transposed, sliced, broadcast with stride 0)
are read and written where they lie, without copies. The iteration runs over
the index's shape in "lines": all dims but the axis pick a line (unravelled
once per line), the axis is walked inside it. Different lines of a scatter
write to different elements of the destination, so lines run in parallel
(``prange``) on large inputs; a single long line (a 1-D gather) is split
along the axis instead, where that is safe (reads).
"""
import math

import numpy as np

from ..kernel_source import lazy_module
from .elementwise import PARALLEL_THRESHOLD

# The combining step of each scatter, on ``dst[p]`` and the value ``v``: NaN
# propagates through amax/amin (a NaN already there stays, as in PyTorch).
_COMBINE = {
    "assign": "dst[p] = v",
    "sum": "dst[p] += v",
    "prod": "dst[p] = dst[p] * v",
    "amax": "a = dst[p]\n            if v > a or v != v:\n                dst[p] = v",
    "amin": "a = dst[p]\n            if v < a or v != v:\n                dst[p] = v",
}

_LINES = '''
    ndim = shape.shape[0]
    length = shape[axis]
    lines = 1
    for d in range(ndim):
        if d != axis:
            lines *= shape[d]
'''

_UNRAVEL = '''
        rem = line + 0  # (a copy: numba refuses a write to the prange index itself)
        ob = 0
        sb = 0
        ib = 0
        for e in range(ndim):
            d = ndim - 1 - e
            if d != axis:
                c = rem % shape[d]
                rem //= shape[d]
                ob += c * out_s[d]
                sb += c * src_s[d]
                ib += c * idx_s[d]
'''


def _gather_source(suffix, parallel):
    loop = "prange" if parallel else "range"
    flag = ", parallel=True" if parallel else ""
    return f'''
@numba.njit(cache=True, nogil=True{flag})
def gather{suffix}(out, out_s, src, src_s, idx, idx_s, shape, axis):
    """out[i] = src[i with the axis coordinate replaced by idx[i]], over idx's shape."""
{_LINES}
    oa = out_s[axis]
    sa = src_s[axis]
    ia = idx_s[axis]
    for line in {loop}(lines):
{_UNRAVEL}
        if oa == 1 and ia == 1:  # contiguous lines: plain loads pipeline better
            out_line = out[ob:ob + length]
            idx_line = idx[ib:ib + length]
            for k in range(length):
                out_line[k] = src[sb + idx_line[k] * sa]
        else:
            for k in range(length):
                out[ob + k * oa] = src[sb + idx[ib + k * ia] * sa]


@numba.njit(cache=True, nogil=True{flag})
def gather_line{suffix}(out, oa, src, sa, idx, ia, length):
    """One line: its elements split among threads."""
    if oa == 1 and ia == 1 and sa == 1:
        for k in {loop}(length):
            out[k] = src[idx[k]]
    else:
        for k in {loop}(length):
            out[k * oa] = src[idx[k * ia] * sa]
'''


def _scatter_source(op, suffix, parallel, scalar):
    loop = "prange" if parallel else "range"
    flag = ", parallel=True" if parallel else ""
    read = "value" if scalar else "src[sb + k * sa]"
    read_line = "value" if scalar else "src_line[k]"
    combine = _COMBINE[op].replace("\n", "\n    ")
    name = f"scatter_{op}{'_scalar' if scalar else ''}{suffix}"
    # (the value operand reuses the gather's names: out -> dst, src -> values)
    return f'''
@numba.njit(cache=True, nogil=True{flag})
def {name}(dst, out_s, src, src_s, idx, idx_s, shape, axis, value):
    """dst[i with the axis coordinate replaced by idx[i]] combined with the value at i."""
{_LINES}
    da = out_s[axis]
    sa = src_s[axis]
    ia = idx_s[axis]
    for line in {loop}(lines):
{_UNRAVEL}
        if ia == 1 and sa == 1:  # contiguous lines: plain loads pipeline better
            idx_line = idx[ib:ib + length]
            src_line = src[sb:sb + length]
            for k in range(length):
                p = ob + idx_line[k] * da
                v = {read_line}
                {combine}
        else:
            for k in range(length):
                p = ob + idx[ib + k * ia] * da
                v = {read}
                {combine}
'''


# Small C-contiguous operands, seen as 3-D (outer, axis, inner), or as 2-D
# rows when the axis is the last: plain indexing, without the stride arrays
# and unravelling above (the kernel of a gather of 64 x 128 along the last
# dim: 2.7 instead of 4.6 us); ``take_*`` read a 1-D index for every line.
def _gather_c_source(suffix, parallel):
    loop = "prange" if parallel else "range"
    flag = ", parallel=True" if parallel else ""
    return f'''
@numba.njit(cache=True, nogil=True{flag})
def gather_rows{suffix}(out, src, idx):
    """out[o, k] = src[o, idx[o, k]] (2-D, C-contiguous)."""
    for o in {loop}(idx.shape[0]):
        for k in range(idx.shape[1]):
            out[o, k] = src[o, idx[o, k]]


@numba.njit(cache=True, nogil=True{flag})
def gather_c{suffix}(out, src, idx):
    """out[o, k, j] = src[o, idx[o, k, j], j] (3-D, C-contiguous)."""
    outer, m, inner = idx.shape
    for o in {loop}(outer):
        for k in range(m):
            for j in range(inner):
                out[o, k, j] = src[o, idx[o, k, j], j]


@numba.njit(cache=True, nogil=True{flag})
def take_rows{suffix}(out, src, idx):
    """out[o, k] = src[o, idx[k]] (2-D, C-contiguous; ``idx`` 1-D)."""
    for o in {loop}(out.shape[0]):
        for k in range(out.shape[1]):
            out[o, k] = src[o, np.uintp(idx[k])]  # (in range: no wraparound test)


@numba.njit(cache=True, nogil=True{flag})
def take_c{suffix}(out, src, idx):
    """out[o, k, j] = src[o, idx[k], j] (3-D, C-contiguous; ``idx`` 1-D)."""
    outer, m, inner = out.shape
    for o in {loop}(outer):
        for k in range(m):
            p = np.uintp(idx[k])
            for j in range(inner):
                out[o, k, j] = src[o, p, j]
'''


def _contiguous_source(op, suffix, parallel):
    loop = "prange" if parallel else "range"
    flag = ", parallel=True" if parallel else ""
    combine = _COMBINE[op].replace("\n", "\n    ")
    rows = combine.replace("dst[p]", "dst[o, p]").replace("\n    ", "\n")
    lines = combine.replace("dst[p]", "dst[o, p, j]")
    # (lines of different ``o`` write different elements: safe in parallel)
    return f'''
@numba.njit(cache=True, nogil=True{flag})
def scatter_{op}_rows{suffix}(dst, idx, src):
    """dst[o, idx[o, k]] combined with src[o, k] (2-D, C-contiguous)."""
    for o in {loop}(idx.shape[0]):
        for k in range(idx.shape[1]):
            p = idx[o, k]
            v = src[o, k]
            {rows}


@numba.njit(cache=True, nogil=True{flag})
def scatter_{op}_c{suffix}(dst, idx, src):
    """dst[o, idx[o, k, j], j] combined with src[o, k, j] (3-D, C-contiguous)."""
    outer, m, inner = idx.shape
    for o in {loop}(outer):
        for k in range(m):
            for j in range(inner):
                p = idx[o, k, j]
                v = src[o, k, j]
                {lines}
'''


_SOURCE = "\n".join(
    ["import numba\nimport numpy as np\nfrom numba import prange\n"]
    + [_gather_source(suffix, parallel) for suffix, parallel in (("", False), ("_parallel", True))]
    + [_gather_c_source(suffix, parallel)
       for suffix, parallel in (("", False), ("_parallel", True))]
    + [_scatter_source(op, suffix, parallel, scalar)
       for op in _COMBINE for scalar in (False, True)
       for suffix, parallel in (("", False), ("_parallel", True))]
    + [_contiguous_source(op, suffix, parallel) for op in _COMBINE
       for suffix, parallel in (("", False), ("_parallel", True))]
    + ['''
@numba.njit(cache=True, nogil=True)
def first_out_of_range(idx, low, high):
    """The position of the first element of the 1-D ``idx`` outside [low, high), or -1."""
    bad = False
    for i in range(idx.shape[0]):  # branch-free: vectorized (4x the early-exit loop's speed)
        v = idx[i]
        bad |= (v < low) | (v >= high)
    if bad:
        for i in range(idx.shape[0]):
            v = idx[i]
            if v < low or v >= high:
                return i
    return -1


@numba.njit(cache=True, nogil=True, parallel=True)
def searchsorted(bd, values, out, right):
    """PyTorch's binary search (its comparisons, so a NaN goes past every
    element): bd (rows, n), values and out (rows, m), each row against its own."""
    rows, n = bd.shape
    m = values.shape[1]
    for t in prange(rows * m):
        r = t // m
        j = t - r * m
        v = values[r, j]
        lo = 0
        hi = n
        while lo < hi:
            mid = lo + ((hi - lo) >> 1)
            x = bd[r, mid]
            if right:
                after = not (x > v)
            else:
                after = not (x >= v)
            if after:
                lo = mid + 1
            else:
                hi = mid
        out[r, j] = lo


@numba.njit(cache=True, nogil=True)
def histc(a, bins, low, high, out):
    """PyTorch's histc: bin (a - low) * bins / (high - low), in a's dtype
    (``bins``, ``low``, ``high`` are of it); high itself goes to the last bin."""
    width = high - low
    last = out.shape[0] - 1
    for i in range(a.shape[0]):
        x = a[i]
        if x >= low and x <= high:
            pos = np.int64((x - low) * bins / width)
            if pos > last:
                pos = last
            out[pos] += 1
'''])

kernels = lazy_module(_SOURCE, "cpu_indexing")


# ------------------------------------------------------------------ operands
def _operand(a):
    """``a`` as (1-D buffer from its first element, element strides as int64),
    copied first where a stride is negative (or not a whole number of elements)."""
    if a.flags.c_contiguous:  # the common case, without as_strided's cost (tens of us)
        strides = np.ones(a.ndim, np.int64)
        for d in range(a.ndim - 1, 0, -1):
            strides[d - 1] = strides[d] * a.shape[d]
        return a.reshape(-1), strides
    if a.ndim and (min(a.strides) < 0 or any(s % a.itemsize for s in a.strides)):
        a = np.ascontiguousarray(a)
    item = a.itemsize
    strides = np.array([s // item for s in a.strides], dtype=np.int64)
    span = 1 + int(sum((n - 1) * s for n, s in zip(a.shape, strides))) if a.size else 0
    buf = np.lib.stride_tricks.as_strided(a, (span,), (item,), writeable=a.flags.writeable)
    return buf, strides


def _at_least_1d(*arrays):
    return [a.reshape(1) if a.ndim == 0 else a for a in arrays]


def _parallel(size):
    return size >= PARALLEL_THRESHOLD


def _index(indices):
    """Index arrays of int32 and int64 are read as they are; others as int64."""
    dtype = indices.dtype
    return indices if dtype.kind == "i" and dtype.itemsize >= 4 else indices.astype(np.int64)


# ------------------------------------------------------------------ functions
def _three_d(shape, axis, n):
    """``shape`` as (outer, n, inner) around ``axis``."""
    return math.prod(shape[:axis]), n, math.prod(shape[axis + 1:])


def _plain(a, indices, axis):
    """A C-contiguous ``a`` and an int32/int64 index of its shape apart from
    ``axis``: the case of the plain 3-D (or rows) kernels, when they have
    more than one line or are small (one long line: the split line kernels)."""
    ashape, ishape = a.shape, indices.shape
    size = indices.size
    return (0 < len(ashape) == len(ishape) and 0 < size
            and (size < PARALLEL_THRESHOLD or size != ishape[axis])
            and a.flags.c_contiguous and indices.dtype.kind == "i"
            and indices.dtype.itemsize >= 4
            and ashape[:axis] == ishape[:axis] and ashape[axis + 1:] == ishape[axis + 1:])


def _variant(name, size):
    return name + "_parallel" if size >= PARALLEL_THRESHOLD else name


def _spread_line(indices, axis):
    """The 1-D index behind ``indices`` when it is one broadcast along every
    other dim (index_select's), else None."""
    strides, shape = indices.strides, indices.shape
    for d in range(len(shape)):
        if d != axis and strides[d] != 0 and shape[d] != 1:
            return None
    return indices[(0,) * axis + (slice(None),) + (0,) * (len(shape) - axis - 1)]


def gather_along(a, indices, axis):
    """PyTorch's gather: out[i] = a[i, axis -> indices[i]], over ``indices``'
    shape (no larger than ``a``'s apart from ``axis``; indices in range)."""
    out = np.empty(indices.shape, a.dtype)
    if out.size == 0:
        return out
    if _plain(a, indices, axis):
        shape = _three_d(a.shape, axis, a.shape[axis])
        oshape = _three_d(out.shape, axis, out.shape[axis])
        kind = "c"
        if shape[2] == 1:
            shape, oshape, kind = shape[:2], oshape[:2], "rows"
        if indices.flags.c_contiguous:
            getattr(kernels(), _variant("gather_" + kind, out.size))(
                out.reshape(oshape), a.reshape(shape), indices.reshape(oshape))
            return out
        line = _spread_line(indices, axis)
        if line is not None:  # index_select's
            getattr(kernels(), _variant("take_" + kind, out.size))(
                out.reshape(oshape), a.reshape(shape), np.ascontiguousarray(line))
            return out
    a, indices, view = _at_least_1d(a, _index(indices), out)
    (src, src_s), (idx, idx_s), (dst, dst_s) = _operand(a), _operand(indices), _operand(view)
    shape = np.array(indices.shape, dtype=np.int64)
    k = kernels()
    if indices.size == indices.shape[axis] and _parallel(indices.size):  # one long line
        k.gather_line_parallel(dst, dst_s[axis], src, src_s[axis], idx, idx_s[axis],
                               indices.shape[axis])
    else:
        (k.gather_parallel if _parallel(indices.size) else k.gather)(
            dst, dst_s, src, src_s, idx, idx_s, shape, axis)
    return out


def scatter_along(a, indices, values, axis, reduce=None):
    """In place: a[i, axis -> indices[i]] = values[i], or combined with what
    is there by ``reduce`` ("sum", "prod", "amax", "amin"; repeated indices
    accumulate), over ``indices``' shape. ``values``: an array of that shape
    (it may be a broadcast view) or a NumPy scalar of ``a``'s dtype."""
    if indices.size == 0:
        return
    if (values.__class__ is np.ndarray and values.shape == indices.shape
            and a.flags.writeable and _plain(a, indices, axis)):
        # Strided operands (index_select's spread index, a broadcast gradient)
        # are copied: one pass, far cheaper than the general strided loop.
        indices, values = np.ascontiguousarray(indices), np.ascontiguousarray(values)
        shape = _three_d(indices.shape, axis, indices.shape[axis])
        dshape = _three_d(a.shape, axis, a.shape[axis])
        kind = "c"
        if shape[2] == 1:
            shape, dshape, kind = shape[:2], dshape[:2], "rows"
        name = f"scatter_{reduce or 'assign'}_{kind}"
        if shape[0] > 1:  # (one line: serial, its elements may collide)
            name = _variant(name, indices.size)
        getattr(kernels(), name)(a.reshape(dshape), indices.reshape(shape), values.reshape(shape))
        return
    scalar = np.ndim(values) == 0 and not isinstance(values, np.ndarray)
    a, indices = _at_least_1d(a, _index(indices))
    (dst, dst_s), (idx, idx_s) = _operand(a), _operand(indices)
    if not dst.flags.writeable:
        raise ValueError("assignment destination is read-only")
    if scalar:
        src, src_s, value = idx, idx_s, a.dtype.type(values)  # (src is not read)
    else:
        (src, src_s), value = _operand(_at_least_1d(values)[0]), a.dtype.type(0)
    shape = np.array(indices.shape, dtype=np.int64)
    lines = indices.size // indices.shape[axis]
    name = f"scatter_{reduce or 'assign'}{'_scalar' if scalar else ''}"
    if _parallel(indices.size) and lines > 1:
        name += "_parallel"
    getattr(kernels(), name)(dst, dst_s, src, src_s, idx, idx_s, shape, axis, value)


def index_select_along(a, index, axis):
    """PyTorch's index_select: ``a``'s entries along ``axis`` at the 1-D
    in-range ``index``, a new C-contiguous array (for a C-contiguous ``a``
    and an int32/int64 index, the take kernels: 1.5 us on 64 x 128 along
    dim 0, against 4 for a gather with the index broadcast)."""
    out = np.empty(a.shape[:axis] + index.shape + a.shape[axis + 1:], a.dtype)
    if out.size == 0:
        return out
    if a.ndim == 1 and _parallel(index.size):  # one long line: split among threads
        return gather_along(a, index, 0)
    if not a.flags.c_contiguous or index.dtype.kind != "i" or index.dtype.itemsize < 4:
        return np.take(a, index, axis=axis)
    shape = _three_d(a.shape, axis, a.shape[axis])
    oshape = _three_d(out.shape, axis, index.shape[0])
    if shape[2] == 1:
        getattr(kernels(), _variant("take_rows", out.size))(
            out.reshape(oshape[:2]), a.reshape(shape[:2]), index)
    else:
        getattr(kernels(), _variant("take_c", out.size))(
            out.reshape(oshape), a.reshape(shape), index)
    return out


def first_out_of_range(indices, low, high):
    """The first element of ``indices`` (C order) outside [low, high), as a
    Python int, or None when all are in range."""
    flat = indices.reshape(-1) if indices.flags.c_contiguous else \
        np.ascontiguousarray(indices).reshape(-1)
    at = kernels().first_out_of_range(flat, low, high)
    return None if at < 0 else int(flat[at])


def flatnonzero(a):
    """The C-order positions of the nonzero elements (NaN counts), int64."""
    return np.flatnonzero(a).astype(np.int64, copy=False)


def nonzero(a):
    """The coordinates of the nonzero elements, (count, ndim) int64, laid out
    as PyTorch's (column-major: each dim's coordinates contiguous)."""
    if a.ndim == 0:
        return np.zeros((1 if a != 0 else 0, 0), np.int64)
    columns = np.nonzero(a)
    return np.stack(columns).astype(np.int64, copy=False).T if columns[0].size else \
        np.empty((len(columns), 0), np.int64).T


def searchsorted(boundaries, values, right):
    """For each value, the position in its sorted row of ``boundaries`` (1-D:
    one row for every value; else (rows, n) against values (rows, m)) where it
    would be inserted: before equal elements, or after them with ``right``."""
    out = np.empty(values.shape, np.int64)
    if out.size == 0:
        return out
    if boundaries.ndim == 1:
        bd, vals = boundaries.reshape(1, -1), values.reshape(1, -1)
    else:
        bd = boundaries.reshape(-1, boundaries.shape[-1])
        vals = values.reshape(bd.shape[0], -1)
    bd, vals = np.ascontiguousarray(bd), np.ascontiguousarray(vals)
    kernels().searchsorted(bd, vals, out.reshape(vals.shape), bool(right))
    return out


def histc(a, bins, low, high):
    """The counts of ``a``'s elements in ``bins`` equal bins over [low, high]
    (elements outside, NaN included, are not counted), in ``a``'s dtype."""
    out = np.zeros(bins, a.dtype)
    flat = np.ascontiguousarray(a).reshape(-1)
    if flat.size:
        t = a.dtype.type
        kernels().histc(flat, t(bins), t(low), t(high), out)
    return out
