"""Everyday in-place writes a PyTorch user expects (issue 15 breadth):
``index_put_``/``index_put`` (with ``accumulate``), ``put_``/``put`` (flat
indices) and ``fill_diagonal_``. Each is indexed assignment (``setitem``)
or an in-place ``add_`` of an ``index_add``, so leaf and version checks,
history rebasing and gradients are theirs."""
import numpy as np

from .. import creation, dtypes
from . import dual
from ..tape import grad_mode
from ..tensor import Tensor
from .elementwise import _TYPE_NAMES
from .indexing import _as_key, _check_indices, _check_key, _index_error, _index_shape, index_add
from .registry import tensor_op


def _indices_tuple(indices, fn):
    if not isinstance(indices, (tuple, list)) or not all(
            isinstance(i, Tensor) or i is None for i in indices):
        raise TypeError(f"{fn}(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    return tuple(slice(None) if i is None else i for i in indices)


def _accumulate(self, key, values):
    """``self[key] += values`` with repeated indices adding up, as PyTorch's
    ``index_put_(..., accumulate=True)``: an in-place add of an index_add."""
    np_key, _ = _as_key(self, key)
    _check_key(self, np_key)
    _check_indices(self, np_key)
    try:
        region = _index_shape(tuple(self.shape), np_key)
    except IndexError as error:
        raise _index_error(error) from None
    if values.dtype is not self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_TYPE_NAMES[self.dtype.name]} for the destination and "
                           f"{_TYPE_NAMES[values.dtype.name]} for the source.")
    try:
        if np.broadcast_shapes(tuple(values.shape), region) != region:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(region)}") from None
    if 0 in region:
        return self
    return self.add_(index_add(values.expand(region), tuple(self.shape), np_key))


@tensor_op(function=False, tangent=dual.LINEAR_IN_PLACE)
def index_put_(self, indices, values, accumulate=False):
    """Tensor.index_put_(indices, values, accumulate=False) -> Tensor

    ``self[indices] = values`` (``indices`` a tuple of index tensors), or
    ``self[indices] += values`` with ``accumulate``, where repeated indices
    add up."""
    key = _indices_tuple(indices, "index_put_")
    if accumulate:
        return _accumulate(self, key, values)
    self[key] = values
    return self


@tensor_op(tangent=dual.LINEAR)
def index_put(input, indices, values, accumulate=False):
    """index_put(input, indices, values, accumulate=False) -> Tensor: the
    out-of-place ``index_put_`` (on a copy of ``input``)."""
    key = _indices_tuple(indices, "index_put")
    return index_put_(input.clone(), key, values, accumulate)


def _flat_key(self, index, source, fn):
    """The multi-dimensional key of ``self``'s elements at flat (row-major)
    ``index``, checked as PyTorch's ``put_``."""
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{fn}(): Expected a long tensor for index, but got "
                           f"{_TYPE_NAMES[index.dtype.name]}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"{fn}(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_TYPE_NAMES[self.dtype.name]} and source.dtype = "
                           f"{_TYPE_NAMES[source.dtype.name]}")
    if index.numel() != source.numel():
        raise IndexError(f"{fn}(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    flat = np.asarray(index.detach().cpu().numpy()).reshape(-1)
    total = self.numel()
    outside = (flat >= total) | (flat < -total)
    if outside.any():
        raise IndexError(f"out of range: tried to access index {int(flat[outside][0])} on a "
                         f"tensor of {total} elements.")
    flat = np.where(flat < 0, flat + total, flat)
    coords = np.unravel_index(flat, tuple(self.shape) or (1,))
    return tuple(creation.tensor(np.asarray(c, dtype=np.int64), device=self.device)
                 for c in coords)


@tensor_op(function=False, tangent=dual.LINEAR_IN_PLACE)
def put_(self, index, source, accumulate=False):
    """Tensor.put_(index, source, accumulate=False) -> Tensor

    Writes the elements of ``source`` at the flat (row-major) positions
    ``index`` of ``self``, as if it were 1-D; ``accumulate`` adds instead."""
    key = _flat_key(self, index, source, "put_")
    target = self if self.ndim else self.view(1)  # (a 0-d tensor's one element)
    index_put_(target, key, source.reshape(-1), accumulate)
    return self


@tensor_op(tangent=dual.LINEAR)
def put(input, index, source, accumulate=False):
    """put(input, index, source, accumulate=False) -> Tensor: the
    out-of-place ``put_`` (on a copy of ``input``)."""
    return put_(input.clone(), index, source, accumulate)


@tensor_op(function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """Tensor.fill_diagonal_(fill_value, wrap=False) -> Tensor

    Fills the main diagonal (all indices equal) of a tensor of 2 or more
    dimensions, all equal past the second. ``wrap``: for a tall matrix,
    the diagonal starts again every ``columns + 1`` rows, as NumPy's."""
    if grad_mode.is_grad_enabled() and self.requires_grad and self.is_leaf:
        # (PyTorch writes through a view of self, so its message names a view)
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(self.shape)
    if self.ndim > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    rows, cols = shape[0], shape[1]
    if self.ndim > 2 or not wrap or rows <= cols:
        k = np.arange(min(shape))
        coords = (k,) * self.ndim
    else:
        flat = np.arange(0, rows * cols, cols + 1)
        coords = (flat // cols, flat % cols)
    key = tuple(creation.tensor(c.astype(np.int64), device=self.device) for c in coords)
    self[key] = fill_value
    return self
