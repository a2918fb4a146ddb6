"""``tensor[key]`` and ``tensor[key] = value``. Basic keys (ints, slices,
None, Ellipsis) give views; integer-array and boolean keys give copies."""
import builtins
import numbers
import warnings

import numpy as np

from .. import dtypes
from ..declarations.op_table import BY_NAME
from ..tape import grad_mode
from ..tape.version_counter import user_stacklevel
from ..tape.graph import Node, SavedValue
from ..backends import backend_of, layout
from ..tensor import Tensor
from . import arrays, copying, mutation, views
from .arrays import ops_for
from .elementwise import _TYPE_NAMES
from .views import make_view


def _as_key(self, key):
    """(numpy key, is_basic) for indexing ``self``."""
    items = key if isinstance(key, tuple) else (key,)
    converted = []
    basic = True
    for item in items:
        if isinstance(item, Tensor):
            # (a float tensor is refused later, by _check_indices, as by PyTorch's index kernels)
            integral = not item.dtype.is_floating_point and item.dtype is not dtypes.bool_
            if item.ndim == 0 and integral:
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
            if item.dtype.kind == "f":  # PyTorch reads numbers (and []) as int64 indices, truncated
                if not np.all((item >= -2.0 ** 63) & (item < 2.0 ** 63)):  # NaN is out of range too
                    raise RuntimeError("value cannot be converted to type int64 without overflow")
                item = item.astype(np.int64)
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


def _consumed(key):
    """How many dims of the indexed tensor ``key`` consumes."""
    return builtins.sum(k.ndim if _is_mask(k) else 1 for k in key
                        if k is not None and k is not Ellipsis)


def _check_key(self, key):
    """PyTorch's checks and messages for a key as Python reads it, before NumPy sees it."""
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if _consumed(key) > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")


def _check_indices(self, key):
    """PyTorch's checks and messages for the index arrays of a key (masks'
    dtypes, shapes, broadcasting), made by its index and index_put_ kernels."""
    if any(isinstance(k, np.ndarray) and k.dtype.kind == "f" for k in key):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    consumed, shape = _consumed(key), self._data.shape
    # The shape of the tensor the advanced indices apply to (after the basic
    # ones), and the sizes of the dimensions they index.
    sliced, masks, index_shapes, indexed, dim = [], [], [], [], 0
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
            indexed += shape[dim:dim + k.ndim]
            dim += k.ndim
        elif isinstance(k, np.ndarray):
            index_shapes.append(k.shape)
            sliced.append(shape[dim])
            indexed.append(shape[dim])
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
        replaced = np.broadcast_shapes(*index_shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(s)) for s in index_shapes)) from None
    if 0 in indexed and 0 not in replaced:  # no index is valid for an empty dimension
        raise IndexError("index is out of bounds for dimension with size 0")


def _index_shape(shape, key):
    """The shape ``a[key]`` has for an array of ``shape``, found on the host
    from a zero-copy broadcast scalar (no data is read or gathered). Its index
    arrays are bounds-checked only when that shape is not empty: PyTorch
    checks them in its kernel, which then never runs."""
    scalar = np.broadcast_to(np.empty((), np.int8), shape)
    unchecked = scalar[tuple(np.zeros_like(k) if isinstance(k, np.ndarray) and not _is_mask(k)
                             else k for k in key)].shape
    if 0 not in unchecked:
        scalar[key]  # NumPy's out-of-range error
    return unchecked


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


def _index_strides(a, key):
    """Element strides of PyTorch's result of the raw array ``a`` indexed by
    the advanced ``key`` (None: C order). PyTorch's index kernel is a
    TensorIterator whose output follows the layout of its inputs: ``a``
    restrided (the indexed dims replaced by the broadcast index shape, stride
    0; moved to the front first when not adjacent) and the index tensors
    (masks as their nonzero() columns), with size-1 dims for the other dims."""
    consumed = _consumed(key)
    per_dim = []
    for k in key:
        if k is Ellipsis:
            per_dim += [None] * (a.ndim - consumed)
        elif isinstance(k, slice):  # always a full slice here
            per_dim.append(None)
        elif _is_mask(k):  # a mask column orders dims as a contiguous index does
            per_dim += [np.arange(np.count_nonzero(k))] * k.ndim
        else:
            per_dim.append(k)
    per_dim += [None] * (a.ndim - len(per_dim))
    indexed = [d for d, k in enumerate(per_dim) if k is not None]
    order = list(range(a.ndim))
    if indexed[-1] - indexed[0] + 1 != len(indexed):  # PyTorch's transposeToFront
        order = indexed + [d for d in order if d not in indexed]
    shape = [a.shape[d] for d in order]
    strides = [a.strides[d] // a.itemsize for d in order]
    indices = np.broadcast_arrays(*(per_dim[d] for d in indexed))
    replaced, before = indices[0].shape, order.index(indexed[0])
    after = a.ndim - before - len(indexed)
    end = before + len(indexed)

    def operand(shape, strides):  # only its shape and strides are read
        return np.lib.stride_tricks.as_strided(np.empty(1, np.int8), shape, strides)

    operands = [operand(shape[:before] + list(replaced) + shape[end:],
                        strides[:before] + [0] * len(replaced) + strides[end:])]
    for index in indices:  # reshaped as PyTorch's view gives the size-1 dims strides
        s = [st // index.itemsize for st in index.strides]
        lead, trail = (replaced[0] * s[0], s[-1]) if s else (1, 1)
        operands.append(operand((1,) * before + replaced + (1,) * after,
                                [lead] * before + s + [trail] * after))
    return layout.elementwise_strides(operands[0].shape, operands)


def _gather(a, key):
    """``a[key]`` for an advanced ``key``, laid out as PyTorch's index gives it."""
    backend = backend_of(a)
    data = a[key]
    strides = _index_strides(a, key)
    return layout.c_order(backend, data) if strides is None else layout.copy(backend, data, strides)


def _index_error(error):
    return IndexError(str(error).replace("axis", "dimension"))


def gather_array(a, key):
    """``a[key]`` (raw) for an advanced ``key`` selecting a non-empty region,
    laid out as PyTorch's index gives it (``arrays.RawArrays.gather``)."""
    return _gather(a, key)


class IndexBackward(Node):
    """Advanced indexing's backward: the gradient added where it was read
    (an index_put with accumulation, as PyTorch's); also ``gather``'s."""

    __slots__ = ("shape",)
    op_name = "Index"

    def __init__(self, source, key):
        super().__init__([source])
        self.saved = (SavedValue(key),)  # its index arrays: freed after backward, as PyTorch's
        self.shape = source._data.shape

    def backward(self, grad):
        (key,) = self.saved_values()
        # (an empty result read nothing: index_add adds nothing, its indices may be out of range)
        return [ops_for(grad).index_add(self.shape, key, grad)]


class IndexPutBackward(Node):
    __slots__ = ()
    op_name = "IndexPut"

    def __init__(self, target, value, key):
        super().__init__([target, value])
        self.saved = (SavedValue(key),)  # as IndexBackward's

    def backward(self, grad):
        xp = ops_for(grad)
        (key,) = self.saved_values()
        region = _index_shape(tuple(grad.shape), key)
        if 0 in region:  # an empty region was not written (its indices may be out of range)
            return [xp.copy(grad), xp.zeros(region, grad.dtype)]
        return [xp.zero_at(grad, key), xp.gather(grad, key) if self.needs_grad(1) else None]


# -- advanced indexing's gradients as ops of their own (``arrays.ops_for``
# reaches them): a gather and an index_add are each other's gradients; zeroing
# the indexed elements is its own.
class IndexAddBackward(Node):
    """``index_add``'s backward: the values' gradient gathered where they were added."""

    __slots__ = ("empty",)
    op_name = "IndexPutImpl"  # PyTorch's index backward: an accumulating index_put_ into zeros

    def __init__(self, values, key):
        super().__init__([values])
        self.saved = (SavedValue(key),)
        self.empty = values._data.size == 0

    def backward(self, grad):
        xp = ops_for(grad)
        (key,) = self.saved_values()
        if self.empty:  # nothing was added (the indices may be out of range)
            return [xp.zeros(_index_shape(tuple(grad.shape), key), grad.dtype)]
        return [xp.gather(grad, key)]


class ZeroAtBackward(Node):
    """``zero_at``'s backward: the gradient, zeroed where the values were."""

    __slots__ = ()
    op_name = "IndexPut"  # PyTorch's: an index_put_ of zeros

    def __init__(self, source, key):
        super().__init__([source])
        self.saved = (SavedValue(key),)

    def backward(self, grad):
        (key,) = self.saved_values()
        return [ops_for(grad).zero_at(grad, key)]


def _recording(t):
    return grad_mode.is_grad_enabled() and t.requires_grad


def gather(self, key):
    """``self[key]`` for an advanced ``key`` (split: index arrays, full
    slices, Ellipsis) selecting a non-empty region; taped (its gradient is
    ``index_add``)."""
    data = ops_for(self._data).gather(self._data, key)
    node = IndexBackward(self, key) if _recording(self) else None
    return Tensor._from_op(data, node, self.dtype, self._backend)


def index_add(values, shape, key):
    """Zeros of ``shape`` with the Tensor ``values`` added at ``key``; taped
    (its gradient is ``gather``)."""
    data = ops_for(values._data).index_add(shape, key, values._data)
    node = IndexAddBackward(values, key) if _recording(values) else None
    return Tensor._from_op(data, node, values.dtype, values._backend)


def zero_at(self, key):
    """A copy of ``self`` with zeros at ``key``; taped (its gradient is ``zero_at``)."""
    data = ops_for(self._data).zero_at(self._data, key)
    node = ZeroAtBackward(self, key) if _recording(self) else None
    return Tensor._from_op(data, node, self.dtype, self._backend)


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
    shape = self._data.shape

    def view_fn(a):  # (its dims from None have strides, not 0: the gradient's scatter copies)
        return _basic_view(a, key)
    return make_view(self, name, view_fn,
                     lambda g, xp: xp.scatter_into_view(shape, view_fn, g))


def _zero_dim_check(self, key):
    """PyTorch's messages for a lone int or slice on a 0-d tensor."""
    if self.ndim == 0 and not isinstance(key, tuple):
        if isinstance(key, numbers.Integral) and not isinstance(key, (bool, np.bool_)):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        if isinstance(key, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _plain_basic(key, ndim):
    """Whether ``key`` is a tuple of at most ``ndim`` ints and step-1 slices:
    the commonest keys (``x[:, 0]``), which need none of the general path's checks."""
    if len(key) > ndim:
        return False
    for k in key:
        if k.__class__ is not int and (k.__class__ is not slice or k.step is not None):
            return False
    return True


def getitem(self, key):
    cls = key.__class__
    if self._data.ndim:  # the commonest keys first: x[i], x[a:b], x[:, i]
        if cls is int:
            return _view(self, (key,), "Select")
        if cls is slice and key.step is None:
            return _view(self, (key,), "Slice")
        if cls is tuple and _plain_basic(key, self._data.ndim):
            return _view(self, key, _view_name(key, False, self._data.shape))
    _zero_dim_check(self, key)
    np_key, basic = _as_key(self, key)
    _check_key(self, np_key)
    view_key, index_key = _split_key(np_key)
    if index_key is None:
        return _view(self, view_key, _view_name(view_key, not isinstance(key, tuple),
                                                self._data.shape))
    name = _view_name(view_key, False, self._data.shape)
    source = self if name == "Alias" else _view(self, view_key, name)
    _check_indices(self, np_key)  # after the basic items' checks, as PyTorch's
    try:
        shape = _index_shape(source._data.shape, index_key)
    except IndexError as error:
        raise _index_error(error) from None
    data = _gather(source._data, index_key) if 0 not in shape else \
        self._backend.empty(shape, self.dtype.numpy)
    record = grad_mode.is_grad_enabled() and source.requires_grad
    node = IndexBackward(source, index_key) if record else None
    return Tensor._from_op(data, node, self.dtype, self._backend)


def _strip_leading_ones(value):
    """PyTorch's slicePrefix1sDims: a value may carry extra leading size-1 dims."""
    shape = value._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return views.view(value, shape[k:]) if k else value


_EXPANDED = ("Use of {} on expanded tensors is deprecated. Please clone() the tensor before "
             "performing this operation. This also applies to advanced indexing e.g. {}")


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
    # A one-element value on the host lets PyTorch's index_put_ hand a lone mask to masked_fill_.
    one_value = not isinstance(value, Tensor) or (value._data.size == 1 and not value.is_cuda)
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
        copying.write_row(row, target, value, "__setitem__")
        return
    if isinstance(value, Tensor):
        value = _strip_leading_ones(value)
    value_requires_grad = (isinstance(value, Tensor) and value.requires_grad
                           and self.dtype.is_floating_point)
    # PyTorch's order: autograd's check, then index_put_'s (it writes into an
    # expanded tensor, with a warning), then masked_fill_'s for a lone mask.
    mutation.check_inplace(target, value_requires_grad, internal=False)
    expanded = mutation.has_internal_overlap(target._data)
    if expanded:
        warnings.warn(_EXPANDED.format("index_put_", "tensor[indices] = tensor"),
                      stacklevel=user_stacklevel())
    _check_indices(self, np_key)
    arrays = [k for k in index_key if isinstance(k, np.ndarray)]
    # index_put_ hands a lone mask and a one-element value to masked_fill_,
    # which neither checks overlaps nor dtypes (it takes the value's item).
    masked_fill = one_value and len(arrays) == 1 and _is_mask(arrays[0])
    if expanded and masked_fill:
        warnings.warn(_EXPANDED.format("masked_fill_", "tensor[mask] = scalar"),
                      stacklevel=user_stacklevel())
    try:
        region_shape = _index_shape(target._data.shape, index_key)
    except IndexError as error:
        raise _index_error(error) from None
    if isinstance(value, Tensor) and masked_fill:
        raw = value._data.copy()  # read the value before the write
    elif isinstance(value, Tensor):  # index_put_'s checks, in its order
        mutation.check_no_overlap(target, value)
        raw, backend = value._data, self._backend
        try:
            if np.broadcast_shapes(raw.shape, region_shape) != region_shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(raw.shape)} cannot be "
                               f"broadcast to indexing result of shape {list(region_shape)}") from None
        if value.dtype is not self.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{_TYPE_NAMES[self.dtype.name]} for the destination and "
                               f"{_TYPE_NAMES[value.dtype.name]} for the source.")
        if backend.may_share_memory(raw, target._data):
            raw = raw.copy()  # read the value before the write
    else:
        raw = value

    def kernel():
        if 0 not in region_shape:  # (an empty region's indices may be out of range)
            target._data[index_key] = raw

    mutation.write(target, "__setitem__", kernel,
                   lambda: IndexPutBackward(target, value if isinstance(value, Tensor) else None,
                                            index_key),
                   value_requires_grad, checked=True)
