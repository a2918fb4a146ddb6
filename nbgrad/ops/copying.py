"""Copies and conversions: clone, to(dtype), and the in-place writes
copy_/fill_/zero_ (which run the ``copy`` and ``fill`` rows)."""
import numbers

import numpy as np

from .. import dtypes
from ..declarations.op_table import BY_NAME
from ..tape import grad_mode
from ..tape.graph import Node
from ..backends import for_device, layout
from ..device import device as Device
from ..tensor import Tensor
from . import mutation
from .arrays import ops_for
from .elementwise import ElementwiseBackward, apply_inplace
from . import dual
from .registry import tensor_op


class PassThroughBackward(Node):
    """Gradient passes unchanged (the engine casts it to the input's dtype,
    taped in a backward that builds a graph)."""

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


def _clone(self, strides):
    return _copy_of(self, layout.copy(self._backend, self._data, strides), self.dtype, "Clone")


@tensor_op(tangent=dual.LINEAR)
def clone(self):
    """A copy with new memory, taped (the gradient flows back to ``self``). Its
    layout is PyTorch's preserve_format: ``self``'s strides when dense, else
    the same order of dimensions, packed."""
    return _clone(self, layout.preserve_strides(self._data))


@tensor_op(function=False, tangent=dual.LINEAR)
def contiguous(self):
    """``self`` when C-contiguous, else a C-contiguous copy, taped as ``clone``."""
    return self if self.is_contiguous() else _clone(self, None)


class ToDeviceBackward(Node):
    """A copy to another device: the gradient is copied back to the source's."""

    __slots__ = ("source_backend",)
    op_name = "ToCopy"

    def __init__(self, source):
        super().__init__([source])
        self.source_backend = source._backend

    def backward(self, grad):
        return [ops_for(grad).to_backend(grad, self.source_backend)]


def to_arguments(args, kwargs):
    """(device, dtype, copy) named by ``to``'s overloads, as PyTorch reads
    them (``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)``,
    and as keywords): None (``copy``: False) where not given. Takes the
    keywords it reads out of ``kwargs``: the caller refuses the rest."""
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)  # copies are synchronous here; accepted for portability
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, (str, Device)):
            device = arg
        elif isinstance(arg, int) and not isinstance(arg, bool):  # an index: PyTorch's cuda:n
            device = Device("cuda", arg)
        elif arg is not None:
            dtype = arg
    return (None if device is None else Device(device)), dtypes.to_dtype(dtype), copy


def _parse_to(self, args, kwargs):
    """(device, dtype, copy) for ``Tensor.to``: its own where not given."""
    device, dtype, copy = to_arguments(args, kwargs)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    return (self.device if device is None else device,
            self.dtype if dtype is None else dtype, copy)


@tensor_op(function=False, tangent=dual.LINEAR)
def to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``."""
    device, dtype, copy = _parse_to(self, args, kwargs)
    backend = for_device(device)
    if backend is not self._backend:
        moved = to_backend(self, backend)
        return moved if dtype is self.dtype else to(moved, dtype)
    if dtype is self.dtype and not copy:
        return self
    # PyTorch's _to_copy lays the result out as clone does (preserve_format).
    data = layout.with_strides(self._backend, self._backend.cast(self._data, dtype.numpy),
                               layout.preserve_strides(self._data))
    return _copy_of(self, data, dtype, "ToCopy")


def to_backend(self, backend):
    """``self`` copied to ``backend``'s device, taped (ToDeviceBackward)."""
    data = backend.asarray(self._data)
    record = grad_mode.is_grad_enabled() and self.requires_grad
    return Tensor._from_op(data, ToDeviceBackward(self) if record else None, self.dtype, backend)


def write_row(row, self, value, op_name):
    """Run an in-place row; a write into an integer or bool tensor is never
    recorded (it cannot carry a gradient), as in PyTorch. A copy of ``self``'s
    very elements (``e.copy_(e)``, ``e[...] = e``) runs no kernel and no
    overlap check, as PyTorch's copy_ returns early, yet counts and tapes the
    write (an expanded ``e`` may be written so)."""
    if row is BY_NAME["copy"] and mutation.same_elements(self._backend, self._data, value._data):
        others_require_grad = value.requires_grad and self.dtype.is_floating_point
        mutation.check_inplace(self, others_require_grad, internal=False)
        return mutation.write(
            self, op_name, kernel=lambda: None,
            make_node=lambda: ElementwiseBackward.record(row, (self, value), self.dtype,
                                                         self._backend, inplace=True),
            others_require_grad=others_require_grad, checked=True)
    if self.dtype.is_floating_point:
        return apply_inplace(row, self, (value,), op_name=op_name)
    with grad_mode.no_grad():
        return apply_inplace(row, self, (value,), op_name=op_name)


@tensor_op(function=False, tangent=dual.LINEAR_IN_PLACE)
def copy_(self, src):
    if isinstance(src, (numbers.Number, np.bool_)) and not isinstance(src, complex):
        src = Tensor._wrap(self._backend.asarray(src, dtypes.scalar_dtype(src).numpy),
                           backend=self._backend)
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    if src._backend is not self._backend:  # a copy across devices (taped, as in PyTorch)
        src = to_backend(src, self._backend)
    # PyTorch's order: autograd's checks, then the overlap checks (then shapes, in write_row).
    same = mutation.same_elements(self._backend, self._data, src._data)
    mutation.check_inplace(self, src.requires_grad and self.dtype.is_floating_point,
                           internal=not same)
    mutation.check_no_partial_overlap(self._backend, self._data, src._data)
    return write_row(BY_NAME["copy"], self, src, "copy_")


@tensor_op(function=False, tangent=dual.FILL)
def fill_(self, value):
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
    elif not isinstance(value, numbers.Number):
        raise TypeError(f"fill_(): argument 'value' must be Number, not {type(value).__name__}")
    else:
        dtypes.check_scalar(value, self.dtype)  # before any write: NaN into int64, 2**63, ...
    return write_row(BY_NAME["fill"], self, value, "fill_")


@tensor_op(function=False, tangent=dual.LINEAR_IN_PLACE)
def zero_(self):
    return write_row(BY_NAME["fill"], self, 0, "zero_")


@tensor_op("type", function=False, tangent=dual.LINEAR)
def _type(self, dtype=None):
    """The type name (PyTorch's: ``nbgrad.cuda.FloatTensor`` on the GPU), or a cast to ``dtype``."""
    if isinstance(dtype, str):  # a type name, "nbgrad.DoubleTensor"
        names = {f"nbgrad.{d.tensor_type}": d for d in dtypes._BY_RANK}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = names[dtype]
    if dtype is not None:
        return to(self, dtype)
    return f"nbgrad.{'cuda.' if self.is_cuda else ''}{self.dtype.tensor_type}"


def _conversion(name, target):
    def convert(self):
        return to(self, target)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"``self.to({target!r})``" if isinstance(target, str) else \
        f"``self.to(nbgrad.{target.name})``"
    tensor_op(name, function=False, tangent=dual.LINEAR)(convert)


for _name, _target in (("float", dtypes.float32), ("double", dtypes.float64),
                       ("half", dtypes.float16), ("long", dtypes.int64), ("int", dtypes.int32),
                       ("short", dtypes.int16), ("char", dtypes.int8), ("byte", dtypes.uint8),
                       ("bool", dtypes.bool_), ("cpu", "cpu")):
    _conversion(_name, _target)


@tensor_op(function=False, tangent=dual.LINEAR)
def type_as(self, other):
    """type_as(tensor) -> Tensor

    ``self`` cast to ``other``'s dtype (``self`` itself when it has it already)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not "
                        f"{dtypes.type_name(other)}")
    return to(self, other.dtype)


@tensor_op(function=False, tangent=dual.LINEAR)
def cuda(self, device=None):
    """``self.to("cuda")`` (``device``: an index or a device)."""
    return to(self, "cuda" if device is None else
              f"cuda:{device}" if isinstance(device, int) else device)
