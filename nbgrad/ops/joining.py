"""``cat`` and ``stack``: results laid out as PyTorch's (C order, or the
channels-last format all inputs share; see ``layout.cat_strides``)."""
import numbers

import numpy as np

from .. import dtypes
from ..tape import grad_mode
from ..tape.graph import Node
from ..backends import layout
from ..tensor import Tensor
from .arrays import ops_for
from . import dual
from .registry import tensor_op


class CatBackward(Node):
    __slots__ = ("dim", "sizes", "legacy")
    op_name = "Cat"

    def __init__(self, tensors, dim):
        super().__init__(tensors)
        self.dim = dim
        # a legacy 1-D empty tensor takes no room (and gets an empty gradient)
        self.legacy = [t._data.shape == (0,) for t in tensors]
        self.sizes = [0 if legacy else t._data.shape[dim] for t, legacy in zip(tensors, self.legacy)]

    def backward(self, grad):
        xp = ops_for(grad)
        bounds = np.cumsum(self.sizes)[:-1]
        parts = xp.split(grad, bounds, self.dim)  # views (taped: slices)
        return [xp.zeros((0,), grad.dtype) if legacy else part
                for part, legacy in zip(parts, self.legacy)]


class StackBackward(CatBackward):
    __slots__ = ()
    op_name = "Stack"

    def __init__(self, tensors, dim):
        Node.__init__(self, tensors)
        self.dim = dim
        self.sizes = [1] * len(tensors)
        self.legacy = [False] * len(tensors)

    def backward(self, grad):
        xp = ops_for(grad)
        dims = (self.dim,)
        return [xp.squeeze_dims(g, dims) for g in CatBackward.backward(self, grad)]


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    tensors = list(tensors)
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(t).__name__}")
        if t._backend is not tensors[0]._backend:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                               f"two devices, {tensors[0].device} and {t.device}!")
    return tensors


def _dim_arg(name, dim):
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return int(dim)


@tensor_op(method=False, tangent=dual.LINEAR, out=True)
def cat(tensors, dim=0):
    tensors = _tensor_list(tensors, "cat")
    dim = _dim_arg("cat", dim)
    if not tensors:
        raise ValueError("nbgrad.cat(): expected a non-empty list of Tensors")
    for k, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {k}) cannot be concatenated")
    # As in PyTorch, 1-D empty tensors are legacy placeholders: skipped, except for the dtype.
    shaped = [t for t in tensors if t.shape != (0,)] or tensors[:1]
    first = shaped[0]
    dim = first._dim(dim)
    for t in shaped:
        if t.ndim != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} "
                               f"and {t.ndim}")
    for k, t in enumerate(tensors):
        if t.shape == (0,) and t is not first:
            continue
        for d in range(first.ndim):
            if d != dim and t.shape[d] != first.shape[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected "
                                   f"size {first.shape[d]} but got size {t.shape[d]} for tensor "
                                   f"number {k} in the list.")
    dtype = dtypes.result_type(tensors)
    shape = list(first.shape)
    shape[dim] = sum(t.shape[dim] for t in shaped)
    strides = layout.cat_strides(tuple(shape), [t._data for t in tensors])
    data = layout.empty(first._backend, tuple(shape), strides, dtype.numpy)
    start = 0
    for t in shaped:
        n = t.shape[dim]
        data[(slice(None),) * dim + (slice(start, start + n),)] = t._data
        start += n
    node = None
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors):
        node = CatBackward(tensors, dim)
    return Tensor._from_op(data, node, dtype, first._backend)


@tensor_op(method=False, tangent=dual.LINEAR, out=True)
def stack(tensors, dim=0):
    tensors = _tensor_list(tensors, "stack")
    dim = _dim_arg("stack", dim)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for k, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at entry {k}")
    ndim = tensors[0].ndim + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim})")
    dim %= ndim
    dtype = dtypes.result_type(tensors)
    arrays = [t._data for t in tensors]
    shape = tensors[0].shape[:dim] + (len(tensors),) + tensors[0].shape[dim:]
    data = layout.empty(tensors[0]._backend, shape, layout.stack_strides(shape, arrays, dim),
                        dtype.numpy)
    for k, a in enumerate(arrays):
        data[(slice(None),) * dim + (k,)] = a
    node = None
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors):
        node = StackBackward(tensors, dim)
    return Tensor._from_op(data, node, dtype, tensors[0]._backend)
