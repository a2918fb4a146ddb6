"""1-D and adaptive pooling: ``max_pool1d``, ``avg_pool1d``,
``adaptive_avg_pool1d/2d``, ``adaptive_max_pool1d/2d``.

1-D pools are the 2-D ones over an (N, C, 1, L) view, as PyTorch's. An
adaptive average pool is linear and separable: two products with constant
(Ho, H) and (Wo, W) averaging matrices, its gradient the products with their
transposes (written once against ``ops_for``, so it can be differentiated
again). An adaptive max pool keeps a running maximum over the offsets of its
largest window (offsets past a smaller window's end re-read its last
element), then scatters the gradient to each maximum's flat position.
"""
import numbers

import numpy as np

from .. import dtypes
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tape.graph import Node, SavedValue
from ..tensor import Tensor


def _functional():
    from . import functional
    return functional


def _single(value, name):
    if isinstance(value, numbers.Integral):
        return (int(value),)
    value = tuple(value)
    if len(value) != 1:
        raise RuntimeError(f"{name} must be an int or a tuple of one int")
    return tuple(int(v) for v in value)


def _check_1d(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {name})")


@tangent_rule()  # forward mode: from its backward
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max pooling over (N, C, L) or (C, L)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"max_pool1d(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (2, 3):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{list(input.shape)}")
    kernel = _single(kernel_size, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, numbers.Integral)
                                          and len(stride) == 0) else _single(stride, "stride")
    result = _functional().max_pool2d(
        input.unsqueeze(-2), (1, kernel[0]), (1, stride[0]), (0, _single(padding, "padding")[0]),
        (1, _single(dilation, "dilation")[0]), ceil_mode, return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


@tangent_rule()  # forward mode: from its backward
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Average pooling over (N, C, L) or (C, L)."""
    _check_1d("avg_pool1d", input)
    kernel = _single(kernel_size, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, numbers.Integral)
                                          and len(stride) == 0) else _single(stride, "stride")
    out = _functional().avg_pool2d(input.unsqueeze(-2), (1, kernel[0]), (1, stride[0]),
                                   (0, _single(padding, "padding")[0]), ceil_mode,
                                   count_include_pad)
    return out.squeeze(-2)


# ---------------------------------------------------------------- adaptive
def _bounds(size, out):
    """PyTorch's adaptive windows along one axis: [floor(i*size/out), ceil((i+1)*size/out))."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _averaging(size, out, dtype):
    start, end = _bounds(size, out)
    m = np.zeros((out, size), dtype=dtype)
    for i, (a, b) in enumerate(zip(start, end)):
        m[i, a:b] = 1.0 / (b - a)
    return m


def _separable(xp, a, mh, mw):
    """``mh @ a @ mw.T`` over the last two dimensions of (N, C, H, W) ``a``,
    as 2-D products: (N, C, Ho, Wo)."""
    n, c, h, w = a.shape
    ho, wo = mh.shape[0], mw.shape[0]
    t = xp.matmul(xp.reshape(a, (n * c * h, w)), xp.swapaxes(mw, 0, 1))  # (NCH, Wo)
    t = xp.contiguous_permute(xp.reshape(t, (n * c, h, wo)), (0, 2, 1))  # (NC, Wo, H)
    t = xp.matmul(xp.reshape(t, (n * c * wo, h)), xp.swapaxes(mh, 0, 1))  # (NCWo, Ho)
    return xp.contiguous_permute(xp.reshape(t, (n, c, wo, ho)), (0, 1, 3, 2))


class SeparableBackward(Node):
    """A linear map ``mh @ x @ mw.T`` over the last two dimensions (adaptive
    average pooling, bilinear and linear interpolation)."""

    __slots__ = ("mh", "mw", "shapes", "_op_name")

    def __init__(self, x, mh, mw, shapes, op_name="AdaptiveAvgPool2D"):
        super().__init__([x])
        self.save(x)
        self.mh, self.mw, self.shapes = mh, mw, shapes  # (input, 4-D output) shapes
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        self.saved_values(xp.graph)
        mh, mw = xp.constant(self.mh), xp.constant(self.mw)
        g4 = xp.reshape(grad, self.shapes[1])
        dx = _separable(xp, g4, xp.swapaxes(mh, 0, 1), xp.swapaxes(mw, 0, 1))
        return [xp.reshape(dx, self.shapes[0])]


def _output_size(name, input, output_size):
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size, output_size)
    output_size = tuple(output_size)
    if len(output_size) != 2:
        raise RuntimeError(f"{name}: output_size must be 2")
    h, w = input.shape[-2:]
    return (h if output_size[0] is None else int(output_size[0]),
            w if output_size[1] is None else int(output_size[1]))


def _check_2d(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    for d in range(input.ndim - 3 + 1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    if not input.is_floating_point():
        raise RuntimeError(f'"{name}" not implemented for \'{input.dtype}\'')


@tangent_rule()  # forward mode: from its backward
def adaptive_avg_pool2d(input, output_size):
    """Average pooling into ``output_size`` (an int, a pair, None keeps a size)."""
    _check_2d("adaptive_avg_pool2d", input)
    ho, wo = _output_size("adaptive_avg_pool2d", input, output_size)
    h, w = input.shape[-2:]
    return separable(input, _averaging(h, ho, input.dtype.numpy),
                     _averaging(w, wo, input.dtype.numpy), "AdaptiveAvgPool2D")


def separable(input, mh, mw, op_name):
    """``mh @ input @ mw.T`` over the last two dimensions of a 3-D or 4-D
    ``input`` (NumPy matrices, copied to its device), recorded as ``op_name``."""
    x4 = input._data if input.ndim == 4 else input._data.reshape((1,) + input._data.shape)
    backend = input._backend
    np_dtype = x4.dtype
    mh = backend.asarray(mh.astype(np_dtype))
    mw = backend.asarray(mw.astype(np_dtype))
    out4 = _separable(ops_for(x4), x4, mh, mw)
    out = out4 if input.ndim == 4 else out4.reshape(out4.shape[1:])
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = SeparableBackward(input, mh, mw, (input._data.shape, out4.shape), op_name)
    return Tensor._from_op(out, node, input.dtype, backend)


class AdaptiveMaxPool2DBackward(Node):
    __slots__ = ("x_shape",)
    op_name = "AdaptiveMaxPool2D"

    def __init__(self, x, key):
        super().__init__([x])
        self.saved = (SavedValue(key),)  # each maximum's flat position, freed with the graph
        self.x_shape = x._data.shape

    def backward(self, grad):
        xp = ops_for(grad)
        (key,) = self.saved_values()
        n, c, h, w = self.x_shape
        rows = xp.reshape(grad, (n * c, grad.shape[2] * grad.shape[3]))
        return [xp.reshape(xp.index_add((n * c, h * w), key, rows), self.x_shape)]


@tangent_rule()  # forward mode: from its backward
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling into ``output_size``; with ``return_indices`` also each
    maximum's position in its flattened H*W plane."""
    _check_2d("adaptive_max_pool2d", input)
    ho, wo = _output_size("adaptive_max_pool2d", input, output_size)
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    n, c, h, w = x.shape
    backend = x._backend
    xp = ops_for(x._data)
    hs, he = _bounds(h, ho)
    ws, we = _bounds(w, wo)
    kh = int((he - hs).max()) if ho else 0
    kw = int((we - ws).max()) if wo else 0
    best = argmax = None
    if ho and wo and n * c:
        argmax = backend.zeros((n, c, ho, wo), backend.pool_index_dtype(kh * kw))
        for a in range(kh):
            rows = np.minimum(hs + a, he - 1)
            for b in range(kw):
                cols = np.minimum(ws + b, we - 1)
                value = xp.gather(x._data, (slice(None), slice(None), rows[:, None],
                                            cols[None, :]))
                if best is None:
                    best = value
                else:
                    backend.max_pool_step(best, argmax, value, a * kw + b)
        offsets = backend.to_numpy(argmax).astype(np.int64)
        r = np.minimum(hs[:, None] + offsets // kw, he[:, None] - 1)
        col = np.minimum(ws[None, :] + offsets % kw, we[None, :] - 1)
        flat = (r * w + col).reshape(n * c, ho * wo)
    else:
        best = backend.zeros((n, c, ho, wo), x._data.dtype)
        flat = np.zeros((n * c, ho * wo), np.int64)
    key = (np.arange(n * c)[:, None], flat)
    node = None
    if grad_mode.is_grad_enabled() and x.requires_grad:
        node = AdaptiveMaxPool2DBackward(x, key)
    out = Tensor._from_op(best, node, x.dtype, backend)
    if not batched:
        out = out.squeeze(0)
    if not return_indices:
        return out
    indices = Tensor._wrap(backend.asarray(flat.reshape(n, c, ho, wo)), dtypes.int64, backend)
    return out, (indices if batched else indices.squeeze(0))


@tangent_rule()  # forward mode: from its backward
def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) into ``output_size``."""
    _check_1d("adaptive_avg_pool1d", input)
    (size,) = _single(output_size, "output_size")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


@tangent_rule()  # forward mode: from its backward
def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) into ``output_size``."""
    _check_1d("adaptive_max_pool1d", input)
    (size,) = _single(output_size, "output_size")
    result = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)
