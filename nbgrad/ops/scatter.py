"""Gathers and scatters along a dim (PyTorch's gather, scatter, scatter_add,
scatter_reduce, index_select/add/copy/fill, take, take_along_dim), masked
writes and selections (masked_fill, masked_select, masked_scatter) and the
positions of nonzero elements (nonzero, argwhere, one-argument where).

Every op runs on two backend functions, ``gather_along`` and
``scatter_along``, whose index arrays may be broadcast views: index_select's
1-D index becomes a gather's index broadcast over the other dims (stride 0),
take's a gather from the flattened input. Gradients are written once with
``ops_for``: gather and scatter-add into zeros are each other's adjoint,
zeroing at the indices is its own (``gather_raw``, ``scatter_add_new``,
``zero_along`` below, the taped forms of RawArrays' functions)."""
import numbers
import warnings

import numpy as np

from .. import dtypes
from ..tape import grad_mode
from ..tape.graph import Node, SavedTensor, SavedValue
from ..tape.version_counter import user_stacklevel
from ..tensor import Tensor
from . import dual, mutation
from .arrays import ops_for
from .elementwise import _TYPE_NAMES
from .registry import tensor_op


def _recording(*tensors):
    if not grad_mode.is_grad_enabled():
        return False
    for t in tensors:
        if t.__class__ is Tensor and t.requires_grad:
            return True
    return False


def _type_name(dtype):
    return _TYPE_NAMES.get(dtype.name, dtype.name.capitalize())


def _wrap(data, like, node=None):
    return Tensor._from_op(data, node, like.dtype, like._backend)


# ---------------------------------------------------------------- adjoint pairs
class GatherBackward(Node):
    """A gather's backward: the gradient added back where it was taken
    (repeated indices accumulate). ``flat``: taken from the flattened
    source (take, masked_select)."""

    __slots__ = ("axis", "shape", "flat", "_op_name")

    def __init__(self, source, indices, axis, op_name="Gather", flat=False, shape=None):
        super().__init__([source])
        self.saved = (SavedValue(indices),)
        self.axis, self.flat, self._op_name = axis, flat, op_name
        self.shape = source._data.shape if shape is None else shape

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        (indices,) = self.saved_values()
        xp = ops_for(grad)
        if self.flat:
            size = int(np.prod(self.shape, dtype=np.int64))
            out = xp.scatter_add_along((size,), indices, xp.reshape(grad, (-1,)), 0)
            return [xp.reshape(out, self.shape)]
        return [xp.scatter_add_along(self.shape, indices, grad, self.axis)]


def gather_raw(self, indices, axis, op_name="Gather"):
    """``self`` gathered at the raw index array ``indices`` along ``axis``; taped."""
    data = self._backend.gather_along(self._data, indices, axis)
    node = GatherBackward(self, indices, axis, op_name) if (
        self.requires_grad and grad_mode.is_grad_enabled()) else None
    return _wrap(data, self, node)


class ScatterAddNewBackward(Node):
    """``scatter_add_new``'s backward: the gradient gathered at the indices."""

    __slots__ = ("axis",)
    op_name = "ScatterAdd"

    def __init__(self, values, indices, axis):
        super().__init__([values])
        self.saved = (SavedValue(indices),)
        self.axis = axis

    def backward(self, grad):
        (indices,) = self.saved_values()
        return [ops_for(grad).gather_along(grad, indices, self.axis)]


def scatter_add_new(values, shape, indices, axis):
    """Zeros of ``shape`` with the Tensor ``values`` added at the raw
    ``indices`` along ``axis``; taped."""
    data = ops_for(values._data).scatter_add_along(shape, indices, values._data, axis)
    node = ScatterAddNewBackward(values, indices, axis) if _recording(values) else None
    return _wrap(data, values, node)


class ZeroAlongBackward(Node):
    """``zero_along``'s backward: itself."""

    __slots__ = ("axis",)
    op_name = "Scatter"

    def __init__(self, source, indices, axis):
        super().__init__([source])
        self.saved = (SavedValue(indices),)
        self.axis = axis

    def backward(self, grad):
        (indices,) = self.saved_values()
        return [ops_for(grad).zero_along(grad, indices, self.axis)]


def zero_along(self, indices, axis):
    """A copy of ``self`` with zeros at the raw ``indices`` along ``axis``; taped."""
    data = ops_for(self._data).zero_along(self._data, indices, axis)
    node = ZeroAlongBackward(self, indices, axis) if _recording(self) else None
    return _wrap(data, self, node)


# ---------------------------------------------------------------- checks
def _check_tensor(value, fn, name):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(value).__name__}")


def _index_dtype(index, message, kinds=("int64", "int32"), error=RuntimeError):
    if index.dtype.name not in kinds:
        raise error(message.format(type=_type_name(index.dtype)))


def _check_bounds(self, indices, axis, size, prefix="", error=RuntimeError):
    """PyTorch's message for the first index outside [0, size) along ``axis``."""
    if indices.size:
        bad = self._backend.first_out_of_range(indices, 0, size)
        if bad is not None:
            raise error(f"{prefix}index {bad} is out of bounds for dimension {axis} with size {size}")


def _same_device(self, *others):
    for t in others:
        if isinstance(t, Tensor) and t._backend is not self._backend:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                               f"two devices, {t.device} and {self.device}!")


def _shape(t):
    return t._data.shape if t._data.ndim else (1,)


def _along_checks(self, dim, index, fn, src=None):
    """gather's and scatter's checks of ``dim`` and ``index`` (shapes, dtype,
    bounds), in PyTorch's order; the axis."""
    data = self._data
    if (index.__class__ is Tensor and index.dtype is dtypes.int64 and data.ndim
            and index._backend is self._backend and index._data.shape == data.shape
            and (src is None or src.__class__ is Tensor and src.dtype is self.dtype
                 and src._backend is self._backend and src._data.shape == data.shape)):
        # The common call (index, and src, of self's shape): of the checks
        # below only the dim's and the bounds' can fail, and in this order.
        axis = self._dim(dim, fn)
        _check_bounds(self, index._data, axis, data.shape[axis])
        return axis
    axis = self._dim(dim, fn)
    _check_tensor(index, fn, "index")
    _same_device(self, index, src)
    _index_dtype(index, f"{fn}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src.dtype is not self.dtype:
        raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype")
    shape, ishape = _shape(self), _shape(index)
    if index._data.size:
        if len(ishape) != len(shape):
            raise RuntimeError("Index tensor must have the same number of dimensions as "
                               + ("input tensor" if fn == "gather" else "self tensor"))
        if isinstance(src, Tensor) and len(_shape(src)) != len(shape):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        for d, (n, m) in enumerate(zip(shape, ishape)):
            if d == axis:
                continue
            if fn == "gather" and m > n:
                raise RuntimeError(f"Size does not match at dimension {d} expected index "
                                   f"{list(ishape)} to be no larger than self {list(shape)} apart "
                                   f"from dimension {axis}")
        if fn != "gather":
            sshape = _shape(src) if isinstance(src, Tensor) else None
            if any(m > n for d, (n, m) in enumerate(zip(shape, ishape)) if d != axis) or (
                    sshape is not None and any(m > s for m, s in zip(ishape, sshape))):
                raise RuntimeError(
                    f"Expected index {list(ishape)} to be no larger than self {list(shape)} apart "
                    f"from dimension {axis}"
                    + (f" and to be no larger size than src {list(sshape)}" if sshape else ""))
        _check_bounds(self, index._data, axis, shape[axis])
    return axis


def _values_for(src, index):
    """The part of ``src`` a scatter reads: its leading ``index.shape`` corner."""
    data = src._data
    shape = index._data.shape
    if data.shape == shape:
        return data
    if data.ndim == 0:
        return data.reshape(shape)
    return data[tuple(slice(0, n) for n in shape)]


def _scalar(self, value, fn="scatter"):
    """A number written into ``self`` as a NumPy scalar of its dtype."""
    if isinstance(value, Tensor):
        value = value.item()
    if not isinstance(value, (numbers.Number, np.bool_)) or isinstance(value, complex):
        raise TypeError(f"{fn}(): argument 'value' must be Number, not {type(value).__name__}")
    dtypes.check_scalar(value, self.dtype)
    return self.dtype.numpy.type(value)


# ---------------------------------------------------------------- gather family
@tensor_op(tangent=dual.LINEAR, out=True)
def gather(input, dim, index, *, sparse_grad=False):
    """gather(input, dim, index, *, sparse_grad=False, out=None) -> Tensor

    Values of ``input`` along ``dim`` at ``index``: ``out[i][j] =
    input[index[i][j]][j]`` for dim 0 (and so on)."""
    _check_tensor(input, "gather", "input")
    axis = _along_checks(input, dim, index, "gather")
    return gather_raw(input, index._data, axis)


@tensor_op(tangent=dual.LINEAR)
def take_along_dim(input, indices, dim=None):
    """take_along_dim(input, indices, dim=None) -> Tensor

    ``input``'s values at ``indices`` along ``dim`` (broadcast against each
    other apart from ``dim``); with no ``dim``, of the flattened input."""
    _check_tensor(indices, "take_along_dim", "indices")
    if indices.dtype is not dtypes.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_type_name(indices.dtype)}")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    axis = input._dim(dim, "take_along_dim")
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number "
                           f"of dimensions, but got {input.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    shape_a, shape_i = list(_shape(input)), list(_shape(indices))
    shape_a[axis] = shape_i[axis] = 1
    common = list(np.broadcast_shapes(tuple(shape_a), tuple(shape_i)))
    ia, ii = list(common), list(common)
    ia[axis], ii[axis] = _shape(input)[axis], _shape(indices)[axis]
    if input.ndim:
        input = input.expand(*ia) if tuple(ia) != input.shape else input
        indices = indices.expand(*ii) if tuple(ii) != indices.shape else indices
    return gather(input, axis, indices)


@tensor_op(tangent=dual.LINEAR, out=True)
def index_select(input, dim, index):
    """index_select(input, dim, index, *, out=None) -> Tensor

    The entries of ``input`` along ``dim`` at the 1-D ``index``, a new tensor."""
    axis = input._dim(dim, "index_select")
    _check_tensor(index, "index_select", "index")
    _same_device(input, index)
    _index_dtype(index, "index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    size = _shape(input)[axis]
    raw = index._data.reshape(-1)
    if raw.size and input._backend.first_out_of_range(raw, 0, size) is not None:
        raise IndexError("index out of range in self")
    if input.ndim == 0:
        return gather_raw(input, raw, 0, "IndexSelect").reshape(index.shape)
    data = input._backend.index_select_along(input._data, raw, axis)
    node = None
    if input.requires_grad and grad_mode.is_grad_enabled():
        node = GatherBackward(input, _spread(input, raw, axis), axis, "IndexSelect")
    return _wrap(data, input, node)


def _spread(self, raw, axis, shape=None):
    """A 1-D index along ``axis`` as an index array of ``shape`` (self's with
    ``axis`` of the index's length): a broadcast view, stride 0 elsewhere."""
    backend = self._backend
    shape = list(_shape(self) if shape is None else shape)
    shape[axis] = raw.shape[0]
    lifted = raw.reshape((1,) * axis + (raw.shape[0],) + (1,) * (len(shape) - axis - 1))
    return backend.broadcast_to(lifted, tuple(shape))


@tensor_op(tangent=dual.LINEAR, out=True)
def take(input, index):
    """take(input, index) -> Tensor

    The elements of ``input`` at ``index``, read as if it were 1-D (negative
    indices count from the end); the result has ``index``'s shape."""
    _check_tensor(index, "take", "index")
    _same_device(input, index)
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_type_name(index.dtype)}")
    n = input.numel()
    raw = index._data
    backend = input._backend
    if raw.size:
        bad = backend.first_out_of_range(raw, -n, n)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")
        if backend.first_out_of_range(raw, 0, n) is not None:  # negative ones wrap
            host = backend.to_numpy(raw)
            raw = backend.asarray(np.where(host < 0, host + n, host))
    flat = input._data.reshape(-1) if input._data.flags.c_contiguous else \
        backend.ascontiguous(input._data).reshape(-1)
    data = backend.gather_along(flat, raw.reshape(-1), 0).reshape(index._data.shape)
    node = None
    if _recording(input):
        node = GatherBackward(input, raw.reshape(-1), 0, "Take", flat=True)
    return _wrap(data, input, node)


# ---------------------------------------------------------------- scatters
class ScatterBackward(Node):
    """scatter's (and index_copy's, index_fill's): zeros where it wrote for
    ``self``, the gradient there for ``src``; a written number: its sum there."""

    __slots__ = ("axis", "src_shape", "_op_name", "value_tensor")

    def __init__(self, self_, src, indices, axis, op_name="Scatter", value_tensor=False):
        super().__init__([self_] if src is None else [self_, src])
        self.saved = (SavedValue(indices),)
        self.axis, self._op_name, self.value_tensor = axis, op_name, value_tensor
        self.src_shape = None if src is None else src._data.shape

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        (indices,) = self.saved_values()
        xp = ops_for(grad)
        out = [xp.zero_along(grad, indices, self.axis) if self.needs_grad(0) else None]
        if self.src_shape is not None:
            out.append(_src_grad(self, xp, grad, indices) if self.needs_grad(1) else None)
        return out


def _src_grad(node, xp, grad, indices, scale=None):
    picked = xp.gather_along(grad, indices, node.axis)
    if scale is not None:
        picked = xp.scale(picked, scale)
    if node.value_tensor:  # a 0-d value written everywhere: the sum
        return xp.reshape(xp.reduce_sum(picked), node.src_shape)
    if tuple(indices.shape) != tuple(node.src_shape):
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index 1 - got "
                           f"{list(indices.shape)} but expected shape compatible with "
                           f"{list(node.src_shape)}")
    return picked


class ScatterAddBackward(Node):
    """scatter_add's (and index_add's): the gradient for ``self``, gathered
    at the indices (times ``alpha``) for ``src``."""

    __slots__ = ("axis", "src_shape", "_op_name", "alpha", "value_tensor")

    def __init__(self, self_, src, indices, axis, op_name="ScatterAdd", alpha=None):
        super().__init__([self_, src])
        self.saved = (SavedValue(indices),)
        self.axis, self._op_name, self.alpha = axis, op_name, alpha
        self.src_shape, self.value_tensor = src._data.shape, False

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        (indices,) = self.saved_values()
        xp = ops_for(grad)
        return [grad if self.needs_grad(0) else None,
                _src_grad(self, xp, grad, indices, self.alpha) if self.needs_grad(1) else None]


class NotImplementedBackward(Node):
    """An op whose derivative PyTorch does not implement (scatter with reduce=)."""

    __slots__ = ("what",)
    op_name = "NotImplemented"

    def __init__(self, inputs, what):
        super().__init__(inputs)
        self.what = what

    def name(self):
        return "NotImplemented"

    def backward(self, grad):
        raise RuntimeError(f"derivative for {self.what} is not implemented")


_SCATTER_REDUCE = {"add": "sum", "multiply": "prod"}
_DEPRECATED = ("The reduce argument of torch.scatter with Tensor src is deprecated and will be "
               "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
               "reduction options.")


def _scatter(self, dim, index, src, value, reduce, in_place):
    fn = "scatter_" if in_place else "scatter"
    if src is not None and value is not None:
        raise TypeError(f"{fn}() got multiple values for argument 'value'")
    if src is None:
        src = value
    if src is None:
        raise TypeError(f"{fn}() missing required argument 'src' (pos 3)")
    tensor_src = isinstance(src, Tensor)
    if in_place:
        mutation.check_inplace(self, tensor_src and src.requires_grad)
    axis = _along_checks(self, dim, index, "scatter", src if tensor_src else None)
    if reduce is not None:
        if reduce not in _SCATTER_REDUCE:
            raise RuntimeError("reduce argument must be either add or multiply.")
        if tensor_src:
            warnings.warn(_DEPRECATED, UserWarning, stacklevel=user_stacklevel())
    values = _values_for(src, index) if tensor_src else _scalar(self, src)
    raw = index._data
    op = None if reduce is None else _SCATTER_REDUCE[reduce]
    inputs = [self, src] if tensor_src else [self]

    def make_node():
        if reduce is not None:
            return NotImplementedBackward(inputs, "scatter with reduce")
        return ScatterBackward(self, src if tensor_src else None, raw, axis)
    if in_place:
        if tensor_src and self._backend.may_share_memory(values, self._data):
            values = self._backend.copy(values)  # read before the write
        return mutation.write(self, fn, lambda: self._backend.scatter_along(
            self._data, raw, values, axis, op), make_node,
            tensor_src and src.requires_grad, checked=True)
    data = self._backend.copy(self._data)
    self._backend.scatter_along(data, raw, values, axis, op)
    return _wrap(data, self, make_node() if _recording(*inputs) else None)


@tensor_op(tangent=dual.BY_VJP, out=True)
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """scatter(input, dim, index, src, *, reduce=None) -> Tensor

    A copy of ``input`` with ``src``'s values (or the number ``value``) written
    along ``dim`` at ``index``; ``reduce`` ("add", "multiply") combines them
    with what is there instead."""
    return _scatter(input, dim, index, src, value, reduce, False)


@tensor_op(function=False)
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """In-place :func:`scatter`."""
    return _scatter(self, dim, index, src, value, reduce, True)


def _scatter_add(self, dim, index, src, in_place):
    fn = "scatter_add_" if in_place else "scatter_add"
    _check_tensor(src, fn, "src")
    if in_place:
        mutation.check_inplace(self, src.requires_grad)
    axis = _along_checks(self, dim, index, "scatter", src)
    values, raw = _values_for(src, index), index._data

    def make_node():
        return ScatterAddBackward(self, src, raw, axis)
    if in_place:
        if self._backend.may_share_memory(values, self._data):
            values = self._backend.copy(values)
        return mutation.write(self, fn, lambda: self._backend.scatter_along(
            self._data, raw, values, axis, "sum"), make_node, src.requires_grad, checked=True)
    data = self._backend.copy(self._data)
    self._backend.scatter_along(data, raw, values, axis, "sum")
    return _wrap(data, self, make_node() if _recording(self, src) else None)


@tensor_op(tangent=dual.LINEAR, out=True)
def scatter_add(input, dim, index, src):
    """scatter_add(input, dim, index, src) -> Tensor

    A copy of ``input`` with ``src``'s values added along ``dim`` at
    ``index`` (repeated indices accumulate)."""
    return _scatter_add(input, dim, index, src, False)


@tensor_op(function=False, tangent=dual.LINEAR_IN_PLACE)
def scatter_add_(self, dim, index, src):
    """In-place :func:`scatter_add`."""
    return _scatter_add(self, dim, index, src, True)


# -- scatter_reduce: sum, prod, mean, amax, amin
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce, dtype):
    """The value a position starts from when ``include_self`` is False."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def scatter_reduce_raw(backend, a, indices, values, axis, reduce, include_self):
    """A new array: ``a`` with ``values`` combined by ``reduce`` at
    ``indices`` along ``axis``; and, for "mean", the counts divided by (of
    ``a``'s dtype; 1 where nothing was counted)."""
    out = backend.copy(a)
    if not include_self:
        backend.scatter_along(out, indices, a.dtype.type(_identity(reduce, a.dtype)), axis)
    if reduce != "mean":
        backend.scatter_along(out, indices, values, axis, reduce)
        return out, None
    backend.scatter_along(out, indices, values, axis, "sum")
    counts = backend.full(a.shape, 1, a.dtype)
    if not include_self:
        backend.scatter_along(counts, indices, a.dtype.type(0), axis)
    backend.scatter_along(counts, indices, a.dtype.type(1), axis, "sum")
    if not include_self:  # untouched positions count 1 (their own value)
        host = backend.to_numpy(counts)
        if not host.all():
            counts = backend.asarray(np.where(host == 0, host.dtype.type(1), host))
    if a.dtype.kind == "f":
        out = ops_for(out).run("div", out, counts, out=out)
    else:  # integers: PyTorch divides with rounding toward minus infinity
        host = backend.to_numpy(out) // backend.to_numpy(counts)
        out = backend.asarray(host.astype(a.dtype, copy=False))
    return out, counts


class ScatterReduceBackward(Node):
    """scatter_reduce's backward, PyTorch's scatter_reduce_backward: sum and
    mean pass (divided) gradients; amax/amin share it evenly among the
    elements that equal the result; prod divides the result's gradient by
    each factor (a lone zero factor: the product of the others)."""

    __slots__ = ("axis", "reduce", "include_self", "src_shape")
    op_name = "ScatterReduce"

    def __init__(self, self_, src, indices, axis, reduce, include_self, counts, saved_self):
        super().__init__([self_, src])
        self.axis, self.reduce, self.include_self = axis, reduce, include_self
        self.src_shape = src._data.shape
        values = reduce in ("prod", "amax", "amin")
        self.saved = (SavedValue(indices), None if counts is None else SavedValue(counts),
                      SavedTensor(saved_self) if values else None,
                      SavedTensor(src) if values else None, None)

    def after_write(self, output):
        if self.reduce in ("prod", "amax", "amin"):
            self.saved = (*self.saved[:4], SavedTensor(output, output_of=self.op_name))

    def backward(self, grad):
        xp = ops_for(grad)
        indices, counts, self_v, src_v, result = self.saved_values(xp.graph)
        axis, reduce = self.axis, self.reduce
        if reduce == "sum":
            g_self, g_src = grad, xp.gather_along(grad, indices, axis)
        elif reduce == "mean":
            scaled = xp.run("div", grad, xp.constant(counts))
            g_self, g_src = scaled, xp.gather_along(scaled, indices, axis)
        elif reduce in ("amax", "amin"):
            value = xp.gather_along(result, indices, axis)
            self_is = xp.cast(self_v == result, grad.dtype)
            src_is = xp.cast(src_v == value, grad.dtype)
            n = xp.run("add", xp.scatter_add_along(tuple(self_is.shape), indices, src_is, axis),
                       self_is)
            shared = xp.run("div", grad, n)
            g_self = xp.run("mul", shared, self_is)
            g_src = xp.run("mul", xp.gather_along(shared, indices, axis), src_is)
        else:
            g_self, g_src = self._prod_grads(xp, grad, indices, self_v, src_v, result)
        if not self.include_self:
            g_self = xp.zero_along(g_self, indices, axis)
        return [g_self if self.needs_grad(0) else None,
                g_src if self.needs_grad(1) else None]

    def _prod_grads(self, xp, grad, indices, self_v, src_v, result):
        axis, dtype = self.axis, grad.dtype

        def ones_at(mask, x):  # x with ones where mask holds
            return xp.cast(xp.where(mask, 1.0, x), dtype)
        self_zero = self_v == 0
        one_self = ones_at(self_zero, self_v)
        masked_result = xp.scatter_reduce_along(one_self, indices, src_v, axis, "prod",
                                                self.include_self)
        g_self = xp.run("div", xp.run("mul", grad, masked_result), one_self)
        src_zero = src_v == 0
        zeros_per = xp.gather_along(xp.scatter_add_along(
            tuple(self_v.shape), indices, xp.cast(src_zero, dtype), axis), indices, axis)
        single = (xp.cast(src_zero, dtype) * zeros_per) == 1  # a zero, alone at its place
        if xp.graph and bool((zeros_per > 1).any()):
            raise RuntimeError("Double backward is unsupported for src when >1 zeros in src are "
                               "scattered to the same position. This is because the gradient "
                               "would be zero in that case.")
        masked_src_result = xp.scatter_reduce_along(self_v, indices, ones_at(single, src_v), axis,
                                                    "prod", self.include_self)
        g_src = xp.where(single,
                         xp.gather_along(xp.run("mul", grad, masked_src_result), indices, axis),
                         xp.run("div", xp.gather_along(xp.run("mul", grad, result), indices, axis),
                                ones_at(src_zero, src_v)))
        return g_self, g_src


def _scatter_reduce(self, dim, index, src, reduce, include_self, in_place):
    fn = "scatter_reduce_" if in_place else "scatter_reduce"
    _check_tensor(src, fn, "src")
    if type(reduce) is not str:
        raise TypeError(f"{fn}(): argument 'reduce' (position 4) must be str, not "
                        f"{type(reduce).__name__}")
    if in_place:
        mutation.check_inplace(self, src.requires_grad)
    axis = _along_checks(self, dim, index, "scatter", src)
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    values, raw, backend = _values_for(src, index), index._data, self._backend
    out, counts = scatter_reduce_raw(backend, self._data, raw, values, axis, reduce, include_self)
    record = _recording(self, src)
    # (an in-place op's formula reads self as it was: a copy, as PyTorch's original_self)
    saved_self = self.clone() if in_place and record and reduce in ("prod", "amax", "amin") \
        else self

    def make_node():
        return ScatterReduceBackward(self, src, raw, axis, reduce, include_self, counts, saved_self)
    if in_place:
        return mutation.write(self, fn, lambda: backend.write_into_view(
            self._data, lambda a: a, out), make_node, src.requires_grad, checked=True)
    node = make_node() if record else None
    result = _wrap(out, self, node)
    if node is not None:
        node.after_write(result)
    return result


def scatter_reduce_new(self, indices, src, axis, reduce, include_self):
    """``scatter_reduce`` with a raw index array (a formula's); taped."""
    index = Tensor._wrap(indices, dtypes.from_numpy_dtype(indices.dtype), self._backend)
    return _scatter_reduce(self, axis, index, src, reduce, include_self, False)


@tensor_op(tangent=dual.BY_VJP, out=True)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor

    A copy of ``input`` with ``src``'s values combined along ``dim`` at
    ``index`` by ``reduce`` ("sum", "prod", "mean", "amax", "amin"), with
    ``input``'s own value among them unless ``include_self`` is False."""
    return _scatter_reduce(input, dim, index, src, reduce, include_self, False)


@tensor_op(function=False)
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In-place :func:`scatter_reduce`."""
    return _scatter_reduce(self, dim, index, src, reduce, include_self, True)
# ---------------------------------------------------------------- index_add/copy/fill
def _index_checks(self, dim, index, source, fn):
    """The axis and the index as a 1-D raw array, after index_add/index_copy's checks."""
    axis = self._dim(dim, fn)
    _check_tensor(index, fn, "index")
    _same_device(self, index, source)
    if fn.startswith("index_copy"):
        if index.dtype is not dtypes.int64:
            raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                               f"{_type_name(index.dtype)}")
        if index.ndim > 1:
            raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got "
                             f"{index.ndim})")
    else:
        _index_dtype(index, "index_add_(): Expected dtype int32/int64 for index but got: {type}")
        if index.ndim > 1:
            raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                             f"{index.ndim} with type: {_type_name(index.dtype)} and size: "
                             f"{list(index.shape)}")
    raw = index._data.reshape(-1)
    n = raw.shape[0]
    shape, sshape = _shape(self), _shape(source)
    if fn.startswith("index_copy"):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                               f"but got (self) {_type_name(self.dtype)} and (source) "
                               f"{_type_name(source.dtype)}")
        if n != sshape[axis]:
            raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                             f"source.size(dim) ({sshape[axis]})")
        for d, (a, b) in enumerate(zip(shape, sshape)):
            if d != axis and a != b:
                raise RuntimeError(f"index_copy_(): Source/destination tensor must have same "
                                   f"slice shapes. Destination slice shape: {a} at dimension {d} "
                                   f"and source slice shape: {b} at dimension {d}.")
        _check_bounds(self, raw, axis, shape[axis], "index_copy_(): ", IndexError)
    else:
        if source.dtype is not self.dtype:
            raise RuntimeError(f"index_add_(): self ({_type_name(self.dtype)}) and source "
                               f"({_type_name(source.dtype)}) must have the same scalar type")
        if n != sshape[axis]:
            raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                               f"source.size(dim): ({sshape[axis]}), for dim: {axis}")
        if len(shape) != len(sshape) or any(a != b for d, (a, b) in enumerate(zip(shape, sshape))
                                            if d != axis):
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                               f"specified dimension. Got self.shape = {list(self.shape)} "
                               f"source.shape = {list(source.shape)}")
        _check_bounds(self, raw, axis, shape[axis])
    return axis, raw


def _index_write(self, dim, index, source, alpha, fn, in_place):
    """index_add (``alpha`` not None) or index_copy, in place or on a copy."""
    _check_tensor(source, fn, "source")
    if in_place:
        mutation.check_inplace(self, source.requires_grad)
    axis, raw = _index_checks(self, dim, index, source, fn)
    backend = self._backend
    spread = _spread(self, raw, axis)
    values = source._data.reshape(spread.shape)
    adding = alpha is not None
    if adding and alpha != 1:
        dtypes.check_scalar(alpha, self.dtype)
        values = ops_for(values).scale(values, alpha)
    elif in_place and backend.may_share_memory(values, self._data):
        values = backend.copy(values)
    op = "sum" if adding else None

    def make_node():
        if adding:
            return ScatterAddBackward(self, source, spread, axis, "IndexAdd",
                                      None if alpha == 1 else alpha)
        return ScatterBackward(self, source, spread, axis, "IndexCopy")
    if in_place:
        return mutation.write(self, fn, lambda: backend.scatter_along(
            self._data if self._data.ndim else self._data.reshape(1), spread, values, axis, op),
            make_node, source.requires_grad, checked=True)
    data = backend.copy(self._data)
    backend.scatter_along(data if data.ndim else data.reshape(1), spread, values, axis, op)
    return _wrap(data, self, make_node() if _recording(self, source) else None)


@tensor_op(tangent=dual.BY_VJP, out=True)
def index_add(input, dim, index, source, *, alpha=1):
    """index_add(input, dim, index, source, *, alpha=1) -> Tensor

    A copy of ``input`` with ``alpha * source`` added along ``dim`` at the
    1-D ``index`` (repeated indices accumulate)."""
    return _index_write(input, dim, index, source, alpha, "index_add", False)


@tensor_op(function=False)
def index_add_(self, dim, index, source, *, alpha=1):
    """In-place :func:`index_add`."""
    return _index_write(self, dim, index, source, alpha, "index_add_", True)


@tensor_op(tangent=dual.BY_VJP, out=True)
def index_copy(input, dim, index, source):
    """index_copy(input, dim, index, source) -> Tensor

    A copy of ``input`` with ``source``'s entries written along ``dim`` at
    the 1-D ``index``."""
    return _index_write(input, dim, index, source, None, "index_copy", False)


@tensor_op(function=False)
def index_copy_(self, dim, index, source):
    """In-place :func:`index_copy`."""
    return _index_write(self, dim, index, source, None, "index_copy_", True)


def _index_fill(self, dim, index, value, in_place):
    fn = "index_fill_" if in_place else "index_fill"
    value_tensor = isinstance(value, Tensor)
    if value_tensor and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if in_place:
        mutation.check_inplace(self, value_tensor and value.requires_grad)
    axis = self._dim(dim, fn)
    _check_tensor(index, fn, "index")
    _same_device(self, index)
    _index_dtype(index, "index_fill_(): Expected dtype int64 for index.", ("int64",), IndexError)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    raw = index._data.reshape(-1)
    size = _shape(self)[axis]
    if raw.size:
        bad = self._backend.first_out_of_range(raw, -size, size)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {axis} with size {size}")
        if self._backend.first_out_of_range(raw, 0, size) is not None:  # negative ones wrap
            host = self._backend.to_numpy(raw)
            raw = self._backend.asarray(np.where(host < 0, host + size, host))
    number = _scalar(self, value, fn)
    spread = _spread(self, raw, axis)
    backend = self._backend
    grad_value = value_tensor and value.requires_grad

    def make_node():
        return ScatterBackward(self, value if value_tensor else None, spread, axis, "IndexFill",
                               value_tensor=value_tensor)

    def fill(data):
        backend.scatter_along(data if data.ndim else data.reshape(1), spread, number, axis)
    if in_place:
        return mutation.write(self, fn, lambda: fill(self._data), make_node, grad_value,
                              checked=True)
    data = backend.copy(self._data)
    fill(data)
    return _wrap(data, self, make_node() if _recording(self, value) else None)


@tensor_op(tangent=dual.BY_VJP)
def index_fill(input, dim, index, value):
    """index_fill(input, dim, index, value) -> Tensor

    A copy of ``input`` with ``value`` written along ``dim`` at the 1-D ``index``."""
    return _index_fill(input, dim, index, value, False)


@tensor_op(function=False)
def index_fill_(self, dim, index, value):
    """In-place :func:`index_fill`."""
    return _index_fill(self, dim, index, value, True)


# ---------------------------------------------------------------- masked ops
class MaskedFillBackward(Node):
    """masked_fill's: the gradient where the mask is False for ``self``; the
    sum where it is True for a 0-d tensor value."""

    __slots__ = ()
    op_name = "MaskedFill"

    def __init__(self, self_, value, mask):
        super().__init__([self_] if value is None else [self_, value])
        self.saved = (SavedValue(mask),)

    def backward(self, grad):
        (mask,) = self.saved_values()
        xp = ops_for(grad)
        mask = xp.constant(mask)
        out = [xp.where(mask, 0, grad) if self.needs_grad(0) else None]
        if len(self.next_edges) > 1:
            out.append(xp.reshape(xp.reduce_sum(xp.where(mask, grad, 0)), ())
                       if self.needs_grad(1) else None)
        return out


def _masked_fill(self, mask, value, in_place):
    fn = "masked_fill_" if in_place else "masked_fill"
    _check_tensor(mask, fn, "mask")
    value_tensor = isinstance(value, Tensor)
    if value_tensor and value.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if in_place:
        mutation.check_inplace(self, value_tensor and value.requires_grad)
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask.dtype).lower()}")
    _same_device(self, mask)
    number = _scalar(self, value, fn)
    backend = self._backend
    try:
        shape = np.broadcast_shapes(self._data.shape, mask._data.shape)
    except ValueError:
        shape = None
    if shape is None or (in_place and shape != self._data.shape):
        raise RuntimeError(f"The size of tensor a ({self.shape[-1] if self.ndim else 1}) must "
                           f"match the size of tensor b ({mask.shape[-1] if mask.ndim else 1}) at "
                           f"non-singleton dimension {max(self.ndim, mask.ndim) - 1}")
    raw_mask = mask._data if mask._data.shape == shape else backend.broadcast_to(mask._data, shape)
    source = self._data if self._data.shape == shape else backend.broadcast_to(self._data, shape)
    out = backend.where(raw_mask, number, source)
    if out.dtype != self.dtype.numpy:
        out = backend.cast(out, self.dtype.numpy)

    def make_node():
        return MaskedFillBackward(self, value if value_tensor else None, raw_mask)
    if in_place:
        return mutation.write(self, fn, lambda: backend.write_into_view(
            self._data, lambda a: a, out), make_node, value_tensor and value.requires_grad,
            checked=True)
    return _wrap(out, self, make_node() if _recording(self, value) else None)


@tensor_op(tangent=dual.BY_VJP)
def masked_fill(input, mask, value):
    """masked_fill(input, mask, value) -> Tensor

    A copy of ``input`` with ``value`` where the bool ``mask`` (broadcast) is True."""
    return _masked_fill(input, mask, value, False)


@tensor_op(function=False)
def masked_fill_(self, mask, value):
    """In-place :func:`masked_fill`."""
    return _masked_fill(self, mask, value, True)


def _flat_positions(backend, mask):
    """The C-order positions where a raw bool ``mask`` is True, int64 (1-D)."""
    return backend.nonzero(backend.ascontiguous(mask).reshape(-1)).reshape(-1)


def _broadcast_pair(self, mask, what):
    backend = self._backend
    try:
        shape = np.broadcast_shapes(self._data.shape, mask._data.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({self.shape[-1]}) must match the size of tensor "
                           f"b ({mask.shape[-1]}) at non-singleton dimension "
                           f"{max(self.ndim, mask.ndim) - 1}") from None
    data = self._data if self._data.shape == shape else backend.broadcast_to(self._data, shape)
    raw_mask = mask._data if mask._data.shape == shape else backend.broadcast_to(mask._data, shape)
    return shape, data, raw_mask


@tensor_op(tangent=dual.LINEAR, out=True)
def masked_select(input, mask):
    """masked_select(input, mask, *, out=None) -> Tensor

    A new 1-D tensor of ``input``'s elements where the bool ``mask`` (both
    broadcast) is True, in C order."""
    _check_tensor(mask, "masked_select", "mask")
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _same_device(input, mask)
    backend = input._backend
    shape, data, raw_mask = _broadcast_pair(input, mask, "masked_select")
    positions = _flat_positions(backend, raw_mask)
    flat = backend.ascontiguous(data).reshape(-1)
    out = backend.gather_along(flat, positions, 0)
    node = None
    if _recording(input):
        node = GatherBackward(input, positions, 0, "MaskedSelect", flat=True, shape=shape)
    return _wrap(out, input, node)


class MaskedScatterBackward(Node):
    """masked_scatter's: the gradient where the mask is False for ``self``;
    for ``source``, the gradient's masked elements in its first places."""

    __slots__ = ("source_shape",)
    op_name = "MaskedScatter"

    def __init__(self, self_, source, mask, positions):
        super().__init__([self_, source])
        self.saved = (SavedValue(mask), SavedValue(positions))
        self.source_shape = source._data.shape

    def backward(self, grad):
        mask, positions = self.saved_values()
        xp = ops_for(grad)
        out = [xp.where(xp.constant(mask), 0, grad) if self.needs_grad(0) else None]
        if self.needs_grad(1):
            picked = xp.gather_along(xp.reshape(grad, (-1,)), positions, 0)
            size = int(np.prod(self.source_shape, dtype=np.int64))
            first = self.backend_arange(grad, positions.shape[0])
            out.append(xp.reshape(xp.scatter_add_along((size,), first, picked, 0),
                                  self.source_shape))
        else:
            out.append(None)
        return out

    @staticmethod
    def backend_arange(grad, n):
        from ..backends import backend_of
        backend = backend_of(grad._data if isinstance(grad, Tensor) else grad)
        return backend.asarray(np.arange(n, dtype=np.int64))


def _masked_scatter(self, mask, source, in_place):
    fn = "masked_scatter_" if in_place else "masked_scatter"
    _check_tensor(mask, fn, "mask")
    _check_tensor(source, fn, "source")
    if in_place:
        mutation.check_inplace(self, source.requires_grad)
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_type_name(self.dtype)} and {_type_name(source.dtype)}")
    _same_device(self, mask, source)
    backend = self._backend
    shape, data, raw_mask = _broadcast_pair(self, mask, fn)
    if in_place and shape != self._data.shape:
        raise RuntimeError(f"masked_scatter_: expected mask to be broadcastable to self's shape "
                           f"{list(self.shape)}")
    positions = _flat_positions(backend, raw_mask)
    count = positions.shape[0]
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    values = backend.ascontiguous(source._data).reshape(-1)[:count]
    if in_place and backend.may_share_memory(values, self._data):
        values = backend.copy(values)

    def write(flat):
        backend.scatter_along(flat, positions, values, 0)

    def make_node():
        return MaskedScatterBackward(self, source, raw_mask, positions)
    if in_place:
        def kernel():
            if self._data.flags.c_contiguous:
                write(self._data.reshape(-1))
            else:
                flat = backend.copy(self._data).reshape(-1)
                write(flat)
                backend.write_into_view(self._data, lambda a: a, flat.reshape(shape))
        return mutation.write(self, fn, kernel, make_node, source.requires_grad, checked=True)
    out = backend.copy(backend.ascontiguous(data)) if data is self._data else \
        backend.ascontiguous(data)
    if out is data:
        out = backend.copy(data)
    write(out.reshape(-1))
    return _wrap(out, self, make_node() if _recording(self, source) else None)


@tensor_op(tangent=dual.BY_VJP)
def masked_scatter(input, mask, source):
    """masked_scatter(input, mask, source) -> Tensor

    A copy of ``input`` with ``source``'s first elements, in order, written
    where the bool ``mask`` (broadcast) is True."""
    return _masked_scatter(input, mask, source, False)


@tensor_op(function=False)
def masked_scatter_(self, mask, source):
    """In-place :func:`masked_scatter`."""
    return _masked_scatter(self, mask, source, True)


# ---------------------------------------------------------------- positions
@tensor_op(out=True)
def nonzero(input, *, as_tuple=False):
    """nonzero(input, *, out=None, as_tuple=False) -> Tensor or tuple of Tensors

    The coordinates of ``input``'s nonzero elements: a (count, ndim) int64
    tensor, or with ``as_tuple`` one 1-D tensor per dim."""
    backend = input._backend
    coords = backend.nonzero(input._data)
    if not as_tuple:
        return Tensor._wrap(coords, dtypes.int64, backend)
    if input.ndim == 0:  # as a 1-D tensor of one element, as PyTorch
        coords = backend.nonzero(input._data.reshape(1))
    return tuple(Tensor._wrap(backend.ascontiguous(coords[:, d]), dtypes.int64, backend)
                 for d in range(max(input.ndim, 1)))


@tensor_op()
def argwhere(input):
    """argwhere(input) -> Tensor

    The coordinates of ``input``'s nonzero elements, (count, ndim) int64."""
    return nonzero(input)
