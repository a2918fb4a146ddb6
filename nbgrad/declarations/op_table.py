"""The elementwise op table: one row per op.

Each row gives the scalar forward and, per differentiable input, the
derivative times the incoming gradient ``g``. A derivative's parameters say
what it reads (inputs by name, ``out`` for the result), and therefore what the
forward saves. Kernels (CPU and CUDA, forward, fused backward, in-place) are
generated from these rows; tests are driven by them.

Transcendentals come from ``scalar_math`` (called as ``sm.exp``: plain
arithmetic that vectorizes, where libm's calls do not). A masked gradient
is a select, ``g if keep else sm.zero(g)``, never ``0 * g``: that is nan for
an infinite ``g`` (e.g. sqrt's at 0), where PyTorch gives 0.
"""
import math
import numbers

import numpy as np

from .. import dtypes
from . import scalar_math as sm
from .row import FastPath, Row

INF = math.inf


def _sign(a):
    return 1 if a > 0 else (-1 if a < 0 else 0)


_ONE32 = np.float32(1)  # b - _ONE32 keeps float32 in float32 (b - 1 is float64 in Numba)
_HALF32 = np.float32(0.5)


def _pow_base_grad(g, a, b):
    # PyTorch's pow_backward: zero where b == 0, else g * (b * a**(b - 1)).
    return sm.zero(g) if b == 0 else g * (b * sm.pow(a, b - _ONE32))


def _pow_exponent_grad(g, a, b, out):
    # PyTorch masks the a == 0, b >= 0 case (log(a) is -inf) inside the
    # product: g * where(mask, 0, out * log(a)), so an infinite g gives nan
    # there, as in PyTorch.
    return g * (sm.zero(g) if (a == 0 and b >= 0) else out * sm.log(a))


def _pow_number(a, b):
    # pow(tensor, number) as PyTorch computes it: these exponents take sqrt,
    # 1 / sqrt, products and reciprocals, which differ from pow at -0. and
    # -inf (sqrt(-0.) is -0., sqrt(-inf) nan, where pow gives 0. and inf)
    # and at the ends of the range (1 / (a * a)). b is one number for every
    # element: LLVM unswitches the loop, so each exponent runs its own code.
    if b == 0.5:
        return sm.sqrt(a)
    if b == -0.5:
        return _ONE32 / sm.sqrt(a)
    if b == 2:
        return a * a
    if b == 3:
        return a * a * a
    if b == -1:
        return _ONE32 / a
    if b == -2:
        return _ONE32 / (a * a)
    return sm.pow(a, b)


def _pow_number_grad(g, a, b):
    # PyTorch's pow_backward: its a**(b - 1) takes the same special cases.
    return sm.zero(g) if b == 0 else g * (b * _pow_number(a, b - _ONE32))


def _max_grad(g, a, b):
    # maximum's gradient for a (minimum's: _max_grad(g, b, a)), as PyTorch's
    # where(a == b, g / 2, g).masked_fill(a < b, 0): ties split it, and a NaN
    # in either operand passes g to both.
    return sm.zero(g) if a < b else (g * _HALF32 if a == b else g)


def _div_divisor_grad(g, a, b):
    # PyTorch's -g * ((a / b) / b): squaring b over- or underflows for
    # |b| beyond about 1e+-19 in float32.
    return -g * ((a / b) / b)


def _clamp(a, lo, hi):
    # min(max(a, lo), hi) as in PyTorch: hi wins when lo > hi; a NaN anywhere propagates.
    low = lo if (a < lo or lo != lo) else a
    return hi if (low > hi or hi != hi) else low


# Argument checks (Row's ``check``): tensors come as their dtypes.
def _is_bool(x):
    return x is dtypes.bool_ or isinstance(x, (bool, np.bool_))


def _is_integral(x):
    return isinstance(x, dtypes.dtype) and not x.is_floating_point


def _check_neg(args):
    if args[0] is dtypes.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")


def _check_sub(args):
    bools = [_is_bool(a) for a in args]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _check_pow(args):
    base, exponent = args
    if _is_bool(exponent) and _is_bool(base) and isinstance(exponent, dtypes.dtype):
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    # A Python integer exponent of an integer tensor: its value decides.
    if (_is_integral(base) and isinstance(exponent, numbers.Integral)
            and not isinstance(exponent, (bool, np.bool_))):
        if exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if exponent >= 2 ** 63:  # a uint64 Scalar, which the int64 computation cannot take
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return (1,)
    return None


def _pow_backward_refusal(dtypes_, wanted):
    # PyTorch's pow_backward computes exponent - 1, which a bool exponent refuses.
    if 0 in wanted and dtypes_[1] is dtypes.bool_:
        return ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return None


def _check_abs(args):
    if args[0] is dtypes.bool_:
        raise NotImplementedError('"abs_cpu" not implemented for \'Bool\'')


def _check_relu(args):
    if args[0] is dtypes.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")


ROWS = [
    Row("neg", lambda a: -a, {"a": lambda g: -g}, check=_check_neg),
    Row("add", lambda a, b: a + b, {"a": lambda g: g, "b": lambda g: g}),
    Row("sub", lambda a, b: a - b, {"a": lambda g: g, "b": lambda g: -g}, check=_check_sub),
    Row("mul", lambda a, b: a * b, {"a": lambda g, b: g * b, "b": lambda g, a: g * a}),
    Row("div", lambda a, b: a / b,
        {"a": lambda g, b: g / b, "b": _div_divisor_grad},
        result="float", domain=(0.5, 2.0)),
    # A number base is PyTorch's pow(Scalar, Tensor), whose result is C-contiguous.
    Row("pow", lambda a, b: sm.pow(a, b),
        {"a": _pow_base_grad, "b": _pow_exponent_grad}, domain=(0.5, 2.0), check=_check_pow,
        backward_refusal=_pow_backward_refusal,
        contiguous_with_number=("a",)),
    # pow(Tensor, Scalar) for floating results (ops.pow dispatches to it).
    Row("pow_number", _pow_number, {"a": _pow_number_grad}, result="float", domain=(0.5, 2.0),
        check=_check_pow, method=False, title="Pow", wraps_numbers=False),
    # number / tensor is reciprocal(tensor) * number, as in PyTorch (ops' __rtruediv__).
    Row("reciprocal", lambda a: _ONE32 / a, {"a": lambda g, out: -g * (out * out)},
        result="float", domain=(0.5, 2.0)),
    Row("exp", lambda a: sm.exp(a), {"a": lambda g, out: g * out}, result="float"),
    Row("log", lambda a: sm.log(a), {"a": lambda g, a: g / a}, result="float", domain=(0.1, 4.0)),
    Row("sqrt", lambda a: sm.sqrt(a), {"a": lambda g, out: g / (2 * out)},
        result="float", domain=(0.1, 4.0)),
    Row("abs", lambda a: abs(a), {"a": lambda g, a: g * _sign(a)}, check=_check_abs),
    # CPU kernels run the *_small versions on blocks of small arguments.
    Row("sin", lambda a: sm.sin(a), {"a": lambda g, a: g * sm.cos(a)}, result="float",
        fast_path=FastPath(sm.TRIG_SMALL_LIMIT, lambda a: sm.sin_small(a),
                           {"a": lambda g, a: g * sm.cos_small(a)})),
    Row("cos", lambda a: sm.cos(a), {"a": lambda g, a: -g * sm.sin(a)}, result="float",
        fast_path=FastPath(sm.TRIG_SMALL_LIMIT, lambda a: sm.cos_small(a),
                           {"a": lambda g, a: -g * sm.sin_small(a)})),
    Row("tanh", lambda a: sm.tanh(a), {"a": lambda g, out: g * (1 - out * out)}, result="float"),
    Row("sigmoid", lambda a: sm.sigmoid(a),
        {"a": lambda g, out: g * out * (1 - out)}, result="float"),
    # relu(-0.) is -0. and relu(nan) nan, whose gradient is g (PyTorch's threshold_backward).
    Row("relu", lambda a: sm.zero(a) if a < 0 else a,
        {"a": lambda g, out: sm.zero(g) if out <= 0 else g}, check=_check_relu),
    # A tie (+0 and -0) gives a, as PyTorch's scalar loop (std::max); its SIMD
    # body gives b (tests/fuzzing.py DOCUMENTED).
    Row("maximum", lambda a, b: a if (a >= b or a != a) else b,
        {"a": _max_grad, "b": lambda g, a, b: _max_grad(g, b, a)}, tensors=("input", "other")),
    Row("minimum", lambda a, b: a if (a <= b or a != a) else b,
        {"a": lambda g, a, b: _max_grad(g, b, a), "b": _max_grad}, tensors=("input", "other")),
    Row("clamp", _clamp,
        {"a": lambda g, a, lo, hi: g if lo <= a <= hi else sm.zero(g),
         "lo": lambda g, a, lo, hi: g if (a < lo and lo < hi) else sm.zero(g),
         "hi": lambda g, a, lo, hi: g if (a > hi or hi < lo) else sm.zero(g)},
        scalars=("lo", "hi"), wraps_numbers=False),
    Row("where", lambda condition, a, b: a if condition else b,
        {"a": lambda g, condition: g if condition else sm.zero(g),
         "b": lambda g, condition: sm.zero(g) if condition else g},
        bool_inputs=("condition",), method=False, scalars=("a", "b")),
    Row("eq", lambda a, b: a == b, result="bool"),
    Row("ne", lambda a, b: a != b, result="bool"),
    Row("lt", lambda a, b: a < b, result="bool"),
    Row("le", lambda a, b: a <= b, result="bool"),
    Row("gt", lambda a, b: a > b, result="bool"),
    Row("ge", lambda a, b: a >= b, result="bool"),
    # In-place only: the writes behind copy_, fill_ and zero_.
    Row("copy", lambda a, src: src, {"a": lambda g: sm.zero(g), "src": lambda g: g},
        result="self", method=False),
    Row("fill", lambda a, value: value, {"a": lambda g: sm.zero(g), "value": lambda g: g},
        result="self", method=False, scalars=("value",)),
]

BY_NAME = {row.name: row for row in ROWS}
