"""The CPU backend: NumPy arrays, Numba-compiled elementwise kernels, NumPy's
BLAS for products. Functions take and return raw arrays; the CUDA backend
(``nbgrad.backends.cuda``) has the same functions over device arrays.

What NumPy computes here runs with its floating-point warnings off
(``_quiet``): PyTorch makes inf - inf or 0 * inf a NaN without a word, as
nbgrad's compiled kernels do."""
import functools

import numba
import numpy as np

from .. import layout
from . import elementwise, loops, memory, softmax_kernels, updates
from .recurrent import (gru_cell_backward, gru_cell_forward, lstm_cell_backward,  # noqa: F401
                        lstm_cell_forward, rnn_cell_backward, rnn_cell_forward)
from . import ctc, linalg, scans, selection, statistics_kernels  # issue 15 (see the end)
from . import indexing, sorting  # issue 15: gathers, scatters, sorting
from . import normalization  # issue 16: fused normalization kernels
from . import convolution  # issue 16: one-pass im2col/col2im
from .allocator import _SMALL_COUNT, pool
from .checksums import checksum  # noqa: F401  (the contract's)
from .random import random_fill, random_state, random_stream, set_random_state  # noqa: F401

name = "cpu"
elementwise_forward = elementwise.forward
elementwise_forward_for = elementwise.forward_for  # optional: a forward for known argument kinds
elementwise_small_forward = elementwise.small_forward  # small calls, inlined (CUDA: None)
elementwise_backward = elementwise.backward
elementwise_backward_for = elementwise.backward_for  # optional: for known saved kinds
elementwise_small_backward = elementwise.small_backward  # small calls, inlined (CUDA: None)
elementwise_jvp = elementwise.jvp
column_sums = loops.column_sums
picked_sum = loops.picked_sum
take_per_row = loops.take_per_row
put_per_row = loops.put_per_row
norm_row_stats = normalization.norm_row_stats
norm_row_forward = normalization.norm_row_forward
norm_row_backward = normalization.norm_row_backward
norm_row_stats_forward = normalization.norm_row_stats_forward
norm_channel_stats = normalization.norm_channel_stats
norm_running_update = normalization.norm_running_update
norm_channel_forward = normalization.norm_channel_forward
norm_channel_backward = normalization.norm_channel_backward
conv_columns = convolution.conv_columns
conv_add_columns = convolution.conv_add_columns
conv_output = convolution.conv_output
conv_block_bytes = convolution.BLOCK_BYTES
optimizer_update = updates.optimizer_update
optimizer_update_foreach = updates.optimizer_update_foreach
update_foreach_below = updates.PARALLEL_THRESHOLD  # larger parameters take the parallel kernel


try:  # NumPy 2 keeps its error state in a context variable: set it directly
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
except ImportError:  # (another NumPy: its errstate)
    _extobj_contextvar = None


def _quiet(fn):
    """``fn`` run with NumPy's floating-point warnings off. Through NumPy's
    context variable where it has one: ``np.errstate``'s object costs 1.2 us
    more per call, and reductions and products of a training step's sizes
    take 2-5 us."""
    if _extobj_contextvar is None:
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)
        return run

    @functools.wraps(fn)
    def run_quietly(*args, **kwargs):
        token = _extobj_contextvar.set(_make_extobj(all="ignore"))
        try:
            return fn(*args, **kwargs)
        finally:
            _extobj_contextvar.reset(token)
    return run_quietly


def empty(shape, dtype):
    return pool.empty(shape, dtype)


def memory_stats():
    return pool.stats()


def empty_cache():
    pool.empty_cache()


def set_num_threads(n):
    numba.set_num_threads(n)


def get_num_threads():
    return numba.get_num_threads()


def zeros(shape, dtype):
    return np.zeros(shape, dtype=dtype)


def full(shape, value, dtype):
    if shape == ():  # a scalar loss's starting gradient: np.full's Python layers cost more
        return np.array(value, dtype=dtype)
    return np.full(shape, value, dtype=dtype)


def asarray(data, dtype=None):
    """An array for ``data``: host data as it is, a CUDA array copied to the host."""
    if hasattr(data, "copy_to_host"):
        data = data.copy_to_host()
    return np.asarray(data, dtype=dtype)


def to_numpy(a):
    """The host array itself (no copy: CPU tensors share memory with NumPy)."""
    return a


def kernel_argument(a):
    """``a`` as a user's ``@njit`` function takes it: the array itself."""
    return a


def data_pointer(a):
    """Address of ``a``'s first element."""
    return a.__array_interface__["data"][0]


def ascontiguous(a):
    """``a`` itself when C-contiguous, else a C-contiguous copy."""
    return a if a.flags.c_contiguous else np.array(a, order="C")


@_quiet
def cast(a, dtype):
    return a.astype(dtype)


def copy(a):
    return memory.copy(a, elementwise.PARALLEL_THRESHOLD)


def add(a, b):
    return memory.add(a, b, elementwise.PARALLEL_THRESHOLD)


def add_into(dst, src):
    memory.add_into(dst, src, elementwise.PARALLEL_THRESHOLD)


@_quiet
def sum_to_shape(grad, shape):
    """Undo broadcasting: sum the leading dimensions ``shape`` lacks and the
    dimensions where ``shape`` has size one."""
    axes = layout.broadcast_axes(grad.shape, shape)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)


@_quiet
def write_into_view(base, view_fn, values):
    """``base[view] = values`` where ``view_fn`` looks; where the view maps
    several elements onto one (an expand), each of their values is added there."""
    region = view_fn(base)
    if region.flags.writeable and 0 not in region.strides:
        region[...] = values
    else:  # accumulate through flat indices
        index = view_fn(np.arange(base.size).reshape(base.shape))
        np.add.at(base.reshape(-1), index, values)


def may_share_memory(a, b):
    return np.may_share_memory(a, b)


# Columns at or below which (with at least as many rows) a product multiplies by
# a contiguous copy of a transposed 2-D right operand (see matmul).
_SKINNY = 64


@_quiet
def matmul(a, b):
    """NumPy's product; one of 2-D or batched operands is written into the
    caching allocator's memory (already-mapped pages: a fresh multi-megabyte
    array costs a page fault per 4 KiB page on first write)."""
    if a.ndim == 2 and b.ndim == 2:
        shape = (a.shape[0], b.shape[1])
        if shape[1] <= _SKINNY <= shape[0]:
            # A classifier head (few outputs, a batch of rows): right after a large
            # product, OpenBLAS multiplied by the transposed skinny weight up to 3.7x
            # slower than by a contiguous copy (256x256 @ (10x256).T: 77 us against
            # 21 us, copy included; 31 against 23 in another run). The copy is at
            # most _SKINNY rows of ``b.T``.
            b = np.ascontiguousarray(b)
        if shape[0] * shape[1] < _SMALL_COUNT:  # below the pool for any dtype: skip its checks
            return np.matmul(a, b)
    elif a.ndim >= 2 and b.ndim >= 2:
        shape = (*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), a.shape[-2], b.shape[-1])
    else:
        return np.matmul(a, b)
    return np.matmul(a, b, out=pool.empty(shape, np.result_type(a.dtype, b.dtype)))


def swap_last(a):
    return np.swapaxes(a, -1, -2)


# Reductions return arrays (0-d for a full reduction), never NumPy scalars.
@_quiet
def reduce_sum(a, axis=None, keepdims=False, dtype=None):
    return np.asarray(np.add.reduce(a, axis=axis, dtype=dtype, keepdims=keepdims))


def reduce_max(a, axis=None, keepdims=False, zero_ties="last"):
    """Maximum over ``axis``. Where the maximum is a zero, ``zero_ties``
    says which zero's sign it takes: NumPy's (the last, as PyTorch's
    ``max()``) or the first one in C order (PyTorch's ``amax``)."""
    out = np.asarray(np.maximum.reduce(a, axis=axis, keepdims=keepdims))
    return _first_zero(a, out, axis, keepdims) if zero_ties == "first" else out


def reduce_min(a, axis=None, keepdims=False, zero_ties="last"):
    out = np.asarray(np.minimum.reduce(a, axis=axis, keepdims=keepdims))
    return _first_zero(a, out, axis, keepdims) if zero_ties == "first" else out


def _first_zero(a, out, axis, keepdims):
    """``out`` with each zero replaced by the first zero of its reduced
    elements, so its sign is that zero's (±0 compare equal: a tie)."""
    zero = out == 0
    if not zero.any():
        return out
    axes = range(a.ndim) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    axes = tuple(k % a.ndim for k in axes)
    kept = [k for k in range(a.ndim) if k not in axes]
    rows = np.transpose(a, kept + list(axes)).reshape(tuple(a.shape[k] for k in kept) + (-1,))
    first = np.take_along_axis(rows, np.argmax(rows == 0, axis=-1)[..., None], -1)[..., 0]
    if keepdims:
        first = first.reshape(out.shape)
    return np.where(zero, first, out)


def argmax(a, axis=None, keepdims=False):
    return np.asarray(np.argmax(a, axis=axis, keepdims=keepdims))


def argmin(a, axis=None, keepdims=False):
    return np.asarray(np.argmin(a, axis=axis, keepdims=keepdims))


def _extremum_with_indices(arg, a, axis, keepdims):
    indices = np.argmax(a, axis=axis, keepdims=True) if arg == "max" else \
        np.argmin(a, axis=axis, keepdims=True)
    values = np.take_along_axis(a, indices, axis)
    if not keepdims:
        values, indices = np.squeeze(values, axis), np.squeeze(indices, axis)
    return np.array(values, order="C"), np.array(indices, dtype=np.int64, order="C")


def max_with_indices(a, axis, keepdims=False):
    """(values, indices) of the maximum along ``axis`` (PyTorch's max(dim))."""
    return _extremum_with_indices("max", a, axis, keepdims)


def min_with_indices(a, axis, keepdims=False):
    return _extremum_with_indices("min", a, axis, keepdims)


def fused_softmax(x, axis):
    return softmax_kernels.softmax(x) if softmax_kernels.applies(axis, x) else None


def fused_log_softmax(x, axis):
    return softmax_kernels.log_softmax(x) if softmax_kernels.applies(axis, x) else None


def fused_softmax_backward(grad, y, axis):
    if softmax_kernels.applies(axis, grad, y):
        return softmax_kernels.softmax_backward(grad, y)
    return None


def fused_log_softmax_backward(grad, y, axis):
    if softmax_kernels.applies(axis, grad, y):
        return softmax_kernels.log_softmax_backward(grad, y)
    return None


def broadcast_to(a, shape):
    return np.broadcast_to(a, shape)


def as_strided(a, shape, strides):
    """A view with byte ``strides``, writeable when ``a`` is."""
    return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=a.flags.writeable)


def expand_dims(a, axis):
    return np.expand_dims(a, axis)


def squeeze(a, axis=None):
    return np.squeeze(a, axis)


def where(condition, a, b):
    return np.where(condition, a, b)


def concatenate(arrays, axis=0, dtype=None):
    return np.concatenate(arrays, axis=axis, dtype=dtype)


def stack(arrays, axis=0, dtype=None):
    return np.stack(arrays, axis=axis, dtype=dtype)


def split(a, bounds, axis):
    """Views of ``a`` cut at ``bounds`` along ``axis``."""
    return np.split(a, bounds, axis=axis)


def take_along_axis(a, indices, axis):
    return np.take_along_axis(a, indices, axis)


def put_along_axis(a, indices, values, axis):
    np.put_along_axis(a, indices, values, axis)


@_quiet
def add_at(a, key, values):
    """``a[key] += values``, repeated indices accumulating."""
    np.add.at(a, key, values)


from .pooling import max_pool_step  # noqa: E402  (one fused Numba pass per kernel offset)
from .pooling import max_pool2d_scatter, max_pool2d_windows  # noqa: E402,F401  (one pass each)


def pool_index_dtype(count):
    """One byte per index where the offsets fit: a quarter of int64's memory traffic."""
    return np.dtype(np.uint8) if count < 256 else np.dtype(np.int64)


# -- issue 15: products, scans and selections, linear algebra (backends/cpu/scans.py,
# selection.py, linalg.py)
cumulative = scans.cumulative
cumulative_extremum = scans.cumulative_extremum
median_with_indices = selection.median_with_indices
mode_with_indices = selection.mode_with_indices
reduce_median = selection.reduce_median
linalg_inv = linalg.linalg_inv
linalg_solve = linalg.linalg_solve
linalg_det = linalg.linalg_det
linalg_svd = linalg.linalg_svd
ctc_loss = ctc.ctc_loss  # (issue 16: CTCLoss)
ctc_loss_backward = ctc.ctc_loss_backward


def reduce_prod(a, axis=None, keepdims=False, dtype=None):
    """The product over ``axis``; bool and integers multiply in int64, as PyTorch's.
    Floats over trailing axes take the compiled loop (NumPy's does not vectorize)."""
    if dtype is None and a.dtype.kind in "biu":
        dtype = np.int64
    axes = _trailing_axes(a, axis)
    if dtype is None or dtype == a.dtype:
        shape = _reduced_shape(a.shape, axes, keepdims)
        lines = statistics_kernels.rows(a, axes)
        if lines is not None:
            return statistics_kernels.prod(lines).reshape(shape)
        table = statistics_kernels.columns(a, axes)
        if table is not None:
            return statistics_kernels.prod_columns(table).reshape(shape)
    with np.errstate(all="ignore"):
        return np.asarray(np.prod(a, axis=axis, keepdims=keepdims, dtype=dtype))


def _trailing_axes(a, axis):
    if axis is None:
        return tuple(range(a.ndim))
    if axis.__class__ is int:
        return (axis % a.ndim,)
    return tuple(sorted(k % a.ndim for k in axis))


def _reduced_shape(shape, axes, keepdims):
    return tuple(1 if k in axes else n for k, n in enumerate(shape)) if keepdims else \
        tuple(n for k, n in enumerate(shape) if k not in axes)


def fused_var(x, axes, dof):
    """The variance over ``axes`` divided by ``dof`` in compiled passes, where
    they are ``x``'s trailing or leading axes (C-contiguous floats); else None."""
    shape = _reduced_shape(x.shape, axes, False)
    lines = statistics_kernels.rows(x, axes)
    if lines is not None:
        return statistics_kernels.var(lines, dof).reshape(shape)
    table = statistics_kernels.columns(x, axes)  # leading axes: by columns
    return None if table is None else statistics_kernels.var_columns(table, dof).reshape(shape)


def fused_logsumexp(x, axes):
    """logsumexp over ``axes`` in compiled passes, where they are ``x``'s
    trailing or leading axes (C-contiguous floats); else None."""
    shape = _reduced_shape(x.shape, axes, False)
    lines = statistics_kernels.rows(x, axes)
    if lines is not None:
        return statistics_kernels.logsumexp(lines).reshape(shape)
    table = statistics_kernels.columns(x, axes)  # leading axes: by columns
    return None if table is None else statistics_kernels.logsumexp_columns(table).reshape(shape)


# -- issue 15: gathers, scatters, sorting and selection (backends/cpu/indexing.py, sorting.py)
gather_along = indexing.gather_along
index_select_along = indexing.index_select_along
scatter_along = _quiet(indexing.scatter_along)
first_out_of_range = indexing.first_out_of_range
nonzero = indexing.nonzero
sort_along = sorting.sort_along
topk_along = sorting.topk_along
searchsorted = indexing.searchsorted
histc = _quiet(indexing.histc)
unique = sorting.unique
