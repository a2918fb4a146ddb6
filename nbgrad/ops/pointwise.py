"""Elementwise ops of the op table whose PyTorch signatures are more than
tensors in a row: keyword arguments (``round(decimals=)``, ``isclose(rtol=,
atol=, equal_nan=)``, ``nan_to_num(nan=, posinf=, neginf=)``,
``addcmul/addcdiv(value=)``), integer division by zero (PyTorch's CPU kernels
raise ``ZeroDivisionError``: ``//``, ``%``, ``floor_divide``, ``remainder``,
``fmod``), ``square`` of bools, and the operators ``// % & | ^ ~ << >>`` with
their reflected and in-place forms. Each computes its row."""
import numbers

import numpy as np

from .. import dtypes
from ..declarations.op_table import BY_NAME
from ..tape import grad_mode
from ..tensor import Tensor
from . import arithmetic
from .elementwise import apply, apply_inplace, check_tensors
from .registry import tensor_op
from .scatter import NotImplementedBackward

_TYPE_WORDS = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "float16": "Half", "bfloat16": "BFloat16"}


def _word(dtype):
    return _TYPE_WORDS.get(dtype.name, dtype.name)


# -- division and remainders -------------------------------------------------------------------
def _check_divisor(input, other):
    """PyTorch's CPU integer division raises on a zero divisor (its CUDA
    kernels do not: there the result is undefined, so nothing is checked)."""
    if not isinstance(other, (Tensor, numbers.Number, np.generic)):
        return
    if not isinstance(input, (Tensor, numbers.Number, np.generic)):
        return
    first = input if isinstance(input, Tensor) else other
    if not isinstance(first, Tensor) or first._backend.name != "cpu":
        return
    result = dtypes.result_type([input, other])
    if result.is_floating_point or result is dtypes.bool_:
        return
    if isinstance(other, Tensor):
        if other._backend.name == "cpu" and other._data.size and not other._data.all():
            raise RuntimeError("ZeroDivisionError")
    elif other == 0:
        raise RuntimeError("ZeroDivisionError")


def _division(name):
    row = BY_NAME[name]

    def function(input, other):
        _check_divisor(input, other)
        result = row(input, other)
        if name == "floor_divide":  # PyTorch records it, and refuses its backward
            sources = [t for t in (input, other) if isinstance(t, Tensor) and t.requires_grad]
            if sources and grad_mode.is_grad_enabled():
                return Tensor._from_op(result._data, NotImplementedBackward(
                    sources, "aten::floor_divide"), result.dtype, result._backend)
        return result

    def method_(self, other):
        _check_divisor(self, other)
        return apply_inplace(row, self, (other,))

    function.__name__ = function.__qualname__ = name
    method_.__name__ = method_.__qualname__ = name + "_"
    function.__doc__ = f"``{name}(other)``: elementwise ``{name}``, as ``torch.{name}``."
    method_.__doc__ = f"``{name}_(other)``: in-place ``{name}``, written into ``self``."
    tensor_op(name)(function)
    tensor_op(name + "_", function=False)(method_)
    return function, method_


floor_divide, floor_divide_ = _division("floor_divide")
remainder, remainder_ = _division("remainder")
fmod, fmod_ = _division("fmod")


def _operand(other):
    return isinstance(other, (Tensor, numbers.Number, np.bool_))


def _division_operators(function, row, dunder):
    def forward(self, other):
        return function(self, other) if _operand(other) else NotImplemented

    def reflected(self, other):
        return function(other, self) if _operand(other) else NotImplemented

    def augmented(self, other):
        if not _operand(other):
            return NotImplemented
        _check_divisor(self, other)
        return apply_inplace(row, self, (other,), op_name=f"__i{dunder}__")

    symbol = {"floordiv": "//", "mod": "%"}[dunder]
    forward.__doc__ = f"``self {symbol} other``: elementwise ``{row.name}``."
    reflected.__doc__ = f"``other {symbol} self``: elementwise ``{row.name}``."
    augmented.__doc__ = f"``self {symbol}= other``: in-place ``{row.name}``."
    for name, fn in ((f"__{dunder}__", forward), (f"__r{dunder}__", reflected),
                     (f"__i{dunder}__", augmented)):
        fn.__name__ = fn.__qualname__ = name
        tensor_op(name, function=False)(fn)


_division_operators(floor_divide, BY_NAME["floor_divide"], "floordiv")
_division_operators(remainder, BY_NAME["remainder"], "mod")

# -- in-place forms PyTorch has no derivative for --------------------------------------------------
def _inplace_without_derivative(name):
    row = BY_NAME[name]

    def method_(self):
        if grad_mode.is_grad_enabled() and isinstance(self, Tensor) and self.requires_grad \
                and not self.is_leaf:  # (a leaf: apply_inplace's own error comes first)
            raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not "
                                      "implemented.")
        return apply_inplace(row, self, ())
    method_.__name__ = method_.__qualname__ = name + "_"
    method_.__doc__ = (f"``{name}_()``: in-place ``{name}`` (not differentiable, as in "
                       "PyTorch).")
    tensor_op(name + "_", function=False)(method_)


for _name in ("asinh", "acosh", "atanh"):
    _inplace_without_derivative(_name)


# -- bitwise operators ---------------------------------------------------------------------------
for _name, _dunder in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor"),
                       ("bitwise_left_shift", "lshift"), ("bitwise_right_shift", "rshift")):
    _row = BY_NAME[_name]
    tensor_op(f"__{_dunder}__", function=False)(arithmetic._operator(_row, _dunder))
    tensor_op(f"__r{_dunder}__", function=False)(arithmetic._reversed(_row, _dunder))
    tensor_op(f"__i{_dunder}__", function=False)(arithmetic._augmented(_row, _dunder))


@tensor_op("__invert__", function=False)
def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return BY_NAME["bitwise_not"](self)


# -- keyword arguments ---------------------------------------------------------------------------
def _round(name):
    plain, decimal = BY_NAME["round"], BY_NAME["round_decimals"]
    inplace = name.endswith("_")

    def round(input, *, decimals=0):  # noqa: A001
        if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got (Tensor, "
                f"decimals={type(decimals).__name__}), but expected one of:\n"
                " * (Tensor input, *, Tensor out = None)\n"
                " * (Tensor input, *, int decimals, Tensor out = None)\n")
        if decimals == 0:
            return apply_inplace(plain, input, ()) if inplace else plain(input)
        args = (float(10.0 ** abs(int(decimals))), decimals < 0)
        return apply_inplace(decimal, input, args) if inplace else apply(decimal, (input, *args))
    round.__name__ = round.__qualname__ = name
    round.__doc__ = (f"``{name}(*, decimals=0)``: rounds half to even, to ``decimals`` "
                     "decimal places (negative: to tens, hundreds ...).")
    return round


round = tensor_op("round")(_round("round"))  # noqa: A001
round_ = tensor_op("round_", function=False)(_round("round_"))


def _nan_to_num(inplace):
    row = BY_NAME["nan_to_num"]

    def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
        if not input.dtype.is_floating_point:  # nothing to replace
            return input if inplace else input.clone()
        kind = input.dtype.numpy
        info = np.finfo(kind)
        with np.errstate(over="ignore"):  # a bound beyond the dtype's range becomes inf
            values = (kind.type(0.0 if nan is None else nan),
                      info.max if posinf is None else kind.type(posinf),
                      info.min if neginf is None else kind.type(neginf))
        if inplace:
            return apply_inplace(row, input, values, op_name="nan_to_num_")
        return apply(row, (input, *values))
    nan_to_num.__name__ = nan_to_num.__qualname__ = "nan_to_num_" if inplace else "nan_to_num"
    nan_to_num.__doc__ = (
        "nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor\n\n    NaN, inf and "
        "-inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the dtype's "
        "largest and smallest finite values).")
    return nan_to_num


nan_to_num = tensor_op("nan_to_num")(_nan_to_num(False))
nan_to_num_ = tensor_op("nan_to_num_", function=False)(_nan_to_num(True))


def _logit(inplace):
    name = "logit_" if inplace else "logit"

    def logit(input, eps=None):
        lo, hi = -np.inf, np.inf
        if eps is not None:  # in the computation's dtype, as ATen's scalar_t bounds
            kind = (input.dtype if input.dtype.is_floating_point
                    else dtypes.get_default_dtype()).numpy.type
            lo = kind(eps)
            hi = kind(1) - lo
        row = BY_NAME["logit"]
        if inplace:
            return apply_inplace(row, input, (lo, hi), op_name=name)
        return apply(row, (input, lo, hi))
    logit.__name__ = logit.__qualname__ = name
    logit.__doc__ = (f"{name}(input, eps=None) -> Tensor\n\n    ``log(p / (1 - p))``, "
                     "elementwise, with ``p`` the input clamped to ``[eps, 1 - eps]`` when "
                     "``eps`` is given (else out of [0, 1] gives nan).")
    return logit


logit = tensor_op("logit")(_logit(False))
logit_ = tensor_op("logit_", function=False)(_logit(True))


def _polygamma_order(name, n):
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
        raise TypeError(f"{name}(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return int(n)


@tensor_op(function=False)
def polygamma(self, n):
    """``polygamma(n)``: the ``n``-th derivative of digamma at ``self``."""
    return apply(BY_NAME["polygamma"], (self, _polygamma_order("polygamma", n)))


@tensor_op(function=False)
def polygamma_(self, n):
    """``polygamma_(n)``: in-place ``polygamma``."""
    return apply_inplace(BY_NAME["polygamma"], self, (_polygamma_order("polygamma_", n),),
                         op_name="polygamma_")


def _polygamma_function(name):
    def polygamma(n, input):
        return apply(BY_NAME["polygamma"], (input, _polygamma_order(name, n)))
    polygamma.__doc__ = """polygamma(n, input) -> Tensor

    The ``n``-th derivative of the digamma function, elementwise (``n`` >= 0;
    0 is ``digamma``); float results, as PyTorch's."""
    return polygamma


polygamma_function = _polygamma_function("polygamma")
special_polygamma = _polygamma_function("special_polygamma")  # nbgrad.special.polygamma
tensor_op("polygamma", method=False)(polygamma_function)


def _tolerance(name, value):
    if value < 0:
        shown = int(value) if float(value).is_integer() else value
        raise RuntimeError(f"{name} must be greater than or equal to zero, but got {shown}")


@tensor_op()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor

    Where ``|input - other| <= atol + rtol * |other|`` (or equal; NaNs equal with
    ``equal_nan``), as a bool tensor."""
    row = BY_NAME["isclose"]
    check_tensors(row, (input, other))
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_word(input.dtype)} did not match {_word(other.dtype)}")
    _tolerance("rtol", rtol)
    _tolerance("atol", atol)
    if not input.dtype.is_floating_point:  # PyTorch measures the error in floating point
        input, other = input.to(dtypes.get_default_dtype()), other.to(dtypes.get_default_dtype())
    return apply(row, (input, other, rtol, atol, bool(equal_nan)))


def _value(tensors, value):
    """PyTorch's ``value`` Scalar takes the tensors' dtype: it does not promote."""
    dtype = dtypes.result_type(tensors)
    if not dtype.is_floating_point and isinstance(value, (float, np.floating)):
        return int(value)
    return value


def _pointwise(name, inplace):
    row = BY_NAME[name]

    def op(input, tensor1, tensor2, *, value=1):
        check_tensors(row, (input, tensor1, tensor2), first_position=0 if inplace else 1)
        value = _value([input, tensor1, tensor2], value)
        if inplace:
            return apply_inplace(row, input, (tensor1, tensor2, value), op_name=name + "_")
        return apply(row, (input, tensor1, tensor2, value))
    op.__name__ = op.__qualname__ = name + ("_" if inplace else "")
    sign = "*" if name == "addcmul" else "/"
    op.__doc__ = (f"``{op.__name__}(tensor1, tensor2, *, value=1)``: ``input + value * "
                  f"tensor1 {sign} tensor2``, elementwise.")
    return op


addcmul = tensor_op("addcmul")(_pointwise("addcmul", False))
addcmul_ = tensor_op("addcmul_", function=False)(_pointwise("addcmul", True))
addcdiv = tensor_op("addcdiv")(_pointwise("addcdiv", False))
addcdiv_ = tensor_op("addcdiv_", function=False)(_pointwise("addcdiv", True))


def _square(inplace):
    row = BY_NAME["square"]

    def square(input):
        if input.dtype is dtypes.bool_:  # PyTorch's pow(input, 2): bools become int64
            if inplace:
                raise RuntimeError("result type Long can't be cast to the desired output type "
                                   "Bool")
            input = input.to(dtypes.int64)
        return apply_inplace(row, input, ()) if inplace else row(input)
    square.__name__ = square.__qualname__ = "square_" if inplace else "square"
    square.__doc__ = f"``{square.__name__}()``: ``input * input`` (bools become int64)."
    return square


square = tensor_op("square")(_square(False))
square_ = tensor_op("square_", function=False)(_square(True))
