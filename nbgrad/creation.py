"""Tensor creation functions, named and behaving as in PyTorch."""
import numbers

import numpy as np

from . import dtypes
from .backends import for_device
from .device import device as Device
from .tensor import Tensor

_generator = np.random.default_rng()


def manual_seed(seed):
    """Seed nbgrad's random number generator (a NumPy PCG64 generator)."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


def _make(make, dtype, device, requires_grad):
    """A tensor over ``make(backend)``, the raw array made by ``device``'s backend."""
    if requires_grad and not dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    backend = for_device(Device(device if device is not None else "cpu"))
    t = Tensor._wrap(make(backend), dtype, backend)
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
    for k, s in enumerate(size):
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"{name or 'size'}(): argument 'size' (position 1) must be tuple of ints, "
                            f"but found element of type {type(s).__name__} at pos {k}")
    for s in size:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _infer_dtype(array):
    if array.dtype.kind == "f" and array.dtype.itemsize <= 4:
        return dtypes.float32
    return dtypes.canonical(array.dtype)


def _scan(data):
    """Convert nested sequences that may hold 0-d tensors to plain values."""
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_scan(d) for d in data]
    return data


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data``."""
    dtype = dtypes.to_dtype(dtype)
    if isinstance(data, Tensor):
        array = data._backend.to_numpy(data._data)
        device = data.device if device is None else device
    elif isinstance(data, (np.ndarray, np.generic)):
        array = np.asarray(data)
    else:
        array = np.asarray(_scan(data))
        if array.dtype == object:
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
        if array.dtype.kind == "f" and dtype is None:
            dtype = dtypes.get_default_dtype()
    dtype = dtype or _infer_dtype(array)
    return _finish(np.array(array, dtype=dtype.numpy, copy=True), dtype, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a NumPy array (or Tensor) when
    no conversion is needed."""
    dtype = dtypes.to_dtype(dtype)
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
    """A tensor sharing memory with ``array`` (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return Tensor._wrap(array, dtypes.from_numpy_dtype(array.dtype))


def _filled(shape, fill, dtype, device, requires_grad):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    return _make(lambda backend: backend.full(shape, fill, dtype.numpy), dtype, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _filled(_size(size, "zeros"), 0, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled(_size(size, "ones"), 1, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    shape = _size(size, "empty")
    return _make(lambda backend: backend.empty(shape, dtype.numpy), dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _filled(_size((size,), "full"), fill_value, dtype, device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    for name, value in (("n", n), ("m", m)):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    return _finish(np.eye(n, m, dtype=dtype.numpy), dtype, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = dtypes.int64 if integral else dtypes.get_default_dtype()
    dtype = dtypes.to_dtype(dtype)
    data = np.arange(start, end, step, dtype=np.float64 if dtype.is_floating_point else None)
    return _finish(data.astype(dtype.numpy), dtype, device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    return _finish(np.linspace(start, end, steps).astype(dtype.numpy), dtype, device, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    shape = _size(size, "rand")
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{dtype.tensor_type[:-6]}'")
    data = _generator.random(shape, dtype=dtype.numpy)
    return _finish(data, dtype, device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    shape = _size(size, "randn")
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{dtype.tensor_type[:-6]}'")
    data = _generator.standard_normal(shape, dtype=dtype.numpy)
    return _finish(data, dtype, device, requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False):
    """``randint(high, size)`` or ``randint(low, high, size)``, as in PyTorch."""
    if size is None:
        if not isinstance(high, (tuple, list)):
            raise TypeError("randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(high).__name__}")
        low, high, size = 0, low, high
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(size).__name__}")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    dtype = dtypes.to_dtype(dtype) or dtypes.int64
    data = _generator.integers(low, high, size=_size((size,), "randint")).astype(dtype.numpy)
    return _finish(data, dtype, device, requires_grad)


def _like(fn):
    def like(input, dtype=None, device=None, requires_grad=False):
        return fn(input.shape, dtype=dtype or input.dtype,
                  device=device or input.device, requires_grad=requires_grad)
    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"``{fn.__name__}`` with the shape (and by default the dtype and device) of ``input``."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    return full(input.shape, fill_value, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)
