"""Gathers and scatters along an axis, sorting and selection on the device
(the contract's issue-15 functions; see the CPU backend's indexing.py and
sorting.py for their meanings).

On the device: ``gather_along`` and ``scatter_along`` with assignment or
"sum" (atomic adds): the gathers and scatters of training steps and their
gradients. A grid-stride kernel walks the index's shape; the other operand
is a view with stride 0 along the axis, the index picking the position on it.

Staged through the host (copied to it, computed by the CPU backend's
compiled kernels, copied back): scatters with "prod", "amax" and "amin",
and index bounds checks. nonzero, sort, topk, unique, searchsorted and histc
run on the device (sorting.py) and are re-exported here.
"""
import numpy as np

from .. import cpu
from . import codegen
from .array import DeviceArray, _axis, to_device
from .codegen import grid_stride_params, grid_stride_source, strided
from .memory import _flat, _prod, _zero_axis, copy_into, full_like_scalar, operands
from .memory import take_along_axis, put_along_axis

_ATOMIC_ADD = (np.float32, np.float64, np.int32, np.int64)


def _scatter_add_kernel(ndim):
    """``dst[.., idx[i], ..] += val[i]`` along an axis, with atomic adds."""
    def make():
        name = f"scatter_add_along{ndim}"
        params = grid_stride_params(ndim, strided("dst", ndim) + strided("idx", ndim)
                                    + strided("val", ndim)
                                    + [("ax_s", "int", None)])
        body = ["j = idx[idx_p]", "cuda.atomic.add(dst, dst_p + j * ax_s, val[val_p])"]
        source = grid_stride_source("kernel", ndim, params[2:], ["dst", "idx", "val"], body)
        return codegen.Kernel(name, codegen.build(name, source).kernel, params)
    return codegen.cached(("scatter_add_along", ndim), make)


def _corner(a, shape, axis):
    """``a``'s leading ``shape`` corner apart from ``axis`` (a view)."""
    if a.ndim == 0:
        return a.reshape(1)
    return a[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(shape))]


def _index(indices):
    return indices if isinstance(indices, DeviceArray) else to_device(np.asarray(indices))


def gather_along(a, indices, axis):
    """PyTorch's gather on the device (in-range indices)."""
    indices = _index(indices)
    if indices.ndim == 0:
        indices = indices.reshape(1)
        return take_along_axis(_corner(a, (1,), 0), indices, 0).reshape(())
    return take_along_axis(_corner(a, indices.shape, axis), indices, axis)


def index_select_along(a, index, axis):
    """PyTorch's index_select on the device: a gather with the 1-D index
    broadcast along the other dims."""
    index = _index(index)
    shape = a.shape[:axis] + index.shape + a.shape[axis + 1:]
    lifted = index.reshape((1,) * axis + index.shape + (1,) * (a.ndim - axis - 1))
    return gather_along(a, lifted.broadcast_to(shape), axis)


def _host_scatter(a, indices, values, axis, reduce):
    host = a.copy_to_host()
    idx = indices.copy_to_host() if isinstance(indices, DeviceArray) else np.asarray(indices)
    vals = values.copy_to_host() if isinstance(values, DeviceArray) else values
    cpu.scatter_along(host, idx, vals, axis, reduce)
    copy_into(a, to_device(host))


def scatter_along(a, indices, values, axis, reduce=None):
    """In place: PyTorch's scatter (``reduce`` None), scatter_add ("sum", with
    atomics on the device) or scatter_reduce ("prod", "amax", "amin", on the host)."""
    indices = _index(indices)
    if indices.size == 0:
        return
    if a.ndim == 0:
        a = a.reshape(1)
    if indices.ndim == 0:
        indices = indices.reshape(1)
    if reduce not in (None, "sum") or (reduce == "sum" and a.dtype.type not in _ATOMIC_ADD):
        _host_scatter(a, indices, values, axis, reduce)
        return
    axis = _axis(axis, a.ndim)
    target = _corner(a, indices.shape, axis)
    if isinstance(values, DeviceArray) and values.ndim == 0:
        values = values.reshape(1)
    if reduce is None:
        put_along_axis(target, indices, values, axis)
        return
    shape = indices.shape
    vals = values if isinstance(values, DeviceArray) else full_like_scalar(shape, values, a.dtype)
    if vals.dtype != a.dtype:
        vals = vals.astype(a.dtype)
    dst = _zero_axis(target, shape, axis)
    cshape, ops = operands(shape, [dst, indices, vals.broadcast_to(shape)])
    n = _prod(shape)
    _scatter_add_kernel(len(cshape)).grid_stride(
        n, [n, cshape, *_flat(ops), target.estrides[axis]])


# ------------------------------------------------------------------ on the host
def first_out_of_range(indices, low, high):
    """(A bounds check before a gather: one copy out, the CPU's scan.)"""
    host = indices.copy_to_host() if isinstance(indices, DeviceArray) else np.asarray(indices)
    return cpu.first_out_of_range(host, low, high)


# Sorting and selection: device kernels (backends/cuda/sorting.py).
from .sorting import histc, nonzero, searchsorted, sort_along, topk_along, unique  # noqa: E402,F401
