"""``cat`` and ``stack``."""
import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.graph import Node
from ..tensor import Tensor


class CatBackward(Node):
    __slots__ = ("dim", "sizes")
    op_name = "Cat"

    def __init__(self, tensors, dim):
        super().__init__(tensors)
        self.dim = dim
        self.sizes = [t._data.shape[dim] for t in tensors]

    def backward(self, grad):
        bounds = np.cumsum(self.sizes)[:-1]
        return np.split(grad, bounds, axis=self.dim)


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    first = tensors[0]
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"cat(): expected a sequence of Tensors, got {type(t).__name__}")
        if t._backend is not first._backend:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                               f"two devices, {first.device} and {t.device}!")
        if t.ndim != first.ndim or t.ndim == 0:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} "
                               f"and {t.ndim}" if t.ndim else "zero-dimensional tensor cannot be concatenated")
    dim = first._dim(dim)
    for k, t in enumerate(tensors):
        for d in range(first.ndim):
            if d != dim and t.shape[d] != first.shape[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected "
                                   f"size {first.shape[d]} but got size {t.shape[d]} for tensor "
                                   f"number {k} in the list.")
    dtype = dtypes.result_type(tensors)
    data = np.concatenate([t._data for t in tensors], axis=dim, dtype=dtype.numpy)
    node = CatBackward(tensors, dim) if grad_mode.is_grad_enabled() and any(
        t.requires_grad for t in tensors) else None
    return Tensor._from_op(data, node, dtype, first._backend)


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for k, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at entry {k}")
    return cat([t.unsqueeze(dim) for t in tensors], dim)
