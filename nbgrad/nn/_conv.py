"""Convolution, pooling and the linear layer as autograd primitives.

Convolution is im2col + one GEMM. The input is padded into channels-last
(NHWC) layout, ``sliding_window_view`` exposes every window without copying,
and one reshape gathers the windows into a ``(N*Ho*Wo, kh*kw*C)`` matrix whose
rows are contiguous runs of channels; NumPy's BLAS then does the product.
The backward pass is two more GEMMs (weight and input gradients) and a
col2im that accumulates the column gradient back into the padded input with
one strided add per kernel offset (``kh*kw`` adds, never one per element).
Pooling uses the same windows and the same per-offset accumulation.

Everything runs on the tensor's backend (``x._backend``): NumPy on the CPU,
device kernels on CUDA; the raw-array code is the same for both, the
products, bias gradients and max-pooling steps being backend primitives.
"""
import numpy as np

from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor


def _recording(*tensors):
    if not grad_mode.is_grad_enabled():
        return False
    for t in tensors:  # (a loop, not any(): this runs on every layer call)
        if t is not None and t.requires_grad:
            return True
    return False


# ------------------------------------------------------------------ linear
class LinearBackward(Node):
    """``out = x @ W.T + b`` over the last dimension of ``x``."""

    __slots__ = ("x_shape", "has_bias", "backend", "_op_name")
    # Every gradient is a new GEMM result or a new sum: a leaf (the weight, the
    # bias) takes it as its ``.grad`` without a copy.
    returns_fresh = True

    def __init__(self, x, weight, bias):
        super().__init__([x, weight] if bias is None else [x, weight, bias])
        self.save(weight if self.needs_grad(0) else None, x if self.needs_grad(1) else None)
        self.x_shape = x._data.shape
        self.has_bias = bias is not None
        self.backend = x._backend
        self._op_name = "Addmm" if bias is not None else "Mm"

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        weight, x = self.saved_values()
        matmul = self.backend.matmul
        g2 = grad if grad.ndim == 2 else grad.reshape(-1, grad.shape[-1])
        grads = [None, None]
        if weight is not None:
            grads[0] = matmul(g2, weight)
            if grad.ndim != 2:
                grads[0] = grads[0].reshape(self.x_shape)
        if x is not None:
            grads[1] = matmul(g2.T, x if x.ndim == 2 else x.reshape(-1, x.shape[-1]))
        if self.has_bias:
            grads.append(self.backend.column_sums(g2) if self.needs_grad(2) else None)
        return grads


def linear(x, weight, bias):
    """Raw ``x @ weight.T + bias`` with autograd; shapes and dtypes already
    checked (one dtype). One GEMM and the bias added in place."""
    xd = x._data
    backend = x._backend
    wd = weight._data
    x2 = xd if xd.ndim == 2 else xd.reshape(-1, xd.shape[-1])
    out = backend.matmul(x2, wd.T)
    if bias is not None:
        out += bias._data
    if xd.ndim != 2:
        out = out.reshape(xd.shape[:-1] + (wd.shape[0],))
    node = LinearBackward(x, weight, bias) if _recording(x, weight, bias) else None
    return Tensor._from_op(out, node, x.dtype, backend)


# ------------------------------------------------------------- convolution
def _out_size(size, pad_before, pad_after, kernel, stride, dilation):
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


def _pad_nhwc(x, pads, empty):
    """``x`` (N, C, H, W) as a channels-last array with a zero border."""
    n, c, h, w = x.shape
    top, bottom, left, right = pads
    out = empty((n, h + top + bottom, w + left + right, c), x.dtype)
    out[:, :top] = 0
    out[:, top + h:] = 0
    out[:, top:top + h, :left] = 0
    out[:, top:top + h, left + w:] = 0
    out[:, top:top + h, left:left + w, :] = x.transpose(0, 2, 3, 1)
    return out


def _windows_nhwc(backend, xp, kernel, stride, dilation, out_hw):
    """(N, Ho, Wo, kh, kw, C) strided view of the windows of padded NHWC ``xp``
    (the view NumPy's ``sliding_window_view`` would give, strided and dilated)."""
    sn, sh, sw, sc = xp.strides
    return backend.as_strided(xp, (xp.shape[0], *out_hw, *kernel, xp.shape[3]),
                              (sn, sh * stride[0], sw * stride[1], sh * dilation[0],
                               sw * dilation[1], sc))


def _offset_slices(i, j, stride, dilation, out_hw):
    """Where kernel offset (i, j) reads, for every output position."""
    hi = i * dilation[0]
    wj = j * dilation[1]
    return (slice(hi, hi + stride[0] * (out_hw[0] - 1) + 1, stride[0]),
            slice(wj, wj + stride[1] * (out_hw[1] - 1) + 1, stride[1]))


class ConvolutionBackward(Node):
    __slots__ = ("cols", "x_shape", "w_shape", "pads", "stride", "dilation", "has_bias", "backend")
    op_name = "Convolution"

    def __init__(self, x, weight, bias, cols, pads, stride, dilation):
        super().__init__([x, weight] if bias is None else [x, weight, bias])
        # Saved as PyTorch saves them: an in-place write to either is caught at backward.
        self.save(x, weight)
        self.cols = cols if self.needs_grad(1) else None  # the im2col matrix, for the weight grad
        self.x_shape = x._data.shape
        self.w_shape = weight._data.shape
        self.pads, self.stride, self.dilation = pads, stride, dilation
        self.has_bias = bias is not None
        self.backend = x._backend

    def release_saved(self):
        super().release_saved()
        self.cols = None

    def backward(self, grad):
        _, weight = self.saved_values()  # raises if input or weight was modified in place
        n, c, h, w = self.x_shape
        o, _, kh, kw = self.w_shape
        ho, wo = grad.shape[2], grad.shape[3]
        backend = self.backend
        empty = backend.empty
        g2 = empty((n, ho, wo, o), grad.dtype)
        g2[...] = grad.transpose(0, 2, 3, 1)
        g2 = g2.reshape(n * ho * wo, o)
        grads = [None, None]
        if self.needs_grad(0):
            # Column gradients, one (N*Ho*Wo, C) block per kernel offset (kh*kw GEMMs in one
            # batched matmul), so that col2im adds contiguous blocks.
            w_offsets = backend.ascontiguous(weight.transpose(2, 3, 0, 1)).reshape(kh * kw, o, c)
            dcols = backend.matmul(g2, w_offsets)  # (kh*kw, N*Ho*Wo, C)
            top, bottom, left, right = self.pads
            dxp = empty((n, h + top + bottom, w + left + right, c), grad.dtype)
            dxp.fill(0)
            for i in range(kh):  # col2im: one strided add per kernel offset
                for j in range(kw):
                    rows, cols = _offset_slices(i, j, self.stride, self.dilation, (ho, wo))
                    backend.add_into(dxp[:, rows, cols, :], dcols[i * kw + j].reshape(n, ho, wo, c))
            dx = empty((n, c, h, w), grad.dtype)
            dx[...] = dxp[:, top:top + h, left:left + w, :].transpose(0, 3, 1, 2)
            grads[0] = dx
        if self.needs_grad(1):
            dw2 = backend.matmul(g2.T, self.cols)
            grads[1] = backend.ascontiguous(dw2.reshape(o, kh, kw, c).transpose(0, 3, 1, 2))
        if self.has_bias:
            if not self.needs_grad(2):
                grads.append(None)
            else:
                grads.append(backend.column_sums(g2))
        return grads


def conv2d(x, weight, bias, stride, pads, dilation):
    """Raw 2-D convolution of a batched (N, C, H, W) input; arguments checked.
    Large temporaries come from the backend's caching allocator, so their
    pages are already mapped (a fresh multi-megabyte array costs a page fault
    per 4 KiB page on first write)."""
    xd, wd = x._data, weight._data
    n, c, h, w = xd.shape
    o, _, kh, kw = wd.shape
    top, bottom, left, right = pads
    ho = _out_size(h, top, bottom, kh, stride[0], dilation[0])
    wo = _out_size(w, left, right, kw, stride[1], dilation[1])
    backend = x._backend
    empty = backend.empty
    xp = _pad_nhwc(xd, pads, empty)
    cols = empty((n * ho * wo, kh * kw * c), xd.dtype)
    cols.reshape(n, ho, wo, kh, kw, c)[...] = _windows_nhwc(backend, xp, (kh, kw), stride, dilation,
                                                            (ho, wo))
    w2 = backend.ascontiguous(wd.transpose(0, 2, 3, 1)).reshape(o, kh * kw * c)
    out2 = backend.matmul(cols, w2.T)
    if bias is not None:
        out2 += bias._data
    out = empty((n, o, ho, wo), xd.dtype)
    out[...] = out2.reshape(n, ho, wo, o).transpose(0, 3, 1, 2)
    node = None
    if _recording(x, weight, bias):
        node = ConvolutionBackward(x, weight, bias, cols, pads, stride, dilation)
    return Tensor._from_op(out, node, x.dtype, x._backend)


# ----------------------------------------------------------------- pooling
def pool_out_size(size, kernel, stride, pad, dilation, ceil_mode):
    """PyTorch's pooling_output_shape."""
    numerator = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_pads(h, w, kernel, stride, padding, dilation, out_hw):
    """(top, bottom, left, right): symmetric padding, plus whatever ceil_mode's
    last window reaches past the right/bottom edge."""
    pads = []
    for size, k, s, p, d, o in zip((h, w), kernel, stride, padding, dilation, out_hw):
        needed = (o - 1) * s + d * (k - 1) + 1
        pads.append((p, max(0, needed - size - p)))
    return pads[0][0], pads[0][1], pads[1][0], pads[1][1]


def _pad_nchw(backend, x, pads, fill):
    top, bottom, left, right = pads
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    out = backend.full((n, c, h + top + bottom, w + left + right), fill, x.dtype)
    out[:, :, top:top + h, left:left + w] = x
    return out


class MaxPool2DWithIndicesBackward(Node):
    __slots__ = ("argmax", "x_shape", "pads", "kernel", "stride", "dilation", "backend")
    op_name = "MaxPool2DWithIndices"

    def __init__(self, x, argmax, pads, kernel, stride, dilation):
        super().__init__([x])
        self.save(x)  # PyTorch saves the input too: writing into it is caught
        self.argmax = argmax
        self.backend = x._backend
        self.x_shape = x._data.shape
        self.pads, self.kernel, self.stride, self.dilation = pads, kernel, stride, dilation

    def release_saved(self):
        super().release_saved()
        self.argmax = None

    def backward(self, grad):
        self.saved_values()
        n, c, h, w = self.x_shape
        top, bottom, left, right = self.pads
        out_hw = grad.shape[2:]
        backend = self.backend
        dxp = backend.zeros((n, c, h + top + bottom, w + left + right), grad.dtype)
        zero = grad.dtype.type(0)
        kh, kw = self.kernel
        for i in range(kh):  # one masked, strided add per kernel offset
            for j in range(kw):
                rows, cols = _offset_slices(i, j, self.stride, self.dilation, out_hw)
                backend.add_into(dxp[:, :, rows, cols],
                                 backend.where(self.argmax == i * kw + j, grad, zero))
        return [dxp[:, :, top:top + h, left:left + w]]


def max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, need_indices=False):
    """Raw max pooling of (N, C, H, W); returns (output, offset of each maximum in
    its window, or None when neither autograd nor the caller needs it). A loop
    over kernel offsets keeps the running maximum (NaN propagates); a later
    offset takes the index only if its value is larger, or NaN (PyTorch's rule):
    the backend's ``max_pool_step``, with offsets in its ``pool_index_dtype``."""
    xd = x._data
    backend = x._backend
    n, c, h, w = xd.shape
    out_hw = tuple(pool_out_size(size, k, s, p, d, ceil_mode)
                   for size, k, s, p, d in zip((h, w), kernel, stride, padding, dilation))
    pads = _pool_pads(h, w, kernel, stride, padding, dilation, out_hw)
    xp = _pad_nchw(backend, xd, pads, -np.inf)
    kh, kw = kernel
    recording = _recording(x)
    argmax = None
    if recording or need_indices:
        argmax = backend.zeros((n, c) + out_hw, backend.pool_index_dtype(kh * kw))
    best = None
    for i in range(kh):
        for j in range(kw):
            rows, cols = _offset_slices(i, j, stride, dilation, out_hw)
            value = xp[:, :, rows, cols]
            if best is None:
                best = value.copy()
                continue
            backend.max_pool_step(best, argmax, value, i * kw + j)
    node = None
    if recording:
        node = MaxPool2DWithIndicesBackward(x, argmax, pads, kernel, stride, dilation)
    return Tensor._from_op(best, node, x.dtype, x._backend), argmax


def flat_indices(backend, argmax, x_shape, pads, kernel, stride, dilation):
    """PyTorch's ``return_indices``: positions in each flattened H*W input plane
    (computed on the host; only ``return_indices=True`` asks for them)."""
    argmax = backend.to_numpy(argmax)
    _, _, h, w = x_shape
    kh, kw = kernel
    ho, wo = argmax.shape[2:]
    i, j = np.divmod(argmax.astype(np.int64), kw)
    rows = np.arange(ho)[:, None] * stride[0] + i * dilation[0] - pads[0]
    cols = np.arange(wo)[None, :] * stride[1] + j * dilation[1] - pads[2]
    return backend.asarray((rows * w + cols).astype(np.int64))


class AvgPool2DBackward(Node):
    __slots__ = ("x_shape", "pads", "kernel", "stride", "divisor", "backend")
    op_name = "AvgPool2D"

    def __init__(self, x, pads, kernel, stride, divisor):
        super().__init__([x])
        self.save(x)  # as PyTorch: a write into the input, or a second backward, is caught
        self.backend = x._backend
        self.x_shape = x._data.shape
        self.pads, self.kernel, self.stride, self.divisor = pads, kernel, stride, divisor

    def backward(self, grad):
        self.saved_values()
        n, c, h, w = self.x_shape
        top, bottom, left, right = self.pads
        g = grad / self.divisor
        dxp = self.backend.zeros((n, c, h + top + bottom, w + left + right), grad.dtype)
        for i in range(self.kernel[0]):
            for j in range(self.kernel[1]):
                rows, cols = _offset_slices(i, j, self.stride, (1, 1), grad.shape[2:])
                self.backend.add_into(dxp[:, :, rows, cols], g)
        return [dxp[:, :, top:top + h, left:left + w]]


def _avg_divisor(size, kernel, stride, pad, out, count_include_pad):
    """Per-output-position divisor along one axis (PyTorch's avg_pool2d rules)."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    pool = end - start
    clipped = np.minimum(end, size) - np.maximum(start, 0)
    return pool if count_include_pad else clipped


def avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    xd = x._data
    backend = x._backend
    n, c, h, w = xd.shape
    out_hw = tuple(pool_out_size(size, k, s, p, 1, ceil_mode)
                   for size, k, s, p in zip((h, w), kernel, stride, padding))
    pads = _pool_pads(h, w, kernel, stride, padding, (1, 1), out_hw)
    xp = _pad_nchw(backend, xd, pads, 0)
    out = backend.zeros((n, c) + out_hw, xd.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            rows, cols = _offset_slices(i, j, stride, (1, 1), out_hw)
            backend.add_into(out, xp[:, :, rows, cols])
    if divisor_override:
        divisor = np.full(out_hw, divisor_override, dtype=xd.dtype)
    else:
        dh = _avg_divisor(h, kernel[0], stride[0], padding[0], out_hw[0], count_include_pad)
        dw = _avg_divisor(w, kernel[1], stride[1], padding[1], out_hw[1], count_include_pad)
        divisor = np.outer(dh, dw).astype(xd.dtype)
    divisor = backend.asarray(divisor)  # (Ho, Wo): a copy to the device on CUDA
    out /= divisor
    node = AvgPool2DBackward(x, pads, kernel, stride, divisor) if _recording(x) else None
    return Tensor._from_op(out, node, x.dtype, x._backend)
