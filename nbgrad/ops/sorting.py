"""Sorting and selection: sort, argsort, topk, kthvalue, unique,
unique_consecutive, searchsorted, bucketize, histc (clamp_min and clamp_max
are rows of the op table).

sort, topk and kthvalue return PyTorch's ``values, indices`` named tuples;
their gradient puts the values' gradient back where the values came from
(``put_along``, whose adjoint is ``take_along_axis``: differentiable twice).
The backends sort stably (NaN after everything, as PyTorch), so ``stable``
changes nothing; ties among topk's and kthvalue's elements may pick other
positions than PyTorch's, which promises none."""
import numbers

import numpy as np

from .. import dtypes
from ..tape import grad_mode
from ..tape.graph import Node, SavedValue
from ..tensor import Tensor
from . import dual
from .arrays import ops_for
from .reductions import _check_keepdim, _return_type
from .registry import tensor_op
from .scatter import _same_device, _type_name

SortResult, TopkResult, KthvalueResult = (_return_type("sort"), _return_type("topk"),
                                          _return_type("kthvalue"))


class SelectBackward(Node):
    """sort's, topk's and kthvalue's backward: the gradient put back at the
    positions the values came from (distinct positions)."""

    __slots__ = ("axis", "shape", "kept", "_op_name")

    def __init__(self, source, indices, axis, op_name, kept=None):
        super().__init__([source])
        self.saved = (SavedValue(indices),)
        self.axis, self.shape, self._op_name, self.kept = axis, source._data.shape, op_name, kept

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        (indices,) = self.saved_values()
        xp = ops_for(grad)
        if self.kept is not None:  # kthvalue without keepdim: the reduced dim back as size 1
            grad = xp.reshape(grad, self.kept)
        return [xp.put_along(self.shape, indices, grad, self.axis)]


def _recording(t):
    return grad_mode.is_grad_enabled() and t.requires_grad


def _selected(self, values, indices, axis, op_name, result, kept=None, node_indices=None):
    node = None
    if _recording(self):
        node = SelectBackward(self, indices if node_indices is None else node_indices, axis,
                              op_name, kept)
    backend = self._backend
    return result(Tensor._from_op(values, node, self.dtype, backend),
                  Tensor._wrap(indices, dtypes.int64, backend))


def _check_bool(value, fn, name, position=None):
    if type(value) is not bool:
        where = f" (position {position})" if position else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be bool, not "
                        f"{dtypes.type_name(value)}")


def _zero_dim(fn, self, *args):
    """A 0-d tensor's result: the op on it as 1-D, its outputs back as 0-d."""
    values, indices = fn(self.reshape(1), *args)
    return values.reshape(()), indices.reshape(())


@tensor_op(tangent=dual.BY_VJP, out=True)
def sort(input, dim=-1, descending=False, *, stable=False):
    """sort(input, dim=-1, descending=False, *, stable=False, out=None) -> (Tensor, LongTensor)

    ``input``'s elements sorted along ``dim`` (ascending unless
    ``descending``; NaN counts as the largest), and their original
    positions; equal elements keep their order."""
    axis = input._dim(dim, "sort")
    _check_bool(descending, "sort", "descending")
    if stable is not None:
        _check_bool(stable, "sort", "stable")
    if input.ndim == 0:
        return SortResult(*_zero_dim(lambda t, d: sort(t, 0, d), input, descending))
    values, indices = input._backend.sort_along(input._data, axis, descending)
    return _selected(input, values, indices, axis, "Sort", SortResult)


@tensor_op()
def argsort(input, dim=-1, descending=False, *, stable=False):
    """argsort(input, dim=-1, descending=False, *, stable=False) -> LongTensor

    The positions that sort ``input`` along ``dim``."""
    axis = input._dim(dim, "argsort")
    _check_bool(descending, "argsort", "descending")
    _check_bool(stable, "argsort", "stable")
    if input.ndim == 0:
        return Tensor._wrap(input._backend.zeros((), np.int64), dtypes.int64, input._backend)
    _, indices = input._backend.sort_along(input._data, axis, descending)
    return Tensor._wrap(indices, dtypes.int64, input._backend)


def _check_k(k, fn):
    if isinstance(k, bool) or not isinstance(k, (numbers.Integral, Tensor)):
        raise TypeError(f"{fn}(): argument 'k' (position 2) must be int, not "
                        f"{dtypes.type_name(k)}")
    return int(k)


@tensor_op(tangent=dual.BY_VJP, out=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """topk(input, k, dim=-1, largest=True, sorted=True, *, out=None) -> (Tensor, LongTensor)

    The ``k`` largest (``largest=False``: smallest) elements of ``input``
    along ``dim``, in order, and their positions."""
    k = _check_k(k, "topk")
    axis = input._dim(dim, "topk")
    _check_bool(largest, "topk", "largest")
    _check_bool(sorted, "topk", "sorted")
    size = input._data.shape[axis] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU" if not input.is_cuda else
                           '"topk_out_cuda" not implemented for \'Bool\'')
    if input.ndim == 0:
        return TopkResult(*_zero_dim(lambda t, kk: topk(t, kk, 0, largest), input, k))
    values, indices = input._backend.topk_along(input._data, k, axis, largest)
    return _selected(input, values, indices, axis, "Topk", TopkResult)


@tensor_op(tangent=dual.BY_VJP, out=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    """kthvalue(input, k, dim=-1, keepdim=False, *, out=None) -> (Tensor, LongTensor)

    The ``k``-th smallest element of ``input`` along ``dim`` (1-based) and
    its position."""
    k = _check_k(k, "kthvalue")
    axis = input._dim(dim, "kthvalue")
    _check_keepdim(keepdim, "kthvalue")
    if input.ndim == 0:
        if k != 1:
            raise RuntimeError("kthvalue(): selected number k out of range for dimension 0")
        return KthvalueResult(*_zero_dim(lambda t, kk: kthvalue(t, kk, 0, True), input, k))
    size = input._data.shape[axis]
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {axis} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    backend = input._backend
    values, indices = backend.sort_along(input._data, axis)
    pick = (slice(None),) * axis + (slice(k - 1, k),)
    values, indices = backend.ascontiguous(values[pick]), backend.ascontiguous(indices[pick])
    kept = indices
    if not keepdim:
        values, indices = backend.squeeze(values, axis), backend.squeeze(indices, axis)
    return _selected(input, values, indices, axis, "Kthvalue", KthvalueResult,
                     kept=None if keepdim else kept.shape, node_indices=kept)


# ---------------------------------------------------------------- unique
def _host_unique_dim(input, axis, sorted, return_inverse, return_counts, consecutive):
    """unique along ``axis`` (whole slices compared), on the host."""
    backend = input._backend
    host = backend.to_numpy(input._data)
    moved = np.moveaxis(host, axis, 0)
    n = moved.shape[0]
    rows = moved.reshape(n, -1)
    if consecutive:
        start = np.ones(n, np.bool_)
        if n:
            start[1:] = np.any(rows[1:] != rows[:-1], axis=1)
        firsts = np.flatnonzero(start)
        values = moved[firsts]
        inverse = np.cumsum(start, dtype=np.int64) - 1
        counts = np.diff(firsts, append=n).astype(np.int64)
    else:
        values, inverse, counts = np.unique(moved, axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1).astype(np.int64)
        counts = counts.astype(np.int64)
    # laid out as PyTorch's: the slices contiguous, moved back to ``axis`` as a view
    values = Tensor._wrap(backend.asarray(np.ascontiguousarray(values)), input.dtype, backend)
    order = list(range(1, values.ndim))
    order.insert(axis, 0)
    out = [values.permute(*order)]
    if return_inverse:
        out.append(Tensor._wrap(backend.asarray(inverse), dtypes.int64, backend))
    if return_counts:
        out.append(Tensor._wrap(backend.asarray(counts), dtypes.int64, backend))
    return out[0] if len(out) == 1 else tuple(out)


def _unique(input, return_inverse, return_counts, dim, consecutive, fn):
    _check_bool(return_inverse, fn, "return_inverse")
    _check_bool(return_counts, fn, "return_counts")
    if dim is not None:
        axis = input._dim(dim, fn)
        return _host_unique_dim(input, axis, True, return_inverse, return_counts, consecutive)
    backend = input._backend
    values, inverse, counts = backend.unique(input._data, return_inverse, return_counts,
                                             consecutive)
    out = [Tensor._wrap(values, input.dtype, backend)]
    if return_inverse:
        out.append(Tensor._wrap(inverse, dtypes.int64, backend))
    if return_counts:
        out.append(Tensor._wrap(counts, dtypes.int64, backend))
    return out[0] if len(out) == 1 else tuple(out)


@tensor_op()
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)

    The distinct elements of ``input`` in ascending order (NaNs each
    distinct); with ``return_inverse`` each element's position among them,
    with ``return_counts`` how often each occurs; with ``dim``, distinct
    slices along it. (Sorted whatever ``sorted`` says, as PyTorch's CPU.)"""
    _check_bool(sorted, "unique", "sorted")
    return _unique(input, return_inverse, return_counts, dim, False, "unique")


@tensor_op()
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)

    One element (slice along ``dim``) per run of equal consecutive ones."""
    return _unique(input, return_inverse, return_counts, dim, True, "unique_consecutive")


# ---------------------------------------------------------------- searches
def _values_tensor(value, like, fn):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, complex):
        return Tensor._wrap(like._backend.asarray(np.asarray(value)),
                            dtypes.scalar_dtype(value), like._backend)
    raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(value).__name__}")


def _search(boundaries, values, right, out_int32, fn):
    _same_device(boundaries, values)
    backend = boundaries._backend
    common = np.result_type(boundaries.dtype.numpy, values.dtype.numpy)
    bd, vals = boundaries._data, values._data
    if bd.dtype != common:
        bd = backend.cast(bd, common)
    if vals.dtype != common:
        vals = backend.cast(vals, common)
    out = backend.searchsorted(backend.ascontiguous(bd), backend.ascontiguous(vals), right)
    if out_int32:
        int32 = getattr(dtypes, "int32", None)
        if int32 is None:
            raise TypeError(f"{fn}(): out_int32 needs the int32 dtype, which this nbgrad lacks")
        return Tensor._wrap(backend.cast(out, np.int32), int32, backend)
    return Tensor._wrap(out, dtypes.int64, backend)


@tensor_op(method=False, out=True)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None) -> Tensor

    For each value of ``input``, the position in the innermost sorted rows
    of ``sorted_sequence`` where it would be inserted: before equal elements,
    or after them with ``right=True`` (``side="right"``). ``sorter``: the
    positions that sort ``sorted_sequence`` along its last dim."""
    fn = "torch.searchsorted()"
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{fn}: side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{fn}: side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    values = _values_tensor(input, sorted_sequence, "searchsorted")
    bshape, vshape = tuple(sorted_sequence.shape), tuple(values.shape)
    if len(bshape) != 1 and (bshape[:-1] != vshape[:-1] or len(bshape) != len(vshape)):
        raise RuntimeError(f"{fn}: boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but "
                           f"we got boundaries tensor {list(bshape)} and input value tensor "
                           f"{list(vshape)}")
    if sorter is not None:
        if sorter.shape != sorted_sequence.shape:
            raise RuntimeError(f"{fn}: boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(bshape)}and got sorter tensor "
                               f"{list(sorter.shape)}")
        if sorter.dtype is not dtypes.int64:
            raise TypeError(f"{fn}: sorter must be a tensor of long dtype but got "
                            f"{_type_name(sorter.dtype)}")
        backend = sorted_sequence._backend
        sorted_sequence = Tensor._wrap(backend.take_along_axis(
            sorted_sequence._data, sorter._data, max(sorted_sequence.ndim - 1, 0)),
            sorted_sequence.dtype, backend)
    return _search(sorted_sequence, values, right, out_int32, "searchsorted")


@tensor_op(method=False, out=True)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """bucketize(input, boundaries, *, out_int32=False, right=False, out=None) -> Tensor

    The bucket of each element of ``input`` among the 1-D sorted
    ``boundaries``: i with ``boundaries[i-1] < x <= boundaries[i]``
    (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    values = _values_tensor(input, boundaries, "bucketize")
    return _search(boundaries, values, right, out_int32, "bucketize")


@tensor_op(out=True)
def histc(input, bins=100, min=0, max=0):
    """histc(input, bins=100, min=0, max=0, *, out=None) -> Tensor

    A histogram of ``input``: ``bins`` equal-width bins over [min, max]
    (both 0: the data's range), elements outside not counted; of
    ``input``'s dtype."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{_type_name(input.dtype)}'")
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    backend = input._backend
    low, high = float(min), float(max)
    if low == high and input.numel():
        host = backend.to_numpy(input._data)
        if np.isnan(host).any():  # PyTorch's range of the data is then NaN
            raise RuntimeError("torch.histc: range of [-nan, -nan] is not finite")
        low, high = float(host.min()), float(host.max())
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite")
    cast = input.dtype.numpy.type
    counts = backend.histc(input._data, bins, cast(low), cast(high))
    return Tensor._wrap(counts, input.dtype, backend)
