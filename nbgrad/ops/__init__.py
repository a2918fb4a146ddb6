"""The ops, and the Tensor methods and operators that call them.

Elementwise methods are generated from the op table, so a new row is a new
method (``t.name(...)``) and a new in-place method (``t.name_(...)``).
"""
import math

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import copying, indexing, joining, linalg, reductions, views
from .elementwise import ElementwiseOp, apply, apply_inplace, elementwise
from .table import BY_NAME, ROWS


def _row_method(row):
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
    if not isinstance(condition, Tensor) or condition.dtype is not dtypes.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor")
    return apply(BY_NAME["where"], (condition, input, other))


def _reversed(row):
    def method(self, other):
        return apply(row, (other, self))
    return method


def _augmented(row):
    def method(self, other):
        return apply_inplace(row, self, (other,), op_name=f"__i{row.name}__")
    return method


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
        setattr(T, f"__{dunder}__", getattr(T, name))
        setattr(T, f"__r{dunder}__", _reversed(row))
        if name != "pow":
            setattr(T, f"__i{dunder}__", _augmented(row))
    T.true_divide = T.div
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(T, f"__{name}__", getattr(T, name))
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
    T.mT = property(lambda self: views.transpose(self, -2, -1))
    T.view_as = lambda self, other: views.view(self, other.shape)
    T.reshape_as = lambda self, other: views.reshape(self, other.shape)
    T.contiguous = lambda self: self if self.is_contiguous() else copying.clone(self)
    for name in ("clone", "to", "copy_", "fill_", "zero_"):
        setattr(T, name, getattr(copying, name))
    T.float = lambda self: copying.to(self, dtypes.float32)
    T.double = lambda self: copying.to(self, dtypes.float64)
    T.long = lambda self: copying.to(self, dtypes.int64)
    T.bool = lambda self: copying.to(self, dtypes.bool_)
    T.type = lambda self, dtype=None: (f"nbgrad.{self.dtype.tensor_type}" if dtype is None
                                       else copying.to(self, dtype))
    T.cpu = lambda self: copying.to(self, "cpu")


_install_tensor_methods()

__all__ = ["ElementwiseOp", "elementwise", "clamp", "where", "ROWS"]
