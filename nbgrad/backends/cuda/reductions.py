"""Reductions on the device: sum, max, min (any axes, keepdims), argmax and
argmin (one axis or the flattened array), the sum-to-shape that undoes
broadcasting in backward, and softmax/log_softmax with their backward.

The reduced axes are unravelled inside the kernel, the kept ones index the
output, so any strided or broadcast view reduces without a copy. Two kernel
shapes:

- "block": a block per output element; its threads stride over the reduced
  elements, then combine in shared memory (a tree). When there are few
  outputs and many elements each, the reduced range is split into chunks
  (more blocks), and a second pass combines the per-chunk partials.
- "thread": a thread per output element, looping over the reduced elements.
  Chosen when the outputs are many and adjacent in memory while the reduced
  axis is strided (a column sum): neighbouring threads then read neighbouring
  elements.

max/min propagate NaN; argmax/argmin return the first maximal index, or the
first NaN, as NumPy and PyTorch do.
"""
import math

import numpy as np

from .. import layout
from . import _runtime, codegen
from .array import _axis, _contiguous_strides, _prod, empty
from .codegen import coalesce, unravel
from .memory import fill

_COMBINE = {
    "sum": "{a} = {a} + {b}",
    "prod": "{a} = {a} * {b}",
    "max": "{a} = {a} if ({a} > {b} or {a} != {a}) else {b}",
    "min": "{a} = {a} if ({a} < {b} or {a} != {a}) else {b}",
}
_NUMBA_NAME = {"float32": "float32", "float64": "float64", "int64": "int64", "bool": "boolean",
               "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8",
               "float16": "float32"}  # (float16 accumulates in float32, rounded once on store)


def _better(cmp):
    """Lines setting ``take``: whether (vb, ib) replaces (va, ia)."""
    return ["if va != va:", "    take = vb != vb and ib < ia", "elif vb != vb:", "    take = True",
            "else:", f"    take = vb {cmp} va or (vb == va and ib < ia)"]


def _kernel(op, dtype, kdim, rdim, mode, with_index=False):
    """``op``: sum/max/min (value reduction, accumulated in ``dtype``) or
    argmax/argmin (``dtype`` is the input's). ``with_index``: the argument
    pass that reads the partial indices of a first pass."""
    dtype = np.dtype(dtype)
    threads = _runtime.reduce_threads_max()

    def make():
        arg = op.startswith("arg")
        params = [("ntasks", "int", None), ("chunks", "int", None), ("chunk_len", "int", None),
                  ("rcount", "int", None), ("kshape", "tuple", kdim), ("rshape", "tuple", rdim),
                  ("out", "array", "out"), ("out_o", "int", None), ("out_s", "tuple", kdim),
                  ("out_c", "int", None)]
        if arg:
            params += [("val", "array", "x"), ("val_o", "int", None), ("val_s", "tuple", kdim),
                       ("val_c", "int", None)]
        params += [("x", "array", "x"), ("x_o", "int", None), ("x_s", "tuple", kdim),
                   ("x_r", "tuple", rdim)]
        if with_index:
            params.append(("pidx", "array", "out"))
        params.append(("init", "scalar", "x" if arg else "out"))
        names = ", ".join(p for p, _, _ in params)
        kept = [("out_p", "out_o", "out_s"), ("x_b", "x_o", "x_s")]
        if arg:
            kept.append(("val_p", "val_o", "val_s"))
        index = "pidx[x_p]" if with_index else "r"
        if arg:
            step = ["vb = x[x_p]", f"ib = {index}", "va = acc", "ia = acc_i",
                    *_better(">" if op == "argmax" else "<"),
                    "if take:", "    acc = vb", "    acc_i = ib"]
        else:
            step = ["v = x[x_p]", _COMBINE[op].format(a="acc", b="v")]
        lines = [f"@cuda.jit({codegen.jit_options()})", f"def kernel({names}):"]
        if mode == "thread":
            lines += ["    o = cuda.grid(1)", "    step = cuda.gridsize(1)", "    while o < ntasks:"]
            lines += unravel(kdim, "kshape", "o", kept, 8)
            lines += ["        acc = init", "        acc_i = rcount", "        r = 0",
                      "        while r < rcount:"]
            lines += unravel(rdim, "rshape", "r", [("x_p", "x_b", "x_r")], 12)
            lines += ["            " + s for s in step]
            lines += ["            r += 1", "        out[out_p] = acc_i" if arg else
                      "        out[out_p] = acc"]
            if arg:
                lines.append("        val[val_p] = acc")
            lines.append("        o += step")
        else:
            acc_type = _NUMBA_NAME[dtype.name]
            lines += [f"    sh = cuda.shared.array({threads}, numba.{acc_type})"]
            if arg:
                lines.append(f"    sh_i = cuda.shared.array({threads}, numba.int64)")
            lines += ["    t = cuda.threadIdx.x", "    nt = cuda.blockDim.x",
                      "    task = cuda.blockIdx.x", "    while task < ntasks:",
                      "        o = task // chunks", "        c = task - o * chunks"]
            lines += unravel(kdim, "kshape", "o", kept, 8)
            lines += ["        acc = init", "        acc_i = rcount", "        r = c * chunk_len + t",
                      "        end = min(rcount, (c + 1) * chunk_len)", "        while r < end:"]
            lines += unravel(rdim, "rshape", "r", [("x_p", "x_b", "x_r")], 12)
            lines += ["            " + s for s in step]
            lines += ["            r += nt", "        sh[t] = acc"]
            if arg:
                lines.append("        sh_i[t] = acc_i")
            lines += ["        cuda.syncthreads()", "        s = nt // 2", "        while s > 0:",
                      "            if t < s:"]
            if arg:
                lines += ["                va = sh[t]", "                ia = sh_i[t]",
                          "                vb = sh[t + s]", "                ib = sh_i[t + s]"]
                lines += ["                " + s for s in _better(">" if op == "argmax" else "<")]
                lines += ["                if take:", "                    sh[t] = vb",
                          "                    sh_i[t] = ib"]
            else:
                lines += ["                a = sh[t]", "                b = sh[t + s]",
                          "                " + _COMBINE[op].format(a="a", b="b"),
                          "                sh[t] = a"]
            lines += ["            cuda.syncthreads()", "            s //= 2", "        if t == 0:"]
            if arg:
                lines += ["            out[out_p + c * out_c] = sh_i[0]",
                          "            val[val_p + c * val_c] = sh[0]"]
            else:
                lines.append("            out[out_p + c * out_c] = sh[0]")
            lines += ["        cuda.syncthreads()", "        task += cuda.gridDim.x"]
        source = "import numba\n\n\n" + "\n".join(lines) + "\n"
        name = f"{op}_{dtype.name}_{mode}{'_idx' if with_index else ''}_{kdim}_{rdim}"
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("reduce", op, dtype.name, kdim, rdim, mode, with_index, threads), make)


def _identity(op, dtype):
    dtype = np.dtype(dtype)
    if op in ("sum", "prod"):
        return dtype.type(op == "prod")
    big = op in ("min", "argmin")
    if dtype.kind == "f":
        return dtype.type(np.inf if big else -np.inf)
    if dtype.kind == "b":
        return np.bool_(big)
    info = np.iinfo(dtype)
    return dtype.type(info.max if big else info.min)


def _axes(a, axis):
    if axis is None:
        return tuple(range(a.ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = [_axis(x, a.ndim) for x in axes]
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(axes))


def _pow2(n):
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


def _schedule(nout, rcount):
    """(mode, threads, chunks, chunk_len)."""
    tmax, maxb = _runtime.reduce_threads_max(), _runtime.max_blocks()
    threads = min(tmax, _pow2(rcount))
    chunks = 1
    if nout < maxb and rcount > 4 * threads:
        chunks = min(math.ceil(maxb / nout), math.ceil(rcount / (4 * threads)))
    chunk_len = math.ceil(rcount / chunks)
    chunks = math.ceil(rcount / chunk_len)
    return threads, chunks, chunk_len


def _launch_pass(op, dtype, out, out_s, out_c, x, x_s, x_r, kshape, rshape, init, val=None,
                 val_s=None, pidx=None, thread_mode=False, single=False):
    """One launch; ``single`` forces one chunk per output (a combining pass)."""
    nout, rcount = _prod(kshape), _prod(rshape)
    if thread_mode:
        threads, chunks, chunk_len = 1, 1, rcount
    elif single:
        threads, chunks, chunk_len = min(_runtime.reduce_threads_max(), _pow2(rcount)), 1, rcount
    else:
        threads, chunks, chunk_len = _schedule(nout, rcount)
        threads = min(threads, _pow2(chunk_len))
    kernel = _kernel(op, dtype, len(kshape), len(rshape), "thread" if thread_mode else "block",
                     pidx is not None)
    args = [nout * chunks, chunks, chunk_len, rcount, kshape, rshape, out._buf, out.offset, out_s,
            out_c]
    if val is not None:
        args += [val._buf, val.offset, val_s, out_c]
    args += [x._buf, x.offset, x_s, x_r]
    if pidx is not None:
        args.append(pidx._buf)
    args.append(init)
    if thread_mode:
        kernel.grid_stride(nout, args)
    else:
        kernel.launch(min(nout * chunks, _runtime.max_blocks()), threads, args)
    return chunks


def _thread_mode(nout, rcount, x_s, x_r):
    """Many outputs, adjacent in memory, reduced along a strided axis (a
    column sum), or many outputs each reducing only a few elements."""
    many = nout >= 8 * _runtime.reduce_threads_max()
    return many and ((abs(x_s[-1]) == 1 and abs(x_r[-1]) != 1) or rcount < 32)


def _reduce(a, axis, keepdims, op, out_dtype=None):
    """Value (sum/max/min) or index (argmax/argmin) reduction of ``a``."""
    arg = op.startswith("arg")
    axes = _axes(a, axis)
    kept = [k for k in range(a.ndim) if k not in axes]
    kshape = tuple(a.shape[k] for k in kept)
    rshape = tuple(a.shape[k] for k in axes)
    out_shape = (tuple(1 if k in axes else n for k, n in enumerate(a.shape)) if keepdims
                 else kshape)
    out_dtype = np.dtype(np.int64 if arg else (out_dtype or a.dtype))
    out = empty(out_shape, out_dtype)
    values = empty(out_shape, a.dtype) if arg else None
    nout, rcount = _prod(kshape), _prod(rshape)
    if nout == 0:
        return (out, values) if arg else out
    if rcount == 0:
        if op in ("sum", "prod"):
            fill(out, int(op == "prod"))
            return out
        name = {"max": "maximum", "min": "minimum"}.get(op, op)
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity"
                         if not arg else f"attempt to get {op} of an empty sequence")
    k_out = _contiguous_strides(kshape)
    ks, (out_s, x_s) = coalesce(kshape, [k_out, tuple(a.estrides[k] for k in kept)])
    rs, (x_r,) = coalesce(rshape, [tuple(a.estrides[k] for k in axes)])
    compute = a.dtype if arg else out_dtype
    init = _identity(op, compute)
    if _thread_mode(nout, rcount, x_s, x_r):
        _launch_pass(op, compute, out, out_s, 0, a, x_s, x_r, ks, rs, init,
                     val=values, val_s=out_s, thread_mode=True)
        return (out, values) if arg else out
    threads, chunks, chunk_len = _schedule(nout, rcount)
    if chunks == 1:
        _launch_pass(op, compute, out, out_s, 0, a, x_s, x_r, ks, rs, init, val=values, val_s=out_s)
        return (out, values) if arg else out
    # Two passes: per-chunk partials (o, c) at o * chunks + c, then combine them.
    partial = empty((nout, chunks), out_dtype)
    part_s = tuple(s * chunks for s in out_s)
    pvals = empty((nout, chunks), a.dtype) if arg else None
    _launch_pass(op, compute, partial, part_s, 1, a, x_s, x_r, ks, rs, init, val=pvals,
                 val_s=part_s)
    if arg:
        _launch_pass(op, compute, out, (1,), 0, pvals, (chunks,), (1,), (nout,), (chunks,), init,
                     val=values, val_s=(1,), pidx=partial, single=True)
        return out, values
    _launch_pass(op, compute, out, (1,), 0, partial, (chunks,), (1,), (nout,), (chunks,), init,
                 single=True)
    return out


def reduce_sum(a, axis=None, keepdims=False, dtype=None):
    if dtype is None and a.dtype.kind in "bi":
        dtype = np.int64  # NumPy's sum of bool/int
    return _reduce(a, axis, keepdims, "sum", dtype)


def reduce_prod(a, axis=None, keepdims=False, dtype=None):
    """The product over ``axis`` (issue 15), in ``dtype`` (int64 for bool and integers)."""
    if dtype is None and a.dtype.kind in "bi":
        dtype = np.int64
    if dtype is not None and np.dtype(dtype) != a.dtype:
        a = a.astype(dtype)  # the kernels read their accumulator's type
    return _reduce(a, axis, keepdims, "prod", dtype)


def reduce_max(a, axis=None, keepdims=False, zero_ties="last"):
    # zero_ties (the CPU backend's): the kernels' reduction tree decides which
    # zero's sign a ±0 tie keeps; "first" is not honoured on the device yet.
    return _reduce(a, axis, keepdims, "max")


def reduce_min(a, axis=None, keepdims=False, zero_ties="last"):
    return _reduce(a, axis, keepdims, "min")


def _arg(a, axis, keepdims, op):
    if axis is None:
        flat = a.reshape(-1)
        idx, vals = _reduce(flat, 0, False, op)
        if keepdims:
            idx, vals = idx.reshape((1,) * a.ndim), vals.reshape((1,) * a.ndim)
        return idx, vals
    if isinstance(axis, (tuple, list)):
        raise TypeError("an integer is required for the axis")
    return _reduce(a, axis, keepdims, op)


def argmax(a, axis=None, keepdims=False):
    return _arg(a, axis, keepdims, "argmax")[0]


def argmin(a, axis=None, keepdims=False):
    return _arg(a, axis, keepdims, "argmin")[0]


def max_with_indices(a, axis, keepdims=False):
    """(values, indices) of the maximum along ``axis`` in one pass (PyTorch's max(dim))."""
    idx, vals = _arg(a, axis, keepdims, "argmax")
    return vals, idx


def min_with_indices(a, axis, keepdims=False):
    idx, vals = _arg(a, axis, keepdims, "argmin")
    return vals, idx


def sum_to_shape(grad, shape):
    """Undo broadcasting: sum the leading dimensions ``shape`` lacks and the
    dimensions where ``shape`` has size one."""
    shape = tuple(shape)
    axes = layout.broadcast_axes(grad.shape, shape)
    if axes:
        grad = reduce_sum(grad, axes, keepdims=True)
    return grad.reshape(shape)
