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


# -- issue 15: more elementwise ops ------------------------------------------------------------
_TWO32 = np.float32(2)
_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046
_TWO_OVER_SQRT_PI = 1.1283791670955126
_DEG2RAD = math.pi / 180
_RAD2DEG = 180 / math.pi
_HALF_SQRT_PI = 0.886226925452758

_TYPE_WORDS = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "float16": "Half", "bfloat16": "BFloat16"}


def _promoted(kinds):
    """The dtype PyTorch's TensorIterator computes in, from a check's kinds
    (tensors as dtypes, numbers as they are)."""
    tensor = number = None
    for k in kinds:
        if isinstance(k, dtypes.dtype):
            tensor = k if tensor is None else dtypes.promote_types(tensor, k)
        elif k is not None:
            d = dtypes.scalar_dtype(k)
            number = d if number is None else dtypes.promote_types(number, d)
    if tensor is None:
        return number
    if number is None or number.category <= tensor.category:
        return tensor
    return dtypes.get_default_dtype() if number.is_floating_point else number


def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for '
                               f"'{_TYPE_WORDS.get(dtype.name, dtype.name)}'")


def _refuse(kernel, *, bool_=True, integer=False, floating=False):
    """A check refusing the computation dtypes PyTorch has no kernel for."""
    def check(args):
        d = _promoted(args)
        if d is None:
            return None
        if (d is dtypes.bool_ and bool_) or (floating and d.is_floating_point) or (
                integer and d is not dtypes.bool_ and not d.is_floating_point):
            raise _not_implemented(kernel, d)
        return None
    return check


def _on_input(check):
    """``check`` of the first input alone (the others are the op's own numbers)."""
    return lambda args: check(args[:1])


def _check_lerp(args):
    kind = "lerp_kernel_tensor" if isinstance(args[2], dtypes.dtype) else "lerp_kernel_scalar"
    first = args[0]
    if isinstance(first, dtypes.dtype) and not first.is_floating_point:
        raise _not_implemented(kind, first)
    for name, other in (("end", args[1]), ("weight", args[2])):
        if isinstance(other, dtypes.dtype) and other is not first:
            words = {"float32": "float", "float64": "double", "int64": "long int",
                     "bool": "bool"}
            raise RuntimeError(f"expected dtype {words.get(first.name, first.name)} for "
                               f"`{name}` but got dtype {words.get(other.name, other.name)}")


_ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * nbgrad.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


def _check_addcdiv(args):
    t1, t2 = args[1], args[2]
    if all(isinstance(t, dtypes.dtype) and not t.is_floating_point for t in (t1, t2)):
        raise RuntimeError(_ADDCDIV_INTEGER)
    _check_addcmul(args)


def _check_addcmul(args):
    d = _promoted(args[:3])
    if d is dtypes.bool_:
        raise _not_implemented("addcmul_cpu_out", d)


def _floor_divide_refusal(dtypes_, wanted):
    # Only floor_divide_ into a tensor that requires grad records a node
    # (floor_divide itself has no derivative here): PyTorch's backward refuses it
    return "derivative for aten::floor_divide_ is not implemented"


def _remainder_refusal(dtypes_, wanted):
    # PyTorch's remainder(Scalar, Tensor) has no derivative formula
    if dtypes_[0] is None and 1 in wanted:
        return "derivative for aten::remainder is not implemented"
    return None


def _lerp(a, end, weight):
    # ATen's (vectorized) lerp: fused from the end nearer the weight
    d = end - a
    return sm.fma(weight, d, a) if abs(weight) < 0.5 else sm.fma(weight - _ONE32, d, end)


def _logaddexp(a, b):
    # ATen's: max + log1p(exp(-|a - b|)); equal infinities give themselves
    m = a if (a >= b or b != b) else b
    same_inf = (a == b) and (a - a != a - a)
    return a if same_inf else m + sm.log1p(sm.exp(-abs(a - b)))


def _xlogy(a, b):
    return b if b != b else (sm.zero(a) if a == 0 else a * sm.log(b))


def _xlogy_self_grad(g, a, b):
    # PyTorch's xlogy(grad, other).masked_fill((self == 0) & (other <= 0), 0)
    return sm.zero(g) if (a == 0 and b <= 0) else _xlogy(g, b)


def _xlog1py(a, b):
    return b if b != b else (sm.zero(a) if a == 0 else a * sm.log1p(b))


def _xlog1py_self_grad(g, a, b):
    # PyTorch's xlog1py(grad, other).masked_fill((self == 0) & (other <= -1), 0)
    return sm.zero(g) if (a == 0 and b <= -1) else _xlog1py(g, b)


def _entr(a):
    # -a log(a); 0 at 0, -inf below (nan stays nan)
    return a if a != a else (-a * sm.log(a) if a > 0 else (sm.zero(a) if a == 0 else -INF))


def _nan_to_num(a, nan, posinf, neginf):
    return nan if a != a else (posinf if a == INF else (neginf if a == -INF else a))


def _round_decimals(a, ten, flip):
    # ATen's: nearbyint(x * 10**d) / 10**d, or nearbyint(x / 10**-d) * 10**-d for d < 0
    return sm.rint(a / ten) * ten if flip else sm.rint(a * ten) / ten


def _isclose(a, b, rtol, atol, equal_nan):
    close = (a == b) | ((equal_nan != 0) & (a != a) & (b != b))
    error = abs(a - b)
    return close | ((error - error == 0) & (error <= atol + abs(rtol * b)))


def _sinc(a):
    p = a * sm.pi_like(a)  # in a's dtype, as PyTorch's (sinc(1.0f) is then -2.8e-8, not 0)
    return _ONE32 if a == 0 else sm.sin(p) / p


# (p cos p - sin p) / p**2 = sum over k >= 1 of C_k p**(2k - 1),
# C_k = (-1)**k (1/(2k)! - 1/(2k+1)!): nine terms reach double precision for |p| < 1
_SINC_C = [(-1) ** k * (1 / math.factorial(2 * k) - 1 / math.factorial(2 * k + 1))
           for k in range(1, 10)]
_SC1, _SC2, _SC3, _SC4, _SC5, _SC6, _SC7, _SC8, _SC9 = _SINC_C


def _sinc_grad(g, a):
    # PyTorch's g (p cos p - sin p) / (pi a**2), p = pi a, in a's dtype for
    # |p| >= 1; below, where its difference cancels (PyTorch's float32 gives 0.0
    # at a = 1e-4 for -3.3e-4), the series in double. 0 where pi a**2 is 0: a
    # select, as PyTorch's where
    p = a * sm.pi_like(a)
    x = np.float64(p)
    q = x * x
    near = x * (_SC1 + q * (_SC2 + q * (_SC3 + q * (_SC4 + q * (_SC5 + q * (
        _SC6 + q * (_SC7 + q * (_SC8 + q * _SC9))))))))
    far = g * (p * sm.cos(p) - sm.sin(p)) / (a * a * sm.pi_like(a))
    return sm.zero(g) if a * a == 0 else (g * (math.pi * near) if abs(p) < 1 else far)


def _logit(a, lo, hi):
    # ATen's: the input clamped to [eps, 1 - eps] when eps is given (else lo, hi = -inf, inf)
    z = lo if a < lo else (hi if a > hi else a)
    return sm.log(z / (_ONE32 - z))


def _logit_grad(g, a, lo, hi):
    return sm.zero(g) if (a < lo or a > hi) else g / (a * (_ONE32 - a))


def _atan2_recip(a, b):
    # PyTorch's 1 / (a * a + b * b), 0 where that is 0 (its gradient is then 0, or nan for g = inf)
    d = a * a + b * b
    return sm.zero(d) if d == 0 else _ONE32 / d


def _copysign_grad(g, a, out):
    # PyTorch's grad * (result / self).masked_fill(self == 0, 0): a product
    return g * (sm.zero(out) if a == 0 else out / a)


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
    # clamp_min/clamp_max (issue 15): one bound, PyTorch's own nodes
    # (ClampMinBackward: where(a >= lo, g, 0) and where(a < lo, g, 0)).
    Row("clamp_min", lambda a, lo: lo if (a < lo or lo != lo) else a,
        {"a": lambda g, a, lo: g if a >= lo else sm.zero(g),
         "lo": lambda g, a, lo: g if a < lo else sm.zero(g)},
        scalars=("lo",), wraps_numbers=False),
    Row("clamp_max", lambda a, hi: hi if (a > hi or hi != hi) else a,
        {"a": lambda g, a, hi: g if a <= hi else sm.zero(g),
         "hi": lambda g, a, hi: g if a > hi else sm.zero(g)},
        scalars=("hi",), wraps_numbers=False),
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
    # -- issue 15 --------------------------------------------------------------------------
    Row("rsqrt", lambda a: _ONE32 / sm.sqrt(a),
        {"a": lambda g, out: (-_HALF32 * g) * (out * out * out)}, result="float",
        domain=(0.5, 2.0)),
    Row("log1p", lambda a: sm.log1p(a), {"a": lambda g, a: g / (a + _ONE32)}, result="float",
        domain=(-0.5, 2.0)),
    Row("expm1", lambda a: sm.expm1(a), {"a": lambda g, out: g * (out + _ONE32)},
        result="float"),
    Row("log2", lambda a: sm.log2(a), {"a": lambda g, a: g / (a * _LN2)}, result="float",
        domain=(0.1, 4.0)),
    Row("log10", lambda a: sm.log10(a), {"a": lambda g, a: g / (a * _LN10)}, result="float",
        domain=(0.1, 4.0)),
    Row("exp2", lambda a: sm.exp2(a), {"a": lambda g, out: g * (out * _LN2)}, result="float"),
    Row("square", lambda a: a * a, {"a": lambda g, a: g * (_TWO32 * a)}, title="Pow"),
    Row("sign", lambda a: sm.sign(a), {"a": lambda g: sm.zero(g)}),
    Row("sgn", lambda a: sm.sign(a), {"a": lambda g: sm.zero(g)}),
    Row("floor", lambda a: sm.floor(a), {"a": lambda g: sm.zero(g)},
        check=_refuse("floor_vml_cpu")),
    Row("ceil", lambda a: sm.ceil(a), {"a": lambda g: sm.zero(g)}, check=_refuse("ceil_vml_cpu")),
    Row("round", lambda a: sm.rint(a), {"a": lambda g: sm.zero(g)},
        check=_refuse("round_vml_cpu")),
    # round(decimals=d): ten = 10**|d|, flip for d < 0 (nbgrad.ops.pointwise passes them)
    Row("round_decimals", _round_decimals, {"a": lambda g: sm.zero(g)},
        check=_on_input(_refuse("round_cpu", integer=True)), method=False, title="Round",
        scalars=("ten", "flip"), wraps_numbers=False),
    Row("trunc", lambda a: sm.trunc(a), {"a": lambda g: sm.zero(g)},
        check=_refuse("trunc_vml_cpu")),
    Row("frac", lambda a: a - sm.trunc(a), {"a": lambda g: g},
        check=_refuse("frac_cpu", integer=True)),
    Row("erf", lambda a: sm.erf(a),
        {"a": lambda g, a: g * (_TWO_OVER_SQRT_PI * sm.exp(-(a * a)))}, result="float"),
    Row("erfc", lambda a: sm.erfc(a),
        {"a": lambda g, a: g * (-_TWO_OVER_SQRT_PI * sm.exp(-(a * a)))}, result="float"),
    Row("erfinv", lambda a: sm.erfinv(a),
        {"a": lambda g, out: g * (_HALF_SQRT_PI * sm.exp(out * out))}, result="float",
        domain=(-0.9, 0.9)),
    Row("atan", lambda a: sm.atan(a), {"a": lambda g, a: g / (a * a + _ONE32)}, result="float"),
    Row("asin", lambda a: sm.asin(a), {"a": lambda g, a: g / sm.sqrt(_ONE32 - a * a)},
        result="float", domain=(-0.9, 0.9)),
    Row("acos", lambda a: sm.acos(a), {"a": lambda g, a: -g / sm.sqrt(_ONE32 - a * a)},
        result="float", domain=(-0.9, 0.9)),
    Row("sinh", lambda a: sm.sinh(a), {"a": lambda g, a: g * sm.cosh(a)}, result="float"),
    Row("cosh", lambda a: sm.cosh(a), {"a": lambda g, a: g * sm.sinh(a)}, result="float"),
    Row("asinh", lambda a: sm.asinh(a), {"a": lambda g, a: g / sm.sqrt(a * a + _ONE32)},
        result="float"),
    Row("acosh", lambda a: sm.acosh(a), {"a": lambda g, a: g / sm.sqrt(a * a - _ONE32)},
        result="float", domain=(1.1, 4.0)),
    Row("atanh", lambda a: sm.atanh(a), {"a": lambda g, a: g / (_ONE32 - a * a)},
        result="float", domain=(-0.9, 0.9)),
    Row("tan", lambda a: sm.tan(a), {"a": lambda g, out: g * (_ONE32 + out * out)},
        result="float", fast_path=FastPath(sm.TRIG_SMALL_LIMIT, lambda a: sm.tan_small(a))),
    Row("deg2rad", lambda a: a * _DEG2RAD, {"a": lambda g: g * _DEG2RAD}, result="float",
        title="Deg2Rad"),
    Row("rad2deg", lambda a: a * _RAD2DEG, {"a": lambda g: g * _RAD2DEG}, result="float",
        title="Rad2Deg"),
    Row("sinc", _sinc, {"a": _sinc_grad}, result="float"),
    # logit(input, eps=None): nbgrad.ops.pointwise passes the clamp's bounds
    Row("logit", _logit, {"a": _logit_grad}, result="float", method=False,
        scalars=("lo", "hi"), wraps_numbers=False, domain=(0.1, 0.9)),
    Row("lgamma", lambda a: sm.lgamma(a), {"a": lambda g, a: g * sm.digamma(a)},
        result="float", domain=(0.5, 4.0)),
    Row("digamma", lambda a: sm.digamma(a), {"a": lambda g, a: g * sm.polygamma(1, a)},
        result="float", domain=(0.5, 4.0)),
    # polygamma(n, input): nbgrad.ops.pointwise checks n and passes it last
    Row("polygamma", lambda a, n: sm.polygamma(n, a),
        {"a": lambda g, a, n: g * sm.polygamma(n + 1, a)}, result="float", method=False,
        scalars=("n",), wraps_numbers=False, domain=(0.5, 4.0)),
    Row("atan2", lambda a, b: sm.atan2(a, b),
        {"a": lambda g, a, b: g * b * _atan2_recip(a, b),
         "b": lambda g, a, b: g * -a * _atan2_recip(a, b)},
        result="float", tensors=("input", "other"), domain=(0.5, 2.0)),
    Row("hypot", lambda a, b: sm.hypot(a, b),
        {"a": lambda g, a, out: g * a / out, "b": lambda g, b, out: g * b / out},
        tensors=("input", "other"), check=_refuse("hypot_cpu", integer=True)),
    # fmod & co.: libm's fmod is a call per element; the CPU kernels run the
    # exact fma versions on blocks whose quotients are all small (sm.quotient_small).
    Row("fmod", lambda a, b: sm.fmod(a, b),
        {"a": lambda g: g, "b": lambda g, a, b: -g * sm.trunc(a / b)},
        check=_refuse("fmod_cpu"), domain=(0.5, 4.0),
        fast_path=FastPath(0, lambda a, b: sm.fmod_small(a, b),
                           fits=lambda a, b: sm.quotient_small(a, b))),
    Row("remainder", lambda a, b: sm.remainder(a, b),
        {"a": lambda g: g, "b": lambda g, a, b: -g * sm.floor_divide(a, b)},
        check=_refuse("remainder_cpu"), domain=(0.5, 4.0), backward_refusal=_remainder_refusal,
        fast_path=FastPath(0, lambda a, b: sm.remainder_small(a, b),
                           {"b": lambda g, a, b: -g * sm.floor_divide_small(a, b)},
                           fits=lambda a, b: sm.quotient_small(a, b))),
    # No derivative: nbgrad.ops.pointwise records PyTorch's NotImplemented node
    # for floor_divide (its backward refuses), and floor_divide_ refuses below.
    Row("floor_divide", lambda a, b: sm.floor_divide(a, b), check=_refuse("div_floor_cpu"),
        domain=(0.5, 4.0), backward_refusal=_floor_divide_refusal,
        fast_path=FastPath(0, lambda a, b: sm.floor_divide_small(a, b),
                           fits=lambda a, b: sm.quotient_small(a, b))),
    Row("lerp", _lerp,
        {"a": lambda g, weight: g * (_ONE32 - weight), "end": lambda g, weight: g * weight,
         "weight": lambda g, a, end: g * (end - a)},
        check=_check_lerp, tensors=("input", "end")),
    # addcmul/addcdiv(input, tensor1, tensor2, *, value=1): nbgrad.ops.pointwise
    # casts value to the tensors' dtype first (PyTorch's Scalar does not promote)
    Row("addcmul", lambda a, t1, t2, value: sm.fma(value * t1, t2, a),  # ATen's, fused
        {"a": lambda g: g, "t1": lambda g, t2, value: g * t2 * value,
         "t2": lambda g, t1, value: g * t1 * value},
        check=_check_addcmul, method=False, scalars=("value",), wraps_numbers=False,
        tensors=("input", "tensor1", "tensor2")),
    Row("addcdiv", lambda a, t1, t2, value: a + value * t1 / t2,
        {"a": lambda g: g, "t1": lambda g, t2, value: g * (value / t2),
         "t2": lambda g, t1, t2, value: -g * value * t1 / (t2 * t2)},
        check=_check_addcdiv, method=False, scalars=("value",), wraps_numbers=False,
        tensors=("input", "tensor1", "tensor2"),
        domain=(0.5, 2.0)),
    Row("logaddexp", _logaddexp,
        {"a": lambda g, a, b: g / (_ONE32 + sm.exp(b - a)),
         "b": lambda g, a, b: g / (_ONE32 + sm.exp(a - b))},
        tensors=("input", "other"), check=_refuse("logaddexp_cpu", integer=True)),
    Row("xlogy", _xlogy, {"a": _xlogy_self_grad, "b": lambda g, a, b: g * a / b},
        result="float", domain=(0.5, 2.0)),
    # torch.special's: functions of nbgrad.special only, as in PyTorch
    Row("xlog1py", _xlog1py, {"a": _xlog1py_self_grad, "b": lambda g, a, b: g * a / (b + _ONE32)},
        result="float", method=False, title="SpecialXlog1Py", domain=(0.5, 2.0)),
    Row("entr", _entr, {"a": lambda g, a: g * -(_ONE32 + sm.log(a))}, result="float",
        method=False, title="SpecialEntr", domain=(0.1, 4.0)),
    Row("copysign", lambda a, b: sm.copysign(a, b),
        {"a": _copysign_grad, "b": lambda g: sm.zero(g)}, result="float"),
    Row("nan_to_num", _nan_to_num, {"a": lambda g, a: g * (_ONE32 if a - a == 0 else sm.zero(g))},
        method=False, scalars=("nan", "posinf", "neginf"), wraps_numbers=False, title="NanToNum"),
    Row("isnan", lambda a: a != a, result="bool"),
    Row("isinf", lambda a: (a == INF) | (a == -INF), result="bool"),
    Row("isfinite", lambda a: (a == a) & (a != INF) & (a != -INF), result="bool"),
    Row("isclose", _isclose, result="bool", method=False, tensors=("input", "other"),
        scalars=("rtol", "atol", "equal_nan"), wraps_numbers=False),
    Row("logical_and", lambda a, b: (a != 0) & (b != 0), result="bool",
        tensors=("input", "other")),
    Row("logical_or", lambda a, b: (a != 0) | (b != 0), result="bool", tensors=("input", "other")),
    Row("logical_xor", lambda a, b: (a != 0) != (b != 0), result="bool",
        tensors=("input", "other")),
    Row("logical_not", lambda a: a == 0, result="bool"),
    Row("bitwise_and", lambda a, b: a & b, check=_refuse("bitwise_and_cpu", bool_=False,
                                                         floating=True)),
    Row("bitwise_or", lambda a, b: a | b, check=_refuse("bitwise_or_cpu", bool_=False,
                                                        floating=True)),
    Row("bitwise_xor", lambda a, b: a ^ b, check=_refuse("bitwise_xor_cpu", bool_=False,
                                                         floating=True)),
    Row("bitwise_not", lambda a: sm.bitwise_not(a),
        check=_refuse("bitwise_not_cpu", bool_=False, floating=True)),
    Row("bitwise_left_shift", lambda a, b: sm.left_shift(a, b),
        check=_refuse("lshift_cpu", floating=True)),
    Row("bitwise_right_shift", lambda a, b: sm.right_shift(a, b),
        check=_refuse("rshift_cpu", floating=True)),
    # fmax/fmin: a NaN loses to a number (both NaN: NaN). Ties give a, and all
    # of the gradient, as PyTorch's masked_fill((a >= b) | isnan(b), ...) pair.
    Row("fmax", lambda a, b: a if (a >= b or b != b) else b,
        {"a": lambda g, a, b: g if (a >= b or b != b) else sm.zero(g),
         "b": lambda g, a, b: sm.zero(g) if (a >= b or b != b) else g},
        tensors=("input", "other")),
    Row("fmin", lambda a, b: a if (a <= b or b != b) else b,
        {"a": lambda g, a, b: g if (a <= b or b != b) else sm.zero(g),
         "b": lambda g, a, b: sm.zero(g) if (a <= b or b != b) else g},
        tensors=("input", "other")),
]

BY_NAME = {row.name: row for row in ROWS}
