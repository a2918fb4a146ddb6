"""Elementwise rows used by nn: each is one forward and its derivatives,
from which nbgrad generates the fused forward and backward kernels.

Constants are written as literals so the kernel fingerprint sees them.
"""
import math

from .row import Row


def _softplus_neg(x):
    """log(1 + exp(-x)), stable for every x."""
    return max(-x, 0.0) + math.log1p(math.exp(-abs(x)))


def _sigmoid_neg(x):
    """sigmoid(-x) = 1 / (1 + exp(x)), without overflow."""
    if x >= 0:
        e = math.exp(-x)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(x))


def _gelu_grad(g, a):
    cdf = 0.5 * (1.0 + math.erf(a * 0.7071067811865476))
    pdf = 0.3989422804014327 * math.exp(-0.5 * a * a)
    return g * (cdf + a * pdf)


def _gelu_tanh(a):
    inner = 0.7978845608028654 * (a + 0.044715 * a * a * a)
    return 0.5 * a * (1.0 + math.tanh(inner))


def _gelu_tanh_grad(g, a):
    # PyTorch's GeluBackward (tanh approximation), term by term.
    x_sq = a * a
    inner = 0.7978845608028654 * (a + 0.044715 * x_sq * a)
    tanh_inner = math.tanh(inner)
    left = 0.5 * a
    right = 1.0 + tanh_inner
    left_derivative = 0.5 * right
    right_derivative = left * (1.0 - tanh_inner * tanh_inner) * 0.7978845608028654 * (
        1.0 + 3.0 * 0.044715 * x_sq)
    return g * (left_derivative + right_derivative)


gelu = Row("gelu", lambda a: 0.5 * a * (1.0 + math.erf(a * 0.7071067811865476)),
                   grads={"a": _gelu_grad}, title="Gelu")

gelu_tanh = Row("gelu_tanh", _gelu_tanh, grads={"a": _gelu_tanh_grad}, title="Gelu")


def _bce_logits(x, y, pw):
    return (1.0 - y) * x + (1.0 + (pw - 1.0) * y) * _softplus_neg(x)


def _bce_logits_grad_x(g, x, y, pw):
    return g * ((1.0 - y) - (1.0 + (pw - 1.0) * y) * _sigmoid_neg(x))


def _bce_logits_grad_y(g, x, y, pw):
    # PyTorch's: -g * x without a pos_weight (pw = 1 here), else
    # g * (log_sigmoid(-x) - pw * log_sigmoid(x)); the shorter
    # (pw - 1) * softplus(-x) - x is 0 * inf = nan at x = -inf.
    if pw == 1.0:
        return -g * x
    return g * (pw * _softplus_neg(x) - _softplus_neg(-x))


def _bce_logits_grad_pw(g, x, y):
    return g * y * _softplus_neg(x)


# loss(x, y) = -pw * y * log(sigmoid(x)) - (1 - y) * log(1 - sigmoid(x)), written stably.
binary_cross_entropy_with_logits = Row(
    "binary_cross_entropy_with_logits", _bce_logits,
    grads={"x": _bce_logits_grad_x, "y": _bce_logits_grad_y, "pw": _bce_logits_grad_pw},
    title="BinaryCrossEntropyWithLogits")
