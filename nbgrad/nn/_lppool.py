"""``lp_pool1d/2d/3d``: the p-norm of each window, composed as PyTorch's
(re-exported by ``nbgrad.nn.functional``): the average of ``x ** p`` over the
window, times its size, to the power ``1/p`` (negative averages, possible for
odd ``p``, clamped to zero by ``sign * relu(abs)`` first)."""
import numbers

from ._poolnd import avg_pool1d
from ._poolwindows import avg_pool3d


def _ntuple(value, nd):
    if isinstance(value, numbers.Integral):
        return (int(value),) * nd
    value = tuple(value)
    return value * nd if len(value) == 1 else value


def _lp(out, norm_type, count):
    return (out.sign() * out.abs().relu()).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The ``norm_type``-norm of each window of (N, C, L) or (C, L) ``input``."""
    (k,) = _ntuple(kernel_size, 1)
    if stride is not None:
        out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool1d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp(out, norm_type, k)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The ``norm_type``-norm of each window of (N, C, H, W) or (C, H, W) ``input``."""
    from .functional import avg_pool2d  # (functional imports this module)
    kh, kw = _ntuple(kernel_size, 2)
    if stride is not None:
        out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool2d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp(out, norm_type, kh * kw)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The ``norm_type``-norm of each window of (N, C, D, H, W) or (C, D, H, W) ``input``."""
    kd, kh, kw = _ntuple(kernel_size, 3)
    if stride is not None:
        out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool3d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp(out, norm_type, kd * kh * kw)
