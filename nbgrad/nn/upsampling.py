"""``F.interpolate`` / ``nn.Upsample``: 'nearest' (1-D, 2-D), 'linear' (1-D)
and 'bilinear' (2-D, ``align_corners``), by ``size`` or ``scale_factor``.

Nearest is a gather of source elements (its gradient the adjoint index_add);
(bi)linear is separable: products with constant interpolation matrices
(``_poolnd.separable``), its gradient the products with their transposes.
"""
import math
import numbers

import numpy as np

from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tensor import Tensor
from ._poolnd import separable
from .module import Module
from .padding import _PadGatherBackward

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def _scale(in_size, out_size, align_corners, scale):
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _nearest_index(in_size, out_size, scale):
    s = _scale(in_size, out_size, False, scale)
    return np.minimum(np.floor(np.arange(out_size) * np.float32(s)).astype(np.int64), in_size - 1)


def _linear_matrix(in_size, out_size, align_corners, scale):
    s = _scale(in_size, out_size, align_corners, scale)
    dst = np.arange(out_size, dtype=np.float64)
    src = dst * s if align_corners else np.maximum((dst + 0.5) * s - 0.5, 0.0)
    i0 = np.minimum(src.astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    lam = src - i0
    rows = np.arange(out_size)
    m = np.zeros((out_size, in_size))
    np.add.at(m, (rows, i0), 1.0 - lam)
    np.add.at(m, (rows, i1), lam)
    taps = np.zeros((out_size, in_size), bool)  # the two neighbours, a zero weight included
    taps[rows, i0] = taps[rows, i1] = True
    return m, taps


@tangent_rule()  # forward mode: from its backward
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dimensions of (N, C, L) or (N, C, H, W) ``input``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dims = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = list(input.shape[2:])
    if size is not None:
        sizes = [size] * dims if isinstance(size, numbers.Integral) else list(size)
        if len(sizes) != dims:
            raise ValueError(f"Input and output must have the same number of spatial dimensions,"
                             f" but got input with spatial dimensions of {spatial} and output "
                             f"size of {size}. Please provide input tensor in (N, C, d1, d2, "
                             "...,dK) format and output size in (o1, o2, ...,oK) format.")
        out_size = [int(v) for v in sizes]
        scales = [None] * dims
    elif scale_factor is not None:
        factors = [scale_factor] * dims if isinstance(scale_factor, numbers.Real) \
            else list(scale_factor)
        if len(factors) != dims:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of {spatial} "
                             f"and scale_factor of shape {scale_factor}. Please provide input "
                             "tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, "
                             "s2, ...,sK) format.")
        out_size = [int(math.floor(s * float(f))) for s, f in zip(spatial, factors)]
        scales = [None if recompute_scale_factor else float(f) for f in factors]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if dims == 1 and mode == "nearest":
        return _nearest(input, out_size, scales, "UpsampleNearest1D")
    if dims == 2 and mode == "nearest":
        return _nearest(input, out_size, scales, "UpsampleNearest2D")
    if dims == 1 and mode == "linear":
        m, taps = _linear_matrix(spatial[0], out_size[0], align_corners, scales[0])
        return separable(input.unsqueeze(-2), np.ones((1, 1)), m, "UpsampleLinear1D",
                         (np.ones((1, 1), bool), taps)).squeeze(-2)
    if dims == 2 and mode == "bilinear":
        mh, th = _linear_matrix(spatial[0], out_size[0], align_corners, scales[0])
        mw, tw = _linear_matrix(spatial[1], out_size[1], align_corners, scales[1])
        return separable(input, mh, mw, "UpsampleBilinear2D", (th, tw))
    if mode in ("linear", "bilinear", "trilinear") and mode[:-6] != {1: "", 2: "bi", 3: "tri"}.get(
            dims):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{ {'linear': 3, 'bilinear': 4, 'trilinear': 5}[mode] }D input")
    if mode not in _MODES or dims not in (1, 2, 3):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})")
    raise NotImplementedError(f"nbgrad's interpolate does not implement mode={mode!r} for "
                              f"{input.ndim}D input")


def _nearest(input, out_size, scales, op_name):
    spatial = input.shape[2:]
    indices = [_nearest_index(s, o, sc) for s, o, sc in zip(spatial, out_size, scales)]
    key = (slice(None), slice(None)) + tuple(np.ix_(*indices))
    data = ops_for(input._data).gather(input._data, key)
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = _PadGatherBackward(input, key, op_name)
    return Tensor._from_op(data, node, input.dtype, input._backend)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`, as PyTorch's."""
    import warnings
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


class Upsample(Module):
    """``interpolate`` as a layer, as ``torch.nn.Upsample``."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, numbers.Real) \
            else (tuple(float(f) for f in scale_factor) if scale_factor else None)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["interpolate", "upsample", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
