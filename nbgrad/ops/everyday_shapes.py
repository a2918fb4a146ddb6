"""Everyday shape and layout ops a PyTorch user expects (issue 15 breadth):
``rot90``, ``diagflat``, ``tensor_split``/``hsplit``/``vsplit``/``dsplit``,
``block_diag``, ``cartesian_prod``, ``combinations``, ``tril_indices``/
``triu_indices``, ``select``, ``Tensor.where``, ``H``/``mH``/``adjoint``,
``sum_to_size``, ``Tensor.unfold`` and small predicates. Composed from the
view and joining primitives (views stay views), so their gradients are the
primitives'; ``unfold`` is a strided view of its own, whose gradient adds
up overlapping windows."""
import itertools
import numbers

import numpy as np

from .. import creation, dtypes
from ..backends import backend_of
from ..tensor import Tensor
from . import dual, joining, shapes  # noqa: F401  (joining, shapes: declare the ops used below)
from .arithmetic import where as _where
from .registry import FUNCTIONS, tensor_op
from .shapes import _wrap_dim
from .views import make_view

# The declared ops, as bound (with their forward-mode tangent rules).
cat, stack, diag, meshgrid = (FUNCTIONS[n] for n in ("cat", "stack", "diag", "meshgrid"))


@tensor_op()
def rot90(input, k=1, dims=(0, 1)):
    """rot90(input, k=1, dims=[0, 1]) -> Tensor

    ``input`` rotated by 90 degrees ``k`` times in the plane ``dims``, from
    the first toward the second (a copy, as PyTorch's: flip and transpose)."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (_wrap_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


@tensor_op()
def diagflat(input, offset=0):
    """diagflat(input, offset=0) -> Tensor: a square matrix with ``input``
    flattened on its ``offset``-th diagonal."""
    return diag(input.reshape(-1), offset)


def _split_points(input, indices_or_sections, dim, fn="tensor_split"):
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dtype is not dtypes.int64 or indices_or_sections.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have int64 "
                               "dtype and be a zero- or one-dimensional tensor")
        indices_or_sections = (indices_or_sections.item() if indices_or_sections.ndim == 0
                               else indices_or_sections.tolist())
    length = input.shape[dim]
    if isinstance(indices_or_sections, numbers.Integral) and not isinstance(
            indices_or_sections, bool):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        small, extra = divmod(length, sections)  # the first `extra` pieces get one more
        bounds = [k * small + min(k, extra) for k in range(sections + 1)]
        return list(zip(bounds[:-1], bounds[1:]))
    if not isinstance(indices_or_sections, (list, tuple)) or not all(
            isinstance(i, numbers.Integral) for i in indices_or_sections):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got "
                        f"(Tensor, {type(indices_or_sections).__name__})")
    bounds = [0, *(int(i) for i in indices_or_sections), length]
    clip = [min(max(b + length if b < 0 else b, 0), length) for b in bounds]
    return [(a, max(a, b)) for a, b in zip(clip[:-1], clip[1:])]


@tensor_op()
def tensor_split(input, indices_or_sections, dim=0):
    """tensor_split(input, indices_or_sections, dim=0) -> tuple of Tensors

    Views of ``input`` split along ``dim``: into ``n`` nearly equal pieces
    (the first ``size % n`` one longer), or at the given indices."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    axis = _wrap_dim(dim, input.ndim)
    return tuple(input.narrow(axis, a, b - a)
                 for a, b in _split_points(input, indices_or_sections, axis))


def _directional_split(name, dim_of, min_dims):
    def split(input, indices_or_sections):
        if input.ndim < min_dims:
            raise RuntimeError(f"nbgrad.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {input.ndim} dimensions!")
        dim = dim_of(input)
        if isinstance(indices_or_sections, numbers.Integral):
            size = input.shape[dim]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(
                    f"nbgrad.{name} attempted to split along dimension {dim}, but the size of the "
                    f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, dim)
    split.__name__ = name
    split.__doc__ = (f"{name}(input, indices_or_sections) -> tuple of Tensors: "
                     f"``tensor_split`` along dimension {dim_of.__doc__} (equal pieces only).")
    return tensor_op(name)(split)


def _h(t):
    """1 (0 for 1-D)"""
    return 1 if t.ndim > 1 else 0


def _v(t):
    """0"""
    return 0


def _d(t):
    """2"""
    return 2


hsplit = _directional_split("hsplit", _h, 1)
vsplit = _directional_split("vsplit", _v, 2)
dsplit = _directional_split("dsplit", _d, 3)


@tensor_op(method=False)
def block_diag(*tensors):
    """block_diag(*tensors) -> Tensor: the tensors (each 0-, 1- or 2-D, a
    1-D one a row) placed as blocks on a diagonal, zeros elsewhere."""
    blocks = []
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"nbgrad.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {t.ndim} dimensions")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return creation.zeros(1, 0)
    common = dtypes.result_type(tuple(blocks))
    width = sum(b.shape[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:
        r, c = b.shape
        pieces = [b.new_zeros((r, before), dtype=common), b.to(common),
                  b.new_zeros((r, width - before - c), dtype=common)]
        rows.append(cat(pieces, 1))
        before += c
    return cat(rows, 0)


def _vector(t):
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


@tensor_op(method=False)
def cartesian_prod(*tensors):
    """cartesian_prod(*tensors) -> Tensor: every combination of one element
    of each 1-D tensor, one per row (a single tensor is returned itself)."""
    for t in tensors:
        _vector(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


@tensor_op(method=False)
def combinations(input, r=2, with_replacement=False):
    """combinations(input, r=2, with_replacement=False) -> Tensor

    The length-``r`` combinations of the elements of a 1-D tensor, one per
    row, in ``itertools.combinations`` order (with replacement:
    ``combinations_with_replacement``)."""
    _vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if not index.size:
        return input.new_empty((0, r))
    flat = creation.tensor(index.reshape(-1), device=input.device)
    return input.index_select(0, flat).reshape(-1, r)


def _triangle_indices(row, col, offset, dtype, device, lower):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = dtypes.int64 if dtype is None else dtype
    make = np.tril_indices if lower else np.triu_indices
    rows, cols = make(row, offset, col) if row and col else (np.zeros(0), np.zeros(0))
    return creation.tensor(np.stack([rows, cols]).astype(np.int64).reshape(2, -1), dtype=dtype,
                           device=device)


@tensor_op(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """tril_indices(row, col, offset=0, *, dtype=nbgrad.long, device=None) -> Tensor

    The ``2 x N`` coordinates of the lower triangle (on and below the
    ``offset``-th diagonal) of a ``row x col`` matrix, row by row."""
    return _triangle_indices(row, col, offset, dtype, device, lower=True)


@tensor_op(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """triu_indices(row, col, offset=0, *, dtype=nbgrad.long, device=None) -> Tensor

    The ``2 x N`` coordinates of the upper triangle (on and above the
    ``offset``-th diagonal) of a ``row x col`` matrix, row by row."""
    return _triangle_indices(row, col, offset, dtype, device, lower=False)


@tensor_op()
def select(input, dim, index):
    """select(input, dim, index) -> Tensor: the slice at ``index`` along
    ``dim``, that dimension removed (a view)."""
    axis = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    size = input.shape[axis]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return input[(slice(None),) * axis + (index,)]


@tensor_op("where", function=False)
def where_method(self, condition, other):
    """Tensor.where(condition, y) -> Tensor: ``nbgrad.where(condition, self, y)``."""
    return _where(condition, self, other)


@tensor_op("mH", function=False, attribute=True)
def _adjoint_attribute(self):
    if self.ndim < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return self.transpose(-2, -1)


@tensor_op("H", function=False, attribute=True)
def _conjugate_transpose(self):
    if self.ndim not in (0, 2):
        hint = (". For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ".")
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor{hint}")
    return self.transpose(0, 1) if self.ndim == 2 else self


@tensor_op()
def adjoint(input):
    """adjoint(input) -> Tensor: the (conjugate) transpose of the last two
    dimensions, a view (nbgrad is real: ``transpose(-2, -1)``)."""
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return input.transpose(-2, -1)


@tensor_op(function=False)
def sum_to_size(self, *size):
    """Tensor.sum_to_size(*size) -> Tensor: ``self`` summed down to ``size``,
    a shape ``self`` expands from (itself when already that shape)."""
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if tuple(size) == shape:
        return self
    dims = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(size)
                                      if s == 1 and shape[lead + k] != 1)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size) if lead else out


@tensor_op()
def is_signed(input):
    """True unless ``input``'s dtype is unsigned (uint8) or bool."""
    return input.dtype not in (dtypes.uint8, dtypes.bool_)


@tensor_op()
def is_nonzero(input):
    """is_nonzero(input) -> bool: whether a one-element tensor is not zero."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@tensor_op()
def is_same_size(input, other):
    """is_same_size(input, other) -> bool: whether the shapes are equal."""
    return tuple(input.shape) == tuple(other.shape)


@tensor_op()
def get_device(self):
    """The CUDA device index, or -1 for a CPU tensor."""
    device = self.device
    return -1 if device.type == "cpu" else (device.index or 0)


@tensor_op("is_cpu", function=False, attribute=True)
def _is_cpu(self):
    return self.device.type == "cpu"


def _windows_view(dim, size, step, count):
    """The raw array's windows along ``dim``: that dimension becomes the
    window count, a new last one of ``size`` walks each window (PyTorch's
    strides: ``step * stride`` and ``stride``)."""
    def view_fn(a):
        shape, strides = list(a.shape), list(a.strides)
        if a.ndim == 0:
            return backend_of(a).as_strided(a, (size,), (a.itemsize,))
        shape[dim], stride = count, strides[dim]
        strides[dim] = stride * step
        return backend_of(a).as_strided(a, tuple(shape) + (size,), tuple(strides) + (stride,))
    return view_fn


def _unfold_inverse(shape, dim, size, step, count):
    """The gradient of ``unfold``: window element ``j`` of every window comes
    from the strided slice ``j :: step`` along ``dim``; overlapping windows
    add up, so each ``j`` is written separately and the parts summed."""
    def inverse(g, xp):
        total = None
        for j in range(size):
            def pick(a, j=j):
                return a[..., j]

            def strided(a, j=j):
                if a.ndim == 0:
                    return a[...]
                return a[(slice(None),) * dim + (slice(j, j + step * (count - 1) + 1, step),)]
            part = xp.scatter_into_view(shape, strided, xp.apply_view(g, pick, g.shape))
            total = part if total is None else xp.run("add", total, part)
        if total is None:  # size 0: nothing of the input is seen
            def nothing(a):
                return a.reshape(-1)[:0]
            total = xp.scatter_into_view(shape, nothing, xp.apply_view(g, nothing, g.shape))
        return total
    return inverse


@tensor_op(function=False, tangent=dual.LINEAR)
def unfold(self, dimension, size, step):
    """Tensor.unfold(dimension, size, step) -> Tensor

    A view of every window of ``size`` elements along ``dimension``, ``step``
    apart: that dimension becomes the window count and a new last dimension
    of ``size`` holds each window (windows may overlap)."""
    dim = _wrap_dim(dimension, self.ndim)
    length = self.shape[dim] if self.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (length - size) // step + 1
    shape = tuple(self._data.shape)
    return make_view(self, "Unfold", _windows_view(dim, size, step, count),
                     _unfold_inverse(shape, dim, size, step, count))
