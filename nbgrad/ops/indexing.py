"""``tensor[key]`` and ``tensor[key] = value``. Basic keys (ints, slices,
None, Ellipsis) give views; integer-array and boolean keys give copies."""
import numbers

import numpy as np

from ..autograd import grad_mode
from ..autograd.graph import Node
from ..tensor import Tensor
from . import mutation
from .elementwise import apply_inplace
from .table import BY_NAME
from .views import make_view


def _as_key(key):
    """(numpy key, is_basic)."""
    items = key if isinstance(key, tuple) else (key,)
    converted = []
    basic = True
    for item in items:
        if isinstance(item, Tensor):
            if item.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            item = item._data
            basic = False
        elif isinstance(item, slice):
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
        elif isinstance(item, (list, np.ndarray)) or isinstance(item, (bool, np.bool_)):
            item = np.asarray(item)
            if item.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            basic = False
        elif not (item is None or item is Ellipsis or isinstance(item, numbers.Integral)):
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(item).__name__})")
        converted.append(item)
    return tuple(converted), basic


def _index_error(error):
    return IndexError(str(error).replace("axis", "dimension"))


class IndexBackward(Node):
    __slots__ = ("key", "shape")
    op_name = "Index"

    def __init__(self, source, key):
        super().__init__([source])
        self.key, self.shape = key, source._data.shape

    def backward(self, grad):
        out = np.zeros(self.shape, dtype=grad.dtype)
        np.add.at(out, self.key, grad)
        return [out]


class IndexPutBackward(Node):
    __slots__ = ("key",)
    op_name = "IndexPut"

    def __init__(self, target, value, key):
        super().__init__([target, value])
        self.key = key

    def backward(self, grad):
        grad_target = grad.copy()
        grad_target[self.key] = 0
        return [grad_target, grad[self.key]]


def getitem(self, key):
    key, basic = _as_key(key)
    name = "Select" if all(isinstance(k, numbers.Integral) for k in key) else "Slice"
    if basic and not any(k is Ellipsis for k in key):
        key += (Ellipsis,)  # so an all-integer key gives a 0-d view, not a NumPy scalar
    try:
        data = self._data[key]
    except IndexError as error:
        raise _index_error(error) from None
    if basic:
        shape, backend = self._data.shape, self._backend
        return make_view(self, name, lambda a: a[key],
                         lambda g: backend.scatter_into_view(shape, g.dtype, lambda z: z[key], g))
    node = IndexBackward(self, key) if grad_mode.is_grad_enabled() and self.requires_grad else None
    return Tensor._from_op(np.ascontiguousarray(data), node, self.dtype, self._backend)


def setitem(self, key, value):
    np_key, basic = _as_key(key)
    if basic:
        target = getitem(self, key)
        row = BY_NAME["copy"] if isinstance(value, Tensor) else BY_NAME["fill"]
        apply_inplace(row, target, (value,), op_name="__setitem__")
        return
    try:
        region_shape = self._data[np_key].shape
    except IndexError as error:
        raise _index_error(error) from None
    if isinstance(value, Tensor):
        if value._backend is not self._backend:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                               f"two devices, {self.device} and {value.device}!")
        raw = value._data
        np.broadcast_shapes(raw.shape, region_shape)
    else:
        raw = value
    value_requires_grad = isinstance(value, Tensor) and value.requires_grad

    def kernel():
        self._data[np_key] = raw

    mutation.write(self, "__setitem__", kernel,
                   lambda: IndexPutBackward(self, value if isinstance(value, Tensor) else None, np_key),
                   value_requires_grad)
