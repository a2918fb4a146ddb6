"""Tensor dtypes and PyTorch's type-promotion rules."""
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


def to_dtype(d):
    """Accept an nbgrad dtype, a NumPy dtype or a Python type."""
    if d is None or isinstance(d, dtype):
        return d
    if d is float:
        return float32
    if d is int:
        return int64
    if d is bool:
        return bool_
    return from_numpy_dtype(d)


def promote_types(a, b):
    return _BY_RANK[max(_RANK[a], _RANK[b])]


def scalar_dtype(value):
    """The dtype PyTorch gives a Python number that takes part in an op."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return get_default_dtype()


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
