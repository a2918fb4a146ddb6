"""``DeviceArray``: the CUDA backend's raw array.

A DeviceArray is a 1-D Numba device buffer (the storage) plus shape, strides
(in elements), an element offset and a dtype. It behaves like a NumPy array
for what nbgrad's autograd layer does to raw arrays: reshape, transpose and
basic indexing are views (pure metadata, sharing the buffer), integer-array
and boolean indexing gather into a new array, item assignment writes through
kernels, and reductions, casts and copies run on the device. It exposes
``__cuda_array_interface__`` so CuPy, PyTorch and Numba kernels can read it
without a copy. It never converts itself to a NumPy array implicitly (that
would hide a device-to-host copy): use ``copy_to_host()``.
"""
import numbers
import operator

import numpy as np

from . import _runtime
from .allocator import pool


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    return tuple(strides)


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _normalize_shape(shape):
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    return tuple(operator.index(s) for s in shape)


def _is_basic_item(k):
    return (k is None or k is Ellipsis or isinstance(k, slice)
            or (isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_))))


def _is_basic(key):
    items = key if isinstance(key, tuple) else (key,)
    return all(_is_basic_item(k) for k in items)


class _Flags:
    __slots__ = ("_a",)

    def __init__(self, a):
        self._a = a

    @property
    def c_contiguous(self):
        return self._a._is_c_contiguous()

    @property
    def f_contiguous(self):
        a = self._a
        t = DeviceArray(a._buf, a.shape[::-1], a.estrides[::-1], a.offset)
        return t._is_c_contiguous()

    @property
    def contiguous(self):
        return self.c_contiguous

    @property
    def writeable(self):
        """False for overlapping (broadcast) views, as for NumPy's broadcast_to."""
        return self._a.size <= 1 or not any(
            s == 0 and n > 1 for n, s in zip(self._a.shape, self._a.estrides))

    def __getitem__(self, name):
        return getattr(self, name.lower())

    def __repr__(self):
        return (f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}\n"
                f"  WRITEABLE : {self.writeable}")


class DeviceArray:
    """A strided view over a 1-D device buffer (see the module docstring)."""

    __slots__ = ("_buf", "shape", "estrides", "offset", "dtype")
    __array_ufunc__ = None  # NumPy defers its operators to ours (``np.float32(2) * a``)
    __hash__ = None

    def __init__(self, buf, shape, estrides=None, offset=0):
        self._buf = buf
        self.shape = tuple(int(n) for n in shape)
        self.estrides = (_contiguous_strides(self.shape) if estrides is None
                         else tuple(int(s) for s in estrides))
        self.offset = int(offset)
        self.dtype = np.dtype(buf.dtype)

    # ------------------------------------------------------------ metadata
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return _prod(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    @property
    def strides(self):
        """Byte strides, as NumPy gives them."""
        return tuple(s * self.itemsize for s in self.estrides)

    @property
    def flags(self):
        return _Flags(self)

    @property
    def buffer(self):
        """The 1-D Numba device array holding the storage."""
        return self._buf

    @property
    def T(self):
        return self.transpose()

    def _is_c_contiguous(self):
        if 0 in self.shape:
            return True
        step = 1
        for n, s in zip(reversed(self.shape), reversed(self.estrides)):
            if n != 1 and s != step:
                return False
            step *= n
        return True

    def _view(self, shape, estrides, offset=None):
        return DeviceArray(self._buf, shape, estrides, self.offset if offset is None else offset)

    def _extent(self):
        """(first, last) element positions this view touches, or None if empty."""
        if self.size == 0:
            return None
        lo = hi = self.offset
        for n, s in zip(self.shape, self.estrides):
            if s > 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        return lo, hi

    def _pointer(self):
        """Device address of the buffer's first element."""
        buf = self._buf
        if _runtime.simulator():
            return int(buf._ary.__array_interface__["data"][0])
        return int(buf.__cuda_array_interface__["data"][0])

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": None if self._is_c_contiguous() else self.strides,
            "data": (self._pointer() + self.offset * self.itemsize, False),
            "typestr": self.dtype.str,
            "version": 3,
            "stream": None,
        }

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a CUDA DeviceArray is not converted to a NumPy array implicitly "
                        "(that would be a hidden device-to-host copy): use .copy_to_host()")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()" if self.size else
                             "The truth value of an empty array is ambiguous.")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __repr__(self):
        body = np.array2string(self.copy_to_host(), separator=", ", prefix="DeviceArray(")
        return f"DeviceArray({body}, dtype={self.dtype})"

    # --------------------------------------------------------------- views
    def reshape(self, *shape, order="C", copy=None):
        """A view when the strides allow, else a copy (NumPy's rules);
        ``copy=False`` raises ValueError instead of copying, ``copy=True``
        always copies (as ``np.reshape(a, shape, copy=...)``)."""
        if order != "C":
            raise NotImplementedError("DeviceArray.reshape supports order='C' only")
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = shape[0]
        shape = list(_normalize_shape(shape))
        size = self.size
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in shape:
            known = _prod(s for s in shape if s != -1)
            if known == 0 or size % known:
                raise ValueError(f"cannot reshape array of size {size} into shape "
                                 f"{tuple(shape)}".replace("-1", "newaxis"))
            shape[shape.index(-1)] = size // known
        shape = tuple(shape)
        if _prod(shape) != size or any(s < 0 for s in shape):
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        strides = None if copy else _reshape_strides(self.shape, self.estrides, shape)
        if strides is not None:
            return self._view(shape, strides)
        if copy is False:
            raise ValueError("Unable to avoid creating a copy while reshaping.")
        return self.copy().reshape(shape)

    def ravel(self):
        return self.reshape(-1)

    def flatten(self):
        return self.copy().reshape(-1)

    def transpose(self, *axes):
        if not axes or (len(axes) == 1 and axes[0] is None):
            axes = tuple(range(self.ndim))[::-1]
        elif len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
            axes = tuple(axes[0])
        axes = tuple(_axis(a, self.ndim) for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("axes don't match array")
        return self._view(tuple(self.shape[a] for a in axes), tuple(self.estrides[a] for a in axes))

    def swapaxes(self, axis1, axis2):
        axes = list(range(self.ndim))
        a, b = _axis(axis1, self.ndim), _axis(axis2, self.ndim)
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def squeeze(self, axis=None):
        if axis is None:
            axes = {k for k, n in enumerate(self.shape) if n == 1}
        else:
            axes = {_axis(a, self.ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
            for a in axes:
                if self.shape[a] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not "
                                     "equal to one")
        keep = [k for k in range(self.ndim) if k not in axes]
        return self._view(tuple(self.shape[k] for k in keep), tuple(self.estrides[k] for k in keep))

    def expand_dims(self, axis):
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        ndim = self.ndim + len(axes)
        axes = sorted(_axis(a, ndim) for a in axes)
        shape, strides = list(self.shape), list(self.estrides)
        for a in axes:
            shape.insert(a, 1)
            strides.insert(a, 0)
        return self._view(tuple(shape), tuple(strides))

    def broadcast_to(self, shape):
        shape = _normalize_shape(shape)
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError(f"cannot broadcast an array of shape {self.shape} to {shape}: "
                             "the target has fewer dimensions")
        strides = [0] * lead
        for n, s, t in zip(self.shape, self.estrides, shape[lead:]):
            if n == t:
                strides.append(s)
            elif n == 1:
                strides.append(0)
            else:
                raise ValueError(f"operands could not be broadcast together with remapped "
                                 f"shapes [original->remapped]: {self.shape} and requested "
                                 f"shape {shape}")
        return self._view(shape, tuple(strides))

    def as_strided(self, shape, strides):
        """A view with the given shape and byte ``strides`` from the same
        offset (``np.lib.stride_tricks.as_strided``); unchecked, as NumPy's."""
        estrides = []
        for s in strides:
            if s % self.itemsize:
                raise ValueError("strides must be multiples of the item size")
            estrides.append(s // self.itemsize)
        return self._view(_normalize_shape(shape), tuple(estrides))

    # ------------------------------------------------------------ indexing
    def __getitem__(self, key):
        if _is_basic(key):
            return self._basic_view(key)
        from . import memory
        return memory.gather(self, self._addresses(key))

    def __setitem__(self, key, value):
        from . import memory
        if _is_basic(key):
            memory.assign(self._basic_view(key), value)
        else:
            memory.scatter(self, self._addresses(key), value)

    def _basic_view(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if sum(k is Ellipsis for k in items) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        consumed = sum(k is not None and k is not Ellipsis for k in items)
        if consumed > self.ndim:
            raise IndexError(f"too many indices for array: array is {self.ndim}-dimensional, "
                             f"but {consumed} were indexed")
        if not any(k is Ellipsis for k in items):
            items = items + (Ellipsis,)
        shape, strides, offset, dim = [], [], self.offset, 0
        for k in items:
            if k is Ellipsis:
                n = self.ndim - consumed
                shape += self.shape[dim:dim + n]
                strides += self.estrides[dim:dim + n]
                dim += n
            elif k is None:
                shape.append(1)
                strides.append(0)
            elif isinstance(k, slice):
                start, stop, step = k.indices(self.shape[dim])
                length = len(range(start, stop, step))
                if length:
                    offset += start * self.estrides[dim]
                shape.append(length)
                strides.append(self.estrides[dim] * step)
                dim += 1
            else:
                i, n = operator.index(k), self.shape[dim]
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
                offset += (i % n) * self.estrides[dim]
                dim += 1
        return DeviceArray(self._buf, shape, strides, offset)

    def _addresses(self, key):
        """Buffer positions of the elements ``self[key]`` selects, for any
        NumPy key (computed on the host: NumPy indexes the coordinate grids,
        which are zero-copy broadcast views, so the cost is the result's size).
        Device index arrays in the key are copied to the host first."""
        items = key if isinstance(key, tuple) else (key,)
        items = tuple(k.copy_to_host() if isinstance(k, DeviceArray) else k for k in items)
        base = np.broadcast_to(np.int64(self.offset), self.shape)
        address = np.array(base[items], dtype=np.int64)
        for k, (n, s) in enumerate(zip(self.shape, self.estrides)):
            if n > 1 and s != 0:
                coord = np.arange(n, dtype=np.int64).reshape(
                    tuple(n if j == k else 1 for j in range(self.ndim)))
                address += np.broadcast_to(coord, self.shape)[items] * s
        return address

    # ---------------------------------------------------------- conversion
    def copy_to_host(self):
        """A NumPy copy (C order)."""
        src = self if self._is_c_contiguous() else self.copy()
        host = np.empty(src.shape, dtype=src.dtype)
        if src.size:
            src._buf[src.offset:src.offset + src.size].copy_to_host(host.reshape(-1))
        return host

    get = copy_to_host  # CuPy's name

    def tolist(self):
        return self.copy_to_host().tolist()

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.copy_to_host().reshape(-1)[0].item()

    def copy(self, order="C"):
        """A copy in C order, or with ``order="K"`` in this view's memory order."""
        from . import memory
        return memory.copy(self, order=order)

    def astype(self, dtype, order="K", copy=True):
        """A cast copy keeping this view's memory order (NumPy's ``order="K"``)."""
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        from . import memory
        return memory.copy(self, dtype, order=order)

    def fill(self, value):
        from . import memory
        memory.assign(self, value)

    # ---------------------------------------------------------- reductions
    def sum(self, axis=None, keepdims=False, dtype=None):
        from . import reductions
        return reductions.reduce_sum(self, axis, keepdims, dtype)

    def max(self, axis=None, keepdims=False):
        from . import reductions
        return reductions.reduce_max(self, axis, keepdims)

    def min(self, axis=None, keepdims=False):
        from . import reductions
        return reductions.reduce_min(self, axis, keepdims)

    def argmax(self, axis=None, keepdims=False):
        from . import reductions
        return reductions.argmax(self, axis, keepdims)

    def argmin(self, axis=None, keepdims=False):
        from . import reductions
        return reductions.argmin(self, axis, keepdims)

    # -------------------------------------------------------- arithmetic
    def _binary(self, name, other, reflected=False, out=None):
        from . import elementwise
        return elementwise.binary(name, other, self, out) if reflected else \
            elementwise.binary(name, self, other, out)

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other, True)

    def __sub__(self, other):
        return self._binary("sub", other)

    def __rsub__(self, other):
        return self._binary("sub", other, True)

    def __mul__(self, other):
        return self._binary("mul", other)

    def __rmul__(self, other):
        return self._binary("mul", other, True)

    def __truediv__(self, other):
        return self._binary("div", other)

    def __rtruediv__(self, other):
        return self._binary("div", other, True)

    def __iadd__(self, other):
        return self._binary("add", other, out=self)

    def __isub__(self, other):
        return self._binary("sub", other, out=self)

    def __imul__(self, other):
        return self._binary("mul", other, out=self)

    def __itruediv__(self, other):
        return self._binary("div", other, out=self)

    def __neg__(self):
        from . import elementwise
        return elementwise.unary("neg", self)

    def __matmul__(self, other):
        from . import gemm
        return gemm.matmul(self, other)

    def __eq__(self, other):
        return self._binary("eq", other)

    def __ne__(self, other):
        return self._binary("ne", other)

    def __lt__(self, other):
        return self._binary("lt", other)

    def __le__(self, other):
        return self._binary("le", other)

    def __gt__(self, other):
        return self._binary("gt", other)

    def __ge__(self, other):
        return self._binary("ge", other)


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _reshape_strides(old_shape, old_strides, new_shape):
    """Strides that make ``new_shape`` a view of a ``old_shape`` array, or
    None when it needs a copy (NumPy's _attempt_nocopy_reshape, C order)."""
    if _prod(new_shape) == 0:
        return _contiguous_strides(new_shape)
    old = [(n, s) for n, s in zip(old_shape, old_strides) if n != 1]
    new_strides = [0] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new_shape) and oi < len(old):
        np_, op = new_shape[ni], old[oi][0]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for ok in range(oi, oj - 1):
            if old[ok][1] != old[ok + 1][0] * old[ok + 1][1]:
                return None
        new_strides[nj - 1] = old[oj - 1][1]
        for nk in range(nj - 1, ni, -1):
            new_strides[nk - 1] = new_strides[nk] * new_shape[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = new_strides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(new_shape)):
        new_strides[nk] = last
    return tuple(new_strides)


def empty(shape, dtype):
    shape, dtype = _normalize_shape(shape), np.dtype(dtype)
    return DeviceArray(pool.allocate(_prod(shape), dtype), shape)


def keep_order_strides(shape, estrides):
    """Compact strides in the memory order of a view with ``estrides``
    (NumPy's ``order="K"``: C if it is C-contiguous, F if F-contiguous,
    else the dimensions sorted by decreasing absolute stride, stably)."""
    probe = DeviceArray.__new__(DeviceArray)
    probe.shape, probe.estrides = tuple(shape), tuple(estrides)
    if probe._is_c_contiguous():
        return _contiguous_strides(shape)
    probe.shape, probe.estrides = tuple(shape)[::-1], tuple(estrides)[::-1]
    if probe._is_c_contiguous():
        return _contiguous_strides(tuple(shape)[::-1])[::-1]
    order = sorted(range(len(shape)), key=lambda k: -abs(estrides[k]))
    strides, step = [0] * len(shape), 1
    for k in reversed(order):
        strides[k] = step
        step *= max(shape[k], 1)
    return tuple(strides)


def empty_like_order(a, dtype=None):
    """An uninitialised array shaped like ``a``, in ``a``'s memory order."""
    dtype = np.dtype(a.dtype if dtype is None else dtype)
    return DeviceArray(pool.allocate(a.size, dtype), a.shape, keep_order_strides(a.shape, a.estrides))


def to_device(array, dtype=None):
    """Copy a host array (or anything ``np.asarray`` accepts) to the device."""
    host = np.asarray(array, dtype=dtype, order="C")
    out = empty(host.shape, host.dtype)
    if host.size:
        out._buf[:host.size].copy_to_device(host.reshape(-1))
    return out


def from_cuda_array(obj):
    """Wrap, without copying, an object exposing ``__cuda_array_interface__``
    (a CuPy array, a CUDA PyTorch tensor, a Numba device array)."""
    _runtime.require()
    face = obj.__cuda_array_interface__
    shape, dtype = tuple(face["shape"]), np.dtype(face["typestr"])
    estrides = (_contiguous_strides(shape) if face.get("strides") is None
                else tuple(s // dtype.itemsize for s in face["strides"]))
    lo = hi = 0
    for n, s in zip(shape, estrides):
        if n == 0:
            lo = hi = 0
            break
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    pointer = face["data"][0] + lo * dtype.itemsize
    flat = {"shape": (hi - lo + 1,), "strides": None, "data": (pointer, False),
            "typestr": dtype.str, "version": 3}
    if "stream" in face:
        flat["stream"] = face["stream"]
    if _runtime.simulator():  # (no from_cuda_array_interface there; its pointers are host ones)
        buf = _simulated_buffer(flat, obj)
    else:
        buf = _runtime.cuda().from_cuda_array_interface(flat, owner=obj)
    return DeviceArray(buf, shape, estrides, -lo)


class _HostMemory:
    """The simulator's "device" memory at a host address, kept with its owner."""

    def __init__(self, face, owner):
        self.__array_interface__ = {key: face[key] for key in ("shape", "typestr", "data")}
        self.__array_interface__["version"] = 3
        self.owner = owner


def _simulated_buffer(face, owner):
    """A simulator device array over the memory ``face`` describes (no copy)."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    return FakeCUDAArray(np.asarray(_HostMemory(face, owner)))
