"""Cumulative scans along one axis (cumsum, cumprod, cummax, cummin) as
compiled loops.

The input is seen as ``(outer, n, inner)`` (``n`` the scanned axis) of a
C-contiguous array, copied first only when it is not one. Sums and products
accumulate in float64 for floating inputs (int64 for integers) and round
once per output, as PyTorch's CPU kernels do (``1e8 + 1 - 1e8`` in float32
gives 1, not 0). Three loop shapes:

- ``inner > 1`` (a scan along a leading axis): for each step along the axis a
  whole row of ``inner`` accumulators is updated, a vectorizable inner loop;
  parallel over ``(outer, block of inner)``;
- ``inner == 1``: one line per iteration, parallel over lines. One long line
  (a 1-D cumsum of 10^7 elements) runs serially: in parallel pieces (the
  pieces' totals, their offsets, each piece's scan) it reads memory twice,
  which measured 2x slower on 2 cores than one pass (13 ms; PyTorch 31 ms).

cummax/cummin keep PyTorch's rule: a later element replaces the running
value when it is NaN or, the running value being no NaN, when it is ``>=``
(``<=``) it; its index is recorded.
"""
import math

import numpy as np

from ..kernel_source import lazy_module

_SOURCE = '''import numba
import numpy as np
from numba import prange


'''

# Per operation and variant ({loop}: range or prange): {op} combines ``acc`` and ``v``.
_SUM_PROD = '''
@numba.njit(cache=True, nogil=True{parallel})
def {name}_lines{suffix}(x, out, zero):
    """Each row of 2-D ``x`` scanned into ``out``."""
    for o in {loop}(x.shape[0]):
        acc = zero
        for k in range(x.shape[1]):
            v = x[o, k]
            acc = {op}
            out[o, k] = acc


@numba.njit(cache=True, nogil=True{parallel})
def {name}_inner{suffix}(x, out, zero, block):
    """3-D ``x`` scanned along axis 1: a row of accumulators per step, by
    tasks of (outer, a block of the inner axis)."""
    outer, n, inner = x.shape
    blocks = (inner + block - 1) // block
    for task in {loop}(outer * blocks):
        o = task // blocks
        j0 = (task % blocks) * block
        j1 = min(inner, j0 + block)
        acc = np.full(j1 - j0, zero)
        for k in range(n):
            # Row views and a range index: LLVM vectorizes the loop (5x on 64 x 128).
            row = x[o, k, j0:j1]
            out_row = out[o, k, j0:j1]
            for j in range(j1 - j0):
                v = row[j]
                a = acc[j]
                a = {op_a}
                acc[j] = a
                out_row[j] = a
'''

_OPS = {"sum": "acc + v", "prod": "acc * v"}

_EXTREMUM = '''
@numba.njit(cache=True, nogil=True{parallel})
def {name}_scan{suffix}(x, values, indices, block):
    """3-D ``x`` scanned along axis 1 (``inner`` may be 1), by tasks of
    (outer, a block of the inner axis)."""
    outer, n, inner = x.shape
    blocks = (inner + block - 1) // block
    for task in {loop}(outer * blocks):
        o = task // blocks
        j0 = (task % blocks) * block
        j1 = min(inner, j0 + block)
        for j in range(j0, j1):
            best = x[o, 0, j]
            at = 0
            for k in range(n):
                v = x[o, k, j]
                if v != v or (best == best and v {cmp} best):
                    best = v
                    at = k
                values[o, k, j] = best
                indices[o, k, j] = at
'''

_VARIANTS = (("", "range", ""), ("_parallel", "prange", ", parallel=True"))


def _source():
    parts = [_SOURCE]
    for suffix, loop, parallel in _VARIANTS:
        variant = dict(suffix=suffix, loop=loop, parallel=parallel)
        parts += [_SUM_PROD.format(name=name, op=op, op_a=op.replace("acc", "a"), **variant)
                  for name, op in _OPS.items()]
        parts += [_EXTREMUM.format(name=name, cmp=cmp, **variant)
                  for name, cmp in (("max", ">="), ("min", "<="))]
    return "\n".join(parts)


kernels = lazy_module(_source(), "cpu_scans")

# Elements from which a scan runs its parallel loops.
PARALLEL_THRESHOLD = 1 << 16
_BLOCK = 4096  # inner elements per task of a leading-axis scan


def _three_d(a, axis):
    """``a`` (C-contiguous) as (outer, n, inner) around ``axis``."""
    shape = a.shape
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    return a.reshape(outer, shape[axis], inner)


def _compute_dtype(dtype):
    """Kernels run on float32, float64, int64 and bool; narrower floats
    (float16) compute in float32, narrower integers in int64."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and dtype.itemsize < 4:
        return np.dtype(np.float32)
    if dtype.kind in "iu" and dtype != np.int64:
        return np.dtype(np.int64)
    return dtype


def cumulative(a, axis, op, dtype=None, reverse=False):
    """Inclusive ``op`` ("sum"/"prod") scan of ``a`` along ``axis`` in ``dtype``
    (from the end with ``reverse``: the scanned copy is read backwards)."""
    if (not reverse and a.ndim and axis == a.ndim - 1 and a.dtype.kind == "f" and
            a.dtype.itemsize >= 4 and a.flags.c_contiguous and (dtype is None or dtype == a.dtype)):
        return _last_axis(a, op)  # the common case, with the least Python around it
    if reverse and a.ndim:
        out = cumulative(np.flip(a, axis), axis, op, dtype)
        return np.ascontiguousarray(np.flip(out, axis))
    out_dtype = np.dtype(a.dtype if dtype is None else dtype)
    work = _compute_dtype(out_dtype)
    x = np.ascontiguousarray(a if a.dtype == work else a.astype(work))
    if x.ndim == 0:
        x = x.reshape(1)
    out = np.empty(x.shape, work)
    if x.size:
        zero = (np.float64(0) if work.kind == "f" else np.int64(0))
        if op == "prod":
            zero = zero + 1
        _scan(x, out, axis, op, zero)
    out = out.reshape(a.shape)
    return out if work == out_dtype else out.astype(out_dtype)


_START = {"sum": np.float64(0), "prod": np.float64(1)}


def _last_axis(a, op):
    """A float scan along the last axis of a C-contiguous array: one line per row."""
    out = np.empty(a.shape, a.dtype)
    if a.size:
        n = a.shape[-1]
        lines = a.reshape(-1, n)
        k = kernels()
        if a.size >= PARALLEL_THRESHOLD and lines.shape[0] > 1:
            run = k.sum_lines_parallel if op == "sum" else k.prod_lines_parallel
        else:
            run = k.sum_lines if op == "sum" else k.prod_lines
        run(lines, out.reshape(-1, n), _START[op])
    return out


def _scan(x, out, axis, op, zero):
    k = kernels()
    x3, out3 = _three_d(x, axis), _three_d(out, axis)
    outer, n, inner = x3.shape
    parallel = x.size >= PARALLEL_THRESHOLD
    if inner > 1:
        run = getattr(k, f"{op}_inner_parallel" if parallel else f"{op}_inner")
        run(x3, out3, zero, _BLOCK if parallel else inner)
    else:  # (a long line in parallel pieces read memory twice: slower than one pass on 2 cores)
        getattr(k, f"{op}_lines_parallel" if parallel and outer > 1 else f"{op}_lines")(
            x3[:, :, 0], out3[:, :, 0], zero)


def cumulative_extremum(a, axis, op):
    """(values, indices) of the running ``op`` ("max"/"min") along ``axis``."""
    work = _compute_dtype(a.dtype)
    x = np.ascontiguousarray(a if a.dtype == work else a.astype(work))
    if x.ndim == 0:
        x = x.reshape(1)
    values, indices = np.empty(x.shape, work), np.empty(x.shape, np.int64)
    if x.size:
        x3 = _three_d(x, axis)
        parallel = x.size >= PARALLEL_THRESHOLD
        run = getattr(kernels(), f"{op}_scan_parallel" if parallel else f"{op}_scan")
        run(x3, _three_d(values, axis), _three_d(indices, axis),
            min(_BLOCK, x3.shape[2]) if parallel else x3.shape[2])
    values = values.reshape(a.shape)
    return (values if work == a.dtype else values.astype(a.dtype)), indices.reshape(a.shape)
