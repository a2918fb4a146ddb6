"""Tensor creation functions, named and behaving as in PyTorch."""
import numbers

import numpy as np

from . import dtypes
from .backends import require_backend
from .device import device as Device
from .tensor import Tensor

_generator = np.random.default_rng()


def manual_seed(seed):
    """Seed nbgrad's random number generator (a NumPy PCG64 generator)."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


def _backend(device):
    return require_backend(Device(device).type if device is not None else "cpu")


def _finish(data, dtype, device, requires_grad):
    backend = _backend(device)
    t = Tensor._wrap(data, dtype, backend)
    if requires_grad:
        if not dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, numbers.Integral):
            raise TypeError(f"size must be a sequence of ints, got {type(s).__name__}")
        if s < 0:
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
        array = data._data
    elif isinstance(data, np.ndarray):
        array = data
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
        return data if dtype in (None, data.dtype) else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype):
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


def _filled(size, fill, dtype, device, requires_grad):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    return _finish(np.full(_size(size), fill, dtype=dtype.numpy), dtype, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _filled(size, 0, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled(size, 1, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    return _finish(np.empty(_size(size), dtype=dtype.numpy), dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _filled((size,), fill_value, dtype, device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    return _finish(np.eye(n, m, dtype=dtype.numpy), dtype, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = dtypes.int64 if integral else dtypes.get_default_dtype()
    dtype = dtypes.to_dtype(dtype)
    data = np.arange(start, end, step, dtype=np.float64 if dtype.is_floating_point else None)
    return _finish(data.astype(dtype.numpy), dtype, device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    return _finish(np.linspace(start, end, steps).astype(dtype.numpy), dtype, device, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    data = _generator.random(_size(size), dtype=dtype.numpy)
    return _finish(data, dtype, device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False):
    dtype = dtypes.to_dtype(dtype) or dtypes.get_default_dtype()
    data = _generator.standard_normal(_size(size), dtype=dtype.numpy)
    return _finish(data, dtype, device, requires_grad)


def randint(low, high=None, size=(), dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    dtype = dtypes.to_dtype(dtype) or dtypes.int64
    data = _generator.integers(low, high, size=_size((size,))).astype(dtype.numpy)
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
