"""CUDA elementwise kernels generated from the same op rows as the CPU ones.

The forward kernel writes ``out[i] = forward(x0[i], x1[i], ...)``; the fused
backward kernel computes every wanted input gradient in one pass over memory.
Each is a ``@cuda.jit`` grid-stride loop over strided operands (broadcast
views have stride 0, so nothing is materialised), specialised by the number
of (coalesced) dimensions and by which arguments are scalars; Numba then
specialises by dtype. Row functions, and the plain functions they call, are
compiled as inlined CUDA device functions by ``kernel_source.retarget``.
"""
import numba
import numpy as np

from ..kernel_source import backward_reads, jvp_body_lines, jvp_helpers
from . import codegen
from .array import DeviceArray, empty
from .codegen import grid_stride_params, grid_stride_source, strided
from .memory import operands


def _is_array(a):
    return isinstance(a, DeviceArray)


_FLOAT16 = np.dtype(np.float16)


def _kinds(args):
    """Per value: "a" an array, "h" a float16 array, "s" a scalar."""
    return "".join(("h" if a.dtype == _FLOAT16 else "a") if _is_array(a) else "s" for a in args)


# float16 operands are read as float32 and the result stored once, rounded
# (the store casts it): rows compute in float32, as PyTorch's CUDA kernels do
# (opmath). Scalars of a float16 op come as float32 already.
def load_half(value):
    return numba.float32(value)


def _read(name, kind):
    """How a kernel reads operand ``name`` of ``kind`` ("a", "h" or "s")."""
    if kind == "s":
        return name
    return f"load_half({name}[{name}_p])" if kind == "h" else f"{name}[{name}_p]"


def _with_half(helpers, *kinds):
    if any("h" in k for k in kinds):
        helpers["load_half"] = load_half
    return helpers


def forward_kernel(row, kinds, ndim):
    """The forward kernel of ``row`` for argument kinds ("a" array, "h"
    float16 array, "s" scalar)."""
    def make():
        args = [f"x{k}" for k in range(len(kinds))]
        params = strided("out", ndim)
        for a, kind in zip(args, kinds):
            params += strided(a, ndim) if kind != "s" else [(a, "scalar", a)]
        operands_ = ", ".join(_read(a, kind) for a, kind in zip(args, kinds))
        arrays = ["out"] + [a for a, kind in zip(args, kinds) if kind != "s"]
        source = grid_stride_source("kernel", ndim, params, arrays,
                                    [f"out[out_p] = forward({operands_})"])
        module = codegen.build(f"{row.name}_fwd", source,
                               _with_half({"forward": row.forward}, kinds))
        return codegen.Kernel(f"{row.name}_fwd_{kinds}_{ndim}d", module.kernel,
                              grid_stride_params(ndim, params))
    return codegen.cached((row, "fwd", kinds, ndim), make)


def backward_kernel(row, wanted, kinds, ndim):
    """The fused backward kernel: ``kinds`` gives, for each read of
    ``backward_reads``, "a" (array), "h" (float16 array) or "s" (scalar)."""
    wanted = tuple(wanted)

    def make():
        reads, names = backward_reads(row, wanted)
        kind_of = dict(zip(reads, kinds))
        params = []
        for r in reads:
            params += strided(r, ndim) if kind_of[r] != "s" else [(r, "scalar", r)]
        for i in wanted:
            params += strided(f"grad{i}", ndim, key="g")
        body = []
        for i in wanted:
            ops = ", ".join(_read(names[p], kind_of[names[p]]) for p in row.grad_params(i))
            body.append(f"grad{i}[grad{i}_p] = derivative{i}({ops})")
        arrays = [r for r in reads if kind_of[r] != "s"] + [f"grad{i}" for i in wanted]
        source = grid_stride_source("kernel", ndim, params, arrays, body)
        helpers = _with_half({f"derivative{i}": row.derivative(i) for i in wanted}, kinds)
        module = codegen.build(f"{row.name}_bwd", source, helpers)
        tag = "".join(map(str, wanted))
        return codegen.Kernel(f"{row.name}_bwd{tag}_{kinds}_{ndim}d", module.kernel,
                              grid_stride_params(ndim, params))
    return codegen.cached((row, "bwd", wanted, kinds, ndim), make)


def jvp_kernel(row, active, kinds, ndim, tangent_kinds=None):
    """The fused forward-mode kernel: value and tangent in one pass
    (``kernel_source.jvp_body_lines``); ``kinds`` per input, ``tangent_kinds``
    per active tangent ("a" or "h"; default "a")."""
    active = tuple(active)
    tangent_kinds = tangent_kinds or "a" * len(active)

    def make():
        args = [f"x{k}" for k in range(len(kinds))]
        params = strided("out", ndim) + strided("tout", ndim, key="out")
        for a, kind in zip(args, kinds):
            params += strided(a, ndim) if kind != "s" else [(a, "scalar", a)]
        for k in active:
            params += strided(f"t{k}", ndim, key="out")
        tkind = dict(zip(active, tangent_kinds))
        body = jvp_body_lines(row, active, lambda k: _read(args[k], kinds[k]),
                              lambda k: _read(f"t{k}", tkind[k]))
        body += ["out[out_p] = v", "tout[tout_p] = tangent_out"]
        arrays = ["out", "tout"] + [a for a, kind in zip(args, kinds) if kind != "s"] + [
            f"t{k}" for k in active]
        source = grid_stride_source("kernel", ndim, params, arrays, body)
        module = codegen.build(f"{row.name}_jvp", source,
                               _with_half(jvp_helpers(row, active), kinds, tangent_kinds))
        tag = "".join(map(str, active))
        return codegen.Kernel(f"{row.name}_jvp{tag}_{kinds}{tangent_kinds}_{ndim}d",
                              module.kernel, grid_stride_params(ndim, params))
    return codegen.cached((row, "jvp", active, kinds, tangent_kinds, ndim), make)


def _as_compute(a):
    """A float16 number as the float32 a float16 op computes in."""
    return np.float32(a) if isinstance(a, np.float16) else a


def _launch(kernel_for, shape, values):
    """Coalesce the array values over ``shape`` and launch ``kernel_for(kinds, ndim)``."""
    values = [_as_compute(v) for v in values]
    slots = [k for k, v in enumerate(values) if _is_array(v)]
    arrays = [values[k] if values[k].shape == shape else values[k].broadcast_to(shape)
              for k in slots]
    cshape, ops = operands(shape, arrays)
    kinds = _kinds(values)
    args, it = [], iter(ops)
    for v in values:
        args += list(next(it)) if _is_array(v) else [v]
    n = 1
    for s in shape:
        n *= s
    kernel_for(kinds, len(cshape)).grid_stride(n, [n, cshape, *args])


def forward(row, out, args):
    """Write ``row.forward(*args)`` into ``out``. Array arguments are
    DeviceArrays broadcastable to ``out``'s shape; others are NumPy scalars.
    ``out`` may be one of the arguments (an in-place write)."""
    args = list(args)
    for a in args:
        if isinstance(a, np.ndarray):
            raise TypeError(f"{row.name}: the CUDA backend got a host (NumPy) array; "
                            "copy it to the device first")
    _launch(lambda kinds, ndim: forward_kernel(row, kinds[1:], ndim), out.shape, [out, *args])


def backward(row, wanted, grad, args, out):
    """Gradients (in the output's shape) of the inputs listed in ``wanted``,
    computed in one pass. ``args``/``out`` hold the saved values (None where
    not saved, which is only where the derivatives do not read them)."""
    wanted = tuple(wanted)
    reads, _ = backward_reads(row, wanted)
    values = {"g": grad, "out": out, **{f"x{k}": a for k, a in enumerate(args)}}
    read_values = [values[name] for name in reads]
    grads = [empty(grad.shape, grad.dtype) for _ in wanted]
    nreads = len(read_values)
    _launch(lambda kinds, ndim: backward_kernel(row, wanted, kinds[:nreads], ndim),
            grad.shape, [*read_values, *grads])
    return grads


def jvp(row, active, out, tangent_out, args, tangents):
    """Forward mode in one pass: ``out = row(*args)`` and ``tangent_out``, the
    Jacobian times the tangents of the ``active`` inputs (see the CPU's)."""
    n = len(args)
    _launch(lambda kinds, ndim: jvp_kernel(row, active, kinds[2:2 + n], ndim, kinds[2 + n:]),
            out.shape, [out, tangent_out, *args, *tangents])


# --------------------------------------------------- NumPy-style operators
def _row(name):
    from ...declarations.op_table import BY_NAME
    return BY_NAME[name]


def _broadcast_shapes(*shapes):
    return np.broadcast_shapes(*shapes)


def binary(name, a, b, out=None):
    """``a <op> b`` with NumPy's broadcasting and type promotion (Python
    scalars are weak), for a DeviceArray and a DeviceArray or scalar."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return NotImplemented
    arrays = [x for x in (a, b) if _is_array(x)]
    dtype = np.result_type(*[x.dtype if _is_array(x) else x for x in (a, b)])
    if name == "div" and dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    shape = _broadcast_shapes(*[x.shape for x in arrays])
    args = []
    for x in (a, b):
        if _is_array(x):
            args.append(x if x.dtype == dtype else x.astype(dtype))
        else:
            args.append(np.asarray(x).astype(dtype)[()])
    if out is None:
        out = empty(shape, np.bool_ if name in ("eq", "ne", "lt", "le", "gt", "ge") else dtype)
    else:
        if out.shape != shape:
            raise ValueError(f"non-broadcastable output operand with shape {out.shape} doesn't "
                             f"match the broadcast shape {shape}")
        from .memory import _same_view, may_share_memory
        args = [x.copy() if _is_array(x) and may_share_memory(x, out) and not _same_view(x, out)
                else x for x in args]
    forward(_row(name), out, args)
    return out


def unary(name, a):
    out = empty(a.shape, a.dtype)
    forward(_row(name), out, [a])
    return out
