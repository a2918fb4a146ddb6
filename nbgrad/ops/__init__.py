"""The ops, and the Tensor methods and operators that call them.

Elementwise methods are generated from the op table, so a new row is a new
method (``t.name(...)``) and a new in-place method (``t.name_(...)``).
"""
import math
import numbers

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import copying, indexing, joining, linalg, reductions, straight_line, views
from .elementwise import ElementwiseOp, FastPath, apply, apply_inplace, elementwise
from .table import BY_NAME, ROWS


def _row_method(row):
    if straight_line.supported(row):
        method = straight_line.method(row)
    else:
        def method(self, *args):
            return apply(row, (self, *args))

    def method_(self, *args):
        return apply_inplace(row, self, args)

    method.__name__, method_.__name__ = row.name, row.name + "_"
    method.__doc__ = f"Elementwise ``{row.name}`` (generated from its op-table row)."
    method_.__doc__ = f"In-place ``{row.name}``: writes into ``self`` and bumps its version."
    return method, method_


def _bounds(self, lo, hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self.dtype.is_floating_point:
        low, high = -math.inf, math.inf
    else:
        info = np.iinfo(np.int64)
        low, high = int(info.min), int(info.max)
    return (low if lo is None else lo), (high if hi is None else hi)


def clamp(self, min=None, max=None):
    return apply(BY_NAME["clamp"], (self, *_bounds(self, min, max)))


def clamp_(self, min=None, max=None):
    return apply_inplace(BY_NAME["clamp"], self, _bounds(self, min, max))


def where(condition, input, other):
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' must be Tensor, not {type(condition).__name__}")
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with "
                           f"dtype {condition.dtype.tensor_type[:-6]}")
    return apply(BY_NAME["where"], (condition, input, other))


_NUMBERS = (int, float, np.integer, np.floating)


def _with_number_exponents(plain, number):
    """``plain`` (pow as a method, operator or function), except that a
    floating tensor (or any tensor to a float power) to the power of a number
    calls ``number``: the pow_number row, with PyTorch's special cases for
    pow(Tensor, Scalar) (sqrt, reciprocals, products), in the gradient too."""
    def pow(self, exponent, *rest):
        if (isinstance(exponent, _NUMBERS) and not rest and isinstance(self, Tensor)
                and (self.dtype.is_floating_point or isinstance(exponent, (float, np.floating)))):
            return number(self, exponent)
        return plain(self, exponent, *rest)
    pow.__name__ = pow.__qualname__ = getattr(plain, "__name__", "pow")
    pow.__doc__ = plain.__doc__
    return pow


pow = _with_number_exponents(BY_NAME["pow"], BY_NAME["pow_number"])  # noqa: A001
"""``pow(input, exponent)``: elementwise ``input ** exponent``, as ``torch.pow``."""


def _operand(other):
    return isinstance(other, (Tensor, numbers.Number, np.bool_))


def _operator(row, dunder):
    """``a <op> b``: NotImplemented for operands that are neither tensors nor
    numbers, so Python falls back (``t == None`` is False, as in PyTorch)."""
    return straight_line.operator(row, dunder, _operand)


def _reversed(row, dunder):
    """``b <op> a`` for a number ``b``, likewise."""
    return straight_line.reversed_operator(row, dunder, _operand)


def _augmented(row, dunder):
    def method(self, other):
        if not _operand(other):
            return NotImplemented
        return apply_inplace(row, self, (other,), op_name=f"__i{dunder}__")
    return method


def _matrix_transpose(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return views.transpose(self, -2, -1)


def _type(self, dtype=None):
    """The type name (PyTorch's: ``nbgrad.cuda.FloatTensor`` on the GPU), or a cast to ``dtype``."""
    if isinstance(dtype, str):  # a type name, "nbgrad.DoubleTensor"
        names = {f"nbgrad.{d.tensor_type}": d for d in dtypes._BY_RANK}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = names[dtype]
    if dtype is not None:
        return copying.to(self, dtype)
    return f"nbgrad.{'cuda.' if self.is_cuda else ''}{self.dtype.tensor_type}"


def _install_tensor_methods():
    for row in ROWS:
        if row.method:
            method, method_ = _row_method(row)
            setattr(Tensor, row.name, method)
            setattr(Tensor, row.name + "_", method_)
    T = Tensor
    T.clamp, T.clamp_ = clamp, clamp_
    T.clip, T.clip_ = clamp, clamp_
    T.__neg__ = T.neg
    T.__abs__ = T.abs
    for name, dunder in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "truediv"),
                         ("pow", "pow")):
        row = BY_NAME[name]
        setattr(T, f"__{dunder}__", _operator(row, dunder))
        setattr(T, f"__r{dunder}__", _reversed(row, dunder))
        setattr(T, f"__i{dunder}__", _augmented(row, dunder))
    T.true_divide = T.div
    number = BY_NAME["pow_number"]
    T.pow = _with_number_exponents(T.pow, number)
    T.__pow__ = _with_number_exponents(T.__pow__, number)
    T.pow_ = _with_number_exponents(
        T.pow_, lambda self, e: apply_inplace(number, self, (e,), op_name="pow_"))
    T.__ipow__ = _with_number_exponents(
        T.__ipow__, lambda self, e: apply_inplace(number, self, (e,), op_name="__ipow__"))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(T, f"__{name}__", _operator(BY_NAME[name], name))
    T.__hash__ = object.__hash__  # defining __eq__ would otherwise remove it
    T.__matmul__ = linalg.matmul
    T.__rmatmul__ = lambda self, other: linalg.matmul(other, self)
    T.matmul, T.mm = linalg.matmul, linalg.mm
    T.__getitem__, T.__setitem__ = indexing.getitem, indexing.setitem
    for name in ("sum", "mean", "max", "min", "amax", "amin", "softmax", "log_softmax"):
        setattr(T, name, getattr(reductions, name))
    for name in ("view", "reshape", "flatten", "permute", "transpose", "t", "squeeze",
                 "unsqueeze", "expand", "expand_as"):
        setattr(T, name, getattr(views, name))
    T.T = property(lambda self: views.permute(self, tuple(reversed(range(self.ndim)))))
    T.mT = property(_matrix_transpose)
    T.view_as = lambda self, other: views.view(self, other.shape)
    T.reshape_as = lambda self, other: views.reshape(self, other.shape)
    T.contiguous = copying.contiguous
    for name in ("clone", "to", "copy_", "fill_", "zero_"):
        setattr(T, name, getattr(copying, name))
    T.float = lambda self: copying.to(self, dtypes.float32)
    T.double = lambda self: copying.to(self, dtypes.float64)
    T.long = lambda self: copying.to(self, dtypes.int64)
    T.bool = lambda self: copying.to(self, dtypes.bool_)
    T.type = _type
    T.cpu = lambda self: copying.to(self, "cpu")
    T.cuda = lambda self, device=None: copying.to(
        self, "cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)


_install_tensor_methods()

__all__ = ["ElementwiseOp", "FastPath", "elementwise", "clamp", "where", "pow", "ROWS"]
