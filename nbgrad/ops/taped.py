"""The operations of backward formulas as taped Tensor ops: what
``arrays.ops_for`` gives a formula whose gradient is a Tensor (a backward
that builds a graph), with the names and arguments of
:class:`nbgrad.ops.arrays.RawArrays`, so one formula serves both."""
import numpy as np

from .. import dtypes
from ..backends import layout
from ..declarations.op_table import BY_NAME
from ..tensor import Tensor
from . import arrays, linalg, reductions, views


class TapedArrays:
    """Taped operations on the Tensors of one backend."""

    graph = True

    def __init__(self, backend):
        self.backend = backend

    # -- rows and reductions
    @staticmethod
    def run(name, *values, out=None):
        return BY_NAME[name](*values)

    @staticmethod
    def reduce_sum(a, axis=None, keepdims=False, dtype=None):
        dtype = None if dtype is None else dtypes.from_numpy_dtype(np.dtype(dtype))
        return reductions.sum(a, () if axis is None else axis, keepdims, dtype)

    @staticmethod
    def sum_to_shape(a, shape):
        axes = layout.broadcast_axes(a._data.shape, shape)
        return views.reshape(reductions.sum(a, axes, True) if axes else a, tuple(shape))

    @staticmethod
    def scale(a, factor):
        return a * factor

    @staticmethod
    def where(condition, a, b):
        return BY_NAME["where"](condition, a, b)

    # -- shapes
    @staticmethod
    def reshape(a, shape):
        return views.reshape(a, tuple(shape))

    @staticmethod
    def permute(a, axes):
        return views.permute(a, tuple(axes))

    @staticmethod
    def swapaxes(a, d0, d1):
        return views.transpose(a, d0, d1)

    @staticmethod
    def swap_last(a):
        return views.transpose(a, -1, -2)

    @staticmethod
    def squeeze_dims(a, dims):
        return views.squeeze(a, dims) if dims else a

    @staticmethod
    def expand_dims(a, axis):
        return views.unsqueeze(a, axis)

    @staticmethod
    def broadcast_to(a, shape):
        return views.expand(a, tuple(shape))

    @staticmethod
    def scatter_into_view(base_shape, view_fn, grad):
        return views.scatter_into_view(grad, view_fn, base_shape)

    @staticmethod
    def apply_view(a, view_fn, base_shape):
        return views.apply_view(a, view_fn, base_shape)

    # -- products, copies, new values
    @staticmethod
    def matmul(a, b):
        return linalg.matmul(a, b)

    @staticmethod
    def cast(a, dtype):
        return a.to(dtypes.from_numpy_dtype(np.dtype(dtype)))

    @staticmethod
    def copy(a):
        return a.clone()

    @staticmethod
    def ascontiguous(a):
        return a.contiguous()

    def zeros(self, shape, dtype):
        dtype = np.dtype(dtype)
        return Tensor._wrap(self.backend.zeros(tuple(shape), dtype),
                            dtypes.from_numpy_dtype(dtype), self.backend)

    # -- a backend's fused kernels: none here, the formula runs instead
    @staticmethod
    def fused_softmax_backward(grad, y, axis):
        return None

    fused_log_softmax_backward = fused_softmax_backward


class _Taped(dict):
    """backend -> its TapedArrays, made on first need."""

    def get(self, backend, default=None):
        if backend is None:
            return default
        made = dict.get(self, backend)
        if made is None:
            made = self[backend] = TapedArrays(backend)
        return made


arrays.TAPED = _Taped()
