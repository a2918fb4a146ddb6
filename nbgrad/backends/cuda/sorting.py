"""Sorting and selection on the device: sort, topk, unique, nonzero,
searchsorted and histc (the contract's issue-15 functions; the CPU backend's
sorting.py and indexing.py give their meanings, and these return the same
values, positions, dtypes and layouts).

- Sort along an axis: a bitonic network over each line padded to a power of
  two ``P``. Elements are compared as (value, position) pairs: NaN after
  everything (first when descending), -0. and 0. equal, ties by the lower
  position, so the order is total and the sort stable, as the CPU's radix
  sort. A pad (position >= n) sorts after every element in both directions.
  Lines of up to ``tile()`` elements are sorted in shared memory, several
  lines per block; longer lines are copied to (values, positions) scratch
  and sorted there: tiles first in shared memory, then for each larger
  bitonic stage the strides of a tile or more as one global pass each and
  the rest in shared memory again. Only the first ``m`` of each sorted line
  are written: topk is sort-then-take, except for a small k (a quarter of a
  tile or less) on lines longer than a tile, selected in rounds instead:
  every tile of candidates sorted in shared memory keeps its best k, until
  one tile holds them all (the k best in the total order survive each round).
- Compaction (nonzero, unique): an inclusive int64 scan of 0/1 flags, in
  two levels: each block sums its chunk, the block sums are scanned
  (recursively), then each block scans its chunk in shared memory from its
  offset. The total (the output's length) is the one value read back.
- searchsorted: a thread per value, PyTorch's binary search. histc: a
  per-block histogram in shared memory (atomic adds) merged into the global
  one, or atomic adds straight into it when the bins do not fit.
"""
import math

import numpy as np

from . import _runtime, codegen, memory
from .array import empty
from .codegen import unravel
from .scans import _lines

TILE, SIM_TILE = 2048, 16        # longest line sorted in shared memory (a power of two)
SORT_THREADS = 512               # threads of a sorting block (hardware; the simulator: tile/2)
SCAN_THREADS, SIM_SCAN_THREADS = 256, 8
SCAN_ITEMS = 8                   # elements per thread of a scan block
HIST_BINS, SIM_HIST_BINS = 1024, 4  # most bins kept in shared memory

# Shared arrays need a Numba type; narrower dtypes are widened first (order kept).
_SHARED = {"float32": "float32", "float64": "float64", "int64": "int64", "int32": "int32",
           "int16": "int16", "int8": "int8", "uint8": "uint8"}
_WIDEN = {np.dtype(np.float16): np.dtype(np.float32), np.dtype(np.bool_): np.dtype(np.uint8)}


def tile():
    return SIM_TILE if _runtime.simulator() else TILE


def _sort_threads(t):
    return min(t // 2, SORT_THREADS)


def _scan_threads():
    return SIM_SCAN_THREADS if _runtime.simulator() else SCAN_THREADS


def _hist_bins():
    return SIM_HIST_BINS if _runtime.simulator() else HIST_BINS


_HELPERS = '''
@cuda.jit(device=True, inline="always")
def _before(va, ia, vb, ib, n, desc):
    """(va, ia) sorts before (vb, ib): pads (position >= n) last, NaN largest, ties by position."""
    if ia >= n:
        return False
    if ib >= n:
        return True
    if desc:
        lt = vb < va or (va != va and vb == vb)
        gt = va < vb or (vb != vb and va == va)
    else:
        lt = va < vb or (vb != vb and va == va)
        gt = vb < va or (va != va and vb == vb)
    return lt or (not gt and ia < ib)


@cuda.jit(device=True, inline="always")
def _exchange(sv, si, lo, hi, up, n, desc):
    """One comparator of the network: order sv/si[lo], [hi] ascending when ``up``."""
    a = sv[lo]
    ai = si[lo]
    b = sv[hi]
    bi = si[hi]
    if up:
        swap = _before(b, bi, a, ai, n, desc)
    else:
        swap = _before(a, ai, b, bi, n, desc)
    if swap:
        sv[lo] = b
        si[lo] = bi
        sv[hi] = a
        si[hi] = ai
'''

# The bitonic stages on a shared tile of ``T`` elements: ``pos0`` is the tile's
# first position in its line (a stage's direction depends on the line position).
_TILE_NETWORK = '''
        size = size_lo
        while size <= size_hi:
            stride = size // 2
            if stride > {half}:
                stride = {half}
            while stride > 0:
                q = t
                while q < {half}:
                    lo = (q // stride) * 2 * stride + q % stride
                    _exchange(sv, si, lo, lo + stride, ((pos0 + lo) & (p - 1) & size) == 0,
                              n, desc)
                    q += nt
                cuda.syncthreads()
                stride //= 2
            size *= 2
'''


def _line_params(kdim, arrays):
    params = [("nlines", "int", None), ("n", "int", None), ("kshape", "tuple", kdim)]
    for a in arrays:
        params += [(a, "array", a), (f"{a}_o", "int", None), (f"{a}_s", "tuple", kdim),
                   (f"{a}_a", "int", None)]
    return params


def _source(params, body):
    names = ", ".join(p for p, _, _ in params)
    lines = [f"@cuda.jit({codegen.jit_options()})", f"def kernel({names}):"] + body
    return "import numba\n" + _HELPERS + "\n\n" + "\n".join(lines) + "\n"


def _kernel(tag, key, params, body):
    def make():
        name = f"sort_{tag}"
        return codegen.Kernel(name, codegen.build(name, _source(params, body)).kernel, params)
    return codegen.cached(("sorting", tag) + key, make)


def _rows_kernel(dtype, kdim, t):
    """Lines of ``p`` (a power of two <= ``t``) padded elements, ``t // p`` per
    block, sorted in shared memory from the strided ``x``; the first ``m`` of
    each written to ``out``/``idx``. (``p`` is an argument: one compilation serves
    every line length, the shared tile being ``t`` whatever ``p`` is.)"""
    params = _line_params(kdim, ["x", "out", "idx"]) + [("m", "int", None), ("desc", "int", None),
                                                        ("p", "int", None)]
    kept = [("x_p", "x_o", "x_s"), ("o_p", "out_o", "out_s"), ("i_p", "idx_o", "idx_s")]
    body = [f"    sv = cuda.shared.array({t}, numba.{_SHARED[dtype.name]})",
            f"    si = cuda.shared.array({t}, numba.int64)",
            "    t = cuda.threadIdx.x", "    nt = cuda.blockDim.x",
            "    size_lo = 2", "    size_hi = p", "    pos0 = 0", f"    per = {t} // p",
            "    first = cuda.blockIdx.x * per",
            "    while first < nlines:",
            "        k = t",
            f"        while k < {t}:",
            "            line = first + k // p",
            "            e = k % p",
            "            si[k] = e",
            "            if e < n and line < nlines:"]
    body += unravel(kdim, "kshape", "line", kept[:1], 16)
    body += ["                sv[k] = x[x_p + e * x_a]",
             "            elif e < n:",
             "                si[k] = p",  # (a whole missing line: all pads)
             "            k += nt",
             "        cuda.syncthreads()"]
    # the lines are independent and each starts at a multiple of p, so the
    # tile's network with pos0 = 0 sorts each (stages up to size p)
    body += [line for line in _TILE_NETWORK.format(half=t // 2).splitlines() if line]
    body += ["        k = t",
             "        while k < per * m:",
             "            line = first + k // m",
             "            e = k % m",
             "            if line < nlines:"]
    body += unravel(kdim, "kshape", "line", kept[1:], 16)
    body += ["                s = (k // m) * p + e",
             "                out[o_p + e * out_a] = sv[s]",
             "                idx[i_p + e * idx_a] = si[s]",
             "            k += nt",
             "        cuda.syncthreads()",
             "        first += cuda.gridDim.x * per"]
    return _kernel("rows", (dtype.name, kdim, t), params, body)


def _scratch_init_kernel(kdim):
    """Scratch (lines x P) filled from the strided ``x``: values and positions."""
    params = _line_params(kdim, ["x"]) + [("sv", "array", "x"), ("si", "index", None),
                                          ("p", "int", None)]
    body = ["    g = cuda.grid(1)", "    step = cuda.gridsize(1)",
            "    while g < nlines * p:", "        line = g // p", "        e = g - line * p",
            "        si[g] = e", "        if e < n:"]
    body += unravel(kdim, "kshape", "line", [("x_p", "x_o", "x_s")], 12)
    body += ["            sv[g] = x[x_p + e * x_a]", "        g += step"]
    return _kernel("scratch_init", (kdim,), params, body)


def _scratch_tile_kernel(dtype, t):
    """Bitonic stages ``size_lo..size_hi`` on the scratch's tiles of ``t``, in
    shared memory (strides below ``t`` only: the larger ones are global passes)."""
    params = [("gv", "array", "x"), ("gi", "index", None), ("tiles", "int", None),
              ("p", "int", None), ("n", "int", None), ("desc", "int", None),
              ("size_lo", "int", None), ("size_hi", "int", None)]
    body = [f"    sv = cuda.shared.array({t}, numba.{_SHARED[dtype.name]})",
            f"    si = cuda.shared.array({t}, numba.int64)",
            "    t = cuda.threadIdx.x", "    nt = cuda.blockDim.x",
            "    b = cuda.blockIdx.x", "    while b < tiles:",
            f"        base = b * {t}", "        pos0 = base % p", "        k = t",
            f"        while k < {t}:", "            sv[k] = gv[base + k]",
            "            si[k] = gi[base + k]", "            k += nt",
            "        cuda.syncthreads()"]
    body += [line for line in _TILE_NETWORK.format(half=t // 2).splitlines() if line]
    body += ["        k = t", f"        while k < {t}:", "            gv[base + k] = sv[k]",
             "            gi[base + k] = si[k]", "            k += nt",
             "        cuda.syncthreads()", "        b += cuda.gridDim.x"]
    return _kernel("scratch_tile", (dtype.name, t), params, body)


def _scratch_step_kernel():
    """One global bitonic pass (a stage's stride of a tile or more) over the scratch."""
    params = [("gv", "array", "x"), ("gi", "index", None), ("pairs", "int", None),
              ("p", "int", None), ("n", "int", None), ("desc", "int", None),
              ("size", "int", None), ("stride", "int", None)]
    body = ["    q = cuda.grid(1)", "    step = cuda.gridsize(1)", "    half = p // 2",
            "    while q < pairs:", "        line = q // half", "        r = q - line * half",
            "        lo = (r // stride) * 2 * stride + r % stride",
            "        _exchange(gv, gi, line * p + lo, line * p + lo + stride, (lo & size) == 0,"
            " n, desc)",
            "        q += step"]
    return _kernel("scratch_step", (), params, body)


def _tile_select_kernel(dtype, t):
    """One round of topk's selection on scratch lines of ``ln`` candidates:
    each tile of ``t`` sorted in shared memory (pads, past the line's end,
    last), its best ``k`` written to lines of ``ceil(ln / t) * k``. Positions
    travel with the values; a pad's is ``n``, so it stays a pad."""
    params = [("gv", "array", "x"), ("gi", "index", None), ("nlines", "int", None),
              ("ln", "int", None), ("n", "int", None), ("desc", "int", None),
              ("k", "int", None), ("ov", "array", "x"), ("oi", "index", None)]
    body = [f"    sv = cuda.shared.array({t}, numba.{_SHARED[dtype.name]})",
            f"    si = cuda.shared.array({t}, numba.int64)",
            "    t = cuda.threadIdx.x", "    nt = cuda.blockDim.x",
            f"    p = {t}", "    pos0 = 0", "    size_lo = 2", f"    size_hi = {t}",
            f"    per_line = (ln + {t - 1}) // {t}", "    b = cuda.blockIdx.x",
            "    while b < nlines * per_line:", "        line = b // per_line",
            "        j = b - line * per_line", "        k2 = t",
            f"        while k2 < {t}:", f"            e = j * {t} + k2", "            if e < ln:",
            "                sv[k2] = gv[line * ln + e]", "                si[k2] = gi[line * ln + e]",
            "            else:", "                si[k2] = n", "            k2 += nt",
            "        cuda.syncthreads()"]
    body += [line for line in _TILE_NETWORK.format(half=t // 2).splitlines() if line]
    body += ["        k2 = t", "        while k2 < k:",
             "            ov[line * per_line * k + j * k + k2] = sv[k2]",
             "            oi[line * per_line * k + j * k + k2] = si[k2]", "            k2 += nt",
             "        cuda.syncthreads()", "        b += cuda.gridDim.x"]
    return _kernel("tile_select", (dtype.name, t), params, body)


def _scratch_write_kernel(kdim):
    """The first ``m`` of each sorted scratch line into the strided ``out``/``idx``."""
    params = _line_params(kdim, ["out", "idx"]) + [("sv", "array", "out"), ("si", "index", None),
                                                   ("p", "int", None), ("m", "int", None)]
    body = ["    g = cuda.grid(1)", "    step = cuda.gridsize(1)",
            "    while g < nlines * m:", "        line = g // m", "        e = g - line * m"]
    body += unravel(kdim, "kshape", "line", [("o_p", "out_o", "out_s"), ("i_p", "idx_o", "idx_s")],
                    8)
    body += ["        out[o_p + e * out_a] = sv[line * p + e]",
             "        idx[i_p + e * idx_a] = si[line * p + e]", "        g += step"]
    return _kernel("scratch_write", (kdim,), params, body)


def _pow2(n):
    return 1 << max(1, math.ceil(math.log2(max(n, 2))))


def _operands(a, axis, m):
    """``a`` widened where shared memory needs it, and the (values, int64
    positions) outputs, C-contiguous with ``m`` along ``axis``."""
    wide = _WIDEN.get(a.dtype)
    x = a.astype(wide) if wide is not None else a
    shape = a.shape[:axis] + (m,) + a.shape[axis + 1:]
    return x, empty(shape, x.dtype), empty(shape, np.int64)


def _narrowed(values, dtype):
    return values if values.dtype == dtype else values.astype(dtype)


def _sorted_lines(a, axis, m, descending):
    """The first ``m`` of each line of ``a`` along ``axis`` sorted: (values, int64
    positions), C-contiguous, ``m`` along ``axis``."""
    x, values, indices = _operands(a, axis, m)
    n = a.shape[axis]
    if not values.size:
        return _narrowed(values, a.dtype), indices
    nlines, ks, ((x_o, x_s, x_a), (v_o, v_s, v_a), (i_o, i_s, i_a)) = _lines(
        x, axis, [values, indices])
    kdim, p, t, desc = len(ks), _pow2(n), tile(), int(bool(descending))
    if p <= t:
        per = t // p
        blocks = min(math.ceil(nlines / per), _runtime.max_blocks())
        _rows_kernel(x.dtype, kdim, t).launch(blocks, _sort_threads(t), [
            nlines, n, ks, x._buf, x_o, x_s, x_a, values._buf, v_o, v_s, v_a,
            indices._buf, i_o, i_s, i_a, m, desc, p])
    else:
        sv, si = empty((nlines * p,), x.dtype), empty((nlines * p,), np.int64)
        _scratch_init_kernel(kdim).grid_stride(nlines * p, [
            nlines, n, ks, x._buf, x_o, x_s, x_a, sv._buf, si._buf, p])
        tiles = nlines * p // t
        tiled = _scratch_tile_kernel(x.dtype, t)
        blocks = min(tiles, _runtime.max_blocks())
        threads = _sort_threads(t)
        tiled.launch(blocks, threads, [sv._buf, si._buf, tiles, p, n, desc, 2, t])
        size = 2 * t
        while size <= p:
            stride = size // 2
            while stride >= t:
                _scratch_step_kernel().grid_stride(nlines * p // 2, [
                    sv._buf, si._buf, nlines * p // 2, p, n, desc, size, stride])
                stride //= 2
            tiled.launch(blocks, threads, [sv._buf, si._buf, tiles, p, n, desc, size, size])
            size *= 2
        _scratch_write_kernel(kdim).grid_stride(nlines * m, [
            nlines, n, ks, values._buf, v_o, v_s, v_a, indices._buf, i_o, i_s, i_a,
            sv._buf, si._buf, p, m])
    return _narrowed(values, a.dtype), indices


def _selected_lines(a, axis, k, largest):
    """topk of lines longer than a tile with a small ``k``: rounds of
    ``_tile_select_kernel`` until a line fits in one tile (each round keeps
    ``k`` of every ``tile()``), then the last round's best ``k`` written out."""
    x, values, indices = _operands(a, axis, k)
    n = a.shape[axis]
    nlines, ks, ((x_o, x_s, x_a), (v_o, v_s, v_a), (i_o, i_s, i_a)) = _lines(
        x, axis, [values, indices])
    kdim, t, desc = len(ks), tile(), int(bool(largest))
    gv, gi = empty((nlines * n,), x.dtype), empty((nlines * n,), np.int64)
    _scratch_init_kernel(kdim).grid_stride(nlines * n, [
        nlines, n, ks, x._buf, x_o, x_s, x_a, gv._buf, gi._buf, n])
    select = _tile_select_kernel(x.dtype, t)
    ln = n
    while True:
        tiles = math.ceil(ln / t)
        ov, oi = empty((nlines * tiles * k,), x.dtype), empty((nlines * tiles * k,), np.int64)
        select.launch(min(nlines * tiles, _runtime.max_blocks()), _sort_threads(t), [
            gv._buf, gi._buf, nlines, ln, n, desc, k, ov._buf, oi._buf])
        gv, gi, ln = ov, oi, tiles * k
        if tiles == 1:
            break
    _scratch_write_kernel(kdim).grid_stride(nlines * k, [
        nlines, n, ks, values._buf, v_o, v_s, v_a, indices._buf, i_o, i_s, i_a,
        gv._buf, gi._buf, k, k])
    return _narrowed(values, a.dtype), indices


def sort_along(a, axis, descending=False):
    """``(values, indices)`` of ``a`` sorted along ``axis``, stably (NaN after
    everything, or first when ``descending``); C-contiguous, int64 indices."""
    if a.ndim == 0:
        values, indices = sort_along(a.reshape(1), 0, descending)
        return values.reshape(()), indices.reshape(())
    return _sorted_lines(a, axis, a.shape[axis], descending)


def topk_along(a, k, axis, largest=True):
    """``(values, indices)`` of the ``k`` largest (smallest) elements along
    ``axis``, best first (NaN counts as the largest; ties: the lower index first)."""
    if a.ndim == 0:
        values, indices = topk_along(a.reshape(1), k, 0, largest)
        return values.reshape(()), indices.reshape(())
    n = a.shape[axis]
    if 0 < k <= tile() // 4 and n > tile() and a.size:  # (each round keeps a quarter or less)
        return _selected_lines(a, axis, k, largest)
    return _sorted_lines(a, axis, k, largest)


# ------------------------------------------------------------------ scans
def _block_sums_kernel(threads):
    params = [("x", "index", None), ("n", "int", None), ("sums", "index", None)]
    chunk = threads * SCAN_ITEMS
    body = [f"    sh = cuda.shared.array({threads}, numba.int64)",
            "    t = cuda.threadIdx.x", "    b = cuda.blockIdx.x",
            f"    i = b * {chunk} + t", f"    end = min(b * {chunk} + {chunk}, n)",
            "    s = 0", "    while i < end:", "        s += x[i]", f"        i += {threads}",
            "    sh[t] = s", "    cuda.syncthreads()", f"    w = {threads // 2}",
            "    while w > 0:", "        if t < w:", "            sh[t] += sh[t + w]",
            "        cuda.syncthreads()", "        w //= 2",
            "    if t == 0:", "        sums[b] = sh[0]"]
    return _kernel("block_sums", (threads,), params, body)


def _block_scan_kernel(threads):
    """Each block's chunk scanned in shared memory, from the inclusive scan
    ``offs`` of the block sums (the block before's entry)."""
    params = [("x", "index", None), ("n", "int", None), ("offs", "index", None),
              ("out", "index", None)]
    chunk = threads * SCAN_ITEMS
    body = [f"    sh = cuda.shared.array({threads}, numba.int64)",
            "    t = cuda.threadIdx.x", "    b = cuda.blockIdx.x",
            "    carry = 0", "    if b > 0:", "        carry = offs[b - 1]",
            f"    base = b * {chunk}", f"    end = min(base + {chunk}, n)",
            "    while base < end:", "        i = base + t", "        v = 0",
            "        if i < end:", "            v = x[i]", "        sh[t] = v",
            "        cuda.syncthreads()", "        off = 1",
            f"        while off < {threads}:", "            w = 0",
            "            if t >= off:", "                w = sh[t - off]",
            "            cuda.syncthreads()", "            sh[t] += w",
            "            cuda.syncthreads()", "            off *= 2",
            "        if i < end:", "            out[i] = carry + sh[t]",
            f"        carry += sh[{threads - 1}]", "        cuda.syncthreads()",
            f"        base += {threads}"]
    return _kernel("block_scan", (threads,), params, body)


def inclusive_scan(x):
    """The inclusive sum scan of the 1-D C-contiguous int64 ``x``."""
    n = x.size
    out = empty((n,), np.int64)
    if not n:
        return out
    threads = _scan_threads()
    blocks = math.ceil(n / (threads * SCAN_ITEMS))
    offs = out  # (unread with one block)
    if blocks > 1:
        sums = empty((blocks,), np.int64)
        _block_sums_kernel(threads).launch(blocks, threads, [x._buf, n, sums._buf])
        offs = inclusive_scan(sums)
    _block_scan_kernel(threads).launch(blocks, threads, [x._buf, n, offs._buf, out._buf])
    return out


def _last(a):
    """The last element of the 1-D ``a`` as a Python int (one small copy)."""
    return int(a[a.size - 1:].copy_to_host()[0])


# ------------------------------------------------------------------ nonzero
def _nonzero_flags_kernel(ndim):
    params = codegen.grid_stride_params(ndim, codegen.strided("x", ndim)
                                        + [("flags", "index", None)])
    body = ["flags[i] = 1 if x[x_p] != 0 else 0"]
    source = codegen.grid_stride_source("kernel", ndim, params[2:], ["x"], body)

    def make():
        name = f"nonzero_flags{ndim}"
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("sorting", "nonzero_flags", ndim), make)


def _nonzero_write_kernel(ndim):
    """Each nonzero's coordinates, dim d's at ``out[d * count + rank]``."""
    params = [("n", "int", None), ("shape", "tuple", ndim), ("flags", "index", None),
              ("pos", "index", None), ("count", "int", None), ("out", "index", None)]
    body = ["    i = cuda.grid(1)", "    step = cuda.gridsize(1)", "    while i < n:",
            "        if flags[i] != 0:", "            r = pos[i] - 1", "            rem = i"]
    for d in range(ndim - 1, 0, -1):
        body += [f"            out[{d} * count + r] = rem % shape[{d}]",
                 f"            rem = rem // shape[{d}]"]
    body += ["            out[r] = rem", "        i += step"]
    return _kernel("nonzero_write", (ndim,), params, body)


def nonzero(a):
    """The coordinates of the nonzero elements, (count, ndim) int64, laid out
    as PyTorch's (column-major: each dim's coordinates contiguous)."""
    if a.ndim == 0:  # (one element: read it)
        return empty((0, int(a.copy_to_host() != 0)), np.int64).T
    n = a.size
    flags = empty((n,), np.int64)
    if n:
        _nonzero_flags_kernel(a.ndim).grid_stride(n, [n, a.shape, a._buf, a.offset, a.estrides,
                                                      flags._buf])
    pos = inclusive_scan(flags)
    count = _last(pos) if n else 0
    out = empty((a.ndim, count), np.int64)
    if count:
        _nonzero_write_kernel(a.ndim).grid_stride(n, [n, a.shape, flags._buf, pos._buf, count,
                                                      out._buf])
    return out.T


# ------------------------------------------------------------------ unique
def _unique_flags_kernel():
    params = [("v", "array", "v"), ("n", "int", None), ("start", "index", None)]
    body = ["    i = cuda.grid(1)", "    step = cuda.gridsize(1)", "    while i < n:",
            "        start[i] = 1 if i == 0 or v[i] != v[i - 1] else 0", "        i += step"]
    return _kernel("unique_flags", (), params, body)


def _unique_scatter_kernel():
    """Each run's value and first position; each element's run at its original position."""
    params = [("v", "array", "v"), ("n", "int", None), ("start", "index", None),
              ("runs", "index", None), ("order", "index", None), ("sorted_", "int", None),
              ("values", "array", "v"), ("firsts", "index", None), ("inverse", "index", None),
              ("want_inverse", "int", None)]
    body = ["    i = cuda.grid(1)", "    step = cuda.gridsize(1)", "    while i < n:",
            "        r = runs[i] - 1", "        if start[i] != 0:", "            values[r] = v[i]",
            "            firsts[r] = i", "        if want_inverse != 0:",
            "            if sorted_ != 0:", "                inverse[order[i]] = r",
            "            else:", "                inverse[i] = r", "        i += step"]
    return _kernel("unique_scatter", (), params, body)


def _unique_counts_kernel():
    params = [("firsts", "index", None), ("u", "int", None), ("n", "int", None),
              ("counts", "index", None)]
    body = ["    r = cuda.grid(1)", "    step = cuda.gridsize(1)", "    while r < u:",
            "        end = n", "        if r + 1 < u:", "            end = firsts[r + 1]",
            "        counts[r] = end - firsts[r]", "        r += step"]
    return _kernel("unique_counts", (), params, body)


def unique(a, return_inverse, return_counts, consecutive=False):
    """``(values, inverse, counts)`` of the flattened ``a`` (None where not
    asked for): the distinct values in sorted order, or with ``consecutive``
    one per run of equal elements; every NaN distinct (see the CPU's)."""
    flat = a.reshape(-1) if a.flags.c_contiguous else memory.copy(a).reshape(-1)
    n = flat.size
    if consecutive:
        ordered, order = flat, None
    else:
        ordered, order = sort_along(flat, 0)
    start = empty((n,), np.int64)
    if n:
        _unique_flags_kernel().grid_stride(n, [ordered._buf, n, start._buf])
    runs = inclusive_scan(start)
    u = _last(runs) if n else 0
    values, firsts = empty((u,), a.dtype), empty((u,), np.int64)
    inverse = empty(a.shape, np.int64) if return_inverse else None
    if n:
        _unique_scatter_kernel().grid_stride(n, [
            ordered._buf, n, start._buf, runs._buf, (order if order is not None else runs)._buf,
            int(order is not None), values._buf, firsts._buf,
            (inverse if inverse is not None else firsts)._buf, int(return_inverse)])
    counts = None
    if return_counts:
        counts = empty((u,), np.int64)
        if u:
            _unique_counts_kernel().grid_stride(u, [firsts._buf, u, n, counts._buf])
    return values, inverse, counts


# ------------------------------------------------------------------ searches
def _searchsorted_kernel():
    """PyTorch's binary search (its comparisons: a NaN goes past every element)."""
    params = [("bd", "array", "bd"), ("bd_o", "int", None), ("n", "int", None),
              ("rows", "int", None), ("vals", "array", "bd"), ("vals_o", "int", None),
              ("m", "int", None), ("total", "int", None),
              ("out", "index", None), ("right", "int", None)]
    body = ["    t = cuda.grid(1)", "    step = cuda.gridsize(1)", "    while t < total:",
            "        base = bd_o", "        if rows > 1:", "            base += (t // m) * n",
            "        v = vals[vals_o + t]", "        lo = 0", "        hi = n",
            "        while lo < hi:", "            mid = lo + ((hi - lo) >> 1)",
            "            x = bd[base + mid]", "            if right != 0:",
            "                after = not (x > v)", "            else:",
            "                after = not (x >= v)", "            if after:",
            "                lo = mid + 1", "            else:", "                hi = mid",
            "        out[t] = lo", "        t += step"]
    return _kernel("searchsorted", (), params, body)


def _contiguous(a):
    return a if a.flags.c_contiguous else memory.copy(a)


def searchsorted(boundaries, values, right):
    """For each value, the position in its sorted row of ``boundaries`` (1-D:
    one row for every value; else (rows, n) against values (rows, m)) where it
    would be inserted: before equal elements, or after them with ``right``."""
    out = empty(values.shape, np.int64)
    if not out.size:
        return out
    bd, vals = _contiguous(boundaries), _contiguous(values)
    n = bd.shape[-1] if bd.ndim else 1
    rows = 1 if bd.ndim <= 1 else bd.size // max(n, 1)
    m = vals.size if rows == 1 else vals.shape[-1]
    _searchsorted_kernel().grid_stride(out.size, [bd._buf, bd.offset, n, rows, vals._buf,
                                                  vals.offset, m, out.size, out._buf,
                                                  int(bool(right))])
    return out


def _histc_kernel(ndim, dtype, shared_bins):
    """histc's counts with atomic adds: into a per-block histogram in shared
    memory merged at the end (``shared_bins`` > 0), or straight into ``out``."""
    params = codegen.grid_stride_params(ndim, codegen.strided("x", ndim) + [
        ("out", "array", "x"), ("bins", "int", None), ("low", "scalar", "x"),
        ("high", "scalar", "x"), ("fbins", "scalar", "x")])
    names = ", ".join(p for p, _, _ in params)
    target = "sh" if shared_bins else "out"
    lines = [f"@cuda.jit({codegen.jit_options()})", f"def kernel({names}):"]
    if shared_bins:
        lines += [f"    sh = cuda.shared.array({shared_bins}, numba.{dtype.name})",
                  "    k = cuda.threadIdx.x", "    while k < bins:", "        sh[k] = 0",
                  "        k += cuda.blockDim.x", "    cuda.syncthreads()"]
    lines += ["    width = high - low", "    last = bins - 1", "    i = cuda.grid(1)",
              "    step = cuda.gridsize(1)", "    while i < n:"]
    lines += unravel(ndim, "shape", "i", [("x_p", "x_o", "x_s")], 8)
    # (x - low) * bins / width in x's dtype, as the CPU's; NaN fails both tests
    lines += ["        v = x[x_p]", "        if v >= low and v <= high:",
              "            pos = numba.int64((v - low) * fbins / width)",
              "            if pos > last:", "                pos = last",
              f"            cuda.atomic.add({target}, pos, 1)", "        i += step"]
    if shared_bins:
        lines += ["    cuda.syncthreads()", "    k = cuda.threadIdx.x", "    while k < bins:",
                  "        if sh[k] != 0:", "            cuda.atomic.add(out, k, sh[k])",
                  "        k += cuda.blockDim.x"]
    source = "import numba\n\n\n" + "\n".join(lines) + "\n"

    def make():
        name = f"histc{ndim}_{dtype.name}_{shared_bins}"
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("sorting", "histc", ndim, dtype.name, shared_bins), make)


def histc(a, bins, low, high):
    """The counts of ``a``'s elements in ``bins`` equal bins over [low, high]
    (elements outside, NaN included, are not counted), in ``a``'s dtype."""
    x = a if a.dtype in (np.float32, np.float64) else a.astype(np.float32)
    out = empty((bins,), x.dtype)
    memory.fill(out, 0)
    if a.size:
        t = x.dtype.type
        shared = _hist_bins() if bins <= _hist_bins() else 0
        xs = x if x.ndim else x.reshape(1)
        _histc_kernel(xs.ndim, x.dtype, shared).grid_stride(xs.size, [
            xs.size, xs.shape, xs._buf, xs.offset, xs.estrides, out._buf, bins, t(low), t(high),
            t(bins)])
    return out if out.dtype == a.dtype else out.astype(a.dtype)
