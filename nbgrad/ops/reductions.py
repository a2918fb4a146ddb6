"""Reductions (sum, mean, max, min) and the softmax family. Results are C
order whatever the input's layout, as PyTorch's (NumPy's follow the input)."""
import builtins
import collections
import numbers

import numpy as np

from .. import dtypes
from ..tape import grad_mode
from ..tape.graph import Node, SavedTensor, SavedValue
from ..backends import backend_of, layout
from ..tensor import Tensor
from . import arrays
from .arrays import ops_for
from . import dual
from .registry import tensor_op


def _return_type(name, fields=("values", "indices")):
    """Named results (``values, indices`` unless ``fields`` says otherwise),
    printed as PyTorch prints its return_types."""
    class ReturnType(collections.namedtuple(name, fields)):
        __slots__ = ()

        def __repr__(self):
            body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
            return f"nbgrad.return_types.{name}(\n{body})"

    ReturnType.__name__ = ReturnType.__qualname__ = name
    return ReturnType


MaxResult, MinResult = _return_type("max"), _return_type("min")


def _check_keepdim(keepdim, fn):
    if type(keepdim) is not bool:  # PyTorch refuses even 0, 1 and NumPy bools
        raise TypeError(f"{fn}(): argument 'keepdim' must be bool, not "
                        f"{dtypes.type_name(keepdim)}")


def _axes(self, dim, fn="sum", keepdim=False, nonempty=False):
    """Reduced axes; ``None`` and an empty tuple mean all of them, as in PyTorch.
    ``dim`` and ``keepdim`` are checked here for every reduction ``fn``;
    ``nonempty`` (amax, amin): an empty tensor's reduced dims must not be of
    size 0, checked before duplicates are, as PyTorch does."""
    _check_keepdim(keepdim, fn)
    if type(dim) is int:  # the common case, with the least Python around it
        axis = self._dim(dim, fn)  # (checked on a 0-d tensor too: it takes -1 and 0)
        if nonempty and self._data.size == 0:
            _empty_reduction_check(self, (dim,), fn)
        return (axis,) if self.ndim else ()
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if dim is None or not dims:
        if nonempty:
            _empty_reduction_check(self, None, fn)
        return tuple(range(self.ndim))
    for k, d in enumerate(dims):
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            if dims is dim:
                raise TypeError(f"{fn}(): argument 'dim' failed to unpack the object at pos "
                                f"{k + 1} with error \"type must be tuple of ints,but got "
                                f"{dtypes.type_name(d)}\"")
            raise TypeError(f"{fn}(): argument 'dim' must be int or tuple of ints, not "
                            f"{dtypes.type_name(d)}")
    if nonempty:
        _empty_reduction_check(self, dims, fn)
    axes = tuple(sorted(self._dim(d, fn) for d in dims))
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    return axes if self.ndim else ()


def _kept_shape(shape, axes):
    return tuple(1 if k in axes else n for k, n in enumerate(shape))


def _recording(self):
    return grad_mode.is_grad_enabled() and self.requires_grad


class SumBackward(Node):
    __slots__ = ("shape", "kept", "scale")
    op_name = "Sum"

    def __init__(self, source, axes, scale=None, op_name=None):
        super().__init__([source])
        self.shape = source._data.shape
        self.kept = _kept_shape(self.shape, axes)
        self.scale = scale  # 1/n for mean

    def backward(self, grad):
        xp = ops_for(grad)
        grad = xp.reshape(grad, self.kept)
        if self.scale is not None:
            grad = xp.scale(grad, self.scale)
        return [xp.broadcast_to(grad, self.shape)]


class MeanBackward(SumBackward):
    __slots__ = ()
    op_name = "Mean"


@tensor_op(tangent=dual.LINEAR, out=True)
def sum(self, dim=None, keepdim=False, dtype=None):
    """sum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The sum over ``dim`` (an int or a tuple of ints; all dims when None)."""
    axes = _axes(self, dim, "sum", keepdim)
    dtype = dtypes.to_dtype(dtype, "sum") or (
        self.dtype if self.dtype.is_floating_point else dtypes.int64)
    data = layout.c_order(self._backend, self._backend.reduce_sum(self._data, axes, keepdim,
                                                                   dtype.numpy))
    node = SumBackward(self, axes) if _recording(self) and dtype.is_floating_point else None
    return Tensor._from_op(data, node, dtype, self._backend)


@tensor_op(tangent=dual.LINEAR, out=True)
def mean(self, dim=None, keepdim=False, dtype=None):
    which = "Input" if dtype is None else "Optional"
    axes = _axes(self, dim, "mean", keepdim)
    dtype = dtypes.to_dtype(dtype, "mean") or self.dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either a "
                           f"floating point or complex dtype. Got: {dtype.tensor_type[:-6]}")
    backend = self._backend
    count = int(np.prod([self._data.shape[a] for a in axes]))
    data = layout.c_order(backend, backend.reduce_sum(self._data, axes, keepdim, dtype.numpy))
    if count:
        data /= data.dtype.type(count)  # in place: a 0-d result stays an array
    else:
        data = backend.full(data.shape, np.nan, data.dtype)
    node = MeanBackward(self, axes, 1.0 / count if count else np.nan) if _recording(self) else None
    return Tensor._from_op(data, node, dtype, backend)


class ExtremumBackward(Node):
    """Whole-tensor max/min and amax/amin: tied values share the gradient
    evenly (per reduced slice), as in PyTorch; a NaN result sends it to the NaNs."""

    __slots__ = ("_op_name", "axes", "kept")

    def __init__(self, source, result, op_name, axes):
        super().__init__([source])
        self.save(source, result)
        self._op_name = op_name
        self.axes = axes
        self.kept = _kept_shape(source._data.shape, axes)

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        source, result = self.saved_values(xp.graph)
        result, grad = xp.reshape(result, self.kept), xp.reshape(grad, self.kept)
        # The masks and counts are comparisons (constants, even when taped).
        if self._op_name in ("Max", "Min"):  # evenly_distribute_backward
            value = result.item()  # one element
            mask = (source != source) if value != value else source == result
            count = xp.reduce_sum(mask, None, False, grad.dtype)
            return [xp.where(mask, grad / count, 0)]
        mask = source == result  # scale_grad_by_count: a NaN slice gets NaN
        count = xp.reduce_sum(mask, self.axes, True, grad.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            # asarray: NumPy's arithmetic on 0-d arrays gives scalars, which the engine cannot add into
            return [xp.asarray(grad / count * xp.cast(mask, grad.dtype))]


class ExtremumDimBackward(Node):
    """max/min along a dim: the gradient goes to the selected index."""

    __slots__ = ("dim", "shape", "keepdim", "_op_name")

    def __init__(self, source, indices, dim, keepdim, op_name):
        super().__init__([source])
        self.saved = (SavedValue(indices),)  # freed after backward, as PyTorch's
        self.dim, self.keepdim = dim, keepdim
        self.shape = source._data.shape
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        (indices,) = self.saved_values()  # a raw index array, in either backward
        if not self.shape:  # a 0-d input: its only element was selected
            return [xp.reshape(grad, ())]
        if not self.keepdim:
            indices = xp.backend.expand_dims(indices, self.dim)
            grad = xp.expand_dims(grad, self.dim)
        return [xp.put_along(self.shape, indices, grad, self.dim)]


# -- max(dim)'s gradient as ops of their own, each the other's gradient: a
# scatter (zeros with values put along an axis) and a gather (values taken
# along an axis), as PyTorch's value_selecting_reduction_backward.
class ScatterBackward(Node):
    """``put_along``'s backward: the values where they were put."""

    __slots__ = ("axis",)
    op_name = "Scatter"

    def __init__(self, values, indices, axis):
        super().__init__([values])
        self.saved = (SavedValue(indices),)
        self.axis = axis

    def backward(self, grad):
        (indices,) = self.saved_values()
        return [ops_for(grad).take_along_axis(grad, indices, self.axis)]


class GatherBackward(Node):
    """``take_along``'s backward: the gradient put back where it was taken
    (the indices pick distinct elements)."""

    __slots__ = ("axis", "shape")
    op_name = "Gather"

    def __init__(self, source, indices, axis):
        super().__init__([source])
        self.saved = (SavedValue(indices),)
        self.axis, self.shape = axis, source._data.shape

    def backward(self, grad):
        (indices,) = self.saved_values()
        return [ops_for(grad).put_along(self.shape, indices, grad, self.axis)]


def put_along(values, shape, indices, axis):
    """Zeros of ``shape`` with the Tensor ``values`` put at ``indices`` (a raw
    index array picking distinct elements) along ``axis``; taped."""
    data = ops_for(values._data).put_along(shape, indices, values._data, axis)
    node = ScatterBackward(values, indices, axis) if _recording(values) else None
    return Tensor._from_op(data, node, values.dtype, values._backend)


def take_along(self, indices, axis):
    """``self``'s values at ``indices`` (a raw index array) along ``axis``; taped."""
    data = self._backend.take_along_axis(self._data, indices, axis)
    node = GatherBackward(self, indices, axis) if _recording(self) else None
    return Tensor._from_op(data, node, self.dtype, self._backend)


def _empty_reduction_check(self, dims, name):
    """PyTorch's zero_numel_check_dims: an empty tensor's reduction names its
    ``dims`` (None: all, refused), none of size 0; each is reported as given."""
    if self._data.size == 0:
        if dims is None:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                               "== 0. Specify the reduction dim with the 'dim' argument.")
        for d in dims:
            if self._data.shape[self._dim(d, name)] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _extremum(self, dim, keepdim, op_name):
    backend = self._backend
    reduce = backend.reduce_max if op_name == "Max" else backend.reduce_min
    _check_keepdim(keepdim, op_name.lower())
    if dim is None:
        _empty_reduction_check(self, None, op_name.lower())
        out = Tensor._wrap(reduce(self._data, None, False), self.dtype, backend)
        if _recording(self):
            out._grad_fn = ExtremumBackward(self, out, op_name, tuple(range(self.ndim)))
        return out
    if isinstance(dim, (tuple, list)) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{op_name.lower()}(): argument 'dim' must be int, not {type(dim).__name__}")
    axis = self._dim(dim, op_name.lower())
    _empty_reduction_check(self, (axis,), op_name.lower())  # reported wrapped, as PyTorch's
    source = self._data if self.ndim else self._data.reshape(1)
    extremum = backend.max_with_indices if op_name == "Max" else backend.min_with_indices
    values, indices = extremum(source, axis, keepdim)
    if not self.ndim:
        values, indices = values.reshape(()), indices.reshape(())
    node = ExtremumDimBackward(self, indices if self.ndim else indices.reshape(1), axis,
                               keepdim or not self.ndim, op_name) if _recording(self) else None
    result = MaxResult if op_name == "Max" else MinResult
    return result(Tensor._from_op(values, node, self.dtype, backend),
                  Tensor._wrap(indices, dtypes.int64, backend))


@tensor_op(tangent=dual.BY_VJP)
def max(self, dim=None, keepdim=False):
    return _extremum(self, dim, keepdim, "Max")


@tensor_op(tangent=dual.BY_VJP)
def min(self, dim=None, keepdim=False):
    return _extremum(self, dim, keepdim, "Min")


def _amax(self, dim, keepdim, op_name):
    axes = _axes(self, dim, op_name.lower(), keepdim, nonempty=True)
    reduce = self._backend.reduce_max if op_name == "Amax" else self._backend.reduce_min
    # PyTorch's amax/amin keep the first of tied zeros (its max() the last).
    data = layout.c_order(self._backend, reduce(self._data, axes, keepdim, zero_ties="first"))
    out = Tensor._wrap(data, self.dtype, self._backend)
    if _recording(self):
        out._grad_fn = ExtremumBackward(self, out, op_name, axes)
    return out


@tensor_op(tangent=dual.BY_VJP, out=True)
def amax(self, dim=(), keepdim=False):
    return _amax(self, dim, keepdim, "Amax")


@tensor_op(tangent=dual.BY_VJP, out=True)
def amin(self, dim=(), keepdim=False):
    return _amax(self, dim, keepdim, "Amin")


# -- the softmax family: forward and backward formulas, on any backend; a
# backend's fused kernel (one pass per row) runs instead where it has one.
def _softmax_formula(x, axis):
    """exp(x - max) / sum(exp(x - max)) along ``axis`` (an all -inf slice gives NaN)."""
    backend = backend_of(x)
    e = arrays.run("exp", arrays.run("sub", x, backend.reduce_max(x, axis, keepdims=True)))
    return arrays.run("div", e, backend.reduce_sum(e, axis, keepdims=True), out=e)


def _log_softmax_formula(x, axis):
    """(x - max) - log(sum(exp(x - max))) along ``axis``."""
    backend = backend_of(x)
    shifted = arrays.run("sub", x, backend.reduce_max(x, axis, keepdims=True))
    total = backend.reduce_sum(arrays.run("exp", shifted), axis, keepdims=True)
    return arrays.run("sub", shifted, arrays.run("log", total, out=total), out=shifted)


def _softmax_backward_formula(xp, grad, y, axis):
    """y * (grad - sum(grad * y)) along ``axis``, with the formula operations ``xp``."""
    dot = xp.reduce_sum(xp.run("mul", grad, y), axis, keepdims=True)
    return xp.run("mul", y, xp.run("sub", grad, dot))


def _log_softmax_backward_formula(xp, grad, y, axis):
    """grad - exp(y) * sum(grad) along ``axis``, with the formula operations ``xp``."""
    total = xp.reduce_sum(grad, axis, keepdims=True)
    return xp.run("sub", grad, xp.run("mul", xp.run("exp", y), total))


class SoftmaxBackward(Node):
    __slots__ = ("dim",)
    op_name = "Softmax"
    formula = staticmethod(_softmax_backward_formula)
    fused = "fused_softmax_backward"  # the backend's one-pass kernel, where it has one

    def __init__(self, source, dim):
        super().__init__([source])
        self.dim = dim

    def after_write(self, output):
        self.saved = (SavedTensor(output, output_of=self.op_name),)

    def backward(self, grad):
        xp = ops_for(grad)
        (y,) = self.saved_values(xp.graph)  # taped: the output, with this node as its history
        if self.dim is None:  # a 0-d input, computed as one element (as in the forward)
            one = self._gradient(xp, xp.reshape(grad, (1,)), xp.reshape(y, (1,)), 0)
            return [xp.reshape(one, ())]
        return [xp.ascontiguous(self._gradient(xp, grad, y, self.dim))]  # as PyTorch's

    def _gradient(self, xp, grad, y, axis):
        if axis == y.ndim - 1:  # PyTorch's last-axis kernel (and its sums' signed zeros)
            grad = xp.ascontiguous(grad)
        fused = getattr(xp, self.fused)(grad, y, axis)  # the backend's kernel (raw only)
        return self.formula(xp, grad, y, axis) if fused is None else fused


class LogSoftmaxBackward(SoftmaxBackward):
    __slots__ = ()
    op_name = "LogSoftmax"
    formula = staticmethod(_log_softmax_backward_formula)
    fused = "fused_log_softmax_backward"


def _softmax(self, dim, dtype, log):
    name = "log_softmax" if log else "softmax"
    if dim is None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    dtype = dtypes.to_dtype(dtype, name) or self.dtype
    axis = self._dim(dim, name)
    if not dtype.is_floating_point and self._data.size:  # PyTorch's kernel is never reached when empty
        kernel = "lastdim_kernel_impl" if axis == builtins.max(self.ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(f'"{name}_{kernel}" not implemented for \'{dtype.tensor_type[:-6]}\'')
    backend = self._backend
    x = self._data if self._data.dtype == dtype.numpy else backend.cast(self._data, dtype.numpy)
    if self.ndim == 0:
        x = x.reshape(1)
    if dtype is dtypes.float16:  # computed in float32, rounded once at the end, as PyTorch's
        x = backend.cast(x, np.float32)
    # Shifted by the maximum so exp never overflows; an all -inf slice gives NaN, as in PyTorch.
    data = (backend.fused_log_softmax if log else backend.fused_softmax)(x, axis)
    if data is None:
        data = backend.empty(x.shape, x.dtype) if not x.size else (
            _log_softmax_formula if log else _softmax_formula)(x, axis)
    if dtype is dtypes.float16:
        data = backend.cast(data, np.float16)
    data = backend.ascontiguous(data.reshape(self._data.shape))  # PyTorch's are, whatever x's
    node = None
    if _recording(self):
        node = (LogSoftmaxBackward if log else SoftmaxBackward)(self, axis if self.ndim else None)
    out = Tensor._from_op(data, node, dtype, self._backend)
    if node is not None:
        node.after_write(out)
    return out


@tensor_op(tangent=dual.BY_VJP)
def softmax(self, dim=None, dtype=None):
    return _softmax(self, dim, dtype, log=False)


@tensor_op(tangent=dual.BY_VJP)
def log_softmax(self, dim=None, dtype=None):
    return _softmax(self, dim, dtype, log=True)
