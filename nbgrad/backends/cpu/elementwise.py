"""CPU elementwise kernels generated from op rows.

For each row the forward kernel writes ``out[i] = forward(x0[i], x1[i], ...)``
and the fused backward kernel computes every requested input gradient in one
pass over memory. Kernels are specialised by the number of (coalesced)
dimensions and by which arguments are scalars; Numba then specialises by dtype
and memory layout. Small arrays run a serial loop, large ones a ``prange`` loop.
"""
import numba
import numpy as np

from ..kernel_source import load_module

PARALLEL_THRESHOLD = 1 << 15  # elements; below it thread start-up costs more than it saves

_kernels = {}


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
            f"@numba.njit({options}cache=True, nogil=True)\n"
            f"def {variant}({signature}):\n"
            + nest.format(prange=loop, range="range") + "\n" + body + "\n")
    return "import numba\nfrom numba import prange\n\n\n" + "\n\n".join(text)


def _kernel(key, build):
    module = _kernels.get(key)
    if module is None:
        module = _kernels[key] = build()
    return module


def _forward_module(row, kinds, ndim):
    args = [f"x{k}" for k in range(len(kinds))]

    def body(ix):
        operands = ", ".join(a + ix if kind == "a" else a for a, kind in zip(args, kinds))
        return [f"out{ix} = forward({operands})"]

    source = _module_source(", ".join(["out", *args]), ndim, body, "out")
    return load_module(source, {"forward": row.forward}, _inline, f"{row.name}_fwd")


def _backward_reads(row, wanted):
    """Kernel argument names: ``g``, then the inputs (``x0``...) and ``out``
    that the wanted derivatives read, in a fixed order."""
    order = ["g", *(f"x{k}" for k in range(len(row.inputs))), "out"]
    names = {name: f"x{k}" for k, name in enumerate(row.inputs)}
    names.update(g="g", out="out")
    used = {names[p] for i in wanted for p in row.grad_params(i)} | {"g"}
    return [n for n in order if n in used], names


def _backward_module(row, wanted, kinds, ndim):
    reads, names = _backward_reads(row, wanted)
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
    if all(a.flags.c_contiguous for a in arrays):
        return (int(np.prod(shape)),), [a.reshape(-1) for a in arrays]
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
    return new_shape, views


def _variant(module, size):
    return module.parallel if size >= PARALLEL_THRESHOLD else module.serial


def _kinds(args):
    return "".join("a" if isinstance(a, np.ndarray) else "s" for a in args)


def forward(row, out, args):
    """Write ``row.forward(*args)`` into ``out``. Array arguments must already
    have ``out``'s shape (broadcast views are fine); others are NumPy scalars."""
    args = list(args)
    slots = [k for k, a in enumerate(args) if isinstance(a, np.ndarray)]
    shape, views = _coalesce(out.shape, [out, *(args[k] for k in slots)])
    for k, view in zip(slots, views[1:]):
        args[k] = view
    kinds = _kinds(args)
    module = _kernel((row, "fwd", kinds, len(shape)),
                     lambda: _forward_module(row, kinds, len(shape)))
    _variant(module, out.size)(views[0], *args)


def backward(row, wanted, grad, args, out):
    """Gradients (in the output's shape) of the inputs listed in ``wanted``,
    computed in one pass. ``args``/``out`` hold the saved values (None where
    not saved, which is only where the derivatives do not read them)."""
    shape = grad.shape
    kinds = _kinds(args)
    wanted = tuple(wanted)
    reads, _ = _backward_reads(row, wanted)
    values = {"g": grad, "out": out, **{f"x{k}": a for k, a in enumerate(args)}}
    operands = [values[name] for name in reads]
    slots = [j for j, v in enumerate(operands) if isinstance(v, np.ndarray)]
    grads = [np.empty(shape, dtype=grad.dtype) for _ in wanted]
    new_shape, views = _coalesce(shape, [np.broadcast_to(operands[j], shape) for j in slots] + grads)
    for j, view in zip(slots, views):
        operands[j] = view
    module = _kernel((row, "bwd", wanted, kinds, len(new_shape)),
                     lambda: _backward_module(row, wanted, kinds, len(new_shape)))
    _variant(module, grad.size)(*operands, *views[len(slots):])
    return grads
