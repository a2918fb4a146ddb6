"""The dropout family beyond ``F.dropout``: channel-wise (``dropout1d/2d/3d``),
and the self-normalizing ``alpha_dropout`` / ``feature_alpha_dropout``.

One routine, as aten's ``_dropout_impl``: a keep mask drawn by nbgrad's
generator (on the host, as ``F.dropout``) with the shape of the input or, for
feature dropout, one value per (batch, channel); then ``x * noise`` (plus a
shift ``b`` for alpha dropout), composed of taped ops so the gradient is
``g * noise`` with the broadcast summed away.
"""
import math
import warnings

import numpy as np

from ..tensor import Tensor

_ALPHA = 1.7580993408473766  # -scale * alpha of SELU: where a dropped unit is sent


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, training, inplace, feature_dims, alpha):
    """``feature_dims``: None for elementwise noise, else how many leading
    dimensions get their own value (2: batch and channel; 1: unbatched)."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if feature_dims is not None and input.ndim < 2 and feature_dims == 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    backend = input._backend
    dtype = input.dtype.numpy
    if p == 1:  # PyTorch multiplies by a zero scalar: a -0. stays -0.
        zero = Tensor._wrap(backend.zeros((), dtype), input.dtype, backend)
        return input.mul_(zero) if inplace else input * zero
    if feature_dims is None:
        shape = tuple(input.shape)
    else:
        shape = tuple(input.shape[:feature_dims]) + (1,) * (input.ndim - feature_dims)
    from ..creation import rand
    keep = (rand(*shape, dtype=input.dtype)._data < (1.0 - p)).astype(np.float64)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        shift = (keep - 1) * (_ALPHA * a) + _ALPHA * a * p
        noise = keep * a
    else:
        noise = keep / (1 - p)
    noise = Tensor._wrap(backend.asarray(noise.astype(dtype)), input.dtype, backend)
    out = input.mul_(noise) if inplace else input * noise
    if alpha:
        b = Tensor._wrap(backend.asarray(shift.astype(dtype)), input.dtype, backend)
        out = out.add_(b)
    return out


def dropout1d(input, p=0.5, training=True, inplace=False):
    r"""Randomly zero out entire channels (a channel is a 1-D feature map).

    Args:
        input: a tensor of shape :math:`(N, C, L)` or :math:`(C, L)`
        p: probability of a channel to be zeroed. Default: 0.5
        training: apply dropout if ``True``. Default: ``True``
        inplace: if set to ``True``, will do this operation in-place. Default: ``False``
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    return _dropout_impl(input, p, training, inplace, 2 if input.ndim == 3 else 1, False)


def dropout2d(input, p=0.5, training=True, inplace=False):
    r"""Randomly zero out entire channels (a channel is a 2-D feature map).

    Args:
        input: a tensor of shape :math:`(N, C, H, W)` (a 3-D input is taken as
            :math:`(N, C, L)`, with PyTorch's warning)
        p: probability of a channel to be zeroed. Default: 0.5
        training: apply dropout if ``True``. Default: ``True``
        inplace: if set to ``True``, will do this operation in-place. Default: ``False``
    """
    _check_p(p)
    inp_dim = input.ndim
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _dropout_impl(input, p, training, inplace, 2, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    r"""Randomly zero out entire channels (a channel is a 3-D feature map).

    Args:
        input: a tensor of shape :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`
        p: probability of a channel to be zeroed. Default: 0.5
        training: apply dropout if ``True``. Default: ``True``
        inplace: if set to ``True``, will do this operation in-place. Default: ``False``
    """
    _check_p(p)
    inp_dim = input.ndim
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2)
    return _dropout_impl(input, p, training, inplace, 2 if inp_dim == 5 else 1, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    r"""Alpha dropout: dropped units are set to SELU's negative saturation and
    the result is scaled and shifted so that mean and variance are kept.

    Args:
        input: a tensor of any shape
        p: probability of an element to be dropped. Default: 0.5
        training: apply dropout if ``True``. Default: ``False``
        inplace: if set to ``True``, will do this operation in-place. Default: ``False``
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, None, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    r"""Alpha dropout of entire channels (one draw per batch element and channel).

    Args:
        input: a tensor of shape :math:`(N, C, *)`
        p: probability of a channel to be dropped. Default: 0.5
        training: apply dropout if ``True``. Default: ``False``
        inplace: if set to ``True``, will do this operation in-place. Default: ``False``
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, 2, True)


__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
