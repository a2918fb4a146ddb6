"""``tensor[key]`` and ``tensor[key] = value``. Basic keys (ints, slices,
None, Ellipsis) give views; integer-array and boolean keys give copies."""
import builtins
import numbers

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.graph import Node, SavedValue
from ..backends import backend_of
from ..tensor import Tensor
from . import copying, mutation, views
from .elementwise import _TYPE_NAMES, apply_inplace
from .table import BY_NAME
from .views import make_view


def _as_key(self, key):
    """(numpy key, is_basic) for indexing ``self``."""
    items = key if isinstance(key, tuple) else (key,)
    converted = []
    basic = True
    for item in items:
        if isinstance(item, Tensor):
            if item.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if item.ndim == 0 and item.dtype is not dtypes.bool_:
                item = int(item.item())  # a 0-d integer tensor selects, as in PyTorch
            elif item.is_cuda and not self.is_cuda:
                raise RuntimeError("indices should be either on cpu or on the same device as the "
                                   f"indexed tensor ({self.device})")
            else:  # indices are read on the host (the CUDA backend turns them into addresses)
                item = item._backend.to_numpy(item._data) if item.is_cuda else item._data
                basic = False
        elif isinstance(item, slice):
            if item.step == 0:
                raise ValueError("slice step cannot be zero")
            if item.step is not None and item.step < 0:
                raise ValueError("step must be greater than zero")
        elif isinstance(item, (list, np.ndarray)) or isinstance(item, (bool, np.bool_)):
            item = np.asarray(item)
            if item.dtype.kind == "f" and item.size == 0:
                item = item.astype(np.int64)  # [] has no dtype: PyTorch reads it as indices
            elif item.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            elif item.dtype.kind in "US":  # PyTorch reads a list as a tensor's data
                kind = "str" if item.dtype.kind == "U" else "bytes"
                raise TypeError(f"new(): invalid data type '{kind}'")
            basic = False
        elif isinstance(item, (str, bytes)):  # as PyTorch, which reads it as a tensor's data
            raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
        elif not (item is None or item is Ellipsis or isinstance(item, numbers.Integral)):
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(item).__name__})")
        converted.append(item)
    return tuple(converted), basic


def _is_mask(item):
    return isinstance(item, np.ndarray) and item.dtype == np.bool_


def _check_key(self, key):
    """PyTorch's checks and messages for a key, before NumPy sees it."""
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = builtins.sum(k.ndim if _is_mask(k) else 1 for k in key
                            if k is not None and k is not Ellipsis)
    shape = self._data.shape
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    # The shape of the tensor the advanced indices apply to (after the basic ones).
    sliced, masks, index_shapes, dim = [], [], [], 0
    for k in key:
        if k is Ellipsis:
            n = len(shape) - consumed
            sliced += shape[dim:dim + n]
            dim += n
        elif k is None:
            sliced.append(1)
        elif isinstance(k, slice):
            sliced.append(len(range(*k.indices(shape[dim]))))
            dim += 1
        elif _is_mask(k) and k.ndim == 0:  # becomes a new dim of size 1, indexed by [0] or []
            index_shapes.append((int(k),))
            sliced.append(1)
        elif _is_mask(k):
            masks.append((k, len(sliced)))
            index_shapes += [(int(np.count_nonzero(k)),)] * k.ndim
            sliced += shape[dim:dim + k.ndim]
            dim += k.ndim
        elif isinstance(k, np.ndarray):
            index_shapes.append(k.shape)
            sliced.append(shape[dim])
            dim += 1
        else:
            dim += 1
    sliced += shape[dim:]
    for mask, at in masks:
        for j, n in enumerate(mask.shape):
            if n != sliced[at + j]:
                raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not match "
                                 f"the shape of the indexed tensor {list(sliced)} at index {at + j}")
    try:
        np.broadcast_shapes(*index_shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(s)) for s in index_shapes)) from None


def _index_shape(shape, key):
    """The shape ``a[key]`` has for an array of ``shape``, found on the host
    from a zero-copy broadcast scalar (no data is read or gathered)."""
    return np.broadcast_to(np.empty((), np.int8), shape)[key].shape


def _view_name(key, single, shape):
    """The backward name PyTorch gives a basic-indexing view: that of the last
    op its slicing applied (a full slice is skipped, except as a lone key)."""
    if single:
        k = key[0]
        return ("Unsqueeze" if k is None else "Alias" if k is Ellipsis
                else "Slice" if isinstance(k, slice) else "Select")
    name, dim = "Alias", 0
    consumed = builtins.sum(k is not None and k is not Ellipsis for k in key)
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - consumed
        elif k is None:
            name = "Unsqueeze"
        elif isinstance(k, slice):
            full = (k.start in (None, 0) and k.step in (None, 1)
                    and (k.stop is None or k.stop >= shape[dim]))
            if not full:
                name = "Slice"
            dim += 1
        else:
            name = "Select"
            dim += 1
    return name


def _index_error(error):
    return IndexError(str(error).replace("axis", "dimension"))


class IndexBackward(Node):
    __slots__ = ("shape",)
    op_name = "Index"

    def __init__(self, source, key):
        super().__init__([source])
        self.saved = (SavedValue(key),)  # its index arrays: freed after backward, as PyTorch's
        self.shape = source._data.shape

    def backward(self, grad):
        (key,) = self.saved_values()
        backend = backend_of(grad)
        out = backend.zeros(self.shape, grad.dtype)
        backend.add_at(out, key, grad)
        return [out]


class IndexPutBackward(Node):
    __slots__ = ()
    op_name = "IndexPut"

    def __init__(self, target, value, key):
        super().__init__([target, value])
        self.saved = (SavedValue(key),)  # as IndexBackward's

    def backward(self, grad):
        (key,) = self.saved_values()
        grad_target = grad.copy()
        grad_target[key] = 0
        return [grad_target, grad[key]]


def _split_key(key):
    """PyTorch indexes in two steps: the basic items (ints, slices, None,
    Ellipsis) make a view, then the index arrays pick from that view (so an
    int never takes part in advanced-index broadcasting). Returns
    ``(view_key, index_key)``; ``index_key`` is None for a basic key."""
    view_key, index_key, advanced = [], [], False
    for k in key:
        if _is_mask(k) and k.ndim == 0:  # PyTorch: unsqueeze, then index it with [0] or []
            advanced = True
            view_key.append(None)
            index_key.append(np.arange(1 if k else 0))
        elif isinstance(k, np.ndarray):
            advanced = True
            view_key += [slice(None)] * (k.ndim if _is_mask(k) else 1)
            index_key.append(k)
        elif k is None or isinstance(k, slice):
            view_key.append(k)
            index_key.append(slice(None))
        elif k is Ellipsis:
            view_key.append(k)
            index_key.append(k)
        else:  # an int: its dimension is gone from the view
            view_key.append(k)
    return tuple(view_key), (tuple(index_key) if advanced else None)


def _basic_view(a, key):
    """``a[key]`` for a basic key, with PyTorch's strides for the dims that
    None inserts (the size times the stride of the dim it is inserted before,
    at the time it is applied, or 1 at the end); NumPy gives them stride 0."""
    out = a[key]
    if not any(k is None for k in key):
        return out
    shape, strides = list(a.shape), list(a.strides)
    consumed = builtins.sum(k is not None and k is not Ellipsis for k in key)
    dim = 0
    new_strides = list(out.strides)
    for k in key:
        if k is Ellipsis:
            dim += len(a.shape) - consumed
        elif k is None:
            stride = shape[dim] * strides[dim] if dim < len(shape) else a.itemsize
            shape.insert(dim, 1)
            strides.insert(dim, stride)
            new_strides[dim] = stride
            dim += 1
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[dim])
            shape[dim] = len(range(start, stop, step))
            strides[dim] *= step
            dim += 1
        else:
            del shape[dim], strides[dim]
    return backend_of(out).as_strided(out, out.shape, new_strides)


def _view(self, view_key, name):
    key = view_key if any(k is Ellipsis for k in view_key) else view_key + (Ellipsis,)
    try:  # (the Ellipsis makes an all-integer key give a 0-d view, not a NumPy scalar)
        self._data[key]
    except IndexError as error:
        raise _index_error(error) from None
    shape, backend = self._data.shape, self._backend
    return make_view(self, name, lambda a: _basic_view(a, key),
                     lambda g: backend.scatter_into_view(shape, g.dtype, lambda z: z[key], g))


def _zero_dim_check(self, key):
    """PyTorch's messages for a lone int or slice on a 0-d tensor."""
    if self.ndim == 0 and not isinstance(key, tuple):
        if isinstance(key, numbers.Integral) and not isinstance(key, (bool, np.bool_)):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        if isinstance(key, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def getitem(self, key):
    _zero_dim_check(self, key)
    np_key, basic = _as_key(self, key)
    _check_key(self, np_key)
    view_key, index_key = _split_key(np_key)
    if index_key is None:
        return _view(self, view_key, _view_name(view_key, not isinstance(key, tuple),
                                                self._data.shape))
    name = _view_name(view_key, False, self._data.shape)
    source = self if name == "Alias" else _view(self, view_key, name)
    try:
        data = source._data[index_key]
    except IndexError as error:
        raise _index_error(error) from None
    record = grad_mode.is_grad_enabled() and source.requires_grad
    node = IndexBackward(source, index_key) if record else None
    return Tensor._from_op(self._backend.ascontiguous(data), node, self.dtype, self._backend)


def _strip_leading_ones(value):
    """PyTorch's slicePrefix1sDims: a value may carry extra leading size-1 dims."""
    shape = value._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return views.view(value, shape[k:]) if k else value


def _value_to_device(self, value, basic):
    """A value on another device, as PyTorch takes it: a basic key writes with
    copy_, which copies across devices (taped); index_put_ moves only a 0-d value."""
    if basic or value.ndim == 0:
        return copying.to_backend(value, self._backend)
    gpu = self if self.is_cuda else value  # TensorIterator names the GPU first
    raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                       f"devices, {gpu.device} and cpu!")


def setitem(self, key, value):
    if isinstance(value, Tensor):
        pass
    elif not isinstance(value, (numbers.Number, np.bool_)) or isinstance(value, complex):
        raise TypeError(f"can't assign a {type(value).__name__} to a nbgrad.{self.dtype.tensor_type}")
    elif isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:  # any dtype, as PyTorch
        raise ValueError("Overflow when unpacking long long")
    else:
        dtypes.check_scalar(value, self.dtype)  # NaN into int64, 1e300 into float32: refused
    if isinstance(key, (bool, np.bool_)):
        if not key:
            return  # PyTorch writes nothing (and counts no write) for x[False] = v
        key = None  # x[True] = v writes through x.unsqueeze(0)
    _zero_dim_check(self, key)
    np_key, basic = _as_key(self, key)
    _check_key(self, np_key)
    view_key, index_key = _split_key(np_key)
    if isinstance(value, Tensor) and value._backend is not self._backend:
        value = _value_to_device(self, value, basic=index_key is None)
    # The basic items select a view to write into; a key that selects
    # everything writes into the tensor itself, as in PyTorch.
    name = _view_name(view_key, False, self._data.shape)
    target = self if name == "Alias" else _view(self, view_key, name)
    if index_key is None:  # PyTorch's copy_to
        row = BY_NAME["copy"] if isinstance(value, Tensor) else BY_NAME["fill"]
        if isinstance(value, Tensor) and value.shape != target.shape:
            if value.ndim == 0:
                row = BY_NAME["fill"]
            else:
                value = _strip_leading_ones(value)
                with grad_mode.no_grad():
                    views.expand(value, target.shape)  # PyTorch's size check and message
        if row is BY_NAME["copy"]:  # fill_ reads its 0-d value before writing (no check)
            mutation.check_no_partial_overlap(self._backend, target._data, value._data)
        if self.dtype.is_floating_point:
            apply_inplace(row, target, (value,), op_name="__setitem__")
        else:  # an integer or bool tensor records no history
            with grad_mode.no_grad():
                apply_inplace(row, target, (value,), op_name="__setitem__")
        return
    if isinstance(value, Tensor):
        value = _strip_leading_ones(value)
    try:
        region_shape = _index_shape(target._data.shape, index_key)
    except IndexError as error:
        raise _index_error(error) from None
    if isinstance(value, Tensor):
        if value.dtype is not self.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{_TYPE_NAMES[self.dtype.name]} for the destination and "
                               f"{_TYPE_NAMES[value.dtype.name]} for the source.")
        raw, backend = value._data, self._backend
        try:
            if np.broadcast_shapes(raw.shape, region_shape) != region_shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(raw.shape)} cannot be "
                               f"broadcast to indexing result of shape {list(region_shape)}") from None
        mutation.check_no_overlap(backend, target._data, raw)  # index_put_'s check
        if backend.may_share_memory(raw, target._data):
            raw = raw.copy()  # read the value before the write
    else:
        raw = value
    value_requires_grad = (isinstance(value, Tensor) and value.requires_grad
                           and self.dtype.is_floating_point)

    def kernel():
        target._data[index_key] = raw

    mutation.write(target, "__setitem__", kernel,
                   lambda: IndexPutBackward(target, value if isinstance(value, Tensor) else None,
                                            index_key),
                   value_requires_grad)
