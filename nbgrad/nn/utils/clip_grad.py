"""Gradient clipping, as ``torch.nn.utils.clip_grad``: ``clip_grad_norm_``,
``clip_grad_value_``, ``get_total_norm``, ``clip_grads_with_norm_``."""
import functools
import math
import types
import warnings

from ... import creation, dtypes
from ...ops import joining
from ...tape import grad_mode
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with grad_mode.no_grad():
            return func(*args, **kwargs)
    return wrapper


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(t, norm_type):
    """``torch.linalg.vector_norm(t, norm_type)`` of the flattened ``t``, in ``t``'s dtype
    (a reduced-precision one accumulated in float32, as PyTorch's)."""
    if t.dtype.itemsize < 4 and t.is_floating_point():
        return _vector_norm(t.to(dtypes.float32), norm_type).to(t.dtype)
    flat = t.reshape(-1)
    if flat.numel() == 0:
        return creation.zeros((), dtype=t.dtype, device=t.device) if norm_type != -math.inf \
            else creation.full((), math.inf, dtype=t.dtype, device=t.device)
    a = flat.abs()
    if norm_type == math.inf:
        return a.amax()
    if norm_type == -math.inf:
        return a.amin()
    if norm_type == 0:
        return (a != 0).sum().to(t.dtype)
    if norm_type == 1:
        return a.sum()
    if norm_type == 2:
        return (a * a).sum().sqrt()
    return (a ** norm_type).sum() ** (1.0 / norm_type)


def _check_foreach(tensors, foreach):
    # Every device runs the same loop: foreach=True is accepted on CPU and CUDA, as PyTorch.
    del tensors, foreach


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor

    The ``norm_type`` norm of the norms of ``tensors`` (as if they were one
    vector); ``inf`` for the max norm. With ``error_if_nonfinite``, a nan or
    infinite total raises RuntimeError."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return creation.tensor(0.0)
    _check_foreach(tensors, foreach)
    first_device = tensors[0].device
    norms = [_vector_norm(t, norm_type).to(first_device) for t in tensors]
    total_norm = _vector_norm(joining.stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None

    Scale every gradient in place by ``min(max_norm / (total_norm + 1e-6), 1)``."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    _check_foreach(grads, foreach)
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = clip_coef.clamp(max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.device))


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
    foreach=None) -> Tensor

    Clip the gradients of ``parameters`` in place so that their total norm
    (``get_total_norm``) is at most ``max_norm``; returns the total norm
    before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated: ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """clip_grad_value_(parameters, clip_value, foreach=None) -> None

    Clamp every gradient in place to ``[-clip_value, clip_value]``."""
    parameters = _as_list(parameters)
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    _check_foreach(grads, foreach)
    for g in grads:
        g.clamp_(min=-clip_value, max=clip_value)
