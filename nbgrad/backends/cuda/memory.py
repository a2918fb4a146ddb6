"""Copies, casts, fills, gathers and scatters on the device.

All of them are grid-stride kernels over strided operands (see ``codegen``).
Gathers and scatters for integer-array and boolean keys take the element
positions that ``DeviceArray._addresses`` computes; scatter-add (the backward
of a gather, where indices may repeat) uses ``cuda.atomic.add``.
"""
import numbers

import numpy as np

from . import codegen
from .array import DeviceArray, _axis, _normalize_shape, empty, empty_like_order, to_device
from .codegen import coalesce, grid_stride_params, grid_stride_source, strided


def operands(shape, arrays):
    """Coalesced shape and, per array, its (buffer, offset, strides) arguments."""
    shape, strides = coalesce(shape, [a.estrides for a in arrays])
    return shape, [(a._buf, a.offset, s) for a, s in zip(arrays, strides)]


def _flat(parts):
    return [x for part in parts for x in part]


# ------------------------------------------------------------------ kernels
def _copy_kernel(ndim, to_bool):
    def make():
        params = grid_stride_params(ndim, strided("dst", ndim) + strided("src", ndim))
        value = "src[src_p] != 0" if to_bool else "src[src_p]"
        source = grid_stride_source("kernel", ndim, params[2:], ["dst", "src"],
                                    [f"dst[dst_p] = {value}"])
        return codegen.Kernel(f"copy{ndim}{'_bool' if to_bool else ''}",
                              codegen.build(f"copy{ndim}", source).kernel, params)
    return codegen.cached(("copy", ndim, to_bool), make)


def _fill_kernel(ndim):
    def make():
        params = grid_stride_params(ndim, strided("dst", ndim) + [("value", "scalar", "dst")])
        source = grid_stride_source("kernel", ndim, params[2:], ["dst"], ["dst[dst_p] = value"])
        return codegen.Kernel(f"fill{ndim}", codegen.build(f"fill{ndim}", source).kernel, params)
    return codegen.cached(("fill", ndim), make)


def _atomic_add_kernel(ndim):
    def make():
        params = grid_stride_params(ndim, strided("dst", ndim) + strided("src", ndim))
        source = grid_stride_source("kernel", ndim, params[2:], ["dst", "src"],
                                    ["cuda.atomic.add(dst, dst_p, src[src_p])"])
        return codegen.Kernel(f"atomic_add{ndim}",
                              codegen.build(f"atomic_add{ndim}", source).kernel, params)
    return codegen.cached(("atomic_add", ndim), make)


def _gather_kernel():
    def make():
        params = grid_stride_params(1, strided("out", 1) + strided("addr", 1)
                                    + [("src", "array", "src")])
        source = grid_stride_source("kernel", 1, params[2:], ["out", "addr"],
                                    ["out[out_p] = src[addr[addr_p]]"])
        return codegen.Kernel("gather", codegen.build("gather", source).kernel, params)
    return codegen.cached(("gather",), make)


def _scatter_kernel(kind, accumulate, ndim):
    """``dst[addr[i]] = value[i]`` (or ``+=``, atomically); ``kind`` says
    whether ``value`` is an array ("a") or a scalar ("s")."""
    def make():
        value = strided("value", ndim) if kind == "a" else [("value", "scalar", "dst")]
        params = grid_stride_params(ndim, [("dst", "array", "dst")] + strided("addr", ndim) + value)
        read = "value[value_p]" if kind == "a" else "value"
        line = (f"cuda.atomic.add(dst, addr[addr_p], {read})" if accumulate
                else f"dst[addr[addr_p]] = {read}")
        arrays = ["addr", "value"] if kind == "a" else ["addr"]
        source = grid_stride_source("kernel", ndim, params[2:], arrays, [line])
        name = f"scatter_{'add_' if accumulate else ''}{kind}{ndim}"
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("scatter", kind, accumulate, ndim), make)


def _along_kernel(ndim, put):
    """take_along_axis / put_along_axis: the array operand has stride 0 along
    the axis; the index picks the position along it (negative wraps)."""
    def make():
        name = f"{'put' if put else 'take'}_along{ndim}"
        main = "dst" if put else "src"
        other = "val" if put else "out"
        params = grid_stride_params(ndim, strided(main, ndim) + strided("idx", ndim)
                                    + strided(other, ndim)
                                    + [("ax_n", "int", None), ("ax_s", "int", None)])
        body = ["j = idx[idx_p]", "if j < 0:", "    j += ax_n",
                "dst[dst_p + j * ax_s] = val[val_p]" if put else "out[out_p] = src[src_p + j * ax_s]"]
        source = grid_stride_source("kernel", ndim, params[2:], [main, "idx", other], body)
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("along", ndim, put), make)


# --------------------------------------------------------------- functions
def copy_into(dst, src):
    """``dst[...] = src`` for a device ``src`` broadcastable to ``dst`` (cast
    on store). The caller makes sure they do not partially overlap."""
    if src.shape != dst.shape:
        src = broadcast_for_assign(src, dst.shape)
    if dst.size == 0:
        return
    shape, ops = operands(dst.shape, [dst, src])
    kernel = _copy_kernel(len(shape), dst.dtype == np.bool_ and src.dtype != np.bool_)
    kernel.grid_stride(dst.size, [dst.size, shape, *_flat(ops)])


def broadcast_for_assign(src, shape):
    try:
        return src.broadcast_to(shape)
    except ValueError:
        raise ValueError(f"could not broadcast input array from shape {src.shape} into shape "
                         f"{tuple(shape)}") from None


def copy(a, dtype=None, order="C"):
    """A copy of ``a`` (cast to ``dtype`` if given), C-contiguous or, with
    ``order="K"``, laid out in ``a``'s memory order."""
    if order == "K":
        out = empty_like_order(a, dtype)
    elif order == "C":
        out = empty(a.shape, a.dtype if dtype is None else dtype)
    else:
        raise NotImplementedError("DeviceArray copies support order 'C' and 'K'")
    copy_into(out, a)
    return out


def scalar(value, dtype):
    """``value`` as a NumPy scalar of ``dtype`` (NumPy's assignment casting)."""
    return np.asarray(value).astype(dtype)[()]


def fill(dst, value):
    if dst.size == 0:
        return
    shape, ops = operands(dst.shape, [dst])
    _fill_kernel(len(shape)).grid_stride(dst.size, [dst.size, shape, *_flat(ops),
                                                    scalar(value, dst.dtype)])


def _device_value(value, dtype):
    """A DeviceArray for ``value`` (host arrays are copied over), or None for a scalar."""
    if isinstance(value, DeviceArray):
        return value
    if isinstance(value, (numbers.Number, np.generic)) or (
            isinstance(value, np.ndarray) and value.ndim == 0):
        return None
    return to_device(np.asarray(value), dtype=dtype)


def assign(dst, value):
    """``dst[...] = value``: a scalar, a host array or a DeviceArray."""
    src = _device_value(value, dst.dtype)
    if src is None:
        fill(dst, value)
        return
    if may_share_memory(dst, src) and not _same_view(dst, src):
        src = copy(src)  # read the value before the write
    copy_into(dst, src)


def _same_view(a, b):
    return (a._buf is b._buf and a.offset == b.offset and a.shape == b.shape
            and a.estrides == b.estrides)


def may_share_memory(a, b):
    """Whether the memory ranges of two device arrays overlap (NumPy's bounds test)."""
    if not (isinstance(a, DeviceArray) and isinstance(b, DeviceArray)):
        return False
    ea, eb = a._extent(), b._extent()
    if ea is None or eb is None:
        return False
    pa, pb = a._pointer(), b._pointer()
    lo_a, hi_a = pa + ea[0] * a.itemsize, pa + (ea[1] + 1) * a.itemsize
    lo_b, hi_b = pb + eb[0] * b.itemsize, pb + (eb[1] + 1) * b.itemsize
    return lo_a < hi_b and lo_b < hi_a


def gather(a, address):
    """A new array of ``address``'s shape holding ``a``'s buffer at those positions."""
    out = empty(address.shape, a.dtype)
    n = out.size
    if n:
        addr = to_device(address.reshape(-1))
        flat = out.reshape(-1)
        _gather_kernel().grid_stride(n, [n, (n,), flat._buf, 0, (1,), addr._buf, 0, (1,), a._buf])
    return out


def _scatter(a, address, value, accumulate):
    n = address.size
    if n == 0:
        return
    addr = to_device(address)
    src = _device_value(value, a.dtype)
    if src is None:
        shape, ops = operands(addr.shape, [addr])
        kernel = _scatter_kernel("s", accumulate, len(shape))
        args = [*ops[0], scalar(value, a.dtype)]
    else:
        try:
            src = src.broadcast_to(address.shape)
        except ValueError:
            raise ValueError(f"shape mismatch: value array of shape {src.shape} could not be "
                             f"broadcast to indexing result of shape {address.shape}") from None
        if may_share_memory(a, src):
            src = copy(src)  # read the value before the write
        shape, ops = operands(addr.shape, [addr, src])
        kernel = _scatter_kernel("a", accumulate, len(shape))
        args = _flat(ops)
    kernel.grid_stride(n, [n, shape, a._buf, *args])


def scatter(a, address, value):
    """``a``'s buffer at ``address`` = ``value`` (broadcast); repeated positions: one write wins."""
    _scatter(a, address, value, accumulate=False)


def scatter_add(a, address, value):
    """``a``'s buffer at ``address`` += ``value``, accumulating repeats (atomics)."""
    _scatter(a, address, value, accumulate=True)


def add_at(a, key, values):
    """``np.add.at(a, key, values)``: unbuffered, so repeated indices accumulate."""
    scatter_add(a, a._addresses(key), values)


def add_into_view(dst, src):
    """``dst += src`` elementwise with atomics: right even when ``dst`` is an
    overlapping view (an expanded dimension), where many elements share memory."""
    src = broadcast_for_assign(src, dst.shape)
    if dst.size == 0:
        return
    shape, ops = operands(dst.shape, [dst, src])
    _atomic_add_kernel(len(shape)).grid_stride(dst.size, [dst.size, shape, *_flat(ops)])


def _along_shapes(a, indices, axis):
    if indices.ndim != a.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    shape = []
    for k, (n, m) in enumerate(zip(a.shape, indices.shape)):
        if k == axis:
            shape.append(m)
        elif n == m or n == 1 or m == 1:
            shape.append(max(n, m) if min(n, m) else 0)
        else:
            raise ValueError(f"shape mismatch: indices of shape {indices.shape} cannot be "
                             f"broadcast against an array of shape {a.shape}")
    return tuple(shape)


def _zero_axis(a, shape, axis):
    """``a`` broadcast to ``shape`` except along ``axis``, which gets stride 0."""
    lifted = a._view(a.shape[:axis] + (1,) + a.shape[axis + 1:],
                     a.estrides[:axis] + (0,) + a.estrides[axis + 1:])
    return lifted.broadcast_to(shape)


def take_along_axis(a, indices, axis):
    """``np.take_along_axis`` with device indices (int64, negative wrap, not bounds-checked)."""
    axis = _axis(axis, a.ndim)
    indices = _device_value(indices, np.int64) if not isinstance(indices, DeviceArray) else indices
    shape = _along_shapes(a, indices, axis)
    out = empty(shape, a.dtype)
    if out.size:
        src, idx = _zero_axis(a, shape, axis), indices.broadcast_to(shape)
        cshape, ops = operands(shape, [src, idx, out])
        _along_kernel(len(cshape), False).grid_stride(
            out.size, [out.size, cshape, *_flat(ops), a.shape[axis], a.estrides[axis]])
    return out


def put_along_axis(a, indices, values, axis):
    """``np.put_along_axis``: ``a`` at the indexed positions along ``axis`` = ``values``."""
    axis = _axis(axis, a.ndim)
    indices = _device_value(indices, np.int64) if not isinstance(indices, DeviceArray) else indices
    shape = _along_shapes(a, indices, axis)
    if not _prod(shape):
        return
    vals = _device_value(values, a.dtype)
    if vals is None:
        vals = full_like_scalar(shape, values, a.dtype)
    dst, idx, vals = _zero_axis(a, shape, axis), indices.broadcast_to(shape), vals.broadcast_to(shape)
    cshape, ops = operands(shape, [dst, idx, vals])
    n = _prod(shape)
    _along_kernel(len(cshape), True).grid_stride(
        n, [n, cshape, *_flat(ops), a.shape[axis], a.estrides[axis]])


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def full_like_scalar(shape, value, dtype):
    out = empty(_normalize_shape(shape), dtype)
    fill(out, value)
    return out


def concatenate(arrays, axis=0, dtype=None):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, first.ndim)
    for k, a in enumerate(arrays):
        if a.ndim != first.ndim:
            raise ValueError(f"all the input array dimensions except for the concatenation axis "
                             f"must match exactly, but the array at index 0 has {first.ndim} "
                             f"dimension(s) and the array at index {k} has {a.ndim} dimension(s)")
        for d in range(first.ndim):
            if d != axis and a.shape[d] != first.shape[d]:
                raise ValueError(f"all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array at "
                                 f"index 0 has size {first.shape[d]} and the array at index {k} "
                                 f"has size {a.shape[d]}")
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(*[a.dtype for a in arrays])
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty(tuple(shape), dtype)
    start = 0
    for a in arrays:
        n = a.shape[axis]
        copy_into(out[(slice(None),) * axis + (slice(start, start + n),)], a)
        start += n
    return out


def stack(arrays, axis=0, dtype=None):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    for a in arrays:
        if a.shape != arrays[0].shape:
            raise ValueError("all input arrays must have the same shape")
    axis = _axis(axis, arrays[0].ndim + 1)
    return concatenate([a.expand_dims(axis) for a in arrays], axis, dtype)


def split(a, bounds, axis):
    """Views of ``a`` cut at ``bounds`` along ``axis`` (``np.split`` with indices)."""
    axis = _axis(axis, a.ndim)
    edges = [0, *[min(int(b), a.shape[axis]) for b in bounds], a.shape[axis]]
    lead = (slice(None),) * axis
    return [a[lead + (slice(lo, max(lo, hi)),)] for lo, hi in zip(edges[:-1], edges[1:])]
