"""Tensor dtypes and PyTorch's type-promotion rules."""
import math

import numpy as np


class dtype:
    """A tensor element type, named as in PyTorch (``nbgrad.float32`` ...).

    ``type_name`` is PyTorch's scalar type name ("Float", "Char": error texts,
    ``tensor_type`` "FloatTensor"), ``cpp_name`` the C++ type PyTorch's
    messages print ("float", "signed char", "c10::Half"). ``compute`` is the
    NumPy dtype kernels compute in: float16 is loaded, computed in float32
    and rounded once on store, as PyTorch's CPU and CUDA kernels do."""

    __slots__ = ("name", "numpy", "is_floating_point", "itemsize", "category", "tensor_type",
                 "type_name", "cpp_name", "c_type", "is_signed", "compute", "bits")
    is_complex = False

    def __init__(self, name, numpy_dtype, category, type_name, cpp_name, c_type):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.itemsize = self.numpy.itemsize
        self.bits = 8 * self.itemsize
        self.category = category  # 0 bool, 1 integer, 2 floating: promotion order
        self.is_floating_point = category == 2
        self.is_signed = category == 2 or (category == 1 and self.numpy.kind == "i")
        self.type_name = type_name
        self.tensor_type = type_name + "Tensor"  # as in "[nbgrad.FloatTensor [3]]"
        self.cpp_name = cpp_name  # "attempting to assign a gradient with dtype 'long int'"
        self.c_type = c_type  # "value cannot be converted to type int8_t without overflow"
        self.compute = np.dtype(np.float32) if self.numpy == np.float16 else self.numpy

    def __repr__(self):
        return f"nbgrad.{self.name}"

    def __reduce__(self):
        return (from_numpy_dtype, (self.numpy.str,))

    def to_real(self):
        return self

    def to_complex(self):
        raise RuntimeError(f"Unknown Complex ScalarType for {self.type_name}")


bool_ = dtype("bool", np.bool_, 0, "Bool", "bool", "bool")
uint8 = dtype("uint8", np.uint8, 1, "Byte", "unsigned char", "uint8_t")
int8 = dtype("int8", np.int8, 1, "Char", "signed char", "int8_t")
int16 = dtype("int16", np.int16, 1, "Short", "short int", "int16_t")
int32 = dtype("int32", np.int32, 1, "Int", "int", "int")
int64 = dtype("int64", np.int64, 1, "Long", "long int", "int64_t")
float16 = dtype("float16", np.float16, 2, "Half", "c10::Half", "c10::Half")
float32 = dtype("float32", np.float32, 2, "Float", "float", "float")
float64 = dtype("float64", np.float64, 2, "Double", "double", "double")

# bfloat16 is left out: NumPy has no bfloat16 without the ml_dtypes package,
# and a tensor's storage dtype is its NumPy dtype all through the library.
ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
_BY_NUMPY = {d.numpy: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_RANK = list(ALL)  # (kept for callers that list every dtype)
# PyTorch's scalar type names by dtype name (error texts: "result type Float
# can't be cast to the desired output type Char").
TYPE_NAMES = {d.name: d.type_name for d in ALL}
CPP_NAMES = {d.name: d.cpp_name for d in ALL}


def _promote(a, b):
    """PyTorch's promoteTypes for two dtypes (c10/core/ScalarType.cpp's table):
    bool yields to anything; a float wins over an integer, the wider float
    over the narrower; integers of one signedness take the wider; uint8 with
    a signed integer takes the signed one, widened to int16 against int8."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.itemsize == b.itemsize and a.is_signed != b.is_signed:  # uint8 with int8
        return int16
    if a.is_signed != b.is_signed:  # uint8 with a wider signed integer
        return a if a.is_signed else b
    return a if a.itemsize > b.itemsize else b


_PROMOTED = {(a, b): _promote(a, b) for a in ALL for b in ALL}
_default = float32
# Called after the default dtype changes: caches that typed Python floats
# with the old default (the op layer's plans) drop their entries.
DEFAULT_DTYPE_WATCHERS = []


def get_default_dtype():
    """get_default_dtype() -> nbgrad.dtype

    The floating-point dtype of new tensors made from Python floats (and of
    ``zeros``, ``rand``... without a dtype): float32 unless
    ``set_default_dtype`` changed it."""
    return _default


def set_default_dtype(d):
    """set_default_dtype(d) -> None

    Make the floating-point dtype ``d`` (float16, float32 or float64) the
    default, as PyTorch's: new float tensors and Python floats in ops take it."""
    global _default
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if d is not _default:
        _default = d
        for watcher in DEFAULT_DTYPE_WATCHERS:
            watcher()


def from_numpy_dtype(np_dtype):
    """The nbgrad dtype for a NumPy dtype; other integer widths map to int64
    only when copying (see ``canonical``)."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(f"nbgrad does not support arrays of dtype {np.dtype(np_dtype)}; "
                        "supported: float16, float32, float64, uint8, int8, int16, int32, int64, "
                        "bool") from None


def canonical(np_dtype):
    """Map any NumPy dtype to the nbgrad dtype a copy of it should have: its
    own where nbgrad has it; the unsigned integers nbgrad lacks (uint16,
    uint32, uint64: PyTorch's limited types) to int64."""
    np_dtype = np.dtype(np_dtype)
    found = _BY_NUMPY.get(np_dtype)
    if found is not None:
        return found
    if np_dtype.kind in "iu":
        return int64
    raise TypeError(f"nbgrad does not support arrays of dtype {np_dtype}")


def type_name(value):
    """The type of ``value`` as PyTorch's argument errors name it (``str``, ``numpy.ndarray``)."""
    kind = type(value)
    if kind.__module__ == "builtins" or kind.__module__.startswith("nbgrad"):  # "Tensor"
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


_PYTHON_TYPES = {bool: "bool", int: "int64", float: "float64"}  # as PyTorch: float is double


def to_dtype(d, fn=None):
    """An nbgrad dtype from ``d``: an nbgrad dtype, a Python type (``float``
    is float64, as in PyTorch), a NumPy dtype, or None. ``fn`` names the
    function for the TypeError raised on anything else (a string, say)."""
    if d is None or isinstance(d, dtype):
        return d
    if isinstance(d, type) and d in _PYTHON_TYPES:
        return _BY_NAME[_PYTHON_TYPES[d]]
    if isinstance(d, np.dtype) or (isinstance(d, type) and issubclass(d, np.generic)):
        return from_numpy_dtype(d)  # an nbgrad extension: PyTorch refuses NumPy dtypes
    raise TypeError(f"{fn or 'to'}(): argument 'dtype' must be nbgrad.dtype, not {type_name(d)}")


def promote_types(a, b):
    """promote_types(type1, type2) -> nbgrad.dtype

    The smallest dtype both ``a`` and ``b`` convert to without losing their
    kind, as PyTorch's table (uint8 with int8 is int16; any float wins over
    any integer)."""
    try:
        return _PROMOTED[a, b]
    except KeyError:
        bad = a if not isinstance(a, dtype) else b
        raise TypeError(f"promote_types(): argument '{'type1' if bad is a else 'type2'}' "
                        f"must be nbgrad.dtype, not {type_name(bad)}") from None


def can_cast(from_, to):
    """can_cast(from_, to) -> bool

    PyTorch's casting rule for an op's result written into an ``out`` or
    ``self``: no float into an integer or bool, no number into bool."""
    return from_.category <= to.category


def scalar_dtype(value):
    """The dtype PyTorch gives a Python number that takes part in an op."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return get_default_dtype()


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _overflow(dtype):
    return RuntimeError(f"value cannot be converted to type {dtype.c_type} without overflow")


def check_scalar(value, dtype):
    """Refuse, as PyTorch does (c10's checked_convert), a Python number that
    ``dtype`` cannot hold (before anything is written): ints outside 64 bits
    raise OverflowError, values outside ``dtype``'s range RuntimeError. NaN
    and inf are fine in floats, float16 takes any number (beyond its range:
    inf), a bool tensor anything; a negative int down to ``-max`` wraps into
    uint8, as in PyTorch."""
    if isinstance(value, (bool, np.bool_)) or dtype is bool_:
        return
    if isinstance(value, int):  # Python's unbounded int; NumPy integers always fit
        if value >= 2 ** 64:
            raise OverflowError("int too big to convert")
        if value < -2 ** 63:
            raise OverflowError("can't convert negative int to unsigned")
        if dtype.is_floating_point:
            return
        high = (1 << (dtype.bits - 1 if dtype.is_signed else dtype.bits)) - 1
        low = -high - 1 if dtype.is_signed else -high
        if not low <= value <= high:
            raise _overflow(dtype)
        return
    if dtype is float64 or dtype is float16 or not isinstance(value, (float, np.floating)):
        return
    value = float(value)
    if dtype is float32:  # NaN and inf are kept, finite values beyond its range are not
        fits = math.isinf(value) or not abs(value) > _FLOAT32_MAX
    elif dtype is int64:
        fits = -2.0 ** 63 <= value < 2.0 ** 63  # False for NaN
    else:
        info = np.iinfo(dtype.numpy)
        fits = info.min <= value <= info.max  # False for NaN
    if not fits:
        raise _overflow(dtype)


def _combine_categories(higher, lower):
    # at::native::combine_categories, restricted to nbgrad's (real) dtypes.
    if higher is None:
        return lower
    if higher.is_floating_point:
        return higher
    if lower is not None and (higher is bool_ or lower.is_floating_point):
        return promote_types(higher, lower)
    return higher


def result_type(operands):
    """PyTorch's result_type: dimensioned tensors outrank zero-dim tensors,
    which outrank Python scalars, unless a lower rank brings a higher category
    (a float32 tensor times a Python float stays float32; an int64 tensor times
    a Python float becomes float32)."""
    dim = zero = wrapped = None
    for op in operands:
        d = getattr(op, "dtype", None)
        if isinstance(d, dtype):
            if op.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        else:
            d = scalar_dtype(op)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine_categories(dim, _combine_categories(zero, wrapped))


# ------------------------------------------------------------ finfo / iinfo
class finfo:
    """finfo(type=None) -> finfo

    The numerical properties of a floating-point dtype (the default dtype when
    none is given), as PyTorch's: ``bits``, ``eps``, ``max``, ``min``,
    ``tiny`` (= ``smallest_normal``), ``resolution`` (Python floats) and
    ``dtype`` (its name)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - PyTorch's parameter name
        if type is None:
            type = get_default_dtype()  # noqa: A001
        elif isinstance(type, builtins_type) and type in _PYTHON_TYPES:
            type = _BY_NAME[_PYTHON_TYPES[type]]  # noqa: A001
        if not isinstance(type, dtype):
            raise TypeError(f"finfo(): argument 'type' (position 1) must be nbgrad.dtype, not "
                            f"{type_name(type)}")
        if not type.is_floating_point:
            raise TypeError("nbgrad.finfo() requires a floating point input type. Use "
                            "nbgrad.iinfo to handle 'nbgrad.finfo'")
        info = np.finfo(type.numpy)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # exactly 0.001, not float16(0.001)
        self.dtype = type.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    __str__ = __repr__


class iinfo:
    """iinfo(type) -> iinfo

    The numerical properties of an integer dtype, as PyTorch's: ``bits``,
    ``max``, ``min`` (Python ints) and ``dtype`` (its name)."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, *args):
        if len(args) != 1:
            if not args:
                raise TypeError('iinfo() missing 1 required positional arguments: "type"')
            raise TypeError(f"iinfo() takes 1 positional argument but {len(args)} were given")
        type, = args  # noqa: A001
        if isinstance(type, builtins_type) and type in _PYTHON_TYPES:
            type = _BY_NAME[_PYTHON_TYPES[type]]  # noqa: A001
        if not isinstance(type, dtype):
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be nbgrad.dtype, not "
                            f"{type_name(type)}")
        if type is bool_:
            raise TypeError("nbgrad.bool is not supported by nbgrad.iinfo")
        if type.is_floating_point:
            raise TypeError("nbgrad.iinfo() requires an integer input type. Use nbgrad.finfo "
                            "to handle 'nbgrad.iinfo'")
        info = np.iinfo(type.numpy)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), int(info.min), \
            type.name

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"

    __str__ = __repr__


builtins_type = type
