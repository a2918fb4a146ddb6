"""The operations of backward formulas as taped Tensor ops: what
``arrays.ops_for`` gives a formula whose gradient is a Tensor (a backward
that builds a graph), with the names and arguments of
:class:`nbgrad.ops.arrays.RawArrays`, so one formula serves both."""
import numpy as np

from .. import dtypes
from ..backends import layout
from ..declarations.op_table import BY_NAME
from ..tensor import Tensor
from . import arrays, copying, indexing, joining, linalg, mutation, nn_taped, reductions, views
from . import scatter  # issue 15: gathers and scatters


def _dtype(dtype):
    """An nbgrad dtype from one (a Tensor's) or from a NumPy dtype (a raw array's)."""
    return dtype if isinstance(dtype, dtypes.dtype) else dtypes.from_numpy_dtype(np.dtype(dtype))


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
        dtype = None if dtype is None else _dtype(dtype)
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
        return a.to(_dtype(dtype))

    @staticmethod
    def copy(a):
        return a.clone()

    @staticmethod
    def ascontiguous(a):
        return a.contiguous()

    def zeros(self, shape, dtype):
        dtype = _dtype(dtype)
        return Tensor._wrap(self.backend.zeros(tuple(shape), dtype.numpy), dtype, self.backend)

    @staticmethod
    def asarray(a, dtype=None):
        """``a`` itself (a Tensor is this namespace's array); cast to ``dtype`` when given."""
        return a if dtype is None else TapedArrays.cast(a, dtype)

    @staticmethod
    def to_backend(a, backend):
        return copying.to_backend(a, backend)

    # -- joining, gathering, and the functional forms of writes
    @staticmethod
    def split(a, bounds, axis):
        """Views of ``a`` between consecutive ``bounds`` along ``axis``, as slices."""
        edges = [0, *(int(b) for b in bounds), a.shape[axis]]
        lead = (slice(None),) * axis
        return [a[lead + (slice(start, stop),)] for start, stop in zip(edges, edges[1:])]

    @staticmethod
    def put_along(shape, indices, values, axis):
        return reductions.put_along(values, tuple(shape), indices, axis)

    @staticmethod
    def take_along_axis(a, indices, axis):
        return reductions.take_along(a, indices, axis)

    # gathers and scatters along an axis (issue 15): adjoint pairs in nbgrad.ops.scatter
    @staticmethod
    def gather_along(a, indices, axis):
        return scatter.gather_raw(a, indices, axis)

    @staticmethod
    def scatter_add_along(shape, indices, values, axis):
        return scatter.scatter_add_new(values, tuple(shape), indices, axis)

    @staticmethod
    def zero_along(a, indices, axis):
        return scatter.zero_along(a, indices, axis)

    @staticmethod
    def scatter_reduce_along(a, indices, values, axis, reduce, include_self):
        return scatter.scatter_reduce_new(a, indices, values, axis, reduce, include_self)

    @staticmethod
    def index_add(shape, key, values):
        return indexing.index_add(values, tuple(shape), key)

    @staticmethod
    def gather(a, key):
        return indexing.gather(a, key)

    @staticmethod
    def zero_at(a, key):
        return indexing.zero_at(a, key)

    @staticmethod
    def replace_view(a, view_fn, values):
        return mutation.replace_view(a, view_fn, values)

    # -- issue 15, shapes: the joins that split's and unbind's gradients take
    @staticmethod
    def concatenate(arrays, axis=0, dtype=None):
        return joining.cat(list(arrays), axis)

    @staticmethod
    def stack(arrays, axis=0, dtype=None):
        return joining.stack(list(arrays), axis)

    # -- a backend's fused kernels: none here, the formula runs instead
    @staticmethod
    def fused_softmax_backward(grad, y, axis):
        return None

    fused_log_softmax_backward = fused_softmax_backward

    # -- nn's layers and losses (issue 14): adjoint pairs, in nbgrad.ops.nn_taped
    im2col = staticmethod(nn_taped.im2col)
    col2im = staticmethod(nn_taped.col2im)
    gather_windows = staticmethod(nn_taped.gather_windows)
    scatter_windows = staticmethod(nn_taped.scatter_windows)
    take_per_row = staticmethod(nn_taped.take_per_row)
    scatter_per_row = staticmethod(nn_taped.scatter_per_row)

    @staticmethod
    def column_sums(a):
        return reductions.sum(a, 0)

    @staticmethod
    def contiguous_permute(a, axes):
        return views.permute(a, tuple(axes)).contiguous()

    def constant(self, value):
        """A raw array as a Tensor without history; a NumPy scalar as it is."""
        if isinstance(value, np.generic):
            return value
        return Tensor._wrap(value, dtypes.from_numpy_dtype(value.dtype), self.backend)


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
