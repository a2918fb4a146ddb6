"""Comparison helpers and interop (issue 15): ``allclose``, ``equal``,
``Tensor.__format__``, ``data_ptr``, ``nbytes``, ``itemsize``, and DLPack
both ways (``Tensor.__dlpack__``/``__dlpack_device__``, ``from_dlpack``,
the capsules of ``nbgrad.utils.dlpack``).

DLPack (https://dmlc.github.io/dlpack/latest/) passes a C struct in a
``PyCapsule``: a ``DLManagedTensor`` (capsule "dltensor") or, from version
1.0, a ``DLManagedTensorVersioned`` ("dltensor_versioned"), whose deleter
the consumer calls once it no longer needs the memory. A CPU tensor is
exported through NumPy's own ``ndarray.__dlpack__`` (its capsule keeps the
array, so the storage, alive); a CUDA tensor's struct is built here with
ctypes and the tensor's buffer is kept in a table until the consumer's
deleter (or the unconsumed capsule's destructor) runs. Imports read either
capsule with ctypes, rename it "used_..." (the spec's hand-over) and wrap
the memory without a copy; the deleter runs when the last alias is gone.

Writes through a DLPack alias are not seen by version counters (as with
``.data``): autograd cannot tell that a saved tensor was changed that way.
"""
import ctypes
import warnings

import numpy as np

from .. import dtypes
from ..backends import cpu, require_backend
from ..tensor import Tensor
from .broadcasting import broadcast_shapes
from .registry import tensor_op


# ------------------------------------------------------ comparison helpers
def _require_tensor(name, arg, position, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{dtypes.type_name(value)}")


def _host(t):
    return t._data if t._backend is cpu else t._backend.to_numpy(t._data)


def _isclose_array(a, b, rtol, atol, equal_nan):
    """PyTorch's isclose on NumPy arrays of one dtype, computed in it (a
    number's rtol and atol in the tensor's float dtype; integers in float64)."""
    if a.dtype.kind not in "fc":
        a, b = a.astype(np.float64), b.astype(np.float64)
    kind = a.dtype.type
    with np.errstate(all="ignore"):
        close = a == b
        if equal_nan:
            close |= np.isnan(a) & np.isnan(b)
        error = np.abs(a - b)
        allowed = kind(atol) + np.abs(kind(rtol) * b)
        close |= np.isfinite(error) & (error <= allowed)
    return close


@tensor_op()
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool

    Whether ``|input - other| <= atol + rtol * |other|`` everywhere (after
    broadcasting); equal infinities are close, NaNs only with ``equal_nan``."""
    _require_tensor("allclose", "input", 1, self)
    _require_tensor("allclose", "other", 2, other)
    if self.dtype is not other.dtype:
        raise RuntimeError(f"{self.dtype.tensor_type[:-6]} did not match "
                           f"{other.dtype.tensor_type[:-6]}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    shape = broadcast_shapes(self.shape, other.shape)
    a, b = (np.broadcast_to(_host(t), shape) for t in (self, other))
    return bool(_isclose_array(a, b, rtol, atol, equal_nan).all())


@tensor_op()
def equal(self, other):
    """equal(input, other) -> bool

    Whether the tensors have the same shape and elements (compared after
    type promotion; NaN is never equal)."""
    _require_tensor("equal", "input", 1, self)
    _require_tensor("equal", "other", 2, other)
    if self.shape != other.shape:
        return False
    return bool(np.array_equal(_host(self), _host(other)))


# ------------------------------------------------------------- tensor facts
@tensor_op("__format__", function=False)
def _format(self, format_spec):
    """``f"{t:.4f}"``: a 0-d tensor formats as its Python number; any other
    tensor only with an empty spec (as ``str``), as PyTorch."""
    if self.ndim == 0 and type(self) is Tensor:
        return self.item().__format__(format_spec)  # (item(): no warning when it requires grad)
    return object.__format__(self, format_spec)


@tensor_op(function=False)
def data_ptr(self):
    """data_ptr() -> int

    The address of the tensor's first element (a device address on CUDA)."""
    return self._backend.data_pointer(self._data)


@tensor_op("nbytes", function=False, attribute=True)
def _nbytes(self):
    """The bytes of the tensor's elements, ``numel() * element_size()`` (a
    view counts its own elements, as PyTorch's)."""
    return self._data.size * self._data.itemsize


@tensor_op("itemsize", function=False, attribute=True)
def _itemsize(self):
    """The bytes of one element (``element_size()``)."""
    return self._data.itemsize


# ------------------------------------------------------------------ DLPack
kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
READ_ONLY, IS_COPIED = 1, 2  # DLPACK_FLAG_BITMASK_*
DLPACK_VERSION = (1, 0)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

# Capsule names: the C API keeps the pointer, so these bytes live as long as the module.
_LEGACY, _VERSIONED = b"dltensor", b"dltensor_versioned"
_USED = {_LEGACY: b"used_dltensor", _VERSIONED: b"used_dltensor_versioned"}
_STRUCTS = {_LEGACY: DLManagedTensor, _VERSIONED: DLManagedTensorVersioned}


def _capi(name, restype, *argtypes):
    """A function of Python's C API called with the GIL held (its own prototype,
    so that the ``py_object`` and raw-pointer variants do not share argtypes)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _capi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                     ctypes.c_void_p)
_is_valid = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_get_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_set_name = _capi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
# In a capsule's destructor the capsule is being freed: it is passed as a raw pointer.
_is_valid_raw = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_get_pointer_raw = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.c_char_p)


def _call_deleter(address, struct):
    managed = struct.from_address(address)
    if managed.deleter:
        managed.deleter(ctypes.cast(address, ctypes.POINTER(struct)))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    """An exported capsule nobody consumed (still named "dltensor...") frees
    its tensor, as the spec asks; a consumed one ("used_...") is the consumer's."""
    for name, struct in _STRUCTS.items():
        if _is_valid_raw(capsule, name):
            _call_deleter(_get_pointer_raw(capsule, name), struct)
            return


_EXPORTS = {}  # manager_ctx -> what an exported CUDA struct points into (kept until its deleter)


def _release(context):
    _EXPORTS.pop(context, None)


_delete_legacy = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))(
    lambda managed: _release(managed.contents.manager_ctx))
_delete_versioned = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))(
    lambda managed: _release(managed.contents.manager_ctx))


def _dl_dtype(dtype):
    kind = dtype.kind
    code = {"i": _INT, "u": _UINT, "f": _FLOAT, "c": _COMPLEX, "b": _BOOL}.get(kind)
    if code is None and dtype.name == "bfloat16":
        code = _BFLOAT
    if code is None:
        raise BufferError(f"DLPack has no type for {dtype}")
    return DLDataType(code, dtype.itemsize * 8, 1)


class _Export:
    """A CUDA tensor's DLPack struct and what it points into, alive until the deleter."""

    def __init__(self, array, versioned, flags):
        face = array.__cuda_array_interface__
        ndim = len(face["shape"])
        self.array = array  # the DeviceArray: keeps the device buffer alive
        self.shape = (ctypes.c_int64 * max(ndim, 1))(*face["shape"])
        self.strides = (ctypes.c_int64 * max(ndim, 1))(
            *(s // array.itemsize for s in array.strides))
        tensor = DLTensor(face["data"][0], DLDevice(kDLCUDA, 0), ndim, _dl_dtype(array.dtype),
                          ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)),
                          ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64)), 0)
        key = id(self)
        if versioned:
            self.managed = DLManagedTensorVersioned(DLPackVersion(*DLPACK_VERSION), key,
                                                    _delete_versioned, flags, tensor)
        else:
            self.managed = DLManagedTensor(tensor, key, _delete_legacy)
        _EXPORTS[key] = self

    def capsule(self, name):
        return _capsule_new(ctypes.addressof(self.managed), name,
                            ctypes.cast(_capsule_destructor, ctypes.c_void_p))


def _check_stream(self, stream):
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if self._backend is cpu:
        if stream is not None and stream != -1:
            raise AssertionError("stream should be None on cpu.")
        return
    if stream == 0:  # the spec: ambiguous, disallowed
        raise AssertionError("unsupported stream on CUDA: 0.")
    if stream != -1:
        # nbgrad launches on the default stream; the consumer's stream waits for
        # our work when the device is idle (no stream-event plumbing here).
        self._backend.synchronize()


def export(self, stream=None, max_version=None, dl_device=None, copy=None):
    """``self`` as a DLPack capsule (see ``Tensor.__dlpack__``), no grad check."""
    _check_stream(self, stream)
    versioned = max_version is not None and max_version[0] >= 1
    device = dlpack_device(self)
    if dl_device is not None and tuple(dl_device) != device:
        if tuple(dl_device) != (kDLCPU, 0) or copy is False:
            raise BufferError("unsupported device requested")
        host = self._backend.to_numpy(self._data)  # a CUDA tensor copied for a CPU consumer
        return host.__dlpack__(max_version=max_version)
    if self._backend is cpu:
        return self._data.__dlpack__(max_version=max_version, copy=copy)
    array, flags = self._data, 0
    if copy:
        array, flags = self._backend.copy(array), IS_COPIED
    export_ = _Export(array, versioned, flags)
    return export_.capsule(_VERSIONED if versioned else _LEGACY)


@tensor_op("__dlpack__", function=False)
def _dlpack(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
    """__dlpack__(*, stream=-1, max_version=None, dl_device=None, copy=None) -> PyCapsule

    The tensor as a DLPack capsule for another library's ``from_dlpack``
    (zero-copy unless ``copy=True``, or a CPU consumer of a CUDA tensor).
    ``max_version`` (1, x) or later gives a versioned capsule. Writes through
    the consumer's alias are not seen by version counters (as with ``.data``)."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    return export(self, stream, max_version, dl_device, copy)


def dlpack_device(self):
    return (kDLCPU, 0) if self._backend is cpu else (kDLCUDA, 0)


@tensor_op("__dlpack_device__", function=False)
def _dlpack_device(self):
    """__dlpack_device__() -> (device_type, device_id): (1, 0) on the CPU, (2, 0) on CUDA."""
    return dlpack_device(self)


def _numpy_dtype(dl):
    if dl.lanes != 1:
        raise BufferError(f"DLPack vector types (lanes={dl.lanes}) are not supported")
    kind = {_INT: "i", _UINT: "u", _FLOAT: "f", _COMPLEX: "c", _BOOL: "b"}.get(dl.code)
    if kind is None:
        raise BufferError(f"DLPack type code {dl.code} is not supported")
    return np.dtype(f"{kind}{dl.bits // 8}")


class _Imported:
    """The memory of a consumed capsule, exposed to NumPy or Numba as an array
    interface; calls the producer's deleter when the last alias dies."""

    def __init__(self, address, struct, face, device_type):
        self.address, self.struct = address, struct
        key = "__array_interface__" if device_type != kDLCUDA else "__cuda_array_interface__"
        setattr(self, key, face)

    def __del__(self):
        address, self.address = self.address, None
        if address is not None:
            _call_deleter(address, self.struct)


def _array_interface(tensor, dtype, read_only):
    shape = tuple(tensor.shape[k] for k in range(tensor.ndim))
    strides = None if not tensor.strides else tuple(
        tensor.strides[k] * dtype.itemsize for k in range(tensor.ndim))
    return {"shape": shape, "strides": strides, "typestr": dtype.str, "version": 3,
            "data": ((tensor.data or 0) + tensor.byte_offset, read_only)}


_INVALID = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
            "only once, so you might have already constructed a tensor from it once.")


def from_capsule(capsule):
    """A Tensor over the memory of a DLPack capsule (consumed: renamed "used_...")."""
    for name, struct in _STRUCTS.items():
        if _is_valid(capsule, name):
            break
    else:
        raise RuntimeError(_INVALID)
    address = _get_pointer(capsule, name)
    managed = struct.from_address(address)
    read_only = False
    if struct is DLManagedTensorVersioned:
        if managed.version.major > DLPACK_VERSION[0]:
            raise BufferError(f"DLPack version {managed.version.major}.{managed.version.minor} "
                              f"is newer than the supported {DLPACK_VERSION[0]}.x")
        read_only = bool(managed.flags & READ_ONLY)
    tensor = managed.dl_tensor
    _set_name(capsule, _USED[name])  # ours now: the deleter runs when the tensor dies
    device_type = tensor.device.device_type
    try:
        dtype = _numpy_dtype(tensor.dtype)
        face = _array_interface(tensor, dtype, read_only)
    except BaseException:
        _call_deleter(address, struct)
        raise
    if device_type in (kDLCPU, kDLCUDAHost, kDLCUDAManaged):
        return _wrap_host(_Imported(address, struct, face, device_type), face, dtype)
    if device_type == kDLCUDA:
        if tensor.device.device_id != 0:
            _call_deleter(address, struct)
            raise RuntimeError("nbgrad places CUDA tensors on device 0 (cuda:0) only; the DLPack "
                               f"tensor is on cuda:{tensor.device.device_id}")
        holder = _Imported(address, struct, face, device_type)
        backend = require_backend("cuda")
        return Tensor._wrap(backend.from_cuda_array(holder), dtypes.from_numpy_dtype(dtype),
                            backend)
    _call_deleter(address, struct)
    raise BufferError(f"DLPack device type {device_type} is not supported")


def _wrap_host(holder, face, dtype):
    if 0 in face["shape"]:  # the pointer may be NULL: nothing to share
        array = np.empty(face["shape"], dtype)
        del holder
    else:
        array = np.asarray(holder)
    nb_dtype = dtypes.from_numpy_dtype(array.dtype)
    if not array.flags.writeable:
        warnings.warn("The DLPack tensor is read-only, and nbgrad does not support non-writable "
                      "tensors. The tensor holds a copy (it does not share its memory).",
                      UserWarning, stacklevel=3)
        array = array.copy()
    return Tensor._wrap(array, nb_dtype, cpu)


@tensor_op(method=False)
def from_dlpack(ext_tensor, *, device=None, copy=None):
    """from_dlpack(ext_tensor, *, device=None, copy=None) -> Tensor

    A tensor sharing memory with ``ext_tensor``: an object with
    ``__dlpack__`` (a NumPy array, a PyTorch or CuPy tensor, ...) or a
    DLPack capsule. ``copy=True`` asks the producer for a copy; ``device``
    copies to another device. Writes through either alias are not seen by
    nbgrad's version counters (as with ``.data``): autograd cannot tell that
    a tensor it saved was changed that way."""
    if not hasattr(ext_tensor, "__dlpack__"):
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is already "
                                 "a DLPack capsule.")
        return from_capsule(ext_tensor)
    source = tuple(ext_tensor.__dlpack_device__())
    kwargs = {"max_version": DLPACK_VERSION}
    if copy is not None:
        kwargs["copy"] = copy
    if source[0] == kDLCUDA:
        kwargs["stream"] = 1  # nbgrad works on the legacy default stream
    capsule = None
    for drop in ((), ("max_version",), ("copy",)):  # producers of older versions of the spec
        for key in drop:
            kwargs.pop(key, None)
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
            break
        except TypeError:
            if drop == ("copy",):
                raise
    tensor = from_capsule(capsule)
    if copy and "copy" not in kwargs:
        tensor = tensor.clone()
    if device is not None:
        tensor = tensor.to(device)
    return tensor


def to_dlpack(tensor):
    """to_dlpack(tensor) -> PyCapsule

    A legacy ("dltensor") DLPack capsule of ``tensor`` sharing its memory."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not "
                        f"{dtypes.type_name(tensor)}")
    return export(tensor)
