"""The elementwise op table: one row per op.

Each row gives the scalar forward and, per differentiable input, the
derivative times the incoming gradient ``g``. A derivative's parameters say
what it reads (inputs by name, ``out`` for the result), and therefore what the
forward saves. Kernels (CPU and CUDA, forward, fused backward, in-place) are
generated from these rows; tests are driven by them.

Transcendentals come from ``scalar_math`` (called as ``sm.exp``: plain
arithmetic that vectorizes, where libm's calls do not).
"""
import math

import numpy as np

from ..backends import scalar_math as sm
from .elementwise import ElementwiseOp as Row
from .elementwise import FastPath

INF = math.inf


def _sign(a):
    return 1 if a > 0 else (-1 if a < 0 else 0)


_ONE32 = np.float32(1)  # b - _ONE32 keeps float32 in float32 (b - 1 is float64 in Numba)


def _pow_base_grad(g, a, b):
    return 0 * g if b == 0 else g * b * sm.pow(a, b - _ONE32)


def _pow_exponent_grad(g, a, b, out):
    # PyTorch masks the a == 0, b >= 0 case, where log(a) is -inf.
    return 0 * g if (a == 0 and b >= 0) else g * out * sm.log(a)


def _max_grad(g, a, b):
    # Ties split the gradient, as in PyTorch.
    return g if a > b else (g / 2 if a == b else 0 * g)


def _clamp(a, lo, hi):
    # min(max(a, lo), hi) as in PyTorch: hi wins when lo > hi; a NaN anywhere propagates.
    low = lo if (a < lo or lo != lo) else a
    return hi if (low > hi or hi != hi) else low


ROWS = [
    Row("neg", lambda a: -a, {"a": lambda g: -g}),
    Row("add", lambda a, b: a + b, {"a": lambda g: g, "b": lambda g: g}),
    Row("sub", lambda a, b: a - b, {"a": lambda g: g, "b": lambda g: -g}),
    Row("mul", lambda a, b: a * b, {"a": lambda g, b: g * b, "b": lambda g, a: g * a}),
    Row("div", lambda a, b: a / b,
        {"a": lambda g, b: g / b, "b": lambda g, a, b: -g * a / (b * b)},
        result="float", domain=(0.5, 2.0)),
    Row("pow", lambda a, b: sm.pow(a, b),
        {"a": _pow_base_grad, "b": _pow_exponent_grad}, domain=(0.5, 2.0)),
    Row("exp", lambda a: sm.exp(a), {"a": lambda g, out: g * out}, result="float"),
    Row("log", lambda a: sm.log(a), {"a": lambda g, a: g / a}, result="float", domain=(0.1, 4.0)),
    Row("sqrt", lambda a: math.sqrt(a), {"a": lambda g, out: g / (2 * out)},
        result="float", domain=(0.1, 4.0)),
    Row("abs", lambda a: abs(a), {"a": lambda g, a: g * _sign(a)}),
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
    Row("relu", lambda a: 0 if a <= 0 else a, {"a": lambda g, out: g if out > 0 else 0 * g}),
    Row("maximum", lambda a, b: a if (a > b or a != a) else b,
        {"a": _max_grad, "b": lambda g, a, b: _max_grad(g, b, a)}),
    Row("minimum", lambda a, b: a if (a < b or a != a) else b,
        {"a": lambda g, a, b: _max_grad(g, b, a), "b": _max_grad}),
    Row("clamp", _clamp,
        {"a": lambda g, a, lo, hi: g if lo <= a <= hi else 0 * g,
         "lo": lambda g, a, lo, hi: g if (a < lo and lo < hi) else 0 * g,
         "hi": lambda g, a, lo, hi: g if (a > hi or hi < lo) else 0 * g}),
    Row("where", lambda condition, a, b: a if condition else b,
        {"a": lambda g, condition: g if condition else 0 * g,
         "b": lambda g, condition: 0 * g if condition else g},
        bool_inputs=("condition",), method=False),
    Row("eq", lambda a, b: a == b, result="bool"),
    Row("ne", lambda a, b: a != b, result="bool"),
    Row("lt", lambda a, b: a < b, result="bool"),
    Row("le", lambda a, b: a <= b, result="bool"),
    Row("gt", lambda a, b: a > b, result="bool"),
    Row("ge", lambda a, b: a >= b, result="bool"),
    # In-place only: the writes behind copy_, fill_ and zero_.
    Row("copy", lambda a, src: src, {"a": lambda g: 0 * g, "src": lambda g: g},
        result="self", method=False),
    Row("fill", lambda a, value: value, {"a": lambda g: 0 * g, "value": lambda g: g},
        result="self", method=False),
]

BY_NAME = {row.name: row for row in ROWS}
