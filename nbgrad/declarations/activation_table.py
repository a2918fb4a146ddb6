"""Elementwise activation rows (``nn.SiLU``, ``nn.ELU``, ...): each is one
scalar forward and its derivatives, from which nbgrad generates the fused
forward, backward, in-place and higher-order kernels, as for ``nn_table``.

The formulas are PyTorch's (aten's CPU kernels and derivatives.yaml), so
values at the kinks and the gradient's masks agree with it. A masked
gradient is a select, never ``0 * g``. Parameters after the first input are
numbers PyTorch takes as Scalars (a slope, a threshold): the kernel reads
them as arguments, so a new value compiles nothing.
"""
from . import scalar_math as sm
from .row import Row


def _silu_grad(g, a):
    s = sm.sigmoid(a)
    return g * (s * (1.0 + a * (1.0 - s)))


silu = Row("silu", lambda a: a * sm.sigmoid(a), {"a": _silu_grad}, method=False)

leaky_relu = Row(
    "leaky_relu", lambda a, negative_slope: a if a > 0 else a * negative_slope,
    {"a": lambda g, a, negative_slope: g if a > 0 else g * negative_slope},
    method=False, title="LeakyRelu")


def _elu(a, alpha, scale, input_scale):
    return a * scale if a > 0 else (sm.exp(a * input_scale) - 1.0) * (alpha * scale)


def _elu_grad(g, a, alpha, scale, input_scale):
    # PyTorch's elu_backward (is_result=False): the exp is recomputed from the input.
    if a > 0:
        return g * scale
    return g * (input_scale * (alpha * scale) * sm.exp(a * input_scale))


# elu, selu (scale, alpha fixed) and celu (input_scale = 1 / alpha) are this one row.
elu = Row("elu", _elu, {"a": _elu_grad}, method=False)
celu = Row("celu", _elu, {"a": _elu_grad}, method=False)


def _softplus(a, beta, threshold):
    z = a * beta
    return a if z > threshold else sm.log1p(sm.exp(z)) / beta


def _softplus_grad(g, a, beta, threshold):
    z = a * beta
    if z > threshold:
        return g
    e = sm.exp(z)
    return g * (e / (e + 1.0))


softplus = Row("softplus", _softplus, {"a": _softplus_grad}, method=False)

hardtanh = Row(
    "hardtanh",
    lambda a, min_val, max_val: min_val if a < min_val else (max_val if a > max_val else a),
    {"a": lambda g, a, min_val, max_val: sm.zero(g) if (a <= min_val or a >= max_val) else g},
    method=False)

# PyTorch's backward multiplies by the float constant 1.0f / 6.0f, for doubles too.
hardsigmoid = Row(
    "hardsigmoid",
    lambda a: sm.zero(a) if a <= -3.0 else (sm.zero(a) + 1.0 if a >= 3.0 else a / 6.0 + 0.5),
    {"a": lambda g, a: g * 0.1666666716337204 if (a > -3.0 and a < 3.0) else sm.zero(g)},
    method=False)


def _hardswish(a):
    if a <= -3.0:
        return sm.zero(a)
    if a >= 3.0:
        return a
    return a * (a + 3.0) / 6.0


def _hardswish_grad(g, a):
    if a < -3.0:
        return sm.zero(g)
    if a <= 3.0:
        return g * (a / 3.0 + 0.5)
    return g


hardswish = Row("hardswish", _hardswish, {"a": _hardswish_grad}, method=False)


def _mish(a):
    return a * sm.tanh(sm.log1p(sm.exp(a)))


def _mish_grad(g, a):
    t = sm.tanh(sm.log1p(sm.exp(a)))
    return g * (t + a * sm.sigmoid(a) * (1.0 - t * t))


mish = Row("mish", _mish, {"a": _mish_grad}, method=False)

threshold = Row(
    "threshold", lambda a, threshold, value: value if a <= threshold else a,
    {"a": lambda g, a, threshold, value: sm.zero(g) if a <= threshold else g},
    method=False, result="self")


def _log_sigmoid(a):
    # min(a, 0) - log1p(exp(-|a|)): no overflow at either end.
    m = a if a < 0 else sm.zero(a)
    return m - sm.log1p(sm.exp(-abs(a)))


log_sigmoid = Row("log_sigmoid", _log_sigmoid,
                  {"a": lambda g, a: g * sm.sigmoid(-a)}, method=False, title="LogSigmoid")

prelu = Row(
    "prelu", lambda a, weight: a if a > 0 else weight * a,
    {"a": lambda g, a, weight: g if a > 0 else weight * g,
     "weight": lambda g, a, weight: sm.zero(g) if a > 0 else g * a},
    method=False, title="PreluKernel", tensors=("input", "weight"))

# -- shrinkage (nn.Hardshrink, nn.Softshrink): zero inside [-lambd, lambd]
hardshrink = Row(
    "hardshrink", lambda a, lambd: sm.zero(a) if (a >= -lambd and a <= lambd) else a,
    {"a": lambda g, a, lambd: sm.zero(g) if (a >= -lambd and a <= lambd) else g},
    method=False)

softshrink = Row(
    "softshrink",
    lambda a, lambd: a - lambd if a > lambd else (a + lambd if a < -lambd else sm.zero(a)),
    {"a": lambda g, a, lambd: sm.zero(g) if (a >= -lambd and a <= lambd) else g},
    method=False)
