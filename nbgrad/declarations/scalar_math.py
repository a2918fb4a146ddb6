"""Vectorizable scalar math for elementwise kernels (CPU ``njit`` and CUDA).

Numba lowers ``math.exp`` & co. to scalar libm calls on CPUs without SVML;
these block SIMD and ``tanhf`` alone costs ~13 ns/element.  The functions here
use only arithmetic, comparisons, integer bit views and fused multiply-adds,
so once inlined into a simple/``prange`` loop LLVM vectorizes them.

Public API (all plain Python functions, meant to be jitted by the caller)::

    exp, expm1, log, log1p, tanh, sigmoid, sin, cos        # dtype-generic
    tan, tan_small                                          # float32 vectorized; float64 libm
    lgamma, digamma, polygamma(n, x)                         # ATen's algorithms, in double
    pi_like(x)                                               # pi in x's float type
    exp_f32, ..., cos_f32 / exp_f64, ..., cos_f64           # fixed dtype
    sin_small, cos_small (+ _f32/_f64), TRIG_SMALL_LIMIT    # |x| <= limit only
    pow(x, y), pow_f32, pow_f64                              # see "pow" below
    zero(x)                                                  # 0 of x's type
    sqrt(x)                                                  # math.sqrt, nan below 0
    log2, log10, exp2, sinh, cosh, asinh, acosh, atanh,      # float32 vectorized in
    atan, asin, acos, atan2, hypot                           #   double; float64 libm
    erf, erfc, erfinv (+ _f32/_f64)                          # vectorized, both dtypes
    floor, ceil, trunc, rint, sign, copysign, fma            # floats and integers
    fmod, remainder, floor_divide                            # C's / Python's / floor
    fmod_small, remainder_small, floor_divide_small,         # the same, vectorized, where
    quotient_small                                           #   quotient_small(x, y) holds
    bitwise_not, left_shift, right_shift                     # integers (PyTorch's shifts)

* Generic ``f(x)`` dispatches on the Numba type of ``x`` (float32 / float64;
  integers and bools go through float64, as NumPy does) via ``overload``.
  Use it as ``numba.njit(inline="always")(sm.exp)``, call ``sm.exp``
  directly from jitted code, or ``numba.cuda.jit(device=True)(sm.exp)``.
  Called from the interpreter (e.g. the CUDA simulator) it falls back to the
  NumPy ufunc.
* ``f_f32`` / ``f_f64`` are the implementations, with no dispatch.  They only
  run jitted (``_fma`` has no interpreter version).

Type discipline: every float32 implementation uses float32 constants only
(module-level ``np.float32`` globals) and never mixes in Python int/float
literals, which would silently promote to float64 in Numba.  ``_fma`` refuses
mixed operand types, so such a slip is a typing error rather than a slowdown.
(sin_f32 and cos_f32 are the exception: they work in double on purpose.)

Accuracy, worst error in ulps against the exact result (float32: all 2**32
inputs; float64: ~2e7 samples against long double), see
tests/backends/test_scalar_math.py:

    float32  exp 0.98  expm1 1.44  log 0.83  log1p 0.83  tanh 1.50
             sigmoid 2.40  sin 0.55  cos 0.55
    float64  exp 0.97  expm1 1.82  log 0.83  log1p 0.81  tanh 2.54
             sigmoid 2.33  sin 1.50  cos 1.49  (relative error <= 3.5e-16)

    float32, evaluated in double and rounded once (python -m
    kernels.math_study --more, 8e6 samples each): log2 log10 exp2 sinh cosh
    asinh acosh atanh atan asin acos atan2 hypot all within 0.5 ulp + 2**-20
    (correctly rounded but for rare near-ties); float64 of these and fmod
    are libm's.

    erf, erfc, erfinv (python -m kernels.math_study --erf; tests against
    PyTorch's float64 and mpmath): float32 0.5003, 0.5012, 1.014 ulp;
    float64 3.4, 5.2, 3.3 ulp.  fmod_small & co. are exact (bit for bit
    fmod & co.).

with IEEE edge behaviour as NumPy: inf/nan propagation, signed zeros,
overflow to inf, gradual underflow, denormal inputs.  sin/cos hold these
bounds over the whole range (a Payne-Hanek reduction, up to the largest
float); they cost ~4-5x the old |x| <= 2**22 / 2**42 versions on the CPU.
sin_small and cos_small skip that reduction and are only valid for
|x| <= TRIG_SMALL_LIMIT (2**30): the CPU kernels run them on blocks of
elements that pass that check (see ops.elementwise.FastPath); they give the
same results there (float32: bit for bit, all inputs checked).
On CUDA, sin and cos compile to the device library's instead.
Polynomial coefficients are weighted minimax fits (Remez on relative error,
mpmath at 80 digits) rounded to the working precision; the fit interval is
noted at each set.

Building blocks:
* ``_fma`` emits ``llvm.fma`` (one rounding): exact Cody-Waite products with
  full-precision constant splits and half the Horner instructions.  Numba does
  not contract ``a * b + c`` by itself (no fastmath), so it is explicit.  On
  CPUs without FMA hardware LLVM falls back to a (slow) libm ``fma`` call.
* Round-to-nearest integer via the 1.5 * 2**23 (2**52) shifter: the integer
  ends up in the low mantissa bits, read back through an integer view.
* 2**k is built by writing k into the exponent field; exp splits it into two
  factors so k may run from the overflow to the denormal range.
"""
import math

import numpy as np
from numba import types
from numba.core.target_extension import current_target
from numba.extending import intrinsic, overload, register_jitable

__all__ = [
    "exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin", "cos",
    "exp_f32", "expm1_f32", "log_f32", "log1p_f32", "tanh_f32",
    "sigmoid_f32", "sin_f32", "cos_f32",
    "exp_f64", "expm1_f64", "log_f64", "log1p_f64", "tanh_f64",
    "sigmoid_f64", "sin_f64", "cos_f64",
    "pow", "pow_f32", "pow_f64", "zero", "sqrt",
    "sin_small", "cos_small", "sin_small_f32", "cos_small_f32",
    "sin_small_f64", "cos_small_f64", "TRIG_SMALL_LIMIT", "tan", "tan_small", "tan_f32",
    "tan_small_f32",
    "log2", "log10", "exp2", "sinh", "cosh", "asinh", "acosh", "atanh", "atan", "asin", "acos",
    "erf", "erfc", "erfinv", "atan2", "hypot", "floor", "ceil", "trunc", "rint", "sign",
    "copysign", "fmod", "remainder", "floor_divide", "quotient_small", "fmod_small",
    "remainder_small", "floor_divide_small", "erf_f32", "erfc_f32", "erfinv_f32", "erf_f64",
    "erfc_f64", "erfinv_f64", "bitwise_not", "left_shift", "right_shift",
    "fma", "lgamma", "digamma", "polygamma", "trigamma_f64", "zeta_f64", "fdiv", "pi_like",
]

_f32 = np.float32
_f64 = np.float64
_i32 = np.int32
_i64 = np.int64

# ``register_jitable`` keeps the plain function but lets other jitted code
# call it.  Small helpers are left to LLVM / NVVM to inline (checked by the
# tests: vectorized loops, no calls left in the PTX); the large ones (sin,
# cos) and the public dispatchers are inlined by Numba on the CPU only, see
# _on_cpu.
_jitable = register_jitable


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c with a single rounding; operands must share one float type."""
    if isinstance(a, types.Float) and a == b == c:
        def codegen(context, builder, sig, args):
            return builder.fma(*args)
        return a(a, b, c), codegen
    return None


@intrinsic
def _div(typingctx, a, b):
    """IEEE a / b.  Numba's ``/`` checks for a zero divisor and raises
    ZeroDivisionError under the default error model; that branch stops the
    loop from vectorizing in a plain ``njit`` kernel."""
    if isinstance(a, types.Float) and a == b:
        def codegen(context, builder, sig, args):
            return builder.fdiv(*args)
        return a(a, b), codegen
    return None


@intrinsic
def _trunc(typingctx, a):
    """The float with a's integer part (llvm.trunc: one vector instruction;
    Numba's math.trunc converts to an int and fails for inf and nan)."""
    if isinstance(a, types.Float):
        def codegen(context, builder, sig, args):
            fn = builder.module.declare_intrinsic("llvm.trunc", [args[0].type])
            return builder.call(fn, args)
        return a(a), codegen
    return None


def _on_cpu(expr, caller_info, callee_info):
    """Inlining cost model: inline at the Numba IR level on the CPU only.

    sin and cos are too large for LLVM's inliner, and a loop that calls
    them out of line does not vectorize, so the CPU inlines them (and the
    public dispatchers) in Numba.  numba-cuda mistypes IR-inlined overloads
    (arguments become ``omitted``); there they stay calls, which NVVM
    inlines."""
    return current_target() == "cpu"


# --------------------------------------------------------------------------
# float32 constants
# --------------------------------------------------------------------------
_ZERO32 = _f32(0.0)
_SIGMOID_ZERO32 = _f32(-88.72283935546875)  # float32 exp(-x) is inf at and below this
_HALF32 = _f32(0.5)
_ONE32 = _f32(1.0)
_TWO32 = _f32(2.0)
_INF32 = _f32(np.inf)
_NINF32 = _f32(-np.inf)
_NAN32 = _f32(np.nan)

_SHIFT32 = _f32(12582912.0)           # 1.5 * 2**23
_SHIFT32_BITS = _i32(0x4B400000)
_EXP32_BIAS = _i32(127)
_MANT32_BITS = _i32(23)
_MANT32_MASK = _i32(0x007FFFFF)

_LOG2E32 = _f32(1.4426950408889634)
_NLN2_HI32 = _f32(-0.6931471824645996)    # -RN(ln 2)
_NLN2_LO32 = _f32(1.9046542121259336e-09)  # -(ln 2 - RN(ln 2))
_LN2_HI32 = -_NLN2_HI32
_LN2_LO32 = -_NLN2_LO32

# exp: beyond these the result is exactly inf / 0 (after rounding); the
# clamp keeps k within the two-factor scale range and lets NaN through.
_EXP32_HI = _f32(89.0)
_EXP32_LO = _f32(-104.5)
# expm1: below -18 the result rounds to -1; 2**(k-1) then stays normal.
_EM1_32_LO = _f32(-18.0)
_EM1_32_HI = _f32(89.0)
_EM1_32_EXACT_LO = _f32(-24.0)        # 2**(k-1) - 1/2 exact for -24 < k < 25
_EM1_32_EXACT_HI = _f32(25.0)

# Q(r) = (e**r - 1 - r) / r**2 on |r| <= 0.3467, relative error of
# r + r**2 Q below 2**-28.8 after rounding the coefficients.
_EXPQ32_0 = _f32(5.000000000e-01)
_EXPQ32_1 = _f32(1.666666567e-01)
_EXPQ32_2 = _f32(4.166636243e-02)
_EXPQ32_3 = _f32(8.333389647e-03)
_EXPQ32_4 = _f32(1.394065446e-03)
_EXPQ32_5 = _f32(1.984588307e-04)

# log: mantissa m in [sqrt(.5), sqrt(2)), f = m - 1, and
# log1p(f) = f - f**2/2 + f**3 P(f), relative error below 2**-28.2.
_SQRTH32_BITS = _i32(0x3F3504F3)       # bits of RN(sqrt(0.5))
_MIN_NORMAL32 = _f32(1.1754943508222875e-38)
_TWO_P23_32 = _f32(8388608.0)           # scales denormals up to normal
_SUB32_EXP = _i32(23)
_LOGP32_0 = _f32(3.333331347e-01)
_LOGP32_1 = _f32(-2.500000894e-01)
_LOGP32_2 = _f32(2.000211924e-01)
_LOGP32_3 = _f32(-1.666799635e-01)
_LOGP32_4 = _f32(1.421955228e-01)
_LOGP32_5 = _f32(-1.240558922e-01)
_LOGP32_6 = _f32(1.188816205e-01)
_LOGP32_7 = _f32(-1.167565212e-01)
_LOGP32_8 = _f32(6.746641546e-02)

# tanh(9.5) rounds to 1 in float32; clamping keeps expm1 finite.
_TANH32_SAT = _f32(9.5)
# |x| < 0.625: tanh(x) = x + x**3 T(x**2), relative error below 2**-27.
# (expm1(2x) / (expm1(2x) + 2) alone is ~2.2 ulp there.)
_TANH32_SMALL = _f32(0.625)
_TANH32_0 = _f32(-3.333329260e-01)
_TANH32_1 = _f32(1.333154142e-01)
_TANH32_2 = _f32(-5.373862386e-02)
_TANH32_3 = _f32(2.061599679e-02)
_TANH32_4 = _f32(-5.664775148e-03)

# sin/cos polynomials, evaluated in double for float32 inputs (see the
# trigonometric section): sin(r) = r + r**3 S(r**2),
# cos(r) = 1 - r**2/2 + r**4 C(r**2) on |r| <= 0.96; relative errors below
# 2**-27.1 and 2**-28.9 with the coefficients rounded to float32.
_SIN32_0 = _f32(-1.666666716e-01)
_SIN32_1 = _f32(8.333319798e-03)
_SIN32_2 = _f32(-1.983680559e-04)
_SIN32_3 = _f32(2.698571052e-06)
_COS32_0 = _f32(4.166666791e-02)
_COS32_1 = _f32(-1.388887758e-03)
_COS32_2 = _f32(2.479786053e-05)
_COS32_3 = _f32(-2.708031559e-07)

# --------------------------------------------------------------------------
# float64 constants
# --------------------------------------------------------------------------
_ZERO64 = _f64(0.0)
_SIGMOID_ZERO64 = _f64(-709.782712893384)  # log(DBL_MAX): exp(-x) overflows below this
_HALF64 = _f64(0.5)
_ONE64 = _f64(1.0)
_TWO64 = _f64(2.0)
_INF64 = _f64(np.inf)
_NINF64 = _f64(-np.inf)
_NAN64 = _f64(np.nan)

_SHIFT64 = _f64(6755399441055744.0)   # 1.5 * 2**52
_SHIFT64_BITS = _i64(0x4338000000000000)
_EXP64_BIAS = _i64(1023)
_MANT64_BITS = _i64(52)
_MANT64_MASK = _i64(0x000FFFFFFFFFFFFF)

_LOG2E64 = _f64(1.4426950408889634)
_NLN2_HI64 = _f64(-0.6931471805599453)
_NLN2_LO64 = _f64(-2.3190468138462996e-17)
_LN2_HI64 = -_NLN2_HI64
_LN2_LO64 = -_NLN2_LO64

_EXP64_HI = _f64(709.8)
_EXP64_LO = _f64(-745.2)
_EM1_64_LO = _f64(-40.0)
_EM1_64_HI = _f64(709.8)
_EM1_64_EXACT_LO = _f64(-53.0)
_EM1_64_EXACT_HI = _f64(54.0)

# Q(r) as for float32, degree 10; relative error below 2**-61.
_EXPQ64_0 = _f64(0.5)
_EXPQ64_1 = _f64(0.16666666666666677)
_EXPQ64_2 = _f64(0.04166666666666651)
_EXPQ64_3 = _f64(0.008333333333321667)
_EXPQ64_4 = _f64(0.0013888888888962526)
_EXPQ64_5 = _f64(0.00019841269886037216)
_EXPQ64_6 = _f64(2.4801587172334868e-05)
_EXPQ64_7 = _f64(2.7557244294632395e-06)
_EXPQ64_8 = _f64(2.755740272975713e-07)
_EXPQ64_9 = _f64(2.5109009100542205e-08)
_EXPQ64_10 = _f64(2.0875329673298286e-09)

# log (fdlibm scheme): s = f/(2+f), z = s**2,
# log1p(f) = f - f**2/2 + s (f**2/2 + z R(z)); R fitted on z <= 0.02944,
# relative error of log1p below 2**-58.6.
_SQRTH64_BITS = _i64(0x3FE6A09E667F3BCD)
_MIN_NORMAL64 = _f64(2.2250738585072014e-308)
_TWO_P54_64 = _f64(18014398509481984.0)
_SUB64_EXP = _i64(54)
_LOGR64_0 = _f64(0.666666666666671)
_LOGR64_1 = _f64(0.39999999999519825)
_LOGR64_2 = _f64(0.28571428729284787)
_LOGR64_3 = _f64(0.2222219909089342)
_LOGR64_4 = _f64(0.18183571541169416)
_LOGR64_5 = _f64(0.15313164375076815)
_LOGR64_6 = _f64(0.1481051999082406)

_TANH64_SAT = _f64(20.0)

# sin/cos on |r| <= 0.786: relative errors below 2**-56.2 / 2**-60.9
# (rounded coefficients).
_SIN64_0 = _f64(-0.1666666666666664)
_SIN64_1 = _f64(0.008333333333323598)
_SIN64_2 = _f64(-0.00019841269830085073)
_SIN64_3 = _f64(2.755731362959632e-06)
_SIN64_4 = _f64(-2.505073091821452e-08)
_SIN64_5 = _f64(1.589449261066331e-10)
_COS64_0 = _f64(0.04166666666666665)
_COS64_1 = _f64(-0.0013888888888882798)
_COS64_2 = _f64(2.480158729459089e-05)
_COS64_3 = _f64(-2.755731572468786e-07)
_COS64_4 = _f64(2.087589545319033e-09)
_COS64_5 = _f64(-1.136784550115248e-11)


# ==========================================================================
# float32 implementations
# ==========================================================================
@_jitable
def _expm1_reduced_f32(r):
    """e**r - 1 for |r| <= ln2/2, accurate relative to the result."""
    q = _fma(r, _EXPQ32_5, _EXPQ32_4)
    q = _fma(q, r, _EXPQ32_3)
    q = _fma(q, r, _EXPQ32_2)
    q = _fma(q, r, _EXPQ32_1)
    q = _fma(q, r, _EXPQ32_0)
    return _fma(r * r, q, r)


@_jitable
def exp_f32(x):
    x = _EXP32_HI if x > _EXP32_HI else x
    x = _EXP32_LO if x < _EXP32_LO else x
    t = _fma(x, _LOG2E32, _SHIFT32)
    kf = t - _SHIFT32
    r = _fma(kf, _NLN2_HI32, x)             # exact
    r = _fma(kf, _NLN2_LO32, r)
    p = _ONE32 + _expm1_reduced_f32(r)
    # 2**k = 2**k1 * 2**k2, each factor normal for k in [-151, 128]
    k = _f32(t).view(_i32) - _SHIFT32_BITS
    k1 = k >> 1
    s1 = _i32((k1 + _EXP32_BIAS) << _MANT32_BITS).view(_f32)
    s2 = _i32((k - k1 + _EXP32_BIAS) << _MANT32_BITS).view(_f32)
    return (p * s1) * s2


@_jitable
def expm1_f32(x):
    xc = _EM1_32_HI if x > _EM1_32_HI else x
    xc = _EM1_32_LO if xc < _EM1_32_LO else xc
    t = _fma(xc, _LOG2E32, _SHIFT32)
    kf = t - _SHIFT32
    r = _fma(kf, _NLN2_HI32, xc)
    r = _fma(kf, _NLN2_LO32, r)
    em = _expm1_reduced_f32(r)
    # e**x - 1 = 2 * (2**(k-1) * (1 + em) - 1/2), with 2**(k-1) normal for
    # k in [-26, 128]; the final doubling overflows to inf cleanly.  While
    # 2**(k-1) - 1/2 is exact (|k| small) fold it in first so em keeps its
    # low bits; otherwise subtract 1/2 last, where it barely matters.
    k = _f32(t).view(_i32) - _SHIFT32_BITS
    s = _i32((k - 1 + _EXP32_BIAS) << _MANT32_BITS).view(_f32)
    near = (kf > _EM1_32_EXACT_LO) & (kf < _EM1_32_EXACT_HI)
    y = _fma(s, em, s - _HALF32) if near else _fma(s, em, s) - _HALF32
    y = y + y
    return x if x == _ZERO32 else y         # keeps -0.0


@_jitable
def _log_reduce_f32(x):
    """(e, f) with x = 2**e (1 + f), 1 + f in [sqrt(.5), sqrt(2)).

    For finite x > 0, denormals included; garbage otherwise."""
    sub = x < _MIN_NORMAL32
    xs = x * _TWO_P23_32 if sub else x
    # Numba widens int32 arithmetic to int64; truncating each step keeps
    # the vector code in 32-bit lanes.
    ix = _i32(_f32(xs).view(_i32) - _SQRTH32_BITS)
    e = _i32(_i32(ix >> _MANT32_BITS) - (_SUB32_EXP if sub else _i32(0)))
    m = _i32((ix & _MANT32_MASK) + _SQRTH32_BITS).view(_f32)
    return _f32(e), m - _ONE32              # m - 1 is exact


@_jitable
def _log_kernel_f32(ef, f, c):
    """e*ln2 + log1p(f) + c for the reduced f and a small correction c."""
    p = _fma(f, _LOGP32_8, _LOGP32_7)
    p = _fma(p, f, _LOGP32_6)
    p = _fma(p, f, _LOGP32_5)
    p = _fma(p, f, _LOGP32_4)
    p = _fma(p, f, _LOGP32_3)
    p = _fma(p, f, _LOGP32_2)
    p = _fma(p, f, _LOGP32_1)
    p = _fma(p, f, _LOGP32_0)
    z = f * f
    y = _fma(f * z, p, _fma(ef, _LN2_LO32, c))
    y = _fma(z, -_HALF32, y)
    return _fma(ef, _LN2_HI32, f + y)


@_jitable
def log_f32(x):
    ef, f = _log_reduce_f32(x)
    y = _log_kernel_f32(ef, f, _ZERO32)
    y = x if x == _INF32 else y
    return y if x > _ZERO32 else (_NINF32 if x == _ZERO32 else _NAN32 + x)


@_jitable
def log1p_f32(x):
    u = _ONE32 + x
    ef, f = _log_reduce_f32(u)
    # u = 1 + x dropped low bits of x; add them back to first order.  When
    # u is already in the central interval (e == 0), f = x is exact instead.
    c = _div(x - (u - _ONE32), u)
    central = ef == _ZERO32
    f = x if central else f
    c = _ZERO32 if central else c
    y = _log_kernel_f32(ef, f, c)
    y = x if u == _INF32 else y
    y = y if u > _ZERO32 else (_NINF32 if u == _ZERO32 else _NAN32 + x)
    return x if x == _ZERO32 else y         # keeps -0.0


@_jitable
def tanh_f32(x):
    a = abs(x)
    a = _TANH32_SAT if a > _TANH32_SAT else a
    u = expm1_f32(a + a)
    big = math.copysign(_div(u, u + _TWO32), x)
    z = x * x
    t = _fma(z, _TANH32_4, _TANH32_3)
    t = _fma(t, z, _TANH32_2)
    t = _fma(t, z, _TANH32_1)
    t = _fma(t, z, _TANH32_0)
    small = math.copysign(_fma(x * z, t, x), x)   # copysign: tanh(-0) = -0
    return small if a < _TANH32_SMALL else big


@_jitable
def sigmoid_f32(x):
    # e = exp(-|x|) <= 1 never overflows; for x < 0 use e / (1 + e) so tiny
    # results (down to denormals) keep their relative accuracy, except that
    # PyTorch's 1 / (1 + exp(-x)) is exactly 0 once exp(-x) overflows: so is this.
    e = exp_f32(-abs(x))
    y = _div(_ONE32 if x >= _ZERO32 else e, _ONE32 + e)
    return _ZERO32 if x <= _SIGMOID_ZERO32 else y


# ==========================================================================
# float64 implementations
# ==========================================================================
@_jitable
def _expm1_reduced_f64(r):
    q = _fma(r, _EXPQ64_10, _EXPQ64_9)
    q = _fma(q, r, _EXPQ64_8)
    q = _fma(q, r, _EXPQ64_7)
    q = _fma(q, r, _EXPQ64_6)
    q = _fma(q, r, _EXPQ64_5)
    q = _fma(q, r, _EXPQ64_4)
    q = _fma(q, r, _EXPQ64_3)
    q = _fma(q, r, _EXPQ64_2)
    q = _fma(q, r, _EXPQ64_1)
    q = _fma(q, r, _EXPQ64_0)
    return _fma(r * r, q, r)


@_jitable
def _exp_scaled_f64(t, r):
    """exp's last step: (1 + expm1(r)) * 2**k, k read from the shifted t;
    2**k = 2**k1 * 2**k2, each factor normal over exp's range."""
    p = _ONE64 + _expm1_reduced_f64(r)
    k = _f64(t).view(_i64) - _SHIFT64_BITS
    k1 = k >> 1
    s1 = _i64((k1 + _EXP64_BIAS) << _MANT64_BITS).view(_f64)
    s2 = _i64((k - k1 + _EXP64_BIAS) << _MANT64_BITS).view(_f64)
    return (p * s1) * s2


@_jitable
def exp_f64(x):
    x = _EXP64_HI if x > _EXP64_HI else x
    x = _EXP64_LO if x < _EXP64_LO else x
    t = _fma(x, _LOG2E64, _SHIFT64)
    kf = t - _SHIFT64
    r = _fma(kf, _NLN2_HI64, x)
    r = _fma(kf, _NLN2_LO64, r)
    return _exp_scaled_f64(t, r)


@_jitable
def expm1_f64(x):
    xc = _EM1_64_HI if x > _EM1_64_HI else x
    xc = _EM1_64_LO if xc < _EM1_64_LO else xc
    t = _fma(xc, _LOG2E64, _SHIFT64)
    kf = t - _SHIFT64
    r = _fma(kf, _NLN2_HI64, xc)
    r = _fma(kf, _NLN2_LO64, r)
    em = _expm1_reduced_f64(r)
    k = _f64(t).view(_i64) - _SHIFT64_BITS
    s = _i64((k - 1 + _EXP64_BIAS) << _MANT64_BITS).view(_f64)
    near = (kf > _EM1_64_EXACT_LO) & (kf < _EM1_64_EXACT_HI)
    y = _fma(s, em, s - _HALF64) if near else _fma(s, em, s) - _HALF64
    y = y + y
    return x if x == _ZERO64 else y


@_jitable
def _log_reduce_f64(x):
    sub = x < _MIN_NORMAL64
    xs = x * _TWO_P54_64 if sub else x
    ix = _f64(xs).view(_i64) - _SQRTH64_BITS
    e = (ix >> _MANT64_BITS) - (_SUB64_EXP if sub else _i64(0))
    m = _i64((ix & _MANT64_MASK) + _SQRTH64_BITS).view(_f64)
    return _f64(e), m - _ONE64


@_jitable
def _log_kernel_f64(ef, f, c):
    s = _div(f, _TWO64 + f)
    z = s * s
    p = _fma(z, _LOGR64_6, _LOGR64_5)
    p = _fma(p, z, _LOGR64_4)
    p = _fma(p, z, _LOGR64_3)
    p = _fma(p, z, _LOGR64_2)
    p = _fma(p, z, _LOGR64_1)
    p = _fma(p, z, _LOGR64_0)
    hfsq = _HALF64 * f * f
    # fdlibm ordering: the big terms f and e*ln2 are added last.
    y = _fma(s, _fma(z, p, hfsq), _fma(ef, _LN2_LO64, c))
    y = f - (hfsq - y)
    return _fma(ef, _LN2_HI64, y)


@_jitable
def log_f64(x):
    ef, f = _log_reduce_f64(x)
    y = _log_kernel_f64(ef, f, _ZERO64)
    y = x if x == _INF64 else y
    return y if x > _ZERO64 else (_NINF64 if x == _ZERO64 else _NAN64 + x)


@_jitable
def log1p_f64(x):
    u = _ONE64 + x
    ef, f = _log_reduce_f64(u)
    c = _div(x - (u - _ONE64), u)
    central = ef == _ZERO64
    f = x if central else f
    c = _ZERO64 if central else c
    y = _log_kernel_f64(ef, f, c)
    y = x if u == _INF64 else y
    y = y if u > _ZERO64 else (_NINF64 if u == _ZERO64 else _NAN64 + x)
    return x if x == _ZERO64 else y


@_jitable
def tanh_f64(x):
    a = abs(x)
    a = _TANH64_SAT if a > _TANH64_SAT else a
    u = expm1_f64(a + a)
    return math.copysign(_div(u, u + _TWO64), x)


@_jitable
def sigmoid_f64(x):
    e = exp_f64(-abs(x))
    y = _div(_ONE64 if x >= _ZERO64 else e, _ONE64 + e)
    return _ZERO64 if x < _SIGMOID_ZERO64 else y  # as sigmoid_f32


# ==========================================================================
# sin and cos, both dtypes, over the full range
# ==========================================================================
# Argument reduction is Payne-Hanek style for every |x| > pi/4, written in
# double-precision arithmetic so that it vectorizes: x = m * 2**s with an
# integer mantissa m, and x * 2/pi (mod 4) = m * (V0 + V1 + V2 + V3), where
# V0..V3 are consecutive 53-bit chunks of 2/pi, pre-scaled so that chunk
# k holds the bits of weight 2**(1 - 53k) down to 2**(-51 - 53k) *after*
# multiplying by 2**s; the higher bits of 2/pi only add multiples of 4.  The
# chunks for every s come from one table (the loads become vector gathers).
# Products are split exactly with FMA (two_prod), integer parts removed
# exactly, and the fraction f (|f| <= 1/2) summed in double-double:
# float32 needs two chunks (24-bit m), float64 four.  f is at least 2**-62
# for any double (2**-30 for any float32), so f keeps full relative
# accuracy.  |x| <= pi/4 takes r = x directly (tiny and denormal x too).
#
# Every lane computes the reduction: a branch to a cheaper path for small
# |x| would be if-converted by LLVM (both sides computed) anyway, and a
# libm fallback would be called for every lane.  float32 inputs are reduced
# and evaluated in double, then rounded once (about 0.55 ulp).  Cost, one
# core of the 2-core test machine: 2.1 (float32) / 5.0 (float64) ns per
# element, of which the table gathers are ~0.7 / ~1.4; the earlier
# |x| <= 2**22 / 2**42 Cody-Waite versions took 0.44 / 1.03.  The kernel
# loop gets that back: sin_small/cos_small below for blocks of small
# arguments, these for blocks that hold a huge, inf or nan one.

# 2/pi in hex, 1216 bits (the table needs bits up to 1182 for float64's
# largest exponent); checked against mpmath in the tests.
_2_OVER_PI_HEX = (
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a"
    "424dd2e006492eea09d1921cfe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e41"
    "3991d639835339f49c845f8bbdf9283b1ff897ffde05980fef2f118b5a0a6d1f6d367ecf"
    "27cb09b74f463f669e5fea2d7527bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d5d08"
    "56033046fc7b6bab")
# x = m * 2**s, s = biased exponent - 1075 (float64, m < 2**53) or - 150
# (float32, m < 2**24).  |x| > pi/4 means s >= -53 (float64) / -24 (float32).
_TRIG_S_MIN = -53
_TRIG_S_MAX = 2046 - 1075


def _two_over_pi_chunks():
    """Row s - _TRIG_S_MIN: V0..V3 as above (exact doubles)."""
    nbits = 4 * len(_2_OVER_PI_HEX)
    bits = int(_2_OVER_PI_HEX, 16)      # 2/pi * 2**nbits; bit i at nbits - i
    rows = []
    for s in range(_TRIG_S_MIN, _TRIG_S_MAX + 1):
        row = []
        for k in range(4):
            last = s - 1 + 53 * k + 52   # bits s-1+53k ... last of 2/pi
            chunk = (bits >> (nbits - last)) & ((1 << 53) - 1)
            row.append(float(chunk) * 2.0 ** (-53 * k - 51))
        rows.append(row)
    return np.array(rows, np.float64).ravel()


_TRIG_TABLE = _two_over_pi_chunks()
_TRIG_ROW = _i64(4)
_TRIG_IDX_OFF = _i64(-_TRIG_S_MIN)
_TRIG_IDX_MAX = _i64(_TRIG_S_MAX - _TRIG_S_MIN)

_PIO4_64 = _f64(0.7853981633974483)
_PIO4_32 = _f32(0.7853981633974483)
_PIO2_HI64 = _f64(1.5707963267948966)
_PIO2_LO64 = _f64(6.123233995736766e-17)
_TWO52_64 = _f64(4503599627370496.0)
_QUARTER64 = _f64(0.25)
_FOUR64 = _f64(4.0)
_ABS64_MASK = _i64(0x7FFFFFFFFFFFFFFF)
_M53_EXP_BITS = _i64(0x4330000000000000)   # exponent field of 2**52
_M64_BIAS = _i64(1075)
_ABS32_MASK = _i32(0x7FFFFFFF)
_IMPLICIT32 = _i32(0x00800000)
_M32_BIAS = _i64(150)

# The float32 polynomials in double.
_SIN32D_0 = _f64(_SIN32_0)
_SIN32D_1 = _f64(_SIN32_1)
_SIN32D_2 = _f64(_SIN32_2)
_SIN32D_3 = _f64(_SIN32_3)
_COS32D_0 = _f64(_COS32_0)
_COS32D_1 = _f64(_COS32_1)
_COS32D_2 = _f64(_COS32_2)
_COS32D_3 = _f64(_COS32_3)


def _inlined(fn):
    """register_jitable, Numba-inlined into CPU callers (see _on_cpu)."""
    return register_jitable(inline=_on_cpu)(fn)


@_jitable
def _two_sum(a, b):
    """(s, e) with s = RN(a + b) and s + e = a + b exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@_jitable
def _rint64(v):
    """Nearest integer, |v| < 2**51."""
    return (v + _SHIFT64) - _SHIFT64


@_jitable
def _rint_pos64(v):
    """Nearest integer, v >= 0 of any size."""
    return v if v >= _TWO52_64 else (v + _TWO52_64) - _TWO52_64


@_jitable
def _trig_row(s):
    i = s + _TRIG_IDX_OFF                   # clamped: other lanes are unused
    i = _i64(0) if i < _i64(0) else i
    return (_TRIG_IDX_MAX if i > _TRIG_IDX_MAX else i) * _TRIG_ROW


@_inlined
def _trig_reduce_f64(x):
    """(r, q): |x| = r + q*pi/2 (mod 2pi), |r| <= pi/4 + tiny.  The sign is
    left to the caller: sin(-x) = -sin(x) costs one sign flip at the end,
    which also turns sin(-0.0) into -0.0."""
    bits = _f64(x).view(_i64) & _ABS64_MASK
    # the integer mantissa, 2**52 <= m < 2**53
    m = _i64((bits & _MANT64_MASK) | _M53_EXP_BITS).view(_f64)
    i = _trig_row((bits >> _MANT64_BITS) - _M64_BIAS)
    v0 = _TRIG_TABLE[i]
    v1 = _TRIG_TABLE[i + 1]
    v2 = _TRIG_TABLE[i + 2]
    v3 = _TRIG_TABLE[i + 3]
    p0 = m * v0                             # < 2**55
    e0 = _fma(m, v0, -p0)
    p1 = m * v1                             # < 4
    e1 = _fma(m, v1, -p1)
    p2 = m * v2                             # < 2**-51
    e2 = _fma(m, v2, -p2)
    p3 = m * v3                             # < 2**-104
    k0 = _rint_pos64(p0)
    p0 = p0 - k0
    k0 = k0 - _FOUR64 * _rint_pos64(k0 * _QUARTER64)   # k0 mod 4, exactly
    a, ae = _two_sum(p0, e0)
    k1 = _rint64(a)
    a = a - k1
    b, be = _two_sum(a, p1)
    k2 = _rint64(b)
    b = b - k2
    # The middle terms (~2**-51) are added exactly; what is left is below
    # 2**-52 |b| (+ 2**-104), so f keeps its relative accuracy even when
    # the sum cancels down to 2**-62.
    c, c1 = _two_sum(b, p2)
    c, c2 = _two_sum(c, e1)
    c, c3 = _two_sum(c, ae)
    c, c4 = _two_sum(c, be)
    lo = ((c1 + c2) + (c3 + c4)) + (e2 + p3)
    f = c + lo
    flo = lo - (f - c)
    r = f * _PIO2_HI64                  # r = (f + flo) * pi/2, one rounding
    r = r + (_fma(f, _PIO2_HI64, -r) + _fma(f, _PIO2_LO64, flo * _PIO2_HI64))
    q = _i64(k0 + k1 + k2)
    small = abs(x) <= _PIO4_64
    return (abs(x) if small else r), (_i64(0) if small else q)


@_inlined
def _trig_reduce_f32(x):
    """As _trig_reduce_f64 for a float32 x; r is a double."""
    a = _f32(x).view(_i32) & _ABS32_MASK
    m = _f64(_i32((a & _MANT32_MASK) | _IMPLICIT32))   # 2**23 <= m < 2**24
    i = _trig_row(_i64(a >> _MANT32_BITS) - _M32_BIAS)
    v0 = _TRIG_TABLE[i]
    v1 = _TRIG_TABLE[i + 1]
    p0 = m * v0                             # < 2**26
    e0 = _fma(m, v0, -p0)
    t = p0 + _SHIFT64
    p0 = p0 - (t - _SHIFT64)
    b, be = _two_sum(p0, e0)
    # m * v1 < 2**-27: near a cancellation b is as small and b + (...) is
    # exact up to 2**-80.
    f = b + (be + m * v1)
    r = f * _PIO2_HI64
    q = _f64(t).view(_i64)                  # low bits: the integer part
    small = abs(x) <= _PIO4_32
    return (_f64(abs(x)) if small else r), (_i64(0) if small else q)


@_jitable
def _sin_poly_f32d(r, q):
    """sin(r + q*pi/2) in double with the float32-accurate polynomials."""
    z = r * r
    s = _fma(z, _SIN32D_3, _SIN32D_2)
    s = _fma(s, z, _SIN32D_1)
    s = _fma(s, z, _SIN32D_0)
    s = _fma(r * z, s, r)
    c = _fma(z, _COS32D_3, _COS32D_2)
    c = _fma(c, z, _COS32D_1)
    c = _fma(c, z, _COS32D_0)
    c = _fma(z * z, c, _fma(z, -_HALF64, _ONE64))
    v = c if (q & 1) != 0 else s
    return -v if (q & 2) != 0 else v


@_jitable
def _sin_poly_f64(r, q):
    """sin(r + q*pi/2) from the reduced argument r and quadrant q."""
    z = r * r
    s = _fma(z, _SIN64_5, _SIN64_4)
    s = _fma(s, z, _SIN64_3)
    s = _fma(s, z, _SIN64_2)
    s = _fma(s, z, _SIN64_1)
    s = _fma(s, z, _SIN64_0)
    s = _fma(r * z, s, r)
    c = _fma(z, _COS64_5, _COS64_4)
    c = _fma(c, z, _COS64_3)
    c = _fma(c, z, _COS64_2)
    c = _fma(c, z, _COS64_1)
    c = _fma(c, z, _COS64_0)
    # 1 - z/2 loses the low bits of z/2; recover them (and the rounding of
    # z = r*r) exactly so cos stays within ~1 ulp near |r| = pi/4.
    hz = _HALF64 * z
    w = _ONE64 - hz
    lo = ((_ONE64 - w) - hz) - _HALF64 * _fma(r, r, -z)
    c = w + _fma(z * z, c, lo)
    v = c if (q & 1) != 0 else s
    return -v if (q & 2) != 0 else v


# inf and nan give nan (x - x).
@_jitable
def sin_f32(x):
    r, q = _trig_reduce_f32(x)
    v = _f32(_sin_poly_f32d(r, q))
    v = -v if _f32(x).view(_i32) < _i32(0) else v      # sign bit: -0.0 too
    return v if abs(x) < _INF32 else x - x


@_jitable
def cos_f32(x):
    r, q = _trig_reduce_f32(x)
    v = _f32(_sin_poly_f32d(r, q + _i64(1)))     # cos(x) = sin(x + pi/2)
    return v if abs(x) < _INF32 else x - x


@_jitable
def sin_f64(x):
    r, q = _trig_reduce_f64(x)
    v = _sin_poly_f64(r, q)
    v = -v if _f64(x).view(_i64) < _i64(0) else v
    return v if abs(x) < _INF64 else x - x


@_jitable
def cos_f64(x):
    r, q = _trig_reduce_f64(x)
    v = _sin_poly_f64(r, q + _i64(1))
    return v if abs(x) < _INF64 else x - x


# --------------------------------------------------------------------------
# sin and cos for |x| <= TRIG_SMALL_LIMIT (Cody-Waite reduction)
# --------------------------------------------------------------------------
# The kernel generator runs these on blocks of elements whose arguments are
# all within the limit (a vectorized check per block; inf, nan and huge
# arguments send their block to sin/cos above), so the common case skips
# the table gathers.  Outside the limit the results are wrong: callers must
# check.  Same polynomials, same sign and quadrant handling as the
# full-range versions; only the reduction differs:
#
#   k = RN(|x| * 2/pi), r = |x| - k*P1 - k*P2 - k*P3, P1+P2+P3 = pi/2 to
#   2**-164 (each the double nearest the remainder; float32 drops P3).
#
# |x| - k*P1 is exact with FMA: for k >= 1 (|x| > 0.78) both terms are
# multiples of 2**-53 and their difference is below 1, so it fits.  The
# k*P2 term is subtracted in double-double (float64) or with one rounding
# (float32, whose r needs far less), so r carries one rounding (float64: as
# the full-range reduction) plus k * 2**-109 (float32: the dropped P3) /
# k * 2**-164.  Relative to the smallest |r| of any float (2**-30 float32,
# 2**-62 float64) that is below 2**-49 / 2**-72 for k < 2**30.  k itself
# may be off by one near a half-quadrant boundary (2/pi rounded): |r| then
# exceeds pi/4 by at most 2**-23, inside both polynomials' fit intervals.
# Checked: every float32 with |x| <= 2**30 gives exactly sin_f32/cos_f32's
# result (python -m kernels.math_study --exhaustive; worst 0.55 ulp); for
# float64, 1 result in 1e8 samples (random, near multiples of pi/2) differs
# from sin_f64/cos_f64, by 1 ulp.  Cost, one core, memory traffic
# included: ~0.7 / 1.2 ns per element against 2.1 / 5.0 above.
TRIG_SMALL_LIMIT = 1073741824.0            # 2**30
_TWO_OVER_PI64 = _f64(0.6366197723675814)
_PIO2_1_64 = _f64(1.5707963267948966)
_PIO2_2_64 = _f64(6.123233995736766e-17)
_PIO2_3_64 = _f64(-1.4973849048591698e-33)


@_jitable
def _trig_reduce_small_f64(x):
    """(r, q) as _trig_reduce_f64, for |x| <= TRIG_SMALL_LIMIT (a double)."""
    a = abs(x)
    t = _fma(a, _TWO_OVER_PI64, _SHIFT64)
    k = t - _SHIFT64
    r1 = _fma(-k, _PIO2_1_64, a)            # exact
    p = k * _PIO2_2_64
    pe = _fma(k, _PIO2_2_64, -p)            # k*P2 = p + pe exactly
    r, e = _two_sum(r1, -p)
    r = r + ((e - pe) - k * _PIO2_3_64)
    return r, _f64(t).view(_i64)            # low bits: k


@_jitable
def _trig_reduce_small_f32(x):
    """(r, q) as _trig_reduce_f32, for |x| <= TRIG_SMALL_LIMIT."""
    a = _f64(abs(x))
    t = _fma(a, _TWO_OVER_PI64, _SHIFT64)
    k = t - _SHIFT64
    r = _fma(-k, _PIO2_1_64, a)             # exact
    r = _fma(-k, _PIO2_2_64, r)
    return r, _f64(t).view(_i64)


@_jitable
def sin_small_f32(x):
    r, q = _trig_reduce_small_f32(x)
    v = _f32(_sin_poly_f32d(r, q))
    return -v if _f32(x).view(_i32) < _i32(0) else v


@_jitable
def cos_small_f32(x):
    r, q = _trig_reduce_small_f32(x)
    return _f32(_sin_poly_f32d(r, q + _i64(1)))


@_jitable
def sin_small_f64(x):
    r, q = _trig_reduce_small_f64(x)
    v = _sin_poly_f64(r, q)
    return -v if _f64(x).view(_i64) < _i64(0) else v


@_jitable
def cos_small_f64(x):
    r, q = _trig_reduce_small_f64(x)
    return _sin_poly_f64(r, q + _i64(1))


# ==========================================================================
# pow
# ==========================================================================
# float32: x**y = 2**(y log2|x|) in double, rounded once to float32.
#   log2: |x| = 2**e (1 + f) exactly, reduced in double (float32 denormals
#     are normal there), s = f/(2+f), log2(1 + f) = s P(s**2), P of degree
#     5 (relative error 2**-45.1 on s**2 <= 0.02944), plus e, fused.
#     Reducing in float32 (as log_f32) costs the same but tips LLVM's cost
#     model into 16 lanes in prange loops (two zmm registers per double,
#     spills): 25% slower on the AVX-512 test machine.
#   exp2: t = y log2|x| clamped to +-160 (float32 over/underflows well
#     inside, double does not), t = k + r with k = round(t) (shifter) and
#     r exact, 2**r = 1 + r Q(r), Q of degree 7 (relative error 2**-40.2 on
#     |r| <= 1/2; even/odd halves: shorter dependency chain), and k added
#     into the exponent field of the result (normal for |k| <= 160).
# The accuracy needed: an error d in t is a relative error d ln2 in the
# result, and |t| <= 151 short of float32 over/underflow, so log2 needs
# relative 2**-45 to add at most 2**-38.4.  Before the final rounding the
# result is off by 2**-37.8 relative at most: 0.5 ulp + 2**-13.8 (0.50003
# measured), and exact results (2**3, 0.5**2, 4**0.5) come out exact.
# Coefficients: minimax (Remez, mpmath at 60 digits), rounded to double.
# No table look-ups: gathers cost more than the division and the polynomials
# here (ARM's table-driven powf scheme ran 1.4x slower on the AVX-512 test
# machine).  Special cases (C99 / NumPy) are selects, not branches, mostly
# on the float32 inputs so that the main path produces them:
#   x = 0, inf, nan: e = (|x| - 1) inf (-inf, inf, nan) gives log2|x|;
#   pow(x, +-0) = 1, nan included: then e keeps the reduction's finite
#   garbage, t = 0;  pow(+-1, y): log2 1 = 0 exactly, and y -> 0 keeps
#   t = 0 for infinite or nan y (pow(1, nan) = pow(-1, +-inf) = 1);
#   x < 0 (finite) and y not an integer (nan too): y -> nan;
#   x < 0 or -0 and y an odd integer: the result takes the sign of x;
#   zeros and infinities follow from log2|x| = +-inf and the clamp.
# float64: libm's pow (not vectorized): a double exp(y log x) loses
# |y log x| 2**-53 relative, up to ~700 ulp, and the extended-precision
# version it needs is not written yet.
_POW_T_MAX = _f64(160.0)
_LOG2P_0 = _f64(2.88539008177785)
_LOG2P_1 = _f64(0.9617966941133067)
_LOG2P_2 = _f64(0.5770779423767723)
_LOG2P_3 = _f64(0.41220925105665174)
_LOG2P_4 = _f64(0.3199057549675727)
_LOG2P_5 = _f64(0.2828992835529583)
_EXP2Q_0 = _f64(0.6931471805482124)
_EXP2Q_1 = _f64(0.24022650698110598)
_EXP2Q_2 = _f64(0.05550410935265866)
_EXP2Q_3 = _f64(0.009618128616117213)
_EXP2Q_4 = _f64(0.0013333454860869124)
_EXP2Q_5 = _f64(0.00015403825470476314)
_EXP2Q_6 = _f64(1.5309156104382454e-05)
_EXP2Q_7 = _f64(1.3178931380446533e-06)


@_jitable
def _log_reduce_f32d(ax):
    """(e, f) in double with ax = 2**e (1 + f), 1 + f in [sqrt(.5), sqrt(2)),
    exactly, for a float32 ax > 0, finite (its denormals are normal doubles,
    so no scaling step); garbage otherwise."""
    ix = _f64(ax).view(_i64) - _SQRTH64_BITS
    m = _i64((ix & _MANT64_MASK) + _SQRTH64_BITS).view(_f64)
    return _f64(ix >> _MANT64_BITS), m - _ONE64


@_jitable
def _log2_kernel_f32d(ef, f):
    """ef + log2(1 + f) for _log_reduce_f32d's (ef, f), relative error
    2**-45; ef = +-inf or nan passes through."""
    s = _div(f, _TWO64 + f)
    z = s * s
    p = _fma(z, _LOG2P_5, _LOG2P_4)
    p = _fma(p, z, _LOG2P_3)
    p = _fma(p, z, _LOG2P_2)
    p = _fma(p, z, _LOG2P_1)
    p = _fma(p, z, _LOG2P_0)
    return _fma(s, p, ef)


@_jitable
def _exp2_f32d(t):
    """2**t in double, relative error 2**-40.2, for a float32 result: |t| is
    clamped to 160, beyond float32's range either way; nan propagates."""
    t = _POW_T_MAX if t > _POW_T_MAX else t
    t = -_POW_T_MAX if t < -_POW_T_MAX else t
    u = t + _SHIFT64                        # k in the low mantissa bits
    r = t - (u - _SHIFT64)                  # exact, |r| <= 1/2
    r2 = r * r
    qe = _fma(r2, _EXP2Q_6, _EXP2Q_4)
    qo = _fma(r2, _EXP2Q_7, _EXP2Q_5)
    qe = _fma(qe, r2, _EXP2Q_2)
    qo = _fma(qo, r2, _EXP2Q_3)
    qe = _fma(qe, r2, _EXP2Q_0)
    qo = _fma(qo, r2, _EXP2Q_1)
    p = _fma(_fma(qo, r, qe), r, _ONE64)    # 2**r in [0.7, 1.42]
    # k << 52 (the shifter's bits shift out) added to p's exponent field
    k52 = _f64(u).view(_i64) << _MANT64_BITS
    return _i64(_f64(p).view(_i64) + k52).view(_f64)


@_jitable
def pow_f32(x, y):
    ax = abs(x)
    ef, f = _log_reduce_f32d(ax)
    # log2|x| = -inf, inf, nan for x = 0, inf, nan; y = 0 keeps it finite
    finite = ((ax > _ZERO32) & (ax < _INF32)) | (y == _ZERO32)
    ef = ef if finite else (_f64(ax) - _ONE64) * _INF64
    # Every float32 from 2**24 up (inf too) is an even integer: y / 2 whole.
    whole = _trunc(y) == y
    yy = _ZERO32 if ax == _ONE32 else y
    yy = yy if whole else (_NAN32 if (x < _ZERO32) & (x > _NINF32) else yy)
    r = _f32(_exp2_f32d(_f64(yy) * _log2_kernel_f32d(ef, f)))
    half = y * _HALF32
    odd = whole & (_trunc(half) != half)
    return -r if (odd & (_f32(x).view(_i32) < _i32(0))) else r     # -0.0 too


@_jitable
def pow_f64(x, y):
    return x ** y


# ==========================================================================
# dtype-generic front ends
# ==========================================================================
def _dispatcher(name, impl32, impl64, device=None, numpy_name=None):
    """Return a stub whose jitted calls resolve to ``impl32``/``impl64``, or
    to ``device`` (if given) when compiling for a GPU."""
    ufunc = getattr(np, numpy_name or name, None)

    def stub(x):
        # Interpreter only (e.g. the CUDA simulator): defer to NumPy.
        if ufunc is None:                    # sigmoid
            return 1.0 / (1.0 + np.exp(-x))
        return ufunc(x)

    def choose(x):
        gpu = device is not None and current_target() != "cpu"
        f32, f64 = (device, device) if gpu else (impl32, impl64)
        if isinstance(x, types.Float):
            if x.bitwidth == 32:
                return f32
            if x.bitwidth == 64:
                return f64
        if isinstance(x, (types.Integer, types.Boolean)):
            def via_f64(x):
                return f64(_f64(x))
            return via_f64
        return None

    stub.__name__ = stub.__qualname__ = "_" + name
    overload(stub, inline=_on_cpu)(choose)
    return stub, choose


def _public(name, impl32, impl64, doc, device=None, numpy_name=None):
    stub, choose = _dispatcher(name, impl32, impl64, device, numpy_name)

    def fn(x):
        return stub(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__module__ = __name__
    # Also let jitted code call ``scalar_math.<name>`` directly.
    overload(fn, inline=_on_cpu)(choose)
    return fn


exp = _public("exp", exp_f32, exp_f64, "e**x; overflows to inf, underflows "
              "gradually to 0.")
expm1 = _public("expm1", expm1_f32, expm1_f64, "e**x - 1, accurate near 0.")
log = _public("log", log_f32, log_f64, "Natural log; log(0) = -inf, "
              "log(x<0) = nan, denormal inputs supported.")
log1p = _public("log1p", log1p_f32, log1p_f64, "log(1 + x), accurate "
                "near 0.")
tanh = _public("tanh", tanh_f32, tanh_f64, "Hyperbolic tangent; saturates "
               "to +-1, keeps the sign of zero.")
sigmoid = _public("sigmoid", sigmoid_f32, sigmoid_f64, "1 / (1 + exp(-x)) "
                  "without overflow; relative accuracy also for x << 0.")
# On a GPU sin and cos use the device library's (libdevice: full range,
# within 2 ulp): its rare slow path for huge arguments costs only the lanes
# that take it, and the float32 version stays in float32 where ours works
# in double (slow on many GPUs).  Not measured on a GPU yet.
def _device_sin(x):
    return math.sin(x)


def _device_cos(x):
    return math.cos(x)


sin = _public("sin", sin_f32, sin_f64, "Sine over the full range; nan for "
              "inf and nan, keeps the sign of zero.", _device_sin)
cos = _public("cos", cos_f32, cos_f64, "Cosine over the full range; nan "
              "for inf and nan.", _device_cos)
# tan: float32 as sin/cos of one reduction, divided in double and rounded
# once: within 0.58 ulp (the float32 polynomials' relative errors, near 1e-9;
# near a pole the reduced argument keeps its relative accuracy, see the
# reductions above). float64: libm's (one call per element, as sinh).
@_jitable
def tan_f32(x):
    r, q = _trig_reduce_f32(x)
    v = _f32(_div(_sin_poly_f32d(r, q), _sin_poly_f32d(r, q + _i64(1))))
    v = -v if _f32(x).view(_i32) < _i32(0) else v
    return v if abs(x) < _INF32 else x - x


@_jitable
def tan_small_f32(x):
    r, q = _trig_reduce_small_f32(x)
    v = _f32(_div(_sin_poly_f32d(r, q), _sin_poly_f32d(r, q + _i64(1))))
    return -v if _f32(x).view(_i32) < _i32(0) else v


@_jitable
def _libm_tan(x):
    return math.tan(x)


def _device_tan(x):
    return math.tan(x)


sin_small = _public("sin_small", sin_small_f32, sin_small_f64, "Sine for "
                    "|x| <= TRIG_SMALL_LIMIT only (the caller checks); as "
                    "accurate as sin there.", _device_sin, "sin")
cos_small = _public("cos_small", cos_small_f32, cos_small_f64, "Cosine for "
                    "|x| <= TRIG_SMALL_LIMIT only (the caller checks).",
                    _device_cos, "cos")
tan = _public("tan", tan_f32, _libm_tan, "Tangent over the full range; nan for inf and "
              "nan, keeps the sign of zero.", _device_tan)
tan_small = _public("tan_small", tan_small_f32, _libm_tan, "Tangent for "
                    "|x| <= TRIG_SMALL_LIMIT only (the caller checks).", _device_tan, "tan")


# pow: floats of one width take pow_f32 / pow_f64, other float mixes go
# through float64 (as Numba's ``**``); integers and bools keep ``**`` and its
# integer semantics.  On a GPU floats use the device library's pow.
def _device_pow(x, y):
    return math.pow(x, y)


def _pow_stub(x, y):
    return x ** y           # interpreter only (e.g. the CUDA simulator)


def _pow_choose(x, y):
    if not (isinstance(x, types.Float) or isinstance(y, types.Float)):
        if all(isinstance(t, (types.Integer, types.Boolean)) for t in (x, y)):
            def integer(x, y):
                # 0 to a negative power is 0 in PyTorch (** divides by zero)
                return x ** y if (y >= 0 or x != 0) else x ^ x
            return integer
        return None
    if not all(isinstance(t, (types.Float, types.Integer, types.Boolean)) for t in (x, y)):
        return None
    if current_target() != "cpu":
        return _device_pow
    if x == y == types.float32:
        return pow_f32
    if x == y == types.float64:
        return pow_f64

    def via_f64(x, y):
        return pow_f64(_f64(x), _f64(y))
    return via_f64


overload(_pow_stub, inline=_on_cpu)(_pow_choose)


def pow(x, y):
    """x**y as NumPy: float32 vectorizes (within 0.5 ulp + 2**-13), float64
    is libm's; integers keep integer powers."""
    return _pow_stub(x, y)


overload(pow, inline=_on_cpu)(_pow_choose)


# zero: masked gradients are ``g if keep else zero(g)``, a select. ``0 * g``
# is nan for an infinite or nan g, and a literal 0 would widen a float32
# select to float64.
def _zero_stub(x):
    return type(x)(0)       # interpreter only (e.g. the CUDA simulator)


def _zero_choose(x):
    if isinstance(x, types.Float):
        if x.bitwidth == 32:
            return lambda x: _ZERO32
        if x.bitwidth == 64:
            return lambda x: _ZERO64
    if isinstance(x, (types.Integer, types.Boolean)):
        return lambda x: x ^ x      # x - x for integers, False for bools
    return None


def zero(x):
    """A zero of ``x``'s type (+0.0 for floats): ``g if keep else zero(g)``
    masks a gradient without ``0 * g``, which is nan for an infinite g."""
    return _zero_stub(x)


overload(_zero_stub, inline=_on_cpu)(_zero_choose)
overload(zero, inline=_on_cpu)(_zero_choose)


# sqrt: Numba's math.sqrt (one instruction, nan below 0). Called from the
# interpreter (NUMBA_DISABLE_JIT=1, the CUDA simulator) it is NumPy's, since
# math.sqrt raises ValueError there.
@_jitable
def _sqrt(x):
    return math.sqrt(x)


sqrt = _public("sqrt", _sqrt, _sqrt, "Square root; nan for x < 0, as NumPy.")


# ==========================================================================
# More elementwise math (issue 15): float32 in double, float64 libm
# ==========================================================================
# The float32 versions below evaluate in double precision with plain
# arithmetic (vectorizable; no libm calls) and round once to float32: every
# double-precision step carries a relative error near 2**-50, so the float32
# result is the correctly rounded one but for rare ties (within 0.5 ulp +
# 2**-20 measured, python -m kernels.math_study --more). The float64
# versions are libm's (scalar calls, as pow_f64) until double-double
# versions are written; on a GPU every function is the device library's.
_target = current_target

_LOG10_2_64 = _f64(0.30102999566398120)
_PIO2_64 = _f64(1.5707963267948966)
_PIO6_64 = _f64(0.5235987755982989)
_PI_64 = _f64(3.141592653589793)
_SQRT3_64 = _f64(1.7320508075688772)
_TAN_PI_12_64 = _f64(0.2679491924311227)
_SINH32_BIG = _f64(90.0)                 # sinh/cosh of float32 overflow below this
_SIGN32 = _i32(-2147483648)
_SIGN64 = _i64(-9223372036854775808)
_ABS32 = _i32(0x7FFFFFFF)
_ABS64 = _i64(0x7FFFFFFFFFFFFFFF)
# atan(u) = u + u**3 P(u**2) on |u| <= tan(pi/12): Taylor's coefficients
# (-1)**k / (2k + 1), truncated after u**19: relative error below 2**-42.
_ATAN_0 = _f64(-1.0 / 3.0)
_ATAN_1 = _f64(1.0 / 5.0)
_ATAN_2 = _f64(-1.0 / 7.0)
_ATAN_3 = _f64(1.0 / 9.0)
_ATAN_4 = _f64(-1.0 / 11.0)
_ATAN_5 = _f64(1.0 / 13.0)
_ATAN_6 = _f64(-1.0 / 15.0)
_ATAN_7 = _f64(1.0 / 17.0)
_ATAN_8 = _f64(-1.0 / 19.0)


def _llvm_unary(name):
    @intrinsic
    def call(typingctx, a):
        if isinstance(a, types.Float):
            def codegen(context, builder, sig, args):
                fn = builder.module.declare_intrinsic(name, [args[0].type])
                return builder.call(fn, args)
            return a(a), codegen
        return None
    return call


@intrinsic
def _frem(typingctx, a, b):
    """C's fmod(a, b) (LLVM's frem; Numba's CPU target has no math.fmod)."""
    if isinstance(a, types.Float) and a == b:
        def codegen(context, builder, sig, args):
            return builder.frem(*args)
        return a(a, b), codegen
    return None


_floor = _llvm_unary("llvm.floor")
_ceil = _llvm_unary("llvm.ceil")
_rint = _llvm_unary("llvm.rint")


@_jitable
def _neg_bit32(x):
    return _f32(x).view(_i32) < _i32(0)


@_jitable
def _neg_bit64(x):
    return _f64(x).view(_i64) < _i64(0)


@_jitable
def log2_f32(x):
    ef, f = _log_reduce_f32d(x)
    r = _f32(_log2_kernel_f32d(ef, f))
    ok = (x > _ZERO32) & (x < _INF32)
    return r if ok else (_NINF32 if x == _ZERO32 else (x if x > _ZERO32 else _NAN32))


@_jitable
def log10_f32(x):
    ef, f = _log_reduce_f32d(x)
    r = _f32(_log2_kernel_f32d(ef, f) * _LOG10_2_64)
    ok = (x > _ZERO32) & (x < _INF32)
    return r if ok else (_NINF32 if x == _ZERO32 else (x if x > _ZERO32 else _NAN32))


@_jitable
def exp2_f32(x):
    r = _f32(_exp2_f32d(_f64(x)))
    return r if x == x else x


@_jitable
def sinh_f32(x):
    a = abs(_f64(x))
    e = expm1_f64(a)
    s = _HALF64 * (e + _div(e, e + _ONE64))
    r = _f32(_INF64 if a > _SINH32_BIG else s)
    return -r if _neg_bit32(x) else r


@_jitable
def cosh_f32(x):
    a = abs(_f64(x))
    e = exp_f64(a)
    return _f32(_HALF64 * (e + _div(_ONE64, e)))


@_jitable
def asinh_f32(x):
    a = abs(_f64(x))
    a2 = a * a                              # exact
    r = log1p_f64(a + _div(a2, _ONE64 + math.sqrt(_ONE64 + a2)))
    r = _f32(a if a == _INF64 else r)
    return -r if _neg_bit32(x) else r


@_jitable
def acosh_f32(x):
    xd = _f64(x)
    t = xd - _ONE64                          # exact
    r = log1p_f64(t + math.sqrt(t * (xd + _ONE64)))
    return _f32(r if xd >= _ONE64 else _NAN64)


@_jitable
def atanh_f32(x):
    a = abs(_f64(x))
    r = _f32(_HALF64 * log1p_f64(_div(a + a, _ONE64 - a)))
    return -r if _neg_bit32(x) else r


@_jitable
def _atan_pos_d(a):
    """atan(a) for a >= 0 (inf and nan too), in double: 1/a above 1, then
    atan(t) = pi/6 + atan((t sqrt3 - 1) / (t + sqrt3)) above tan(pi/12)."""
    inv = a > _ONE64
    t = _div(_ONE64, a) if inv else a
    big = t > _TAN_PI_12_64
    u = _div(_fma(t, _SQRT3_64, -_ONE64), t + _SQRT3_64) if big else t
    z = u * u
    p = _fma(z, _ATAN_8, _ATAN_7)
    p = _fma(p, z, _ATAN_6)
    p = _fma(p, z, _ATAN_5)
    p = _fma(p, z, _ATAN_4)
    p = _fma(p, z, _ATAN_3)
    p = _fma(p, z, _ATAN_2)
    p = _fma(p, z, _ATAN_1)
    p = _fma(p, z, _ATAN_0)
    r = _fma(u * z, p, u)
    r = r + _PIO6_64 if big else r
    return _PIO2_64 - r if inv else r


@_jitable
def atan_f32(x):
    r = _f32(_atan_pos_d(abs(_f64(x))))
    return -r if _neg_bit32(x) else r


@_jitable
def _asin_pos_d(a):
    """asin(a) for a = |x| (nan above 1), in double."""
    return _atan_pos_d(_div(a, math.sqrt((_ONE64 - a) * (_ONE64 + a))))


@_jitable
def asin_f32(x):
    r = _f32(_asin_pos_d(abs(_f64(x))))
    return -r if _neg_bit32(x) else r


@_jitable
def acos_f32(x):
    r = _asin_pos_d(abs(_f64(x)))
    return _f32(_PIO2_64 + r if x < _ZERO32 else _PIO2_64 - r)


@_jitable
def atan2_f32(y, x):
    ax, ay = abs(_f64(x)), abs(_f64(y))
    q = _ZERO64 if ay == _ZERO64 else _div(ay, ax)
    both_inf = (ax == _INF64) & (ay == _INF64)
    r = _PIO4_64 if both_inf else _atan_pos_d(q)
    r = _PI_64 - r if _neg_bit32(x) else r
    r = r if (x == x) & (y == y) else _NAN64
    v = _f32(r)
    return -v if _neg_bit32(y) else v


@_jitable
def hypot_f32(x, y):
    xd, yd = _f64(x), _f64(y)
    r = _f32(math.sqrt(xd * xd + yd * yd))
    return _INF32 if (abs(x) == _INF32) | (abs(y) == _INF32) else r


# libm (float64) and the device library (GPU): scalar calls.
@_jitable
def _libm_log2(x):
    return math.log2(x)


@_jitable
def _libm_log10(x):
    return math.log10(x)


@_jitable
def _libm_exp2(x):
    return _TWO64 ** x


def _device_exp2(x):
    return math.exp2(x)


def _libm(fn):
    def call(x):
        return fn(x)
    return _jitable(call)


_libm_sinh, _libm_cosh = _libm(math.sinh), _libm(math.cosh)
_libm_asinh, _libm_acosh, _libm_atanh = _libm(math.asinh), _libm(math.acosh), _libm(math.atanh)
_libm_atan, _libm_asin, _libm_acos = _libm(math.atan), _libm(math.asin), _libm(math.acos)


def _device(fn):
    def call(x):
        return fn(x)
    return call


log2 = _public("log2", log2_f32, _libm_log2, "Base-2 log; exact at powers of 2.",
               _device(math.log2))
log10 = _public("log10", log10_f32, _libm_log10, "Base-10 log.", _device(math.log10))
exp2 = _public("exp2", exp2_f32, _libm_exp2, "2**x.", _device_exp2)
sinh = _public("sinh", sinh_f32, _libm_sinh, "Hyperbolic sine.", _device(math.sinh))
cosh = _public("cosh", cosh_f32, _libm_cosh, "Hyperbolic cosine.", _device(math.cosh))
asinh = _public("asinh", asinh_f32, _libm_asinh, "Inverse hyperbolic sine.",
                _device(math.asinh), "arcsinh")
acosh = _public("acosh", acosh_f32, _libm_acosh, "Inverse hyperbolic cosine; nan below 1.",
                _device(math.acosh), "arccosh")
atanh = _public("atanh", atanh_f32, _libm_atanh, "Inverse hyperbolic tangent.",
                _device(math.atanh), "arctanh")
atan = _public("atan", atan_f32, _libm_atan, "Arc tangent.", _device(math.atan), "arctan")
asin = _public("asin", asin_f32, _libm_asin, "Arc sine; nan beyond [-1, 1].",
               _device(math.asin), "arcsin")
acos = _public("acos", acos_f32, _libm_acos, "Arc cosine; nan beyond [-1, 1].",
               _device(math.acos), "arccos")


# erf, erfc and erfinv (issue 15): branch-free (selects), so the CPU loops
# vectorize; float32 evaluates in double and rounds once.  On a GPU they are
# the device library's (libdevice: within a few ulp, float32 kept in float32),
# the CUDA math functions PyTorch's CUDA kernels call.
#
#   |x| <  1/2:  erf(x) = x + x Q(x**2)     Q: erf(x)/x - 1 on x**2 <= 1/4
#   |x| >= 1/2:  erfc(z) = exp(-z**2) t G(u), z = |x|, t = c / (c + z),
#                u = A t + B in [-1, 1];  erf(x) = +-(1 - erfc(|x|)),
#                erfc(-z) = 2 - erfc(z)
# G = erfc(z) exp(z**2) / t is smooth in t (about 1/(c sqrt(pi)) as z grows).
# Q and G are Chebyshev interpolants (mpmath, 50 digits) rounded to monomial
# polynomials in x**2 and u: |coefficients| sum to under 1, so Horner adds
# only rounding.  Relative errors of the polynomials:
#   float32 (in double): c = 2, z in [1/2, 10.1], G 7.7e-11 (11 terms), Q 1.2e-11
#   float64:             c = 4, z in [1/2, 27.5], G 2.3e-16 (22 terms), Q 2.3e-16
# z is clamped where erfc underflows to 0 (float32: 10.1 > 10.06; float64:
# 27.25, past 27.23 and short of exp's own cut at -745.1), and float64's
# exp(-z**2) takes z*z as the exact sum hi + lo (fma).
_ERF_SMALL64 = _f64(0.5)
_FOUR64 = _f64(4.0)
_ERFQ32D = tuple(_f64(v) for v in (
    0.1283791670825098, -0.3761263852765227, 0.11283774077124104, -0.026863150185586267,
    0.005200446396373376, -0.0007695056672217634))
_ERFQ64 = tuple(_f64(v) for v in (
    0.1283791670955126, -0.3761263890318375, 0.1128379167095487, -0.026866170645000076,
    0.005223977622024224, -0.0008548326511566567, 0.00012055286259121393,
    -1.4923005626894847e-05, 1.6371282597755977e-06, -1.4621341491012844e-07))
_ERFC32D_ZMAX = _f64(10.1)
_ERFC32D_A, _ERFC32D_B = _f64(3.1510416666666665), _f64(-1.5208333333333333)
_ERFC32D_G = tuple(_f64(v) for v in (
    0.4990330049292389, 0.21195993478872532, 0.05549859655221343, 0.005030640973633626,
    -0.0016498298097488656, -0.000365730513591438, 9.355854218746702e-05,
    2.1249139539911706e-05, -8.290971210539034e-06, -8.52450487684695e-07,
    6.491074794558641e-07))
_ERFC64_ZMAX = _f64(27.25)
_ERFC64_A, _ERFC64_B = _f64(2.625), _f64(-1.3333333333333333)
_ERFC64_G = tuple(_f64(v) for v in (
    0.27792335765850823, 0.1907636560106805, 0.1160229779745693, 0.06217473186231597,
    0.029060588595725734, 0.011645110173196617, 0.003880761396599491,
    0.0010115582165911177, 0.0001745029729051691, 4.4616390528542535e-06,
    -8.008487953045237e-06, -2.2239979915219623e-06, 3.4667382807553563e-09,
    1.4478543028272436e-07, 2.4033585591674003e-08, -6.921457360691792e-09,
    -2.632979469708411e-09, 2.7154781510409545e-10, 2.2072700654769798e-10,
    -7.8643285520127e-12, -1.2984703616591367e-11, 9.810208995491286e-14))


def _polynomial(coefs):
    """A jitable ``c[0] + c[1] u + c[2] u**2 + ...`` (float64 constants),
    written out as one chain of fmas: straight-line code that LLVM
    vectorizes (a loop over a tuple stays a loop, and a call)."""
    ns = {f"_c{k}": _f64(v) for k, v in enumerate(coefs)}
    expr = f"_c{len(coefs) - 1}"
    for k in range(len(coefs) - 2, -1, -1):
        expr = f"_fma({expr}, u, _c{k})"
    ns["_fma"] = _fma
    exec(f"def polynomial(u):\n    return {expr}\n", ns)
    return _jitable(ns["polynomial"])


_erf_q32d, _erf_q64 = _polynomial(_ERFQ32D), _polynomial(_ERFQ64)
_erfc_g32d, _erfc_g64 = _polynomial(_ERFC32D_G), _polynomial(_ERFC64_G)


@_jitable
def _exp_hilo_f64(a, b):
    """exp(a + b) for -745 < a <= 0 and |b| <= ulp(a): b joins the reduced
    argument, so a + b is never rounded (erfc's exp(-z**2), z*z = hi + lo)."""
    t = _fma(a + b, _LOG2E64, _SHIFT64)
    kf = t - _SHIFT64
    r = _fma(kf, _NLN2_HI64, a)
    r = _fma(kf, _NLN2_LO64, r + b)
    return _exp_scaled_f64(t, r)


@_jitable
def _erfc_tail_f32d(z):
    """erfc(z) in double for a float32 z >= 1/2 (z*z is exact)."""
    z = _ERFC32D_ZMAX if z > _ERFC32D_ZMAX else z
    t = _div(_TWO64, _TWO64 + z)
    g = _erfc_g32d(_fma(t, _ERFC32D_A, _ERFC32D_B))
    # pow's 2**t in double (relative error 2**-40; t to 1e-14): cheaper than exp_f64
    return _exp2_f32d((z * z) * -_LOG2E64) * (t * g)


@_jitable
def _erfc_tail_f64(z):
    """erfc(z) for z >= 1/2."""
    z = _ERFC64_ZMAX if z > _ERFC64_ZMAX else z
    t = _div(_FOUR64, _FOUR64 + z)
    g = _erfc_g64(_fma(t, _ERFC64_A, _ERFC64_B))
    hi = z * z
    return _exp_hilo_f64(-hi, -_fma(z, z, -hi)) * (t * g)


@_jitable
def erf_f32(x):
    y = _f64(x)
    a = abs(y)
    small = _fma(y, _erf_q32d(y * y), y)
    big = _ONE64 - _erfc_tail_f32d(a)
    big = big if y > _ZERO64 else -big
    return _f32(small if a < _ERF_SMALL64 else big)


@_jitable
def erfc_f32(x):
    y = _f64(x)
    a = abs(y)
    small = _ONE64 - _fma(y, _erf_q32d(y * y), y)
    e = _erfc_tail_f32d(a)
    big = e if y > _ZERO64 else _TWO64 - e
    return _f32(small if a < _ERF_SMALL64 else big)


@_jitable
def erf_f64(x):
    a = abs(x)
    small = _fma(x, _erf_q64(x * x), x)
    big = _ONE64 - _erfc_tail_f64(a)
    big = big if x > _ZERO64 else -big
    return small if a < _ERF_SMALL64 else big


@_jitable
def erfc_f64(x):
    a = abs(x)
    small = _ONE64 - _fma(x, _erf_q64(x * x), x)
    e = _erfc_tail_f64(a)
    big = e if x > _ZERO64 else _TWO64 - e
    return small if a < _ERF_SMALL64 else big


# erfinv: Giles' polynomials in w = -log((1 - y)(1 + y)) ("Approximating the
# erfinv function", GPU Computing Gems 2, 2011: the double-precision set),
# evaluated for every range and selected: float64, within a few ulp
# (PyTorch's: a guess and two Newton steps on libm's erf, ~1 ulp).
_ERFINV_W1, _ERFINV_W2 = _f64(6.25), _f64(16.0)
_ERFINV_S1, _ERFINV_S2, _ERFINV_S3 = _f64(3.125), _f64(3.25), _f64(5.0)
_ERFINV_P1 = tuple(_f64(v) for v in reversed((
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)))
_ERFINV_P2 = tuple(_f64(v) for v in reversed((
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)))
_ERFINV_P3 = tuple(_f64(v) for v in reversed((
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)))

_erfinv_p1, _erfinv_p2, _erfinv_p3 = map(_polynomial, (_ERFINV_P1, _ERFINV_P2, _ERFINV_P3))
_vsqrt = _llvm_unary("llvm.sqrt")  # one instruction (math.sqrt checks x < 0 in njit)


@_jitable
def _erfinv_edges(y, r):
    """+-inf at +-1 (w is inf there); beyond [-1, 1] w, and so r, is nan."""
    return (_INF64 if y > _ZERO64 else _NINF64) if abs(y) == _ONE64 else r


# float32: w from float32's log (vectorized 16 wide), then polynomials in
# double fitted for float32 (Chebyshev interpolants of erfinv(y)/y, relative
# error 3.9e-9 in w - 5/2 on w < 5, 2.2e-9 in w - 21/2 on 5 <= w <= 16, no
# sqrt needed there; w <= 15.95 for float32 y), rounded once: within 1 ulp
# (see the tests; the log's float32 rounding dominates).
_ERFINV32_W = _f64(5.0)
_ERFINV32_C, _ERFINV32_F = _f64(2.5), _f64(10.5)
_erfinv32_near = _polynomial((
    1.5014093517282388, 0.24664028938940982, -0.004177324921932883, -0.0012527484164558688,
    0.00021826392314411755, -4.959743495185408e-06, -3.426175951749159e-06,
    4.6542873048510424e-07, 1.6487176840838708e-08, -8.739830973051999e-09,
    4.3511473069028143e-10))
_erfinv32_far = _polynomial((
    3.0742058226566784, 0.1550986916852925, -0.0035623419016279547, 0.00015550327122283798,
    -7.625155291573143e-06, 3.0770743442810215e-07, -1.8161843094723916e-10,
    -1.950086059965937e-09, 3.3697147517266137e-10, -3.927946469306926e-11,
    2.1186715246070803e-12))


@_jitable
def erfinv_f32(x):
    y = _f64(x)
    # (1 - y)(1 + y) is exact in double; log's argument is rounded once
    w = -_f64(log_f32(_f32((_ONE64 - y) * (_ONE64 + y))))
    near = _erfinv32_near(w - _ERFINV32_C)
    far = _erfinv32_far(w - _ERFINV32_F)
    return _f32(_erfinv_edges(y, (near if w < _ERFINV32_W else far) * y))


@_jitable
def erfinv_f64(x):
    w = -log_f64((_ONE64 - x) * (_ONE64 + x))
    s = _vsqrt(w)
    p = _erfinv_p3(s - _ERFINV_S3)
    p = _erfinv_p2(s - _ERFINV_S2) if w < _ERFINV_W2 else p
    p = _erfinv_p1(w - _ERFINV_S1) if w < _ERFINV_W1 else p
    return _erfinv_edges(x, p * x)


def _interp_erf(x):
    return type(x)(math.erf(x)) if isinstance(x, np.floating) else math.erf(x)


def _interp_erfc(x):
    return type(x)(math.erfc(x)) if isinstance(x, np.floating) else math.erfc(x)


def _interp_horner(u, c):
    p = c[-1]
    for v in c[-2::-1]:
        p = p * u + v
    return p


def _interp_erfinv(x):
    """erfinv_f64 in the interpreter (the CUDA simulator), without fma."""
    y = float(x)
    if not abs(y) < 1.0:  # Python's math.log(0) raises where the compiled one gives -inf
        r = math.copysign(math.inf, y) if abs(y) == 1.0 else math.nan
    else:
        w = -math.log((1.0 - y) * (1.0 + y))
        if w < 6.25:
            p = _interp_horner(w - 3.125, _ERFINV_P1)
        else:
            p = _interp_horner(math.sqrt(w) - (3.25 if w < 16.0 else 5.0),
                               _ERFINV_P2 if w < 16.0 else _ERFINV_P3)
        r = float(p) * y
    return type(x)(r) if isinstance(x, np.floating) else r


def _public_with(name, impl32, impl64, doc, interp, device=None):
    """As ``_public``, for functions NumPy has no ufunc of: ``interp`` runs
    them in the interpreter (the CUDA simulator); ``device(bitwidth)`` gives
    the GPU's implementation."""
    def stub(x):
        return interp(x)

    def choose(x):
        if isinstance(x, (types.Integer, types.Boolean)):
            f64 = device(64) if device is not None and _target() != "cpu" else impl64

            def via_f64(x):
                return f64(_f64(x))
            return via_f64
        if not isinstance(x, types.Float) or x.bitwidth not in (32, 64):
            return None
        if device is not None and _target() != "cpu":
            return device(x.bitwidth)
        return impl32 if x.bitwidth == 32 else impl64

    stub.__name__ = stub.__qualname__ = "_" + name
    overload(stub, inline=_on_cpu)(choose)

    def fn(x):
        return stub(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__module__ = __name__
    overload(fn, inline=_on_cpu)(choose)
    return fn


def _libdevice(name):
    """``device`` for _public_with: libdevice's ``name`` (float32: ``name + "f"``)."""
    def device(bitwidth):
        from numba.cuda import libdevice  # compiling for a GPU: numba-cuda is there
        f = getattr(libdevice, name + "f" if bitwidth == 32 else name)

        @_jitable       # jitable: integers reach it through via_f64
        def call(x):
            return f(x)
        return call
    return device


erf = _public_with("erf", erf_f32, erf_f64, "The error function; +-1 beyond "
                   "+-5.9, keeps the sign of zero.", _interp_erf, _libdevice("erf"))
erfc = _public_with("erfc", erfc_f32, erfc_f64, "1 - erf(x), accurate for large x; 2 "
                    "at -inf.", _interp_erfc, _libdevice("erfc"))
erfinv = _public_with("erfinv", erfinv_f32, erfinv_f64, "The inverse error function: "
                      "+-inf at +-1, nan beyond [-1, 1].", _interp_erfinv,
                      _libdevice("erfinv"))


# ==========================================================================
# Rounding, signs and remainders: floats and integers
# ==========================================================================
def _generic(name, choose, interp, doc, nargs=1):
    """A function of ``nargs`` arguments whose jitted calls take ``choose``'s
    implementation (by the Numba types), and ``interp`` in the interpreter."""
    if nargs == 1:
        def stub(x):
            return interp(x)

        def fn(x):
            return stub(x)
    elif nargs == 3:
        def stub(x, y, z):
            return interp(x, y, z)

        def fn(x, y, z):
            return stub(x, y, z)
    else:
        def stub(x, y):
            return interp(x, y)

        def fn(x, y):
            return stub(x, y)
    stub.__name__ = stub.__qualname__ = "_" + name
    overload(stub, inline=_on_cpu)(choose)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__module__ = __name__
    overload(fn, inline=_on_cpu)(choose)
    return fn


def _identity(x):
    return x


def _rounding(name, intrinsic_fn, device_fn, numpy_fn):
    def choose(x):
        if isinstance(x, types.Float):
            if _target() != "cpu":
                if device_fn is _cuda_rint:  # libdevice's rint(f): half to even
                    from numba.cuda import libdevice
                    f = libdevice.rintf if x.bitwidth == 32 else libdevice.rint
                    return lambda x: f(x)
                return lambda x: device_fn(x)
            return lambda x: intrinsic_fn(x)
        if isinstance(x, (types.Integer, types.Boolean)):
            return _identity
        return None

    def interp(x):
        return x if isinstance(x, (int, bool, np.integer, np.bool_)) else numpy_fn(x)
    return _generic(name, choose, interp, f"{name} of a float; integers as they are.")


def _cuda_rint(x):
    return x            # placeholder: rint's GPU version is chosen by bit width (_rint_choose)


floor = _rounding("floor", _floor, math.floor, np.floor)
ceil = _rounding("ceil", _ceil, math.ceil, np.ceil)
trunc = _rounding("trunc", _trunc, math.trunc, np.trunc)
rint = _rounding("rint", _rint, _cuda_rint, np.rint)


def _sign_choose(x):
    if isinstance(x, types.Float):
        one, zero = (_ONE32, _ZERO32) if x.bitwidth == 32 else (_ONE64, _ZERO64)

        def sign(x):
            return (one if x > zero else zero) - (one if x < zero else zero)
        return sign
    if isinstance(x, types.Boolean):
        return _identity
    if isinstance(x, types.Integer):
        return lambda x: (x > 0) - (x < 0)
    return None


def _sign_interp(x):
    if isinstance(x, (bool, np.bool_)):
        return x
    return type(x)(x > 0) - type(x)(x < 0)


sign = _generic("sign", _sign_choose, _sign_interp, "-1, 0 or 1 (0 for nan and -0.).")


def _copysign_choose(x, y):
    if isinstance(x, types.Float) and x == y and _target() == "cpu":
        if x.bitwidth == 32:
            def copysign32(x, y):
                bits = _i32(_f32(x).view(_i32) & _ABS32) | _i32(_f32(y).view(_i32) & _SIGN32)
                return _i32(bits).view(_f32)
            return copysign32

        def copysign64(x, y):
            bits = (_f64(x).view(_i64) & _ABS64) | (_f64(y).view(_i64) & _SIGN64)
            return _i64(bits).view(_f64)
        return copysign64
    if isinstance(x, (types.Float, types.Integer, types.Boolean)):
        return lambda x, y: math.copysign(x, y)
    return None


copysign = _generic("copysign", _copysign_choose, np.copysign,
                    "|x| with the sign bit of y (nan's too).", 2)


def _fmod_choose(x, y):
    if isinstance(x, types.Float):
        if _target() == "cpu":
            return lambda x, y: _frem(x, y)
        return lambda x, y: math.fmod(x, y)
    if isinstance(x, (types.Integer, types.Boolean)):
        def fmod_int(x, y):
            r = x % y
            return r - y if (r != 0) & ((r < 0) != (x < 0)) else r
        return fmod_int
    return None


def _fmod_interp(x, y):
    if isinstance(x, (np.floating, float)):
        return np.fmod(x, y)
    if y == 0:
        return x ^ x
    r = x % y
    return r - y if (r != 0) and ((r < 0) != (x < 0)) else r


fmod = _generic("fmod", _fmod_choose, _fmod_interp, "C's remainder: the sign of x.", 2)


def _remainder_with(fmod_fn):
    def choose(x, y):
        if isinstance(x, types.Float):
            def remainder(x, y):
                m = fmod_fn(x, y)
                return m + y if (m != 0) & ((y < 0) != (m < 0)) else m
            return remainder
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x, y: x % y
        return None
    return choose


def _remainder_interp(x, y):
    if isinstance(x, (np.floating, float)):
        m = np.fmod(x, y)
        return m + y if (m != 0) and ((y < 0) != (m < 0)) else m
    return x ^ x if y == 0 else x % y


remainder = _generic("remainder", _remainder_with(fmod), _remainder_interp,
                     "Python's remainder: the sign of y (PyTorch's formula).", 2)


def _floor_divide_with(fmod_fn):
    def choose(x, y):
        if isinstance(x, types.Float):
            one, zero, half = ((_ONE32, _ZERO32, _HALF32) if x.bitwidth == 32
                               else (_ONE64, _ZERO64, _HALF64))

            def floor_divide(x, y):
                # c10::div_floor_floating, as selects
                q = _div(x, y)
                mod = fmod_fn(x, y)
                div = _div(x - mod, y)
                div = div - one if (mod != zero) & ((y < zero) != (mod < zero)) else div
                fd = floor(div)
                fd = fd + one if div - fd > half else fd
                fd = fd if div != zero else copysign(zero, q)
                return q if y == zero else fd
            return floor_divide
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x, y: x // y
        return None
    return choose


def _floor_divide_interp(x, y):
    if isinstance(x, (np.floating, float)):
        with np.errstate(all="ignore"):
            q = x / y
            if y == 0:
                return q
            mod = np.fmod(x, y)
            div = (x - mod) / y
            if mod != 0 and (y < 0) != (mod < 0):
                div -= 1
            if div != 0:
                fd = np.floor(div)
                return fd + 1 if div - fd > 0.5 else fd
            return np.copysign(type(x)(0), q)
    return x ^ x if y == 0 else x // y


floor_divide = _generic("floor_divide", _floor_divide_with(fmod), _floor_divide_interp,
                        "Division rounded toward -inf (PyTorch's div_floor).", 2)


# fmod, remainder and floor_divide for a small quotient (issue 15): libm's
# fmod (LLVM's frem) is a call per element, which no loop vectorizes.  Where
# |x| <= 2**22 |y| (float32; 2**51 for float64) and y is finite -- what
# ``quotient_small`` checks -- fmod is x - q y in one fma, exact: q = trunc(x / y)
# is the true truncated quotient or, when the division rounds up onto an
# integer, one more (the rounding error is below 1/2); x - q y is then a
# multiple of ulp(y) smaller than 2 |y|, representable, and in the second case
# of the wrong sign, so adding back |y| with x's sign (exactly) fixes it.  The
# CPU kernels run these on blocks of elements that all pass the check (see
# Row's FastPath, as sin_small), fmod's frem elsewhere.  Bit for bit the same
# results, zeros' signs and nans included (tests/backends/test_scalar_math.py).
_QUOTIENT_SMALL32 = _f32(2.0 ** 22)
_QUOTIENT_SMALL64 = _f64(2.0 ** 51)
_MAX32 = _f32(np.finfo(np.float32).max)
_MAX64 = _f64(np.finfo(np.float64).max)


def _quotient_small_choose(x, y):
    if isinstance(x, types.Float) and x == y:
        k, top = ((_QUOTIENT_SMALL32, _MAX32) if x.bitwidth == 32
                  else (_QUOTIENT_SMALL64, _MAX64))
        return lambda x, y: (abs(x) <= abs(y) * k) & (abs(y) <= top)
    if all(isinstance(t, (types.Integer, types.Boolean)) for t in (x, y)):
        return lambda x, y: True
    return None


def _quotient_small_interp(x, y):
    if isinstance(x, (np.floating, float)):
        k = 2.0 ** 22 if np.asarray(x).dtype == np.float32 else 2.0 ** 51
        return bool(abs(x) <= abs(y) * k and abs(y) <= np.finfo(np.asarray(x).dtype).max)
    return True


quotient_small = _generic("quotient_small", _quotient_small_choose, _quotient_small_interp,
                          "Whether fmod_small & co. hold: |x| <= 2**22 |y| (float32; "
                          "2**51 float64), y finite; True for integers.", 2)


def _fmod_small_choose(x, y):
    if isinstance(x, types.Float) and x == y:
        def fmod_small(x, y):
            r = _fma(-_trunc(_div(x, y)), y, x)
            r = r + copysign(y, x) if (r != 0) & ((r < 0) != (x < 0)) else r
            return copysign(r, x)
        return fmod_small
    return _fmod_choose(x, y)


fmod_small = _generic("fmod_small", _fmod_small_choose, _fmod_interp,
                      "fmod(x, y) where quotient_small(x, y) holds (vectorizes).", 2)
remainder_small = _generic("remainder_small", _remainder_with(fmod_small), _remainder_interp,
                           "remainder(x, y) where quotient_small(x, y) holds.", 2)
floor_divide_small = _generic("floor_divide_small", _floor_divide_with(fmod_small),
                              _floor_divide_interp,
                              "floor_divide(x, y) where quotient_small(x, y) holds.", 2)


def _bitwise_not_choose(x):
    if isinstance(x, types.Boolean):
        return lambda x: x ^ True
    if isinstance(x, types.Integer):
        return lambda x: ~x
    return None


bitwise_not = _generic("bitwise_not", _bitwise_not_choose, np.invert,
                       "~x for integers, not x for bools.")


def _shift_choose(left):
    def choose(x, y):
        if not (isinstance(x, types.Integer) and isinstance(y, types.Integer)):
            return None
        width = x.bitwidth
        if left:
            # PyTorch: 0 for shifts below 0 or of the width and more
            return lambda x, y: (x ^ x) if (y < 0) | (y >= width) else x << y
        return lambda x, y: (x >> (width - 1)) if (y < 0) | (y >= width) else x >> y
    return choose


def _shift_interp(left):
    def interp(x, y):
        width = np.asarray(x).dtype.itemsize * 8
        if y < 0 or y >= width:
            return type(x)(0) if left else x >> type(x)(width - 1)
        with np.errstate(all="ignore"):
            return x << y if left else x >> y
    return interp


left_shift = _generic("left_shift", _shift_choose(True), _shift_interp(True),
                      "x << y; 0 for y < 0 or y >= the width.", 2)
right_shift = _generic("right_shift", _shift_choose(False), _shift_interp(False),
                       "x >> y (arithmetic); the sign for y < 0 or y >= the width.", 2)


def _atan2_choose(y, x):
    if isinstance(y, types.Float) and y == x:
        if _target() != "cpu" or y.bitwidth == 64:
            return lambda y, x: math.atan2(y, x)
        return atan2_f32
    if all(isinstance(t, (types.Float, types.Integer, types.Boolean)) for t in (y, x)):
        return lambda y, x: math.atan2(_f64(y), _f64(x))
    return None


def _hypot_choose(x, y):
    if isinstance(x, types.Float) and x == y:
        if _target() != "cpu" or x.bitwidth == 64:
            return lambda x, y: math.hypot(x, y)
        return hypot_f32
    if all(isinstance(t, (types.Float, types.Integer, types.Boolean)) for t in (x, y)):
        return lambda x, y: math.hypot(_f64(x), _f64(y))
    return None


atan2 = _generic("atan2", _atan2_choose, np.arctan2, "atan(y / x) in the right quadrant.", 2)
hypot = _generic("hypot", _hypot_choose, np.hypot, "sqrt(x*x + y*y) without overflow.", 2)


def _fma_choose(x, y, z):
    if isinstance(x, types.Float) and x == y == z:
        return lambda x, y, z: _fma(x, y, z)
    if all(isinstance(t, (types.Float, types.Integer, types.Boolean)) for t in (x, y, z)):
        return lambda x, y, z: x * y + z
    return None


def _fma_interp(x, y, z):
    return x * y + z   # the interpreter (CUDA simulator): two roundings


fma = _generic("fma", _fma_choose, _fma_interp, "x * y + z with one rounding (floats of one "
               "type; others as x * y + z).", 3)


# ==========================================================================
# The gamma family: lgamma, digamma, polygamma (and Hurwitz's zeta)
# ==========================================================================
# PyTorch's CPU algorithms (ATen's Math.h, after Cephes), evaluated in double
# for both dtypes (as ATen's float kernels accumulate zeta in double) and
# rounded once; so float32 results are within an ulp of PyTorch's. They loop,
# so they do not vectorize; lgamma is libm's (the device library's on GPUs).
def fdiv(a, b):
    """IEEE ``a / b`` (inf or nan for a zero ``b``), also in the interpreter."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(a, b)


@overload(fdiv, inline=_on_cpu)
def _fdiv_jit(a, b):
    if isinstance(a, types.Float) and a == b:
        return lambda a, b: _div(a, b)
    if isinstance(a, types.Number) and isinstance(b, types.Number):
        return lambda a, b: _div(_f64(a), _f64(b))
    return None


_PSI_10 = _f64(2.25175258906672110764)
_DIGAMMA_A = (_f64(8.33333333333333333333E-2), _f64(-2.10927960927960927961E-2),
              _f64(7.57575757575757575758E-3), _f64(-4.16666666666666666667E-3),
              _f64(3.96825396825396825397E-3), _f64(-8.33333333333333333333E-3),
              _f64(8.33333333333333333333E-2))
_ZETA_A = (_f64(12.0), _f64(-720.0), _f64(30240.0), _f64(-1209600.0), _f64(47900160.0),
           _f64(-1.8924375803183791606e9), _f64(7.47242496e10), _f64(-2.950130727918164224e12),
           _f64(1.1646782814350067249e14), _f64(-4.5979787224074726105e15),
           _f64(1.8152105401943546773e17), _f64(-7.1661652561756670113e18))
_MACHEP64 = _f64(1.11022302462515654042E-16)


@_jitable
def digamma_f64(x):
    """psi(x) = d/dx lgamma(x): -inf at +0, +inf at -0, nan at the negative integers."""
    x = _f64(x)
    if x == _ZERO64:
        return _INF64 if _f64(x).view(_i64) < _i64(0) else -_INF64
    shift = _ZERO64
    if x < _ZERO64:
        if x == trunc(x):
            return _NAN64
        r = x - trunc(x)  # psi(x) = psi(1 - x) - pi / tan(pi x)
        shift = fdiv(_PI_64, math.tan(_PI_64 * r))
        x = _ONE64 - x
    result = -shift
    while x < _f64(10.0):
        result -= fdiv(_ONE64, x)
        x += _ONE64
    if x == _f64(10.0):
        return result + _PSI_10
    y = _ZERO64
    if x < _f64(1.0e17):
        z = fdiv(_ONE64, x * x)
        p = _DIGAMMA_A[0]
        for c in _DIGAMMA_A[1:]:
            p = p * z + c
        y = z * p
    return result + math.log(x) - fdiv(_HALF64, x) - y


@_jitable
def trigamma_f64(x):
    """psi'(x), by reflection below 1/2, six steps up and its asymptotic series."""
    x = _f64(x)
    sign = _ONE64
    result = _ZERO64
    if x < _HALF64:  # reflection: sin(pi x)**2 of the fraction, exactly 0 at the poles
        sign = -_ONE64
        s = math.sin(_PI_64 * (x - trunc(x)))
        result -= fdiv(_PI_64 * _PI_64, s * s)
        x = _ONE64 - x
    for _ in range(6):
        result += fdiv(_ONE64, x * x)
        x += _ONE64
    ixx = fdiv(_ONE64, x * x)
    series = _ONE64 + fdiv(_ONE64, _TWO64 * x) + ixx * (
        _f64(1.0 / 6.0) - ixx * (_f64(1.0 / 30.0) - ixx * _f64(1.0 / 42.0)))
    return sign * (result + fdiv(series, x))


@_jitable
def zeta_f64(x, q):
    """Hurwitz's zeta, sum over k >= 0 of (k + q)**-x (Cephes' algorithm: direct
    sum, then Euler-Maclaurin)."""
    x, q = _f64(x), _f64(q)
    if x == _ONE64:
        return _INF64
    if x < _ONE64:
        return _NAN64
    if q <= _ZERO64:
        if q == floor(q):
            return _INF64
        if x != floor(x):
            return _NAN64
    s = q ** -x
    a = q
    b = _ZERO64
    i = 0
    while i < 9 or a <= _f64(9.0):
        i += 1
        a += _ONE64
        b = a ** -x
        s += b
        if -_MACHEP64 * s < b < _MACHEP64 * s:
            return s
    w = a
    s += fdiv(b * w, x - _ONE64)
    s -= _HALF64 * b
    a = _ONE64
    k = _ZERO64
    for c in _ZETA_A:
        a *= x + k
        b = fdiv(b, w)
        t = fdiv(a * b, c)
        s = s + t
        if abs(fdiv(t, s)) < _MACHEP64:
            return s
        k += _ONE64
        a *= x + k
        b = fdiv(b, w)
        k += _ONE64
    return s


@_jitable
def polygamma_f64(n, x):
    """The n-th derivative of digamma (n >= 0)."""
    if n == 0:
        return digamma_f64(x)
    if n == 1:
        return trigamma_f64(x)
    sign = _ONE64 if n % 2 == 1 else -_ONE64
    return sign * math.exp(math.lgamma(_f64(n) + _ONE64)) * zeta_f64(_f64(n) + _ONE64, x)


def _in_dtype(fn, nargs=1):
    """``choose`` for _generic: ``fn`` (double) for a float of either width,
    rounded once to it; its last argument decides."""
    def rounded(x):
        if isinstance(x, types.Float) and x.bitwidth == 32:
            return True
        if isinstance(x, (types.Float, types.Integer, types.Boolean)):
            return False
        return None

    if nargs == 1:
        def choose(x):
            r = rounded(x)
            return None if r is None else (lambda x: _f32(fn(x))) if r else fn
    else:
        def choose(n, x):
            r = rounded(x)
            return None if r is None else (lambda n, x: _f32(fn(n, x))) if r else fn
    return choose


def _interpreted(fn):
    def interp(*args):
        x = args[-1]
        r = fn(*args[:-1], np.float64(x))
        return type(x)(r) if isinstance(x, np.floating) else r
    return interp


@_jitable
def _lgamma_f32(x):
    return _f32(math.lgamma(_f64(x)))


@_jitable
def _lgamma_f64(x):
    return math.lgamma(x)


def _interp_lgamma(x):
    try:
        r = math.lgamma(x)
    except ValueError:  # a pole
        r = math.inf
    return type(x)(r) if isinstance(x, np.floating) else r


lgamma = _public_with("lgamma", _lgamma_f32, _lgamma_f64, "log |Gamma(x)|; inf at the poles.",
                      _interp_lgamma, _libdevice("lgamma"))
digamma = _generic("digamma", _in_dtype(digamma_f64), _interpreted(digamma_f64),
                   "psi(x), the derivative of lgamma.")
polygamma = _generic("polygamma", _in_dtype(polygamma_f64, 2), _interpreted(polygamma_f64),
                     "psi^(n)(x), the n-th derivative of digamma (n >= 0).", nargs=2)


_PI_32 = _f32(math.pi)


def _pi_like_choose(x):
    if isinstance(x, types.Float) and x.bitwidth == 32:
        return lambda x: _PI_32
    if isinstance(x, (types.Float, types.Integer, types.Boolean)):
        return lambda x: _PI_64
    return None


def _interp_pi_like(x):
    return _PI_32 if isinstance(x, np.float32) else _PI_64


pi_like = _generic("pi_like", _pi_like_choose, _interp_pi_like,
                   "pi in x's float type (float64 for integers): a float32 product with it "
                   "stays float32, as PyTorch's sinc computes.")
