"""``F.pad`` (constant, reflect, replicate, circular) and the padding layers.

A constant pad writes the input into a filled array (its gradient: the
gradient's view where the input went). The other modes read every output
element from one input element: a gather through per-dimension index arrays
(an open mesh), whose gradient is the adjoint index_add, both written
against ``ops_for`` so they can be differentiated again.
"""
import numpy as np

from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tape.graph import Node, SavedValue
from ..tensor import Tensor
from .module import Module

_MODES = ("constant", "reflect", "replicate", "circular")


def _recording(t):
    return grad_mode.is_grad_enabled() and t.requires_grad


def _view(key):
    return lambda a: a[key]


class ConstantPadNdBackward(Node):
    __slots__ = ("x_shape", "out_shape", "src", "dst")
    op_name = "ConstantPadNd"

    def __init__(self, x, x_shape, out_shape, src, dst):
        super().__init__([x])
        self.x_shape, self.out_shape, self.src, self.dst = x_shape, out_shape, src, dst

    def backward(self, grad):
        xp = ops_for(grad)
        region = xp.apply_view(grad, _view(self.dst), self.out_shape)
        if all(s == slice(None) for s in self.src):
            return [region]
        return [xp.replace_view(xp.zeros(self.x_shape, grad.dtype), _view(self.src), region)]


class _PadGatherBackward(Node):
    __slots__ = ("x_shape", "_op_name")

    def __init__(self, x, key, op_name):
        super().__init__([x])
        self.saved = (SavedValue(key),)
        self.x_shape = x._data.shape
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name

    def name(self):  # PyTorch's circular pad is a copy into slices
        return "CopySlices" if self._op_name == "CopySlices" else self._op_name + "Backward"

    def backward(self, grad):
        (key,) = self.saved_values()
        return [ops_for(grad).index_add(self.x_shape, key, grad)]


def _source_index(mode, size, before, after):
    p = np.arange(-before, size + after)
    if mode == "reflect":
        p = np.abs(p)
        p = np.where(p > size - 1, 2 * (size - 1) - p, p)
    elif mode == "replicate":
        p = np.clip(p, 0, size - 1)
    else:  # circular, as PyTorch's: negative pads crop first, then the rest wraps around
        start, kept = max(-before, 0), size - max(-before, 0) - max(-after, 0)
        p = start + np.arange(-max(before, 0), kept + max(after, 0)) % kept
    return p


def _non_constant_error(k, ndim):
    return NotImplementedError(
        f"Padding size {k} is not supported for {ndim}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dimensions of ``input``: ``pad`` is
    (last_before, last_after, second_last_before, ...), as ``torch.nn.functional.pad``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = input.ndim
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{ndim}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    shape = tuple(input.shape)
    dims = [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(k)]  # (dim, before, after)
    if mode == "constant":
        return _constant(input, shape, dims, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise _non_constant_error(len(pad), ndim)
    for i, (d, before, after) in enumerate(dims):
        if mode == "reflect" and (before >= shape[d] or after >= shape[d]):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({before}, "
                               f"{after}) at dimension {d} of input {list(shape)}")
        if mode == "circular" and (before > shape[d] or after > shape[d]):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if shape[d] + before + after < 1 or (mode != "circular" and shape[d] == 0):
            raise RuntimeError(f"input tensor must have a non-empty dimension {d} to pad")
    if not input.is_floating_point() and mode != "circular":
        raise NotImplementedError(f'"{mode}_pad" not implemented for {input.dtype}')
    indices = [None] * ndim
    for d, before, after in dims:
        indices[d] = _source_index(mode, shape[d], before, after)
    lead = ndim - k
    mesh = np.ix_(*indices[lead:])
    key = (slice(None),) * lead + tuple(m.astype(np.int64) for m in mesh)
    data = ops_for(input._data).gather(input._data, key)
    node = None
    if _recording(input):
        name = {"reflect": f"ReflectionPad{k}D", "replicate": f"ReplicationPad{k}D",
                "circular": "CopySlices"}[mode]
        node = _PadGatherBackward(input, key, name)
    return Tensor._from_op(data, node, input.dtype, input._backend)


def _constant(input, shape, dims, value):
    out_shape = list(shape)
    src = [slice(None)] * len(shape)
    dst = [slice(None)] * len(shape)
    for d, before, after in dims:
        size = shape[d] + before + after
        if size < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {before} and "
                               f"{after} resulted in a negative output size, which is invalid. "
                               f"Check dimension {d} of your input.")
        out_shape[d] = size
        src[d] = slice(max(-before, 0), shape[d] - max(-after, 0))
        dst[d] = slice(max(before, 0), size - max(after, 0))
    src, dst, out_shape = tuple(src), tuple(dst), tuple(out_shape)
    backend = input._backend
    data = backend.full(out_shape, value, input._data.dtype)
    region = input._data[src]
    if region.size:
        data[dst] = region
    node = None
    if _recording(input):
        node = ConstantPadNdBackward(input, shape, out_shape, src, dst)
    return Tensor._from_op(data, node, input.dtype, backend)


# ---------------------------------------------------------------- layers
class _PadNd(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding):
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.dims)
        self.padding = tuple(padding)

    def forward(self, input):
        return pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _layer(name, base, mode, dims):
    doc = (f"Pads with ``F.pad(..., mode={mode!r})`` (the last {dims} dimensions), as "
           f"``torch.nn.{name}``.")
    return type(name, (base,), {"mode": mode, "dims": dims, "__module__": __name__,
                                "__doc__": doc})


ReflectionPad1d = _layer("ReflectionPad1d", _PadNd, "reflect", 1)
ReflectionPad2d = _layer("ReflectionPad2d", _PadNd, "reflect", 2)
ReflectionPad3d = _layer("ReflectionPad3d", _PadNd, "reflect", 3)
ReplicationPad1d = _layer("ReplicationPad1d", _PadNd, "replicate", 1)
ReplicationPad2d = _layer("ReplicationPad2d", _PadNd, "replicate", 2)
ReplicationPad3d = _layer("ReplicationPad3d", _PadNd, "replicate", 3)
CircularPad1d = _layer("CircularPad1d", _PadNd, "circular", 1)
CircularPad2d = _layer("CircularPad2d", _PadNd, "circular", 2)
CircularPad3d = _layer("CircularPad3d", _PadNd, "circular", 3)
ConstantPad1d = _layer("ConstantPad1d", _ConstantPadNd, "constant", 1)
ConstantPad2d = _layer("ConstantPad2d", _ConstantPadNd, "constant", 2)
ConstantPad3d = _layer("ConstantPad3d", _ConstantPadNd, "constant", 3)


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


ZeroPad1d = _layer("ZeroPad1d", _ZeroPadNd, "constant", 1)
ZeroPad2d = _layer("ZeroPad2d", _ZeroPadNd, "constant", 2)
ZeroPad3d = _layer("ZeroPad3d", _ZeroPadNd, "constant", 3)

__all__ = ["pad", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
           "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d",
           "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d",
           "ZeroPad2d", "ZeroPad3d"]
