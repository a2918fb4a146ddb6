"""``Tensor.new_*``: new tensors that take their dtype and device from
``self`` unless given, as PyTorch's (the creation functions do the work)."""
import warnings

from .. import creation
from ..tensor import Tensor
from .registry import tensor_op


def _like_self(self, make, size, fill, dtype, device, requires_grad):
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    return make(size, *fill, dtype=dtype, device=device, requires_grad=requires_grad)


def _sized(make, name):
    def new(self, *size, dtype=None, device=None, requires_grad=False):
        shape = creation._size(size, name)
        return _like_self(self, make, shape, (), dtype, device, requires_grad)
    new.__name__ = new.__qualname__ = name
    new.__doc__ = (f"{name}(size, *, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
                   f"``{make.__name__}`` of ``size`` with ``self``'s dtype and device unless "
                   "given.")
    return tensor_op(function=False)(new)


new_empty = _sized(creation.empty, "new_empty")
new_zeros = _sized(creation.zeros, "new_zeros")
new_ones = _sized(creation.ones, "new_ones")


@tensor_op(function=False)
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """new_full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A tensor of ``size`` filled with ``fill_value``, with ``self``'s dtype and
    device unless given (not the dtype the number would infer)."""
    shape = creation._sequence_size(size, "new_full")
    return _like_self(self, creation.full, shape, (fill_value,), dtype, device, requires_grad)


@tensor_op(function=False)
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """new_tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A copy of ``data`` (never an alias) with ``self``'s dtype and device
    unless given, outside any graph."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    return creation.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
