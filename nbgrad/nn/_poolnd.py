"""1-D and adaptive pooling: ``max_pool1d``, ``avg_pool1d``,
``adaptive_avg_pool1d/2d/3d``, ``adaptive_max_pool1d/2d/3d``.

1-D pools are the 2-D ones over an (N, C, 1, L) view, as PyTorch's. An
adaptive average pool is linear and separable: a product with a constant
(out, size) averaging matrix per spatial dimension, its gradient the products
with their transposes (written once against ``ops_for``, so it can be differentiated
again); where a product is not finite, its windows are summed one by one
(``_map_rows``: a NaN or an inf stays in its windows). An adaptive max pool keeps a running maximum over the offsets of its
largest window (offsets past a smaller window's end re-read its last
element), then scatters the gradient to each maximum's flat position.
"""
import numbers

import numpy as np

from .. import dtypes
from ..backends import backend_of
from ..ops.arrays import ops_for, run
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
    if not (return_indices or input.is_floating_point()):  # (with indices: max_pool2d's kernel)
        raise NotImplementedError(f'"max_pool1d_impl" not implemented for '
                                  f"'{dtypes.TYPE_NAMES[input.dtype.name]}'")
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


def _map_rows(xp, rows, m, taps):
    """``rows @ m.T`` for (R, size) ``rows`` and an (out, size) map ``m`` whose
    outputs read only their ``taps`` (a host boolean (out, size): an averaging
    window, the two neighbours of a linear interpolation, zero weights
    included): one product. Where it is not finite, a NaN or an inf in the
    rows met m's other zeros (0 * inf is NaN) and spread to every output; each
    output is then made from its taps alone, as PyTorch's kernels read them.
    (A backward that builds a graph keeps the product.)"""
    out = xp.matmul(rows, xp.swapaxes(m, 0, 1))
    if xp.graph:
        return out
    backend = backend_of(out)
    # One pass: the sum is finite when every output is (an overflowing sum of finite
    # outputs only takes the exact path, which gives them again).
    if np.isfinite(backend.to_numpy(backend.reduce_sum(out))):
        return out
    weights = backend.to_numpy(m)
    out = backend.zeros(out.shape, out.dtype)
    for i, row in enumerate(taps):
        for j in np.flatnonzero(row):
            backend.add_into(out[:, i], run("mul", rows[:, j],
                                            backend.full((), weights[i, j], rows.dtype)))
    return out


def _separable(xp, a, mh, mw, taps):
    """``mh @ a @ mw.T`` over the last two dimensions of (N, C, H, W) ``a``,
    as 2-D products: (N, C, Ho, Wo); ``taps``: the maps' (see ``_map_rows``)."""
    n, c, h, w = a.shape
    ho, wo = mh.shape[0], mw.shape[0]
    t = _map_rows(xp, xp.reshape(a, (n * c * h, w)), mw, taps[1])  # (NCH, Wo)
    t = xp.contiguous_permute(xp.reshape(t, (n * c, h, wo)), (0, 2, 1))  # (NC, Wo, H)
    t = _map_rows(xp, xp.reshape(t, (n * c * wo, h)), mh, taps[0])  # (NCWo, Ho)
    return xp.contiguous_permute(xp.reshape(t, (n, c, wo, ho)), (0, 1, 3, 2))


class SeparableBackward(Node):
    """A linear map ``mh @ x @ mw.T`` over the last two dimensions (adaptive
    average pooling, bilinear and linear interpolation)."""

    __slots__ = ("mh", "mw", "taps", "shapes", "_op_name")

    def __init__(self, x, mh, mw, taps, shapes, op_name="AdaptiveAvgPool2D"):
        super().__init__([x])
        self.save(x)
        self.mh, self.mw, self.shapes = mh, mw, shapes  # (input, 4-D output) shapes
        self.taps = tuple(t.T for t in taps)  # the transposed maps' (the gradient's)
        self._op_name = op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        self.saved_values(xp.graph)
        mh, mw = xp.constant(self.mh), xp.constant(self.mw)
        g4 = xp.reshape(grad, self.shapes[1])
        dx = _separable(xp, g4, xp.swapaxes(mh, 0, 1), xp.swapaxes(mw, 0, 1), self.taps)
        return [xp.reshape(dx, self.shapes[0])]


@tangent_rule()  # forward mode: from its backward
def adaptive_avg_pool2d(input, output_size):
    """Average pooling into ``output_size`` (an int, a pair, None keeps a size)."""
    _check_adaptive("adaptive_avg_pool2d", input, 2)
    ho, wo = _output_sizes("adaptive_avg_pool2d", input, output_size, 2)
    h, w = input.shape[-2:]
    return separable(input, _averaging(h, ho, input.dtype.numpy),
                     _averaging(w, wo, input.dtype.numpy), "AdaptiveAvgPool2D")


def separable(input, mh, mw, op_name, taps=None):
    """``mh @ input @ mw.T`` over the last two dimensions of a 3-D or 4-D
    ``input`` (NumPy matrices, copied to its device), recorded as ``op_name``;
    ``taps``: what each output reads (see ``_map_rows``; None: the nonzeros)."""
    x4 = input._data if input.ndim == 4 else input._data.reshape((1,) + input._data.shape)
    backend = input._backend
    np_dtype = x4.dtype
    taps = (mh != 0, mw != 0) if taps is None else taps
    mh = backend.asarray(mh.astype(np_dtype))
    mw = backend.asarray(mw.astype(np_dtype))
    out4 = _separable(ops_for(x4), x4, mh, mw, taps)
    out = out4 if input.ndim == 4 else out4.reshape(out4.shape[1:])
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = SeparableBackward(input, mh, mw, taps, (input._data.shape, out4.shape), op_name)
    return Tensor._from_op(out, node, input.dtype, backend)


class AdaptiveMaxPoolNDBackward(Node):
    """The gradient scattered to each maximum's flat position in its plane."""

    __slots__ = ("x_shape", "planes", "_op_name")

    def __init__(self, x, key, planes, nd):
        super().__init__([x])
        self.saved = (SavedValue(key),)  # each maximum's flat position, freed with the graph
        self.x_shape, self.planes = x._data.shape, planes  # planes: (N*C, D*H*W)
        self._op_name = f"AdaptiveMaxPool{nd}D"

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        (key,) = self.saved_values()
        rows = xp.reshape(grad, (self.planes[0], key[1].shape[1]))
        return [xp.reshape(xp.index_add(self.planes, key, rows), self.x_shape)]


def _check_adaptive(name, input, nd):
    """PyTorch's checks of an adaptive pool's input, with its texts."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        colon = ":" if "max" in name else ""
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{colon} "
                           f"{list(input.shape)}")
    for d in range(input.ndim - nd, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    if not input.is_floating_point():
        kernel_name = name + ("_cpu" if nd == 3 else "")
        raise NotImplementedError(f'"{kernel_name}" not implemented for '
                                  f"'{dtypes.TYPE_NAMES[input.dtype.name]}'")


def _output_sizes(name, input, output_size, nd):
    """``output_size`` (an int, or a tuple whose None entries keep a size) as ints."""
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) != nd:
        if "max" in name:
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
        raise RuntimeError(f"{name}: output_size must be {nd}")
    return tuple(size if o is None else int(o)
                 for size, o in zip(input.shape[-nd:], output_size))


def _axis(values, d, nd):
    """``values`` along spatial axis ``d`` of ``nd``, broadcastable against the others."""
    shape = [1] * nd
    shape[d] = -1
    return np.asarray(values).reshape(shape)


def adaptive_max_nd(name, input, output_size, return_indices, nd):
    """Max pooling of the last ``nd`` dimensions of ``input`` into ``output_size``:
    a running maximum over the offsets of the largest window (offsets past a
    smaller window's end re-read its last element)."""
    _check_adaptive(name, input, nd)
    out_size = _output_sizes(name, input, output_size, nd)
    backend = input._backend
    x = input._data if input.ndim == nd + 2 else input._data.reshape((1,) + input._data.shape)
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    xp = ops_for(x)
    bounds = [_bounds(size, o) for size, o in zip(spatial, out_size)]
    kernel = tuple(int((end - start).max()) if o else 0
                   for (start, end), o in zip(bounds, out_size))
    planes = (n * c, int(np.prod(spatial)))
    if all(out_size) and n * c:
        # Every offset's flat position in the plane, (offsets, outputs): one gather
        # of all the windows, then a running maximum over its offsets.
        where = np.zeros((), np.int64)
        for d, ((start, end), size) in enumerate(zip(bounds, spatial)):
            coord = np.minimum(start[:, None] + np.arange(kernel[d]), end[:, None] - 1)  # (o, k)
            shape = [1] * (2 * nd)
            shape[d], shape[nd + d] = out_size[d], kernel[d]
            where = where * size + coord.reshape(shape)
        where = where.reshape(int(np.prod(out_size)), -1).T  # (offsets, outputs)
        windows = xp.gather(x.reshape(planes), (slice(None), where))  # (N*C, offsets, outputs)
        argmax = backend.zeros((n * c, where.shape[1]), backend.pool_index_dtype(where.shape[0]))
        best = windows[:, 0].copy()
        for k in range(1, where.shape[0]):
            backend.max_pool_step(best, argmax, windows[:, k], k)
        offsets = backend.to_numpy(argmax).astype(np.int64)
        flat = where[offsets, np.arange(where.shape[1])]  # (N*C, outputs)
    else:
        best = backend.zeros((n, c) + out_size, x.dtype)
        flat = np.zeros((n * c, int(np.prod(out_size))), np.int64)
    key = (np.arange(n * c)[:, None], flat)
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = AdaptiveMaxPoolNDBackward(input, key, planes, nd)
    shape = tuple(input.shape[:-nd]) + out_size
    out = Tensor._from_op(best.reshape(shape), node, input.dtype, backend)
    if not return_indices:
        return out
    return out, Tensor._wrap(backend.asarray(flat.reshape(shape)), dtypes.int64, backend)


@tangent_rule()  # forward mode: from its backward
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling into ``output_size``; with ``return_indices`` also each
    maximum's position in its flattened H*W plane."""
    return adaptive_max_nd("adaptive_max_pool2d", input, output_size, return_indices, 2)


@tangent_rule()  # forward mode: from its backward
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) into ``output_size``
    (an int, or a triple whose None entries keep a size); with
    ``return_indices`` also each maximum's position in its flattened D*H*W plane."""
    return adaptive_max_nd("adaptive_max_pool3d", input, output_size, return_indices, 3)


def _along(xp, a, mats, taps):
    """Each matrix of ``mats`` applied along its spatial dimension of
    (N, C, *spatial) ``a`` (the last ``len(mats)``), as 2-D products reading
    their ``taps`` (see ``_map_rows``)."""
    nd = len(mats)
    for i, (m, reads) in enumerate(zip(mats, taps)):
        axis = a.ndim - nd + i
        perm = tuple(d for d in range(a.ndim) if d != axis) + (axis,)
        t = xp.contiguous_permute(a, perm)
        lead = tuple(t.shape[:-1])
        t = _map_rows(xp, xp.reshape(t, (int(np.prod(lead)), t.shape[-1])), m, reads)
        a = xp.contiguous_permute(xp.reshape(t, lead + (m.shape[0],)),
                                  tuple(int(p) for p in np.argsort(perm)))
    return a


class AlongBackward(Node):
    """A linear map applied along each spatial dimension (adaptive average pooling)."""

    __slots__ = ("mats", "taps", "shapes", "_op_name")

    def __init__(self, x, mats, taps, shapes, op_name):
        super().__init__([x])
        self.save(x)
        self.mats, self.shapes, self._op_name = mats, shapes, op_name  # (input, batched output)
        self.taps = [t.T for t in taps]  # the transposed maps' (the gradient's)

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        self.saved_values(xp.graph)
        mats = [xp.swapaxes(xp.constant(m), 0, 1) for m in self.mats]
        dx = _along(xp, xp.reshape(grad, self.shapes[1]), mats, self.taps)
        return [xp.reshape(dx, self.shapes[0])]


@tangent_rule()  # forward mode: from its backward
def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) into ``output_size``
    (an int, or a triple whose None entries keep a size): linear and separable,
    one averaging product per dimension."""
    _check_adaptive("adaptive_avg_pool3d", input, 3)
    out_size = _output_sizes("adaptive_avg_pool3d", input, output_size, 3)
    backend = input._backend
    x = input._data if input.ndim == 5 else input._data.reshape((1,) + input._data.shape)
    host = [_averaging(size, o, x.dtype) for size, o in zip(x.shape[2:], out_size)]
    mats, taps = [backend.asarray(m) for m in host], [m != 0 for m in host]
    out = _along(ops_for(x), x, mats, taps)
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = AlongBackward(input, mats, taps, (input._data.shape, out.shape),
                             "AdaptiveAvgPool3D")
    return Tensor._from_op(out.reshape(tuple(input.shape[:-3]) + out_size), node, input.dtype,
                           backend)


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

