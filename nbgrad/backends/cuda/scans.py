"""Scans and selections along one axis on the device: cumsum, cumprod,
cummax, cummin, and the median and mode of each line.

A "line" is the run of elements along the axis for one position of the
other dimensions; those are unravelled inside the kernel (coalesced first),
so any strided or broadcast view is read without a copy, and results are
C-contiguous. Sums and products accumulate in float64 for floating inputs
(int64 for integers), as the CPU backend's do.

- Sums and products: a block per line when the lines are few and long (a
  1-D cumsum): the block walks its line a tile at a time, every thread
  loading one element, a Hillis-Steele scan of the tile in shared memory,
  plus the running total of the tiles before; otherwise a thread per line,
  looping along it (neighbouring threads read neighbouring elements when
  the axis is not the innermost).
- cummax/cummin: a thread per line (PyTorch's rule: a later element takes
  over when it is NaN or, the running value being no NaN, ``>=``/``<=`` it).
- Median and mode along a dim: a thread per line sorts a copy of its line
  (heapsort, NaNs last), then picks as the CPU backend does (the lower
  median, or the longest run), so both backends return the same positions.
  The whole-array median (no position needed) is selected on the host: one
  copy out and NumPy's partition, not one GPU thread sorting everything.
"""
import math

import numpy as np

from . import _runtime, codegen
from .array import _prod, empty, to_device
from .codegen import coalesce, unravel

_NUMBA = {"float32": "float32", "float64": "float64", "int64": "int64", "bool": "boolean"}
_COMBINE = {"sum": "{a} + {b}", "prod": "{a} * {b}"}


def acc_dtype(dtype):
    """The accumulator of a sum or product scan of ``dtype`` (float64 or int64)."""
    return np.dtype(np.float64 if np.dtype(dtype).kind == "f" else np.int64)


def _line_params(kdim):
    return [("nlines", "int", None), ("n", "int", None), ("kshape", "tuple", kdim),
            ("x", "array", "x"), ("x_o", "int", None), ("x_s", "tuple", kdim),
            ("x_a", "int", None), ("out", "array", "out"), ("out_o", "int", None),
            ("out_s", "tuple", kdim), ("out_a", "int", None)]


def _scan_kernel(op, acc, kdim, mode):
    """A sum/prod scan kernel accumulating in ``acc`` ("thread" or "block" mode)."""
    acc = np.dtype(acc)
    threads = _runtime.reduce_threads_max()

    def make():
        params = _line_params(kdim) + [("init", "scalar", "acc")]
        names = ", ".join(p for p, _, _ in params)
        combine = _COMBINE[op]
        kept = [("x_p", "x_o", "x_s"), ("o_p", "out_o", "out_s")]
        lines = [f"@cuda.jit({codegen.jit_options()})", f"def kernel({names}):"]
        if mode == "thread":
            lines += ["    line = cuda.grid(1)", "    step = cuda.gridsize(1)",
                      "    while line < nlines:"]
            lines += unravel(kdim, "kshape", "line", kept, 8)
            lines += ["        a = init", "        k = 0", "        while k < n:",
                      f"            a = {combine.format(a='a', b='x[x_p + k * x_a]')}",
                      "            out[o_p + k * out_a] = a", "            k += 1",
                      "        line += step"]
        else:
            lines += [f"    sh = cuda.shared.array({threads}, numba.{_NUMBA[acc.name]})",
                      "    t = cuda.threadIdx.x", "    nt = cuda.blockDim.x",
                      "    line = cuda.blockIdx.x", "    while line < nlines:"]
            lines += unravel(kdim, "kshape", "line", kept, 8)
            lines += ["        carry = init", "        base = 0", "        while base < n:",
                      "            k = base + t", "            v = init", "            if k < n:",
                      "                v = x[x_p + k * x_a]", "            sh[t] = v",
                      "            cuda.syncthreads()", "            off = 1",
                      "            while off < nt:", "                w = init",
                      "                if t >= off:", "                    w = sh[t - off]",
                      "                cuda.syncthreads()",
                      f"                sh[t] = {combine.format(a='w', b='sh[t]')}",
                      "                cuda.syncthreads()", "                off *= 2",
                      "            if k < n:",
                      f"                out[o_p + k * out_a] = {combine.format(a='carry', b='sh[t]')}",
                      f"            carry = {combine.format(a='carry', b='sh[nt - 1]')}",
                      "            cuda.syncthreads()", "            base += nt",
                      "        line += cuda.gridDim.x"]
        source = "import numba\n\n\n" + "\n".join(lines) + "\n"
        name = f"scan_{op}_{acc.name}_{mode}_{kdim}"
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("scan", op, acc.name, kdim, mode, threads), make)


def _extremum_kernel(op, kdim):
    """cummax/cummin: a thread per line, values and int64 indices."""
    def make():
        params = _line_params(kdim) + [("idx", "array", "idx"), ("idx_o", "int", None),
                                       ("idx_s", "tuple", kdim), ("idx_a", "int", None)]
        names = ", ".join(p for p, _, _ in params)
        cmp = ">=" if op == "max" else "<="
        kept = [("x_p", "x_o", "x_s"), ("o_p", "out_o", "out_s"), ("i_p", "idx_o", "idx_s")]
        lines = [f"@cuda.jit({codegen.jit_options()})", f"def kernel({names}):",
                 "    line = cuda.grid(1)", "    step = cuda.gridsize(1)",
                 "    while line < nlines:"]
        lines += unravel(kdim, "kshape", "line", kept, 8)
        lines += ["        best = x[x_p]", "        at = 0", "        k = 0", "        while k < n:",
                  "            v = x[x_p + k * x_a]",
                  f"            if v != v or (best == best and v {cmp} best):",
                  "                best = v", "                at = k",
                  "            out[o_p + k * out_a] = best", "            idx[i_p + k * idx_a] = at",
                  "            k += 1", "        line += step"]
        source = "\n".join(lines) + "\n"
        name = f"cum{op}_{kdim}"
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("cumextremum", op, kdim), make)


def _lines(a, axis, outs):
    """(nlines, coalesced kept shape, per array (offset, kept strides, axis stride)) for
    ``a`` and the C-contiguous ``outs`` of its shape."""
    kept = [k for k in range(a.ndim) if k != axis]
    kshape = tuple(a.shape[k] for k in kept)
    arrays = [a] + outs
    ks, strides = coalesce(kshape, [tuple(x.estrides[k] for k in kept) for x in arrays])
    return _prod(kshape), ks, [(x.offset, s, x.estrides[axis]) for x, s in zip(arrays, strides)]


def _block_mode(nlines, n):
    """Few long lines: a block per line (more lines keep every thread busy anyway)."""
    return n >= 64 and nlines < 8 * _runtime.max_blocks()


def cumulative(a, axis, op, dtype=None, reverse=False):
    """Inclusive ``op`` ("sum"/"prod") scan along ``axis`` in ``dtype`` (``a``'s when
    None); with ``reverse`` from the end (the lines are walked with negated strides)."""
    out_dtype = np.dtype(a.dtype if dtype is None else dtype)
    if a.ndim == 0:
        return cumulative(a.reshape(1), 0, op, dtype).reshape(())
    x = a if a.dtype == out_dtype else a.astype(out_dtype)
    out = empty(a.shape, out_dtype)
    if not out.size:
        return out
    n = a.shape[axis]
    nlines, kshape, ((x_o, x_s, x_a), (o_o, o_s, o_a)) = _lines(x, axis, [out])
    if reverse:  # start at each line's last element, step back
        x_o, x_a, o_o, o_a = x_o + (n - 1) * x_a, -x_a, o_o + (n - 1) * o_a, -o_a
    acc = acc_dtype(out_dtype)
    init = acc.type(1 if op == "prod" else 0)
    args = [nlines, n, kshape, x._buf, x_o, x_s, x_a, out._buf, o_o, o_s, o_a, init]
    if _block_mode(nlines, n):
        threads = min(_runtime.reduce_threads_max(), 1 << math.ceil(math.log2(n)))
        _scan_kernel(op, acc, len(kshape), "block").launch(
            min(nlines, _runtime.max_blocks()), threads, args)
    else:
        _scan_kernel(op, acc, len(kshape), "thread").grid_stride(nlines, args)
    return out


def cumulative_extremum(a, axis, op):
    """(values, indices) of the running ``op`` ("max"/"min") along ``axis``."""
    if a.ndim == 0:
        values, indices = cumulative_extremum(a.reshape(1), 0, op)
        return values.reshape(()), indices.reshape(())
    values, indices = empty(a.shape, a.dtype), empty(a.shape, np.int64)
    if values.size:
        nlines, kshape, ops = _lines(a, axis, [values, indices])
        (x_o, x_s, x_a), (v_o, v_s, v_a), (i_o, i_s, i_a) = ops
        _extremum_kernel(op, len(kshape)).grid_stride(nlines, [
            nlines, a.shape[axis], kshape, a._buf, x_o, x_s, x_a, values._buf, v_o, v_s, v_a,
            indices._buf, i_o, i_s, i_a])
    return values, indices


# ------------------------------------------------------------ median and mode
_SELECT_HELPERS = '''
@cuda.jit(device=True, inline="always")
def _lt(a, b):
    """NaN-last order."""
    return a < b or (b != b and a == a)


@cuda.jit(device=True, inline="always")
def _heapsort(v, base, n):
    """Sort v[base:base + n] in place (NaNs last)."""
    start = n // 2 - 1
    end = n - 1
    while True:
        if start >= 0:
            root = start
            start -= 1
            last = end
        elif end > 0:
            t = v[base]
            v[base] = v[base + end]
            v[base + end] = t
            end -= 1
            root = 0
            last = end
        else:
            return
        while 2 * root + 1 <= last:
            child = 2 * root + 1
            if child + 1 <= last and _lt(v[base + child], v[base + child + 1]):
                child += 1
            if _lt(v[base + root], v[base + child]):
                t = v[base + root]
                v[base + root] = v[base + child]
                v[base + child] = t
                root = child
            else:
                break
'''


def _select_kernel(which, kdim):
    """Median (``which`` "median", with an ``ignore_nan`` flag) or mode of each
    line, a thread per line sorting its copy in ``scratch`` (lines x n)."""
    def make():
        params = _line_params(kdim) + [("idx", "array", "idx"), ("scratch", "array", "x"),
                                       ("ignore_nan", "int", None)]
        names = ", ".join(p for p, _, _ in params)
        kept = [("x_p", "x_o", "x_s")]
        body = ["        base = line * n", "        nan = 0", "        first_nan = -1",
                "        m = 0", "        k = 0", "        while k < n:",
                "            e = x[x_p + k * x_a]", "            if e != e:",
                "                nan += 1", "                if first_nan < 0:",
                "                    first_nan = k",
                "            scratch[base + k] = e", "            k += 1",
                "        _heapsort(scratch, base, n)"]
        if which == "median":
            body += ["        m = n - nan",
                     "        if nan > 0 and (ignore_nan == 0 or m == 0):",
                     "            at = first_nan if ignore_nan == 0 else 0",
                     "            out[line] = x[x_p + at * x_a]", "            idx[line] = at",
                     "        else:", "            k = (m - 1) // 2",
                     "            value = scratch[base + k]", "            rank = 0",
                     "            j = 0", "            while j < k:",
                     "                if scratch[base + j] == value:",
                     "                    rank += 1", "                j += 1",
                     "            out[line] = value", "            j = 0",
                     "            while j < n:", "                if x[x_p + j * x_a] == value:",
                     "                    if rank == 0:", "                        idx[line] = j",
                     "                        break", "                    rank -= 1",
                     "                j += 1"]
        else:
            body += ["        best = 0", "        run = 0", "        value = scratch[base]",
                     "        k = 0", "        while k < n:", "            run += 1",
                     "            if k == n - 1 or scratch[base + k] != scratch[base + k + 1]:",
                     "                if run > best:", "                    best = run",
                     "                    value = scratch[base + k]", "                run = 0",
                     "            k += 1", "        out[line] = value",
                     "        if value != value:", "            idx[line] = first_nan",
                     "        else:", "            j = n - 1", "            while j >= 0:",
                     "                if x[x_p + j * x_a] == value:",
                     "                    idx[line] = j", "                    break",
                     "                j -= 1"]
        lines = [f"@cuda.jit({codegen.jit_options()})", f"def kernel({names}):",
                 "    line = cuda.grid(1)", "    step = cuda.gridsize(1)",
                 "    while line < nlines:"]
        lines += unravel(kdim, "kshape", "line", kept, 8)
        lines += body + ["        line += step"]
        source = _SELECT_HELPERS + "\n\n" + "\n".join(lines) + "\n"
        name = f"{which}_lines_{kdim}"
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("select", which, kdim), make)


def _select(which, a, axis, ignore_nan=False):
    """(values, indices) along ``axis`` (removed), C-contiguous."""
    kept_shape = a.shape[:axis] + a.shape[axis + 1:]
    values, indices = empty(kept_shape, a.dtype), empty(kept_shape, np.int64)
    if not values.size:
        return values, indices
    n = a.shape[axis]
    kept = [k for k in range(a.ndim) if k != axis]
    ks, (x_s,) = coalesce(kept_shape, [tuple(a.estrides[k] for k in kept)])
    nlines = values.size
    scratch = empty((nlines * n,), a.dtype)
    # out/idx are C-contiguous and indexed by the line number directly.
    _select_kernel(which, len(ks)).grid_stride(nlines, [
        nlines, n, ks, a._buf, a.offset, x_s, a.estrides[axis], values._buf, 0, (0,) * len(ks), 0,
        indices._buf, scratch._buf, int(ignore_nan)])
    return values, indices


def median_with_indices(a, axis, ignore_nan=False):
    if a.ndim == 0:
        values, indices = median_with_indices(a.reshape(1), 0, ignore_nan)
        return values.reshape(()), indices.reshape(())
    return _select("median", a, axis, ignore_nan)


def mode_with_indices(a, axis):
    if a.ndim == 0:
        values, indices = mode_with_indices(a.reshape(1), 0)
        return values.reshape(()), indices.reshape(())
    return _select("mode", a, axis)


def reduce_median(a, ignore_nan=False):
    """The whole-array lower median, selected on the host (see the module's docstring)."""
    from ..cpu import selection
    return to_device(selection.reduce_median(a.copy_to_host(), ignore_nan))
