"""The elementwise ops that are more than a call of one row: ``clamp`` and
``clip`` (PyTorch's argument parsing of the bounds), ``where`` (a bool
condition), ``pow`` with a number exponent (the pow_number row) and the
Python operators, which return NotImplemented for operands that are neither
tensors nor numbers."""
import math
import numbers

import numpy as np

from .. import dtypes
from ..declarations.op_table import BY_NAME
from ..tensor import Tensor
from . import straight_line
from .elementwise import apply, apply_inplace
from .registry import tensor_op


_CLAMP_OPTIONS = ("(Tensor min = None, Tensor max = None)",
                  "(Number min = None, Number max = None)")


def _clamp_bounds(name, args, kwargs):
    """clamp's (min, max) as PyTorch's argument parser binds them: tensors or
    numbers (either may be None), not one of each; else its TypeError."""
    bound = dict(zip(("min", "max"), args))
    fits = len(args) <= 2 and all(k in ("min", "max") and k not in bound for k in kwargs)
    bound.update(kwargs)
    given = [b for b in (bound.get("min"), bound.get("max")) if b is not None]
    if fits and (all(isinstance(b, Tensor) for b in given) or
                 all(isinstance(b, (numbers.Number, np.bool_)) for b in given)):
        return bound.get("min"), bound.get("max")
    types = [type(a).__name__ for a in args]
    keywords = [f"{k}={type(v).__name__}" for k, v in sorted(kwargs.items())]
    got = ", ".join(types + keywords) + (", " if keywords and not types else "")
    reason = ""
    if len(args) + len(kwargs) == 2:  # PyTorch says why only where the count fits
        why = (f"some of the keywords were incorrect: {', '.join(sorted(kwargs))}" if kwargs else
               f"some of the arguments have invalid types: ({', '.join(f'!{t}!' for t in types)})")
        reason = f"      didn't match because {why}\n"
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                    "expected one of:\n" + "".join(f" * {o}\n{reason}" for o in _CLAMP_OPTIONS))


def _bounds(self, lo, hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self.dtype.is_floating_point:
        low, high = -math.inf, math.inf
    else:
        info = np.iinfo(np.int64)
        low, high = int(info.min), int(info.max)
    return (low if lo is None else lo), (high if hi is None else hi)


def _clamp(name):
    """``clamp(min=None, max=None)`` under ``name`` (clamp, clip and their
    in-place forms), which PyTorch's errors name."""
    row = BY_NAME["clamp"]

    def clamp(self, *args, **kwargs):
        bounds = _bounds(self, *_clamp_bounds(name, args, kwargs))
        if name.endswith("_"):
            return apply_inplace(row, self, bounds)
        return apply(row, (self, *bounds))
    clamp.__name__ = clamp.__qualname__ = name
    clamp.__doc__ = (f"``{name}(min=None, max=None)``: elementwise clamp into [min, max] "
                     "(max wins where min > max), as PyTorch's.")
    return clamp


clamp, clamp_ = _clamp("clamp"), _clamp("clamp_")
clip, clip_ = _clamp("clip"), _clamp("clip_")
for _op in (clamp, clamp_, clip, clip_):
    tensor_op(_op.__name__, function=not _op.__name__.endswith("_"))(_op)


@tensor_op(method=False)
def where(condition, input=None, other=None):
    """where(condition, input, other) -> Tensor

    ``input`` where ``condition`` (a bool tensor) holds, else ``other``.
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' must be Tensor, not {type(condition).__name__}")
    if input is None and other is None:  # (issue 15: the one-argument form)
        from .scatter import nonzero
        return nonzero(condition, as_tuple=True)
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
    pow.__doc__ = ("pow(input, exponent) -> Tensor\n\n    Elementwise ``input ** exponent`` "
                   "(either may be a number), as ``torch.pow``.")
    return pow


pow = tensor_op("pow", method=False)(  # noqa: A001
    _with_number_exponents(BY_NAME["pow"], BY_NAME["pow_number"]))


def _operand(other):
    return isinstance(other, (Tensor, numbers.Number, np.bool_))


def _operator(row, dunder):
    """``a <op> b``: NotImplemented for operands that are neither tensors nor
    numbers, so Python falls back (``t == None`` is False, as in PyTorch)."""
    return straight_line.operator(row, dunder, _operand)


def _reversed(row, dunder):
    """``b <op> a`` for a number ``b``, likewise."""
    return straight_line.reversed_operator(row, dunder, _operand)


def _rtruediv(self, other):
    """``number / self`` as PyTorch computes it: ``self.reciprocal() * number``,
    two nodes, the first saving its result (not ``self``)."""
    if not _operand(other):
        return NotImplemented
    return self.reciprocal() * other


def _augmented(row, dunder):
    def method(self, other):
        if not _operand(other):
            return NotImplemented
        return apply_inplace(row, self, (other,), op_name=f"__i{dunder}__")
    return method
