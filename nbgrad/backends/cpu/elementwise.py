"""CPU elementwise kernels generated from op rows.

For each row the forward kernel writes ``out[i] = forward(x0[i], x1[i], ...)``
and the fused backward kernel computes every requested input gradient in one
pass over memory. Kernels are specialised by the number of (coalesced)
dimensions and by which arguments are scalars; Numba then specialises by dtype
and memory layout. Small arrays run a serial loop, large ones a ``prange`` loop.
"""
import functools

import numba
import numpy as np

from ..kernel_source import backward_reads, load_module
from .allocator import pool

PARALLEL_THRESHOLD = 1 << 15  # elements; below it thread start-up costs more than it saves

_forward_kernels = {}
_backward_kernels = {}


def _inline(fn):
    return numba.njit(inline="always", cache=False)(fn)


def _loop_lines(ndim, shape_of):
    lines = [f"    n{k} = {shape_of}.shape[{k}]" for k in range(ndim)]
    for k in range(ndim):
        loop = "prange" if k == 0 else "range"
        lines.append("    " * (k + 1) + f"for i{k} in {{{loop}}}(n{k}):")
    return lines


def _module_source(signature, ndim, body_for, shape_of):
    """Source with a serial and a parallel version of the same loop nest."""
    index = ", ".join(f"i{k}" for k in range(ndim))
    nest = "\n".join(_loop_lines(ndim, shape_of))
    body = "\n".join("    " * (ndim + 1) + line for line in body_for(f"[{index}]"))
    text = []
    for variant, loop, options in (("serial", "range", ""), ("parallel", "prange", "parallel=True, ")):
        text.append(
            f"@numba.njit({options}cache=True, nogil=True, error_model=\"numpy\")\n"
            f"def {variant}({signature}):\n"
            + nest.format(prange=loop, range="range") + "\n" + body + "\n")
    return "import numba\nfrom numba import prange\n\n\n" + "\n\n".join(text)


def _forward_module(row, kinds, ndim):
    args = [f"x{k}" for k in range(len(kinds))]

    def body(ix):
        operands = ", ".join(a + ix if kind == "a" else a for a, kind in zip(args, kinds))
        return [f"out{ix} = forward({operands})"]

    source = _module_source(", ".join(["out", *args]), ndim, body, "out")
    return load_module(source, {"forward": row.forward}, _inline, f"{row.name}_fwd")


def _backward_module(row, wanted, kinds, ndim):
    reads, names = backward_reads(row, wanted)
    is_array = {f"x{k}": kind == "a" for k, kind in enumerate(kinds)}
    is_array.update(g=True, out=True)

    def body(ix):
        lines = []
        for i in wanted:
            operands = ", ".join(
                names[p] + (ix if is_array[names[p]] else "") for p in row.grad_params(i))
            lines.append(f"grad{i}{ix} = derivative{i}({operands})")
        return lines

    source = _module_source(", ".join([*reads, *(f"grad{i}" for i in wanted)]), ndim, body, "g")
    helpers = {f"derivative{i}": row.derivative(i) for i in wanted}
    return load_module(source, helpers, _inline, f"{row.name}_bwd")


def _coalesce(shape, arrays):
    """Merge dimensions that are contiguous for every array (and drop size-1
    ones), so most work runs as a flat 1-D loop that LLVM can vectorize."""
    if len(shape) == 1:  # already flat (strided and broadcast inputs included)
        return 1, arrays
    for a in arrays:
        if not a.flags.c_contiguous:
            break
    else:  # the common case, kept cheap
        return 1, [a.reshape(-1) for a in arrays]
    dims = [(n, [a.strides[k] for a in arrays]) for k, n in enumerate(shape) if n != 1]
    merged = []
    for n, strides in dims:
        if merged and all(ps == s * n for ps, s in zip(merged[-1][1], strides)):
            merged[-1] = (merged[-1][0] * n, strides)
        else:
            merged.append((n, strides))
    if not merged:
        merged = [(1, [a.itemsize for a in arrays])]
    new_shape = tuple(n for n, _ in merged)
    views = [np.lib.stride_tricks.as_strided(a, new_shape, [s[j] for _, s in merged],
                                             writeable=a.flags.writeable)
             for j, a in enumerate(arrays)]
    return len(new_shape), views


def _variant(module, size):
    return module.parallel if size >= PARALLEL_THRESHOLD else module.serial


def forward(row, out, args):
    """Write ``row.forward(*args)`` into ``out``. Array arguments must already
    have ``out``'s shape (broadcast views are fine); others are NumPy scalars."""
    kinds = ""
    arrays = [out]
    for a in args:
        if isinstance(a, np.generic):
            kinds += "s"
        else:
            kinds += "a"
            arrays.append(a)
    ndim, views = _coalesce(out.shape, arrays)
    if len(views) > 1:
        remaining = iter(views[1:])
        args = [a if kind == "s" else next(remaining) for a, kind in zip(args, kinds)]
    key = (row, kinds, ndim)
    module = _forward_kernels.get(key)
    if module is None:
        module = _forward_kernels[key] = _forward_module(row, kinds, ndim)
    _variant(module, out.size)(views[0], *args)


@functools.lru_cache(maxsize=None)
def _backward_plan(row, wanted, kinds):
    """Which values the fused kernel reads, in its argument order."""
    reads, _ = backward_reads(row, wanted)
    scalar = {f"x{k}" for k, kind in enumerate(kinds) if kind == "s"}
    return reads, tuple(name not in scalar for name in reads)


def backward(row, wanted, grad, args, out):
    """Gradients (in the output's shape) of the inputs listed in ``wanted``,
    computed in one pass. ``args``/``out`` hold the saved values (None where
    not saved, which is only where the derivatives do not read them)."""
    shape = grad.shape
    kinds = "".join("s" if isinstance(a, np.generic) else "a" for a in args)
    wanted = tuple(wanted)
    reads, is_array = _backward_plan(row, wanted, kinds)
    values = {"g": grad, "out": out}
    for k, a in enumerate(args):
        values[f"x{k}"] = a
    operands = [values[name] for name in reads]
    arrays = [v if v.shape == shape else np.broadcast_to(v, shape)
              for v, array in zip(operands, is_array) if array]
    grads = [pool.empty(shape, grad.dtype) for _ in wanted]
    ndim, views = _coalesce(shape, arrays + grads)
    remaining = iter(views)
    operands = [next(remaining) if array else v for v, array in zip(operands, is_array)]
    key = (row, wanted, kinds, ndim)
    module = _backward_kernels.get(key)
    if module is None:
        module = _backward_kernels[key] = _backward_module(row, wanted, kinds, ndim)
    _variant(module, grad.size)(*operands, *views[len(arrays):])
    return grads
