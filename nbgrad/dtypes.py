"""Tensor dtypes and PyTorch's type-promotion rules."""
import math

import numpy as np


class dtype:
    """A tensor element type, named as in PyTorch (``nbgrad.float32`` ...)."""

    __slots__ = ("name", "numpy", "is_floating_point", "itemsize", "category", "tensor_type")

    def __init__(self, name, numpy_dtype, category, tensor_type):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.itemsize = self.numpy.itemsize
        self.category = category  # 0 bool, 1 integer, 2 floating: promotion order
        self.is_floating_point = category == 2
        self.tensor_type = tensor_type  # as in "[nbgrad.FloatTensor [3]]"

    def __repr__(self):
        return f"nbgrad.{self.name}"

    def __reduce__(self):
        return (from_numpy_dtype, (self.numpy.str,))


bool_ = dtype("bool", np.bool_, 0, "BoolTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
float32 = dtype("float32", np.float32, 2, "FloatTensor")
float64 = dtype("float64", np.float64, 2, "DoubleTensor")

_BY_NUMPY = {d.numpy: d for d in (bool_, int64, float32, float64)}
_RANK = {bool_: 0, int64: 1, float32: 2, float64: 3}
_BY_RANK = [bool_, int64, float32, float64]
_BY_NAME = {d.name: d for d in _BY_RANK}


def get_default_dtype():
    return float32


def from_numpy_dtype(np_dtype):
    """The nbgrad dtype for a NumPy dtype; other integer and float widths map
    to int64 / float64 only when copying (see ``canonical``)."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(f"nbgrad does not support arrays of dtype {np.dtype(np_dtype)}; "
                        "supported: float32, float64, int64, bool") from None


def canonical(np_dtype):
    """Map any NumPy dtype to the nbgrad dtype a copy of it should have."""
    kind = np.dtype(np_dtype).kind
    if kind == "b":
        return bool_
    if kind in "iu":
        return int64
    if kind == "f":
        return float64 if np.dtype(np_dtype).itemsize > 4 else float32
    raise TypeError(f"nbgrad does not support arrays of dtype {np.dtype(np_dtype)}")


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
    return _BY_RANK[max(_RANK[a], _RANK[b])]


def scalar_dtype(value):
    """The dtype PyTorch gives a Python number that takes part in an op."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return get_default_dtype()


_C_TYPES = {"int64": "int64_t", "float32": "float"}
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_scalar(value, dtype):
    """Refuse, as PyTorch does, a Python number that ``dtype`` cannot hold
    (before anything is written): ints outside 64 bits raise OverflowError,
    values outside ``dtype``'s range RuntimeError. NaN and inf are fine in
    floats; a bool tensor takes anything."""
    if isinstance(value, (bool, np.bool_)) or dtype is bool_:
        return
    if isinstance(value, int):  # Python's unbounded int; NumPy integers always fit
        if value >= 2 ** 64:
            raise OverflowError("int too big to convert")
        if value < -2 ** 63:
            raise OverflowError("can't convert negative int to unsigned")
        if dtype is int64 and value >= 2 ** 63:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return
    if dtype is float64 or not isinstance(value, (float, np.floating)):
        return
    value = float(value)
    if dtype is int64:
        fits = -2.0 ** 63 <= value < 2.0 ** 63  # False for NaN
    else:  # float32: NaN and inf are kept, finite values beyond its range are not
        fits = math.isinf(value) or not abs(value) > _FLOAT32_MAX
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} "
                           "without overflow")


def _combine_categories(higher, lower):
    # at::native::combine_categories, restricted to nbgrad's dtypes.
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
