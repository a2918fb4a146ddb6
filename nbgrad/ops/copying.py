"""Copies and conversions: clone, to(dtype), and the in-place writes
copy_/fill_/zero_ (which run the ``copy`` and ``fill`` rows)."""
import numbers

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.graph import Node
from ..tensor import Tensor
from .elementwise import apply_inplace
from .table import BY_NAME


class PassThroughBackward(Node):
    """Gradient passes unchanged (the engine casts it to the input's dtype)."""

    __slots__ = ("_op_name",)

    def __init__(self, source, op_name):
        super().__init__([source])
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        return [grad]


def _copy_of(self, data, dtype, op_name):
    record = grad_mode.is_grad_enabled() and self.requires_grad and dtype.is_floating_point
    return Tensor._from_op(data, PassThroughBackward(self, op_name) if record else None,
                           dtype, self._backend)


def clone(self):
    return _copy_of(self, self._backend.copy(self._data), self.dtype, "Clone")


def to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``."""
    from ..device import device as Device

    target_dtype, target_device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            target_dtype, target_device = arg.dtype, arg.device
        elif isinstance(arg, (str, Device)):
            target_device = arg
        else:
            target_dtype = arg
    if target_device is not None and Device(target_device).type != self.device.type:
        from ..backends import require_backend
        require_backend(Device(target_device).type)
    dtype = dtypes.to_dtype(target_dtype) or self.dtype
    if dtype is self.dtype and not copy:
        return self
    return _copy_of(self, self._backend.cast(self._data, dtype.numpy), dtype, "ToCopy")


def copy_(self, src):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    return apply_inplace(BY_NAME["copy"], self, (src,), op_name="copy_")


def fill_(self, value):
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
    elif not isinstance(value, numbers.Number):
        raise TypeError(f"fill_(): argument 'value' must be Number, not {type(value).__name__}")
    row = BY_NAME["copy"] if isinstance(value, Tensor) else BY_NAME["fill"]
    return apply_inplace(row, self, (value,), op_name="fill_")


def zero_(self):
    return apply_inplace(BY_NAME["fill"], self, (0,), op_name="zero_")
