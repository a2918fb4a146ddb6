"""Tensor creation functions, named and behaving as in PyTorch."""
import numbers
import operator
import warnings

import numpy as np

from . import dtypes
from .backends import for_device, layout
from .device import device as Device
from .random import default_generator, manual_seed, stream_for  # noqa: F401
from .tensor import Tensor

# The default generator's NumPy generator (nn.init and checkpoint draw from it;
# manual_seed reseeds this very object).
_generator = default_generator._stream


class OutOfMemoryError(RuntimeError, MemoryError):
    """An allocation the machine cannot satisfy: a RuntimeError as in PyTorch,
    and still a MemoryError for code that catches NumPy's."""


def _make(make, dtype, device, requires_grad, shape=None):
    """A tensor over ``make(backend)``, the raw array made by ``device``'s backend
    (``shape``: checked for a storage size that overflows before allocating)."""
    if requires_grad and not dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    backend = for_device(Device(device if device is not None else "cpu"))
    nbytes = dtype.itemsize
    for n in shape or ():
        nbytes *= n
    if nbytes >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    try:
        data = make(backend)
    except MemoryError:
        raise OutOfMemoryError(f"DefaultCPUAllocator: can't allocate memory: you tried to "
                               f"allocate {nbytes} bytes.") from None
    t = Tensor._wrap(data, dtype, backend)
    t._requires_grad = bool(requires_grad)
    return t


def _finish(data, dtype, device, requires_grad):
    """A tensor holding the host array ``data``, copied to ``device`` if not the CPU."""
    return _make(lambda backend: backend.asarray(data), dtype, device, requires_grad)


def _size(size, name=None):
    """A shape from ``*size`` (ints, or one tuple/list of ints), checked as PyTorch does."""
    if name is not None and not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    elif len(size) == 1 and (isinstance(size[0], bool) or not hasattr(size[0], "__index__")):
        raise TypeError(f"{name or 'size'}(): argument 'size' (position 1) must be tuple of ints, "
                        f"not {type(size[0]).__name__}")
    shape = []
    for k, s in enumerate(size):
        try:
            shape.append(operator.index(s))  # ints, NumPy ints and one-element int tensors
        except TypeError:
            raise TypeError(f"{name or 'size'}(): argument 'size' failed to unpack the object at "
                            f"pos {k + 1} with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"") from None
        if not -2 ** 63 <= shape[-1] < 2 ** 63:
            raise TypeError(f"{name or 'size'}(): argument 'size' failed to unpack the object at "
                            f"pos {k + 1} with error \"Overflow when unpacking long long\"")
    for s in shape:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {shape}")
    return tuple(shape)


def _sequence_size(size, name, position=1):
    """``size`` given as one tuple or list argument (``full``, ``randint``)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{name}(): argument 'size' (position {position}) must be tuple of ints, "
                        f"not {type(size).__name__}")
    for k, s in enumerate(size):
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{name}(): argument 'size' (position {position}) must be tuple of "
                            f"ints, but found element of type {type(s).__name__} at pos {k}")
    return _size((size,), name)


def _infer_dtype(array):
    return dtypes.canonical(array.dtype)


_MAX_DIMS = 64  # NumPy's limit


def _walk(data):
    """A NumPy array for nested sequences that NumPy could not convert to
    numbers: checked level by level without recursion (any depth), refused
    with PyTorch's errors (ragged lists, strings, None, ...). Python ints
    outside int64 give an object array: ``_python_data`` refuses them unless
    the result is floating point."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")

    def unpack(item):  # tensors and arrays inside the data count as their values
        return item.tolist() if isinstance(item, (Tensor, np.ndarray)) else item

    shape, item = [], unpack(data)
    while isinstance(item, (list, tuple, range, str)):  # the first elements fix the shape
        if isinstance(item, str) or len(shape) == _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(item).__name__}'")
        shape.append(len(item))
        item = unpack(item[0]) if len(item) else None
    flat, stack = [], [(data, 0)]
    while stack:
        item, depth = stack.pop()
        item = unpack(item)
        if isinstance(item, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
        if depth < len(shape):
            if not isinstance(item, (list, tuple, range)):
                raise TypeError(f"not a sequence: expected a sequence of length {shape[depth]} "
                                f"at dim {depth}, got {type(item).__name__}")
            if len(item) != shape[depth]:
                raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} "
                                 f"(got {len(item)})")
            stack.extend((child, depth + 1) for child in reversed(item))
        elif isinstance(item, (list, tuple, range)):
            raise TypeError(f"'{type(item).__name__}' object cannot be interpreted as a number: "
                            f"expected a number at dim {depth}")
        elif isinstance(item, (bool, np.bool_, numbers.Integral, numbers.Real)):
            flat.append(item)
        elif isinstance(item, numbers.Complex):
            raise TypeError("nbgrad does not support complex numbers")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(item).__name__}")
    if any(not isinstance(v, numbers.Integral) for v in flat):
        return np.array([float(v) for v in flat], dtype=np.float64).reshape(shape)
    if all(isinstance(v, (bool, np.bool_)) for v in flat):
        return np.array(flat, dtype=np.bool_).reshape(shape)
    if all(-2 ** 63 <= v < 2 ** 63 for v in flat):
        return np.array(flat, dtype=np.int64).reshape(shape)
    return np.array(flat, dtype=object).reshape(shape)  # out of int64: see ``tensor``


def _python_data(data, dtype):
    """An array for Python data (numbers, nested sequences, 0-d tensors) and
    the dtype of the tensor made from it, both as PyTorch infers them."""
    try:
        array = np.asarray(data)  # the common case, converted in C
    except Exception:  # noqa: BLE001 - ragged, too deep, ...: _walk diagnoses it
        array = None
    if array is None or array.dtype.kind not in "biuf":
        array = _walk(data)
    kind = array.dtype.kind
    if dtype is None:
        dtype = dtypes.get_default_dtype() if kind == "f" else dtypes.canonical(
            np.int64 if kind in "uO" else array.dtype)
    if kind in "uO" and not dtype.is_floating_point and dtype is not dtypes.bool_:
        if kind == "O" or (array.size and array.max() >= 2 ** 63):  # Python ints beyond int64
            raise ValueError("Overflow when unpacking long long")
    if kind == "O":
        array = array.astype(np.float64)
    elif kind == "f" and dtype is dtypes.int64 and not np.all(
            (array >= -2.0 ** 63) & (array < 2.0 ** 63)):  # False for NaN
        raise RuntimeError("value cannot be converted to type int64 without overflow")
    elif dtype.category == 1 and dtype is not dtypes.int64 and array.size:
        info = np.iinfo(dtype.numpy)  # a narrow integer: in range (a negative one wraps into uint8)
        low = -int(info.max) if info.min == 0 else int(info.min)
        if not np.all((array >= low) & (array <= info.max)):  # False for NaN
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    return array, dtype


def tensor(data, dtype=None, device=None, requires_grad=False):
    """tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A new tensor holding a copy of ``data``: a number, nested lists or tuples
    of numbers (or of one-element tensors), a NumPy array or a Tensor. The
    dtype is inferred as PyTorch infers it (bool < int64 < the default float)
    unless given."""
    dtype = dtypes.to_dtype(dtype, "tensor")
    if isinstance(data, Tensor):
        array = data._backend.to_numpy(data._data)
        device = data.device if device is None else device
    elif isinstance(data, (np.ndarray, np.generic)):
        array = np.asarray(data)
        if array.dtype.kind in "OUS":
            raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype.type.__name__}")
        if (dtype in (None, dtypes.int64) and array.dtype == np.uint64 and array.size
                and array.max() >= 2 ** 63):  # nbgrad has no uint64: refused, never wrapped
            raise RuntimeError("value cannot be converted to type int64 without overflow")
    else:
        array, dtype = _python_data(data, dtype)
    dtype = dtype or _infer_dtype(array)
    if array.dtype.kind == "f" and dtype is dtypes.int64:
        with np.errstate(invalid="ignore"):  # an array's NaN into int64: INT64_MIN, as PyTorch
            array = array.astype(np.int64)
    with np.errstate(over="ignore"):  # beyond float16's range: inf, as PyTorch, silently
        array = np.array(array, dtype=dtype.numpy, copy=True)
    return _finish(array, dtype, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a NumPy array (or Tensor) when
    no conversion is needed."""
    dtype = dtypes.to_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data.device,
                       dtype=dtype if dtype is not None else data.dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype) and (
            device is None or Device(device).type == "cpu"):
        try:
            return from_numpy(data)
        except TypeError:
            pass
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """from_numpy(ndarray) -> Tensor

    A tensor sharing memory with ``array`` (no copy). A read-only array is
    copied instead, with a warning: nbgrad's kernels write in place, and the
    array's owner said it must not be written."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype not in dtypes._BY_NUMPY:
        raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype.type.__name__}. The "
                        "only supported types are: float64, float32, float16, int64, int32, "
                        "int16, int8, uint8, and bool.")
    if not array.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and nbgrad does not support "
                      "non-writable tensors. The tensor holds a copy of the array (it does not "
                      "share its memory). You may want to make the array writable before "
                      "converting it to a tensor.", UserWarning, stacklevel=2)
        array = array.copy()
    return Tensor._wrap(array, dtypes.from_numpy_dtype(array.dtype))


def _number(value, fn, name, position=None):
    """``value`` if it is a real number (a bool, int, float or 0-d tensor); else
    PyTorch's TypeError naming ``fn``'s argument ``name``."""
    if isinstance(value, Tensor) and value.ndim == 0:
        return value.item()
    if isinstance(value, (numbers.Real, np.bool_)):
        return value
    where = f" (position {position})" if position else ""
    raise TypeError(f"{fn}(): argument '{name}'{where} must be Number, not "
                    f"{dtypes.type_name(value)}")


def _int(value, fn, name, position):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def _filled(shape, fill, dtype, device, requires_grad, fn):
    dtype = dtypes.to_dtype(dtype, fn) or dtypes.get_default_dtype()
    return _make(lambda backend: backend.full(shape, fill, dtype.numpy), dtype, device,
                 requires_grad, shape)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """zeros(*size, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A tensor of zeros of shape ``size`` (ints, or one tuple or list of ints)."""
    return _filled(_size(size, "zeros"), 0, dtype, device, requires_grad, "zeros")


def ones(*size, dtype=None, device=None, requires_grad=False):
    """ones(*size, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A tensor of ones of shape ``size`` (ints, or one tuple or list of ints)."""
    return _filled(_size(size, "ones"), 1, dtype, device, requires_grad, "ones")


def empty(*size, dtype=None, device=None, requires_grad=False):
    """empty(*size, *, dtype=None, device=None, requires_grad=False) -> Tensor

    An uninitialised tensor of shape ``size``."""
    dtype = dtypes.to_dtype(dtype, "empty") or dtypes.get_default_dtype()
    shape = _size(size, "empty")
    return _make(lambda backend: backend.empty(shape, dtype.numpy), dtype, device, requires_grad,
                 shape)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    """full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A tensor of shape ``size`` filled with ``fill_value``, whose dtype is
    inferred from the number unless given. A value that the dtype cannot hold
    is refused, as in PyTorch."""
    shape = _sequence_size(size, "full")
    fill_value = _number(fill_value, "full", "fill_value", 2)
    dtype = dtypes.to_dtype(dtype, "full") or dtypes.scalar_dtype(fill_value)
    dtypes.check_scalar(fill_value, dtype)
    return _filled(shape, fill_value, dtype, device, requires_grad, "full")


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A 2-D tensor with ones on the diagonal and zeros elsewhere."""
    for k, (name, value) in enumerate((("n", n), ("m", m))):
        if value is not None and _int(value, "eye", name, k + 1) < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    dtype = dtypes.to_dtype(dtype, "eye") or dtypes.get_default_dtype()
    shape = (n, n if m is None else m)
    return _make(lambda backend: backend.asarray(np.eye(n, m, dtype=dtype.numpy)), dtype, device,
                 requires_grad, shape)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """arange(start=0, end, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor

    The values from ``start`` up to (not including) ``end`` in steps of ``step``."""
    position = {"end": 1} if end is None else {}  # arange(end): PyTorch names the position
    if end is None:
        start, end = 0, start
    start, end, step = (_number(value, "arange", name, position.get(name))
                        for name, value in (("start", start), ("end", end), ("step", step)))
    for value in (start, end, step):
        dtypes.check_scalar(value, dtypes.float64)  # ints beyond 64 bits
        if value != value or value in (np.inf, -np.inf):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = dtypes.int64 if integral else dtypes.get_default_dtype()
    dtype = dtypes.to_dtype(dtype, "arange")
    if (end - start) / step * dtype.itemsize >= 2 ** 63:
        raise RuntimeError("invalid size, possible overflow?")
    data = np.arange(start, end, step, dtype=np.float64 if dtype.is_floating_point else None)
    return _finish(data.astype(dtype.numpy), dtype, device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor

    ``steps`` values evenly spaced from ``start`` to ``end`` inclusive."""
    start, end = _number(start, "linspace", "start", 1), _number(end, "linspace", "end", 2)
    if _int(steps, "linspace", "steps", 3) < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtypes.to_dtype(dtype, "linspace") or dtypes.get_default_dtype()
    def make(backend):
        return backend.asarray(np.linspace(start, end, steps).astype(dtype.numpy))
    return _make(make, dtype, device, requires_grad, (steps,))


def _random(size, dtype, device, requires_grad, fn, kind, kernel, generator):
    dtype = dtypes.to_dtype(dtype, fn) or dtypes.get_default_dtype()
    shape = _size(size, fn)
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtype.tensor_type[:-6]}'")
    _, stream = stream_for(generator, device or "cpu", fn)  # drawn where the tensor lives
    return _make(lambda backend: backend.random_fill(stream, shape, dtype.numpy, kind),
                 dtype, device, requires_grad, shape)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """rand(*size, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor

    Values drawn uniformly from [0, 1) by ``generator`` (default: nbgrad's)."""
    return _random(size, dtype, device, requires_grad, "rand", "uniform",
                   "check_uniform_bounds", generator)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """randn(*size, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor

    Values drawn from the standard normal distribution by ``generator`` (default: nbgrad's)."""
    return _random(size, dtype, device, requires_grad, "randn", "normal",
                   "normal_kernel_cpu", generator)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False, *,
            generator=None):
    """randint(low=0, high, size, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor

    ``randint(high, size)`` or ``randint(low, high, size)``: integers drawn
    uniformly from [low, high), as in PyTorch."""
    if size is None:
        if not isinstance(high, (tuple, list)):
            raise TypeError("randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(high).__name__}")
        low, high, size = 0, low, high
    shape = _sequence_size(size, "randint", 2)
    low, high = _int(low, "randint", "low", 1), _int(high, "randint", "high", 2)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    dtype = dtypes.to_dtype(dtype, "randint") or dtypes.int64
    _, stream = stream_for(generator, device or "cpu", "randint")
    return _make(lambda backend: backend.random_fill(stream, shape, dtype.numpy, "integers", low,
                                                     high), dtype, device, requires_grad, shape)


def _input(input, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{dtypes.type_name(input)}")
    return input


def _preserve_format(input, out):
    """``out`` (new, C-contiguous, seen by no one yet) in ``input``'s layout,
    as PyTorch's ``*_like`` make it (memory_format=torch.preserve_format)."""
    strides = layout.preserve_strides(input._data)
    if strides is not None:
        out._data = layout.copy(out._backend, out._data, strides)
    return out


def _like(fn):
    name = fn.__name__ + "_like"

    def like(input, dtype=None, device=None, requires_grad=False):
        _input(input, name)
        return _preserve_format(input, fn(input.shape, dtype=dtype or input.dtype,
                                          device=device or input.device,
                                          requires_grad=requires_grad))
    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"``{fn.__name__}`` with the shape (and by default the dtype and device) of ``input``."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    """``full`` with the shape (and by default the dtype and device) of ``input``."""
    _input(input, "full_like")
    return _preserve_format(input, full(input.shape, fill_value, dtype=dtype or input.dtype,
                                        device=device or input.device,
                                        requires_grad=requires_grad))
