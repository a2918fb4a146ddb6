"""Reductions (sum, mean, max, min) and the softmax family."""
import collections

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.graph import Node, SavedTensor
from ..tensor import Tensor

MaxMin = collections.namedtuple("MaxMin", ["values", "indices"])


def _axes(self, dim):
    if dim is None:
        return tuple(range(self.ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    axes = tuple(sorted(self._dim(d) for d in dims))
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
        grad = grad.reshape(self.kept)
        if self.scale is not None:
            grad = grad * grad.dtype.type(self.scale)
        return [np.broadcast_to(grad, self.shape)]


class MeanBackward(SumBackward):
    __slots__ = ()
    op_name = "Mean"


def sum(self, dim=None, keepdim=False, dtype=None):
    axes = _axes(self, dim)
    dtype = dtypes.to_dtype(dtype) or (self.dtype if self.dtype.is_floating_point else dtypes.int64)
    data = np.asarray(self._backend.reduce_sum(self._data, axes, keepdim, dtype.numpy))
    node = SumBackward(self, axes) if _recording(self) and dtype.is_floating_point else None
    return Tensor._from_op(data, node, dtype, self._backend)


def mean(self, dim=None, keepdim=False, dtype=None):
    dtype = dtypes.to_dtype(dtype) or self.dtype
    if not dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {dtype.tensor_type[:-6]}")
    axes = _axes(self, dim)
    count = int(np.prod([self._data.shape[a] for a in axes]))
    data = np.asarray(self._backend.reduce_sum(self._data, axes, keepdim, dtype.numpy))
    data = data / data.dtype.type(count) if count else np.full_like(data, np.nan)
    node = MeanBackward(self, axes, 1.0 / count if count else np.nan) if _recording(self) else None
    return Tensor._from_op(np.asarray(data, dtype=dtype.numpy), node, dtype, self._backend)


class ExtremumBackward(Node):
    """Whole-tensor max/min: ties share the gradient evenly, as in PyTorch."""

    __slots__ = ("_op_name",)

    def __init__(self, source, result, op_name):
        super().__init__([source])
        self.save(source, result)
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        source, result = self.saved_values()
        mask = source == result
        return [np.where(mask, grad / mask.sum(dtype=grad.dtype), grad.dtype.type(0))]


class ExtremumDimBackward(Node):
    """max/min along a dim: the gradient goes to the selected index."""

    __slots__ = ("indices", "dim", "shape", "keepdim", "_op_name")

    def __init__(self, source, indices, dim, keepdim, op_name):
        super().__init__([source])
        self.indices, self.dim, self.keepdim = indices, dim, keepdim
        self.shape = source._data.shape
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        indices = self.indices if self.keepdim else np.expand_dims(self.indices, self.dim)
        grad = grad if self.keepdim else np.expand_dims(grad, self.dim)
        out = np.zeros(self.shape, dtype=grad.dtype)
        np.put_along_axis(out, indices, grad, axis=self.dim)
        return [out]


def _extremum(self, dim, keepdim, op_name):
    backend = self._backend
    reduce = backend.reduce_max if op_name == "Max" else backend.reduce_min
    if dim is None:
        if self._data.size == 0:
            raise RuntimeError(f"{op_name.lower()}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
        data = np.asarray(reduce(self._data, None, False))
        out = Tensor._wrap(data, self.dtype, backend)
        if _recording(self):
            out._grad_fn = ExtremumBackward(self, out, op_name)
        return out
    axis = self._dim(dim)
    if self.ndim and self._data.shape[axis] == 0:
        raise IndexError(f"{op_name.lower()}(): Expected reduction dim {axis} to have non-zero size.")
    source = self._data if self.ndim else self._data.reshape(1)
    arg = backend.argmax if op_name == "Max" else backend.argmin
    indices = np.asarray(arg(source, axis, keepdim))
    values = np.take_along_axis(source, indices if keepdim else np.expand_dims(indices, axis), axis)
    if not keepdim:
        values = np.squeeze(values, axis)
    if not self.ndim:
        values, indices = values.reshape(()), indices.reshape(())
    node = ExtremumDimBackward(self, indices if self.ndim else indices.reshape(1), axis,
                               keepdim or not self.ndim, op_name) if _recording(self) else None
    return MaxMin(Tensor._from_op(np.ascontiguousarray(values), node, self.dtype, backend),
                  Tensor._wrap(np.asarray(indices, dtype=np.int64), dtypes.int64, backend))


def max(self, dim=None, keepdim=False):
    return _extremum(self, dim, keepdim, "Max")


def min(self, dim=None, keepdim=False):
    return _extremum(self, dim, keepdim, "Min")


def amax(self, dim=None, keepdim=False):
    if dim is None:
        return _extremum(self, None, False, "Max")
    return _extremum(self, dim, keepdim, "Max").values


def amin(self, dim=None, keepdim=False):
    if dim is None:
        return _extremum(self, None, False, "Min")
    return _extremum(self, dim, keepdim, "Min").values


class SoftmaxBackward(Node):
    __slots__ = ("dim",)
    op_name = "Softmax"

    def __init__(self, source, dim):
        super().__init__([source])
        self.dim = dim

    def after_write(self, output):
        self.saved = (SavedTensor(output, output_of=self.op_name),)

    def backward(self, grad):
        (y,) = self.saved_values()
        return [y * (grad - (grad * y).sum(axis=self.dim, keepdims=True))]


class LogSoftmaxBackward(SoftmaxBackward):
    __slots__ = ()
    op_name = "LogSoftmax"

    def backward(self, grad):
        (y,) = self.saved_values()
        return [grad - np.exp(y) * grad.sum(axis=self.dim, keepdims=True)]


def _softmax(self, dim, dtype, log):
    if dim is None:
        raise TypeError("softmax() missing required argument 'dim'")
    dtype = dtypes.to_dtype(dtype) or self.dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"\"{'log_' if log else ''}softmax_lastdim_kernel_impl\" not implemented for "
                           f"'{dtype.tensor_type[:-6]}'")
    axis = self._dim(dim)
    x = self._data.astype(dtype.numpy, copy=False)
    if self.ndim == 0:
        x = x.reshape(1)
    shifted = x - x.max(axis=axis, keepdims=True)  # stable: exp never overflows
    if log:
        data = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    else:
        e = np.exp(shifted)
        data = e / e.sum(axis=axis, keepdims=True)
    data = data.reshape(self._data.shape)
    node = None
    if _recording(self):
        node = (LogSoftmaxBackward if log else SoftmaxBackward)(self, axis if self.ndim else None)
    out = Tensor._from_op(data, node, dtype, self._backend)
    if node is not None:
        node.after_write(out)
    return out


def softmax(self, dim=None, dtype=None):
    return _softmax(self, dim, dtype, log=False)


def log_softmax(self, dim=None, dtype=None):
    return _softmax(self, dim, dtype, log=True)
