"""Shape ops. Those that PyTorch makes views share memory and the version
counter with their base; each records how to re-derive itself from the base
(``view_fn``) so in-place writes through views can rebase history."""
import math
import numbers

import numpy as np

from ..backends import backend_of
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor
from . import arrays
from .arrays import ops_for
from . import dual
from .registry import tensor_op


class ShapeBackward(Node):
    """Backward of a shape op: ``inverse(grad, xp)`` maps the output's
    gradient to the input's with the formula operations ``xp``."""

    __slots__ = ("_op_name", "inverse")

    def __init__(self, source, op_name, inverse):
        super().__init__([source])
        self._op_name = op_name
        self.inverse = inverse

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        return [self.inverse(grad, ops_for(grad))]


class _ChainedView:
    """The ``view_fn`` of a view of a view: the parent's, then one more step.
    Called in a loop rather than as nested calls, so that replaying a deep
    chain of views (any depth works in PyTorch) cannot exhaust the stack."""

    __slots__ = ("parent", "step")

    def __init__(self, parent, step):
        self.parent, self.step = parent, step

    def __call__(self, a):
        steps = []
        fn = self
        while fn.__class__ is _ChainedView:
            steps.append(fn.step)
            fn = fn.parent
        a = fn(a)
        for step in reversed(steps):
            a = step(a)
        return a


def make_view(self, op_name, view_fn, inverse, data=None):
    """A tensor over ``view_fn(self's array)`` (``data``, when the caller has
    it) sharing storage and version counter."""
    base, base_fn = (self, view_fn) if self._base is None else (
        self._base, _ChainedView(self._view_fn, view_fn))
    return _view(self, view_fn(self._data) if data is None else data, base, base_fn,
                 lambda: ShapeBackward(self, op_name, inverse))


def _view(self, data, base, view_fn, node):
    """``data``, a view of ``self``'s storage, as a view of ``base``
    (``view_fn(base's array)`` re-derives it), its history ``node()``."""
    out = Tensor._wrap(data, self.dtype, self._backend)
    out._version_counter = self._version_counter
    out._view_version = self._version_counter.value
    out._base, out._view_fn = base, view_fn
    recording = grad_mode.is_grad_enabled()
    out._view_no_grad = not recording or self._view_no_grad  # CreationMeta.NO_GRAD_MODE
    if self._multi_view is not None:  # CreationMeta.MULTI_OUTPUT_NODE, propagated
        out._multi_view = 0
    if recording and self.requires_grad:
        out._grad_fn = node()
    return out


def _copying_shape_op(self, op_name, data, inverse):
    node = ShapeBackward(self, op_name, inverse) if (
        grad_mode.is_grad_enabled() and self.requires_grad) else None
    return Tensor._from_op(data, node, self.dtype, self._backend)


def _normalize_shape(self, shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not all(s.__class__ is int for s in shape):  # (ints need no ABC isinstance check)
        for s in shape:
            if not isinstance(s, numbers.Integral):
                raise TypeError(f"shape must be a sequence of ints, but found element of type "
                                f"{type(s).__name__}")
        shape = tuple(int(s) for s in shape)
    numel = self._data.size
    # at::infer_size: checks in order, one dimension at a time.
    infer, known = None, 1
    for k, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = k
        elif s >= 0:
            known *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {k} of shape {list(shape)}")
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is None:
            return shape
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because "
                               "the unspecified dimension size -1 can be any value and is ambiguous")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def _require_args(name, what, args):
    if not args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "{what}"')


@tensor_op(function=False, tangent=dual.LINEAR)
def view(self, *shape):
    _require_args("view", "size", shape)
    shape = _normalize_shape(self, shape)
    try:
        data = self._data.reshape(shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    in_shape = self._data.shape
    return make_view(self, "View", lambda a: a.reshape(shape),
                     lambda g, xp: xp.reshape(g, in_shape), data)


@tensor_op(tangent=dual.LINEAR)
def reshape(self, *shape):
    _require_args("reshape", "shape", shape)
    shape = _normalize_shape(self, shape)
    try:
        self._data.reshape(shape, copy=False)
    except ValueError:  # not expressible as a view: copy, as PyTorch does
        in_shape = self._data.shape
        return _copying_shape_op(self, "UnsafeView", self._data.reshape(shape),
                                 lambda g, xp: xp.reshape(g, in_shape))
    if self.is_contiguous():
        return view(self, shape)
    in_shape = self._data.shape  # a view of a non-contiguous tensor: PyTorch's _reshape_alias
    return make_view(self, "ReshapeAlias", lambda a: a.reshape(shape),
                     lambda g, xp: xp.reshape(g, in_shape))


@tensor_op(tangent=dual.LINEAR)
def flatten(self, start_dim=0, end_dim=-1):
    if self.ndim == 0:
        return reshape(self, 1)
    start, end = self._dim(start_dim), self._dim(end_dim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    shape = self.shape
    # The product, not -1: with a size-0 dimension elsewhere, -1 would be ambiguous.
    return reshape(self, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


@tensor_op(tangent=dual.LINEAR)
def permute(self, *dims):
    _require_args("permute", "dims", dims)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if len(dims) != self.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {self.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(self._dim(d) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    inverse = tuple(np.argsort(dims))
    return make_view(self, "Permute", lambda a: a.transpose(dims),
                     lambda g, xp: xp.permute(g, inverse))


@tensor_op(tangent=dual.LINEAR)
def transpose(self, dim0, dim1):
    if self.ndim < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return make_view(self, "Transpose", lambda a: a, lambda g, xp: g)
    d0, d1 = self._dim(dim0), self._dim(dim1)
    return make_view(self, "Transpose", lambda a: a.swapaxes(d0, d1),
                     lambda g, xp: xp.swapaxes(g, d0, d1))


@tensor_op(tangent=dual.LINEAR)
def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    if self.ndim < 2:
        return make_view(self, "T", lambda a: a, lambda g, xp: g)
    return make_view(self, "T", lambda a: a.swapaxes(0, 1), lambda g, xp: xp.swapaxes(g, 0, 1))


@tensor_op(tangent=dual.LINEAR)
def squeeze(self, dim=None):
    shape = self._data.shape
    if dim is None:
        dims = tuple(k for k, n in enumerate(shape) if n == 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = tuple(k for k in (self._dim(d) for d in dims) if self.ndim and shape[k] == 1)
    return make_view(self, "Squeeze", lambda a: a.squeeze(dims),
                     lambda g, xp: xp.reshape(g, shape))


@tensor_op(tangent=dual.LINEAR)
def unsqueeze(self, dim):
    ndim = self.ndim + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim})")
    dim %= ndim
    return make_view(self, "Unsqueeze", lambda a: _unsqueezed(a, dim),
                     lambda g, xp: xp.squeeze_dims(g, (dim,)))


def _unsqueezed(a, dim):
    """``a`` with a new size-1 dim at ``dim``, of PyTorch's stride (that of the
    dim it goes before times its size; one element at the end): the order of
    dims a later result's layout follows (cat, clone) counts size-1 dims too."""
    out = a.reshape(a.shape[:dim] + (1,) + a.shape[dim:])
    stride = a.shape[dim] * a.strides[dim] if dim < a.ndim else a.itemsize
    kept = out.strides
    if kept[dim] == stride and kept[:dim] + kept[dim + 1:] == a.strides:  # the common case
        return out
    strides = list(a.strides)
    strides.insert(dim, stride)
    return backend_of(a).as_strided(a, out.shape, strides)


@tensor_op(tangent=dual.LINEAR)
def expand(self, *sizes):
    _require_args("expand", "size", sizes)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(nbgrad.{self.dtype.tensor_type}{{{list(shape)}}}, "
                           f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = [None] * len(sizes)
    for k in reversed(range(len(sizes))):  # PyTorch reports the last bad dimension
        s = sizes[k]
        old = shape[k - lead] if k >= lead else None
        if s == -1:
            if old is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {k}")
            s = old
        elif old is not None and old != s and old != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                               f"({old}) at non-singleton dimension {k}.  Target sizes: {list(sizes)}."
                               f"  Tensor sizes: {list(shape)}")
        target[k] = s
    target = tuple(target)
    backend = self._backend
    return make_view(self, "Expand", lambda a: _broadcast_view(backend, a, target),
                     lambda g, xp: xp.sum_to_shape(g, shape))


def _broadcast_view(backend, a, target):
    """A writeable view of ``a`` broadcast to ``target`` (expanded dims get
    stride 0), like PyTorch's expand; NumPy's broadcast_to is read-only."""
    lead = len(target) - a.ndim
    strides = [0] * lead + [0 if n == 1 and t != 1 else s
                            for n, t, s in zip(a.shape, target[lead:], a.strides)]
    return backend.as_strided(a, target, strides)


@tensor_op(function=False, tangent=dual.LINEAR)
def expand_as(self, other):
    return expand(self, other.shape)


@tensor_op("T", function=False, attribute=True, tangent=dual.LINEAR)
def _reversed_dims(self):
    """``t.T``: the dimensions in reverse order."""
    return permute(self, tuple(reversed(range(self.ndim))))


@tensor_op("mT", function=False, attribute=True, tangent=dual.LINEAR)
def _matrix_transpose(self):
    """``t.mT``: the last two dimensions swapped."""
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return transpose(self, -2, -1)


@tensor_op(function=False, tangent=dual.LINEAR)
def view_as(self, other):
    """``self.view(other.shape)``."""
    return view(self, other.shape)


@tensor_op(function=False, tangent=dual.LINEAR)
def reshape_as(self, other):
    """``self.reshape(other.shape)``."""
    return reshape(self, other.shape)


class AsStridedBackward(Node):
    """A view's history after its base was modified in place: the view is
    re-derived from the base's new history (PyTorch's AsStridedBackward)."""

    __slots__ = ("view_fn", "base_shape", "dtype")
    op_name = "AsStrided"

    def __init__(self, base, view_fn):
        super().__init__([base])
        self.view_fn = view_fn
        self.base_shape = base._data.shape
        self.dtype = base._data.dtype

    def backward(self, grad):
        if self.input_meta[0] is None:  # the base needs no gradient (a leaf view of a plain
            return [None]               # tensor), as in PyTorch
        return [ops_for(grad).scatter_into_view(self.base_shape, self.view_fn, grad)]


Tensor._view_replay = AsStridedBackward


# -- a view and its adjoint as ops of their own: the gradient of a view is
# zeros with the gradient written where the view looks, whose gradient is the
# view again. Backward formulas reach them through ``arrays.ops_for`` so a
# view's gradient can be differentiated to any order.
class ApplyViewBackward(Node):
    __slots__ = ("view_fn", "base_shape")
    op_name = "AsStrided"

    def __init__(self, source, view_fn, base_shape):
        super().__init__([source])
        self.view_fn, self.base_shape = view_fn, base_shape

    def backward(self, grad):
        return [ops_for(grad).scatter_into_view(self.base_shape, self.view_fn, grad)]


class ScatterIntoViewBackward(Node):
    __slots__ = ("view_fn", "base_shape")
    op_name = "AsStridedScatter"

    def __init__(self, source, view_fn, base_shape):
        super().__init__([source])
        self.view_fn, self.base_shape = view_fn, base_shape

    def backward(self, grad):
        return [ops_for(grad).apply_view(grad, self.view_fn, self.base_shape)]


def apply_view(self, view_fn, base_shape):
    """``view_fn`` (a view of raw arrays of ``base_shape``) applied to ``self``, copied."""
    out = ops_for(self._data).apply_view(self._data, view_fn, base_shape)
    node = ApplyViewBackward(self, view_fn, base_shape) if _recording(self) else None
    return Tensor._from_op(out, node, self.dtype, self._backend)


def scatter_into_view(self, view_fn, base_shape):
    """Zeros of ``base_shape`` with ``self`` written where ``view_fn`` looks."""
    out = ops_for(self._data).scatter_into_view(base_shape, view_fn, self._data)
    node = ScatterIntoViewBackward(self, view_fn, base_shape) if _recording(self) else None
    return Tensor._from_op(out, node, self.dtype, self._backend)


def _recording(t):
    return grad_mode.is_grad_enabled() and t.requires_grad


# -- as_strided: a view of the storage itself ---------------------------------------------------
def _storage_positions(shape, strides, offset):
    """The storage position of each element of a view, in C order (int64)."""
    index = np.full((), offset, np.int64)
    for n, stride in zip(shape, strides):
        index = index[..., None] + np.arange(n, dtype=np.int64) * stride
    return index.reshape(-1)


def _element_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def _storage_size(root):
    """Elements of storage behind a base's array (its data pointer is the storage's start)."""
    if root.size == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(root.shape, _element_strides(root)))


class AsStridedViewBackward(Node):
    """as_strided's backward: the gradient summed into the storage at the view's
    positions (overlapping elements add up), then read at the input's."""

    __slots__ = ("storage", "view_index", "input_index", "input_shape")
    op_name = "AsStrided"

    def __init__(self, source, storage, view_index, input_index):
        super().__init__([source])
        self.storage, self.view_index, self.input_index = storage, view_index, input_index
        self.input_shape = source._data.shape

    def backward(self, grad):
        xp = ops_for(grad)
        flat = xp.scatter_add_along((self.storage,), self.view_index, xp.reshape(grad, (-1,)), 0)
        return [xp.reshape(xp.gather_along(flat, self.input_index, 0), self.input_shape)]


def _sizes(name, value):
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        raise TypeError(f"as_strided(): argument '{name}' must be tuple of ints, but found "
                        f"{type(value).__name__}")
    return tuple(int(v) for v in value)


@tensor_op(tangent=dual.LINEAR)
def as_strided(input, size, stride, storage_offset=None):
    """as_strided(input, size, stride, storage_offset=None) -> Tensor

    A view of ``input``'s storage with the given ``size`` and ``stride`` (in
    elements), starting ``storage_offset`` elements into the storage (by
    default, where ``input`` starts). Elements may overlap; their gradients
    add up."""
    size, stride = _sizes("size", size), _sizes("stride", stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"as_strided: Negative sizes are not supported, got sizes: "
                           f"{list(size)}")
    root = input if input._base is None else input._base
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    storage = _storage_size(root._data)
    itemsize = input._data.itemsize
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > storage:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {needed * itemsize} are out of bounds for storage of size "
                           f"{storage * itemsize}")
    byte_strides = tuple(s * itemsize for s in stride)

    def view_fn(a):  # a: the base's array, whose data pointer starts the storage
        backend = backend_of(a)
        flat = backend.as_strided(a, (storage,), (itemsize,))[offset:]
        return backend.as_strided(flat, size, byte_strides)

    def node():
        backend = input._backend
        view_index = backend.asarray(_storage_positions(size, stride, offset))
        input_index = backend.asarray(_storage_positions(
            input._data.shape, _element_strides(input._data), input.storage_offset()))
        return AsStridedViewBackward(input, storage, view_index, input_index)
    return _view(input, view_fn(root._data), root, view_fn, node)
