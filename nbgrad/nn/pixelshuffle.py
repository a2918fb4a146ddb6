"""``PixelShuffle`` / ``PixelUnshuffle`` and their functional forms: a reshape,
a permutation and a reshape, recorded as one node whose gradient is the
inverse rearrangement."""
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor
from .module import Module


def _rearrange(xp, a, split_shape, axes, out_shape):
    return xp.reshape(xp.contiguous_permute(xp.reshape(a, split_shape), axes), out_shape)


class _ShuffleBackward(Node):
    __slots__ = ("inverse", "_op_name")

    def __init__(self, x, inverse, op_name):
        super().__init__([x])
        self.inverse, self._op_name = inverse, op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        return [_rearrange(ops_for(grad), grad, *self.inverse)]


def _shuffle(input, r, up, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    what = "upscale_factor" if up else "downscale_factor"
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {r}")
    *lead, c, h, w = input.shape
    if up and c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    if not up and (h % r or w % r):
        which, size = ("height", h) if h % r else ("width", w)
        raise RuntimeError(f"pixel_unshuffle expects {which} to be divisible by "
                           f"downscale_factor, but input.size({-2 if which == 'height' else -1})="
                           f"{size} is not divisible by {r}")
    lead = tuple(lead)
    k = len(lead)
    base = tuple(range(k))
    if up:
        co = c // (r * r)
        split = lead + (co, r, r, h, w)
        axes = base + tuple(k + a for a in (0, 3, 1, 4, 2))
        out_shape = lead + (co, h * r, w * r)
        inv_split = lead + (co, h, r, w, r)
        inv_axes = base + tuple(k + a for a in (0, 2, 4, 1, 3))
    else:
        ho, wo = h // r, w // r
        split = lead + (c, ho, r, wo, r)
        axes = base + tuple(k + a for a in (0, 2, 4, 1, 3))
        out_shape = lead + (c * r * r, ho, wo)
        inv_split = lead + (c, r, r, ho, wo)
        inv_axes = base + tuple(k + a for a in (0, 3, 1, 4, 2))
    data = _rearrange(ops_for(input._data), input._data, split, axes, out_shape)
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = _ShuffleBackward(input, (inv_split, inv_axes, tuple(input.shape)),
                                "PixelShuffle" if up else "PixelUnshuffle")
    return Tensor._from_op(data, node, input.dtype, input._backend)


@tangent_rule()  # forward mode: from its backward
def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    return _shuffle(input, int(upscale_factor), True, "pixel_shuffle")


@tangent_rule()  # forward mode: from its backward
def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    return _shuffle(input, int(downscale_factor), False, "pixel_unshuffle")


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


__all__ = ["pixel_shuffle", "pixel_unshuffle", "PixelShuffle", "PixelUnshuffle"]
