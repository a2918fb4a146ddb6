"""Elementwise loss rows: the per-element loss of ``mse_loss``,
``smooth_l1_loss``, ``huber_loss`` and ``binary_cross_entropy`` and their
derivatives, as PyTorch's kernels compute them (its masks at the kinks, its
clamps of the logarithms at -100 and of the BCE denominator at 1e-12). The
nn layer runs them inside one node with the reduction (``MseLossBackward``
and so on, as PyTorch's)."""
from . import scalar_math as sm
from .row import Row

mse_loss = Row("mse_loss", lambda a, b: (a - b) * (a - b),
               {"a": lambda g, a, b: 2.0 * g * (a - b), "b": lambda g, a, b: -2.0 * g * (a - b)},
               method=False, title="MseLoss")


def _smooth_l1(a, b, beta):
    z = abs(a - b)
    return 0.5 * z * z / beta if z < beta else z - 0.5 * beta


def _smooth_l1_slope(a, b, beta):
    x = a - b
    return -1.0 if x <= -beta else (1.0 if x >= beta else x / beta)


smooth_l1_loss = Row(
    "smooth_l1_loss", _smooth_l1,
    {"a": lambda g, a, b, beta: g * _smooth_l1_slope(a, b, beta),
     "b": lambda g, a, b, beta: -g * _smooth_l1_slope(a, b, beta)},
    method=False, title="SmoothL1Loss")


def _huber(a, b, delta):
    z = abs(a - b)
    return 0.5 * z * z if z < delta else delta * (z - 0.5 * delta)


def _huber_slope(a, b, delta):
    x = a - b
    return -delta if x < -delta else (delta if x > delta else x)


huber_loss = Row(
    "huber_loss", _huber,
    {"a": lambda g, a, b, delta: g * _huber_slope(a, b, delta),
     "b": lambda g, a, b, delta: -g * _huber_slope(a, b, delta)},
    method=False, title="HuberLoss")


def _clamped_log(v):
    r = sm.log(v)
    return r if r > -100.0 else sm.zero(r) - 100.0


def _bce(x, y, w):
    return -w * (y * _clamped_log(x) + (1.0 - y) * _clamped_log(1.0 - x))


def _bce_grad_x(g, x, y, w):
    d = (1.0 - x) * x
    return g * w * (x - y) / (d if d > 1e-12 else sm.zero(d) + 1e-12)


def _bce_grad_y(g, x, y, w):
    return g * w * (_clamped_log(1.0 - x) - _clamped_log(x))


binary_cross_entropy = Row(
    "binary_cross_entropy", _bce, {"x": _bce_grad_x, "y": _bce_grad_y},
    method=False, title="BinaryCrossEntropy")
