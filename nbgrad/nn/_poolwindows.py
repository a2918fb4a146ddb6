"""Max and average pooling over windows of any number of spatial dimensions:
``max_pool3d`` and ``avg_pool3d`` (re-exported by ``nbgrad.nn.functional``).

One code path for any number of spatial dimensions (the 2-D pools of ``_conv``
are the same algorithm): the input padded once, one strided read per kernel
offset (``Windows.offsets``), the backend's ``max_pool_step`` keeping the
running maximum and its offset (NaN propagates; a later offset wins only when
larger or NaN, PyTorch's rule), and the backward one strided (masked) add per
offset (``scatter_windows``), written once against ``ops_for`` so that it can
be differentiated again.
"""
import numbers

import numpy as np

from .. import dtypes
from ..ops import arrays
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..ops.nn_arrays import Windows, pad_nchw
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor


def _ntuple(value, nd):
    if isinstance(value, numbers.Integral):
        return (int(value),) * nd
    value = tuple(int(v) for v in value)
    return value * nd if len(value) == 1 else value


def _pool_nd_args(name, input, kernel_size, stride, padding, dilation, nd,
                  divisor_override=None):
    """PyTorch's argument checks for ``max_pool3d``/``avg_pool3d``, in its order;
    returns (kernel, stride, padding, dilation)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    is_max = name.startswith("max")
    words = {3: "three"}[nd]

    def length_ok(value, allow_empty=False):
        n = 1 if isinstance(value, numbers.Integral) else len(tuple(value))
        return n in (1, nd) or (allow_empty and n == 0)

    if not length_ok(kernel_size):
        raise RuntimeError(f"{name}: kernel_size must {'either ' if is_max else ''}be a single "
                           f"int, or a tuple of {words} ints")
    if stride is not None and not length_ok(stride, True):
        raise RuntimeError(f"{name}: stride must {'either ' if is_max else ''}be omitted, a "
                           f"single int, or a tuple of {words} ints")
    if not length_ok(padding):
        raise RuntimeError(f"{name}: padding must {'either ' if is_max else ''}be a single int, "
                           f"or a tuple of {words} ints")
    if not length_ok(dilation):
        raise RuntimeError(f"{name}: dilation must be either a single int, or a tuple of "
                           f"{words} ints")
    kernel = _ntuple(kernel_size, nd)
    empty = stride is None or (not isinstance(stride, numbers.Integral) and len(stride) == 0)
    stride = kernel if empty else _ntuple(stride, nd)
    padding, dilation = _ntuple(padding, nd), _ntuple(dilation, nd)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    for k, s, p, d in zip(kernel, stride, padding, dilation):
        # pooling_output_shape's checks, per dimension (C++ division truncates toward zero)
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > int(((k - 1) * d + 1) / 2):
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    letters = "THW"
    if min(kernel) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got " + " ".join(
            f"k{a}: {k}" for a, k in zip(letters, kernel)))
    if min(stride) <= 0:
        raise RuntimeError("stride should be greater than zero, but got " + " ".join(
            f"d{a}: {s}" for a, s in zip(letters, stride)))
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got " + " ".join(
            f"dilation{a}: {d}" for a, d in zip(letters, dilation)))
    for i, size in enumerate(input.shape):
        if size == 0 and not (input.ndim == nd + 2 and i == 0):  # only the batch may be empty
            where = name if not is_max else f"{name}_with_indices_out_cpu_template"
            raise RuntimeError(f"{where}(): Expected input's non-batch dimensions to have "
                               f"positive length, but input has a shape of {list(input.shape)} "
                               "and non-batch dimension 0 has length zero!")
    # PyTorch's kernels: max pooling takes every dtype but bool; its 3-D average
    # pooling float32, float64 and int64 (averaged with truncating division).
    if is_max and input.dtype is dtypes.bool_:
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')
    if not is_max and input.dtype not in (dtypes.float32, dtypes.float64, dtypes.int64):
        raise NotImplementedError(f'"{name}_out_frame" not implemented for '
                                  f"'{dtypes.TYPE_NAMES[input.dtype.name]}'")
    return kernel, stride, padding, dilation


def _pool_out_size(size, kernel, stride, pad, dilation, ceil_mode):
    """PyTorch's pooling_output_shape."""
    numerator = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _geometry(name, input, kernel, stride, padding, dilation, ceil_mode, nd):
    """The output size and the Windows of a pool over ``input`` seen batched,
    after PyTorch's size checks."""
    spatial = tuple(input.shape[-nd:])
    out = tuple(_pool_out_size(*a, ceil_mode)
                for a in zip(spatial, kernel, stride, padding, dilation))
    channels = input.shape[-nd - 1]
    if name.startswith("avg") and any(s < k for s, k in zip(spatial, kernel)):
        raise RuntimeError("input image (" + " ".join(f"{a}: {s}" for a, s in zip(
            "THW", spatial)) + ") smaller than kernel size (" + " ".join(
            f"k{a}: {k}" for a, k in zip("THW", kernel)) + ")")
    if min(out) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (channels,) + spatial))}). "
                           f"Calculated output size: ({'x'.join(map(str, (channels,) + out))})."
                           " Output size is too small")
    pads = []
    for size, k, s, p, d, o in zip(spatial, kernel, stride, padding, dilation, out):
        # symmetric padding, plus whatever ceil_mode's last window reaches past the end
        pads += [p, max(0, (o - 1) * s + d * (k - 1) + 1 - size - p)]
    batched = input.ndim == nd + 2
    x_shape = tuple(input.shape) if batched else (1,) + tuple(input.shape)
    return Windows(x_shape, kernel, stride, dilation, tuple(pads), out)


def _batched(input, windows):
    data = input._data
    return data if data.shape == windows.x_shape else data.reshape(windows.x_shape)


def _unbatch(xp, a, shape):
    """A batched (1, ...) result back in the shape of an unbatched input."""
    return a if tuple(a.shape) == tuple(shape) else xp.squeeze_dims(a, (0,))


class _PoolNDBackward(Node):
    """Max pooling (with ``argmax``, each window's kernel offset) or average
    pooling (``divisor``) of any number of spatial dimensions."""

    __slots__ = ("argmax", "divisor", "windows", "_op_name")

    def __init__(self, x, windows, argmax=None, divisor=None):
        super().__init__([x])
        self.save(x)  # as PyTorch: a write into the input, or a second backward, is caught
        self.windows, self.argmax, self.divisor = windows, argmax, divisor
        nd = len(windows.kernel)
        self._op_name = f"AvgPool{nd}D" if argmax is None else f"MaxPool{nd}DWithIndices"

    @property
    def op_name(self):
        return self._op_name

    def release_saved(self):
        super().release_saved()
        self.argmax = None

    def backward(self, grad):
        xp = ops_for(grad)
        (x,) = self.saved_values(xp.graph)
        if tuple(grad.shape) != (self.windows.x_shape[:2] + self.windows.out_hw):
            grad = xp.reshape(grad, self.windows.x_shape[:2] + self.windows.out_hw)
        if self.argmax is None:
            grad = grad / xp.constant(self.divisor)
        # One (masked) strided add per kernel offset; taped, its gradient is the
        # gather of the windows (zeros for the input, as PyTorch's).
        dx = xp.scatter_windows(grad, self.windows, self.argmax, x)
        return [_unbatch(xp, dx, x.shape)]


def max_pool_nd(name, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                nd):
    """Max pooling over the last ``nd`` dimensions of an (N, C, *spatial) or
    (C, *spatial) ``input``, recorded as ``MaxPool{nd}DWithIndices``."""
    kernel, stride, padding, dilation = _pool_nd_args(name, input, kernel_size, stride, padding,
                                                      dilation, nd)
    windows = _geometry(name, input, kernel, stride, padding, dilation, ceil_mode, nd)
    backend = input._backend
    x = _batched(input, windows)
    fill = -np.inf if input.is_floating_point() else np.iinfo(x.dtype).min
    padded = pad_nchw(backend, x, windows.pads, fill)
    recording = grad_mode.is_grad_enabled() and input.requires_grad
    argmax = None
    if recording or return_indices:
        argmax = backend.zeros(x.shape[:2] + windows.out_hw,
                               backend.pool_index_dtype(int(np.prod(kernel))))
    best = None
    every = (slice(None), slice(None))
    for k, *where in windows.offsets():
        value = padded[every + tuple(where)]
        if best is None:
            best = value.copy()
        else:
            backend.max_pool_step(best, argmax, value, k)
    if argmax is not None:
        argmax = arrays.first_in_bounds(argmax, windows)
    if input.ndim == nd + 1:
        best = best.reshape(best.shape[1:])
    node = _PoolNDBackward(input, windows, argmax=argmax) if recording else None
    out = Tensor._from_op(best, node, input.dtype, backend)
    if not return_indices:
        return out
    flat = _flat_indices(backend.to_numpy(argmax), windows)
    if input.ndim == nd + 1:
        flat = flat[0]
    return out, Tensor._wrap(backend.asarray(flat), dtypes.int64, backend)


def _flat_indices(argmax, windows):
    """PyTorch's ``return_indices``: each maximum's position in its flattened
    input plane (on the host; only ``return_indices=True`` asks for them)."""
    offsets = np.unravel_index(argmax.astype(np.int64), windows.kernel)
    nd = len(windows.kernel)
    flat = np.zeros(argmax.shape, np.int64)
    for d, size in enumerate(windows.x_shape[2:]):
        shape = [1] * nd
        shape[d] = windows.out_hw[d]
        start = np.arange(windows.out_hw[d]).reshape(shape) * windows.stride[d]
        flat = flat * size + start + offsets[d] * windows.dilation[d] - windows.pads[2 * d]
    return flat


def _avg_divisor(size, kernel, stride, pad, out, count_include_pad):
    """Per-output-position divisor along one axis (PyTorch's average pooling)."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    return end - start if count_include_pad else np.minimum(end, size) - np.maximum(start, 0)


def avg_pool_nd(name, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, nd):
    """Average pooling over the last ``nd`` dimensions of an (N, C, *spatial)
    or (C, *spatial) ``input``, recorded as ``AvgPool{nd}D``."""
    kernel, stride, padding, _ = _pool_nd_args(name, input, kernel_size, stride, padding, 1, nd,
                                               divisor_override)
    windows = _geometry(name, input, kernel, stride, padding, (1,) * nd, ceil_mode, nd)
    backend = input._backend
    x = _batched(input, windows)
    out = ops_for(x).gather_windows(x, windows)  # the window sums
    np_dtype = x.dtype
    if divisor_override:
        divisor = np.full(windows.out_hw, divisor_override, dtype=np_dtype)
    else:
        divisor = np.ones((), np_dtype)
        for a in zip(windows.x_shape[2:], kernel, stride, padding, windows.out_hw):
            divisor = np.multiply.outer(divisor, _avg_divisor(*a, count_include_pad))
        divisor = divisor.astype(np_dtype)
    divisor = backend.asarray(divisor)  # (*out): a copy to the device on CUDA
    out = arrays.divide_windows(out, divisor)
    if input.ndim == nd + 1:
        out = out.reshape(out.shape[1:])
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = _PoolNDBackward(input, windows, divisor=divisor)
    return Tensor._from_op(out, node, input.dtype, backend)


@tangent_rule()  # forward mode: from its backward
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max pooling over (N, C, D, H, W) or (C, D, H, W); with ``return_indices``
    also each maximum's position in its flattened D*H*W input plane."""
    return max_pool_nd("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, 3)


@tangent_rule()  # forward mode: from its backward
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Average pooling over (N, C, D, H, W) or (C, D, H, W)."""
    return avg_pool_nd("avg_pool3d", input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override, 3)
