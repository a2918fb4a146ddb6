"""Convolution, pooling and the linear layer as autograd primitives.

Convolution is im2col + one GEMM. The windows of the input form a
``(N*Ho*Wo, kh*kw*C)`` matrix whose rows are contiguous runs of channels
(the CPU backend builds it in one compiled pass, ``conv_columns``; elsewhere
the input is padded into channels-last layout and a strided view of its
windows is copied out); NumPy's BLAS then does the product. The backward
pass is two more GEMMs (weight and input gradients, the latter in the
columns' own layout) and a col2im that adds the column gradient back where
it was read (one compiled pass on the CPU, ``conv_add_columns``; elsewhere
one strided add per kernel offset, never one per element). Pooling uses the
same windows and the same per-offset accumulation.

Everything runs on the tensor's backend (``x._backend``): NumPy on the CPU,
device kernels on CUDA; the raw-array code is the same for both, the
products, bias gradients and max-pooling steps being backend primitives.

Each backward formula is written once against ``ops_for(grad)``: on raw
arrays it is the plain backward above; on Tensors (``create_graph=True``) the
same formula runs as taped ops, the window and per-row steps as adjoint pairs
(``nbgrad.ops.nn_taped``: im2col/col2im, gather/scatter of windows), so the
gradients can be differentiated again, to any order.
"""
import numpy as np

from ..ops import arrays, nn_arrays
from ..ops.arrays import ops_for
from ..ops.nn_arrays import Windows, offset_slices as _offset_slices, pad_nchw as _pad_nchw
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
        xp = ops_for(grad)
        weight, x = self.saved_values(xp.graph)
        g2 = grad if grad.ndim == 2 else xp.reshape(grad, (-1, grad.shape[-1]))
        grads = [None, None]
        if weight is not None:
            grads[0] = xp.matmul(g2, weight)
            if grad.ndim != 2:
                grads[0] = xp.reshape(grads[0], self.x_shape)
        if x is not None:
            grads[1] = xp.matmul(g2.T, x if x.ndim == 2 else xp.reshape(x, (-1, x.shape[-1])))
        if self.has_bias:
            grads.append(xp.column_sums(g2) if self.needs_grad(2) else None)
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


def _image_blocks(backend, n, image_bytes):
    """The images of a batch of ``n`` as ``(start, stop)`` blocks whose im2col
    columns take at most the backend's ``conv_block_bytes`` (one block when it
    is 0, or the batch is empty): a block's columns are still in cache when
    its GEMM reads them."""
    per = backend.conv_block_bytes // max(image_bytes, 1) if backend.conv_block_bytes else n
    per = max(per, 1)
    return [(start, min(start + per, n)) for start in range(0, n, per)] or [(0, 0)]


class ConvolutionBackward(Node):
    __slots__ = ("cols", "windows", "w_shape", "has_bias", "backend", "blocks")
    op_name = "Convolution"
    returns_fresh = True  # new GEMM results, col2im's and column sums: no copy into .grad

    def __init__(self, x, weight, bias, cols, windows, blocks):
        super().__init__([x, weight] if bias is None else [x, weight, bias])
        # Saved as PyTorch saves them: an in-place write to either is caught at backward.
        self.save(x, weight)
        self.cols = cols if self.needs_grad(1) else None  # the im2col matrix, for the weight grad
        self.windows = windows
        self.w_shape = weight._data.shape
        self.has_bias = bias is not None
        self.backend = x._backend
        self.blocks = blocks  # the forward's blocks of images

    def release_saved(self):
        super().release_saved()
        self.cols = None

    def backward(self, grad):
        xp = ops_for(grad)
        x, weight = self.saved_values(xp.graph)  # raises if either was modified in place
        n, c = self.windows.x_shape[:2]
        o, _, kh, kw = self.w_shape
        ho, wo = self.windows.out_hw
        g2 = xp.reshape(xp.contiguous_permute(grad, (0, 2, 3, 1)), (n * ho * wo, o))
        grads = [None, None]
        if self.needs_grad(0):
            # The column gradient in the columns' own layout, one GEMM with the forward's
            # (O, kh*kw*C) weight matrix (kh*kw narrow GEMMs, one per offset, took 20% longer).
            w2 = xp.reshape(xp.contiguous_permute(weight, (0, 2, 3, 1)), (o, kh * kw * c))
            if xp.graph or len(self.blocks) == 1:
                grads[0] = xp.col2im(xp.matmul(g2, w2), self.windows)  # (N*Ho*Wo, kh*kw*C)
            else:  # raw: a block's column gradient added back while in cache
                grads[0] = self.backend.empty(self.windows.x_shape, g2.dtype)
                for start, stop in self.blocks:
                    nn_arrays.col2im(self.backend, self.backend.matmul(
                        g2[start * ho * wo:stop * ho * wo], w2),
                        _block_windows(self.windows, start, stop), out=grads[0][start:stop])
        if self.needs_grad(1):
            # The forward's columns; a graph needs them as a function of the input.
            cols = xp.im2col(x, self.windows) if xp.graph else self.cols
            dw2 = xp.matmul(g2.T, cols)  # (.T: an array's or, taped, a Tensor's)
            grads[1] = xp.ascontiguous(xp.permute(xp.reshape(dw2, (o, kh, kw, c)), (0, 3, 1, 2)))
        if self.has_bias:
            grads.append(xp.column_sums(g2) if self.needs_grad(2) else None)
        return grads


def _block_windows(windows, start, stop):
    """``windows`` over the images ``start:stop`` of its batch."""
    return windows._replace(x_shape=(stop - start, *windows.x_shape[1:]))


def conv2d(x, weight, bias, stride, pads, dilation):
    """Raw 2-D convolution of a batched (N, C, H, W) input; arguments checked.
    The images go through im2col and the GEMM a block at a time
    (``_image_blocks``). Large temporaries come from the backend's caching
    allocator, so their pages are already mapped (a fresh multi-megabyte array
    costs a page fault per 4 KiB page on first write)."""
    xd, wd = x._data, weight._data
    n, c, h, w = xd.shape
    o, _, kh, kw = wd.shape
    top, bottom, left, right = pads
    ho = _out_size(h, top, bottom, kh, stride[0], dilation[0])
    wo = _out_size(w, left, right, kw, stride[1], dilation[1])
    backend = x._backend
    windows = Windows(xd.shape, (kh, kw), stride, dilation, pads, (ho, wo))
    w2t = backend.ascontiguous(wd.transpose(0, 2, 3, 1)).reshape(o, kh * kw * c).T
    blocks = _image_blocks(backend, n, ho * wo * kh * kw * c * xd.itemsize)
    recording = _recording(x, weight, bias)
    # The weight's gradient reads every block's columns; otherwise one block's buffer serves all.
    keep = recording and weight.requires_grad
    cols = backend.empty(((n if keep else blocks[0][1]) * ho * wo, kh * kw * c), xd.dtype)
    out = backend.empty((n, o, ho, wo), xd.dtype)
    for start, stop in blocks:
        at = start if keep else 0  # the block's first row of columns, in images
        rows = cols[at * ho * wo:(at + stop - start) * ho * wo]
        nn_arrays.im2col(backend, xd[start:stop], _block_windows(windows, start, stop), out=rows)
        out2 = backend.matmul(rows, w2t)
        if backend.conv_output(out2, None if bias is None else bias._data,
                               out[start:stop]) is None:
            if bias is not None:
                out2 += bias._data
            out[start:stop] = out2.reshape(stop - start, ho, wo, o).transpose(0, 3, 1, 2)
    node = ConvolutionBackward(x, weight, bias, cols, windows, blocks) if recording else None
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


class MaxPool2DWithIndicesBackward(Node):
    __slots__ = ("argmax", "windows")
    op_name = "MaxPool2DWithIndices"

    def __init__(self, x, argmax, windows):
        super().__init__([x])
        self.save(x)  # PyTorch saves the input too: writing into it is caught
        self.argmax = argmax
        self.windows = windows

    def release_saved(self):
        super().release_saved()
        self.argmax = None

    def backward(self, grad):
        xp = ops_for(grad)
        (x,) = self.saved_values(xp.graph)
        # One masked, strided add per kernel offset; as taped ops, its gradient is the
        # gather of the picked elements (zeros for the input: the picks are constant).
        return [xp.scatter_windows(grad, self.windows, self.argmax, x)]


def max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, need_indices=False):
    """Raw max pooling of (N, C, H, W); returns (output, offset of each maximum in
    its window, in the backend's ``pool_index_dtype``; None when neither
    autograd nor the caller needs it and the backend has no one-pass form).
    A later offset takes the index only if its value is larger, or NaN
    (PyTorch's rule): in one pass (the backend's ``max_pool2d_windows``), or
    by a loop over kernel offsets keeping the running maximum (its
    ``max_pool_step``)."""
    xd = x._data
    backend = x._backend
    n, c, h, w = xd.shape
    out_hw = tuple(pool_out_size(size, k, s, p, d, ceil_mode)
                   for size, k, s, p, d in zip((h, w), kernel, stride, padding, dilation))
    pads = _pool_pads(h, w, kernel, stride, padding, dilation, out_hw)
    kh, kw = kernel
    recording = _recording(x)
    index_dtype = backend.pool_index_dtype(kh * kw)
    fused = backend.max_pool2d_windows(xd, kernel, stride, dilation, pads, out_hw, index_dtype)
    if fused is not None:  # the backend's one-pass form
        best, argmax = fused
    else:
        low = -np.inf if xd.dtype.kind == "f" else np.iinfo(xd.dtype).min
        xp = _pad_nchw(backend, xd, pads, low)
        argmax = backend.zeros((n, c) + out_hw, index_dtype) if recording or need_indices \
            else None
        best = None
        for i in range(kh):
            for j in range(kw):
                rows, cols = _offset_slices(i, j, stride, dilation, out_hw)
                value = xp[:, :, rows, cols]
                if best is None:
                    best = value.copy()
                    continue
                backend.max_pool_step(best, argmax, value, i * kw + j)
    windows = Windows(xd.shape, kernel, stride, dilation, pads, out_hw)
    if argmax is not None:
        argmax = arrays.first_in_bounds(argmax, windows)
    node = MaxPool2DWithIndicesBackward(x, argmax, windows) if recording else None
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
    __slots__ = ("windows", "divisor")
    op_name = "AvgPool2D"

    def __init__(self, x, windows, divisor):
        super().__init__([x])
        self.save(x)  # as PyTorch: a write into the input, or a second backward, is caught
        self.windows, self.divisor = windows, divisor

    def backward(self, grad):
        xp = ops_for(grad)
        (x,) = self.saved_values(xp.graph)
        # One strided add per kernel offset; as taped ops, its gradient is the window sum
        # divided again (avg_pool2d of the gradient's gradient, as PyTorch's; zeros for x).
        g = grad / xp.constant(self.divisor)
        return [xp.scatter_windows(g, self.windows, None, x)]


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
    windows = Windows(xd.shape, kernel, stride, (1, 1), pads, out_hw)
    out = ops_for(xd).gather_windows(xd, windows)  # the window sums
    if divisor_override:
        divisor = np.full(out_hw, divisor_override, dtype=xd.dtype)
    else:
        dh = _avg_divisor(h, kernel[0], stride[0], padding[0], out_hw[0], count_include_pad)
        dw = _avg_divisor(w, kernel[1], stride[1], padding[1], out_hw[1], count_include_pad)
        divisor = np.outer(dh, dw).astype(xd.dtype)
    divisor = backend.asarray(divisor)  # (Ho, Wo): a copy to the device on CUDA
    out = arrays.divide_windows(out, divisor)
    node = AvgPool2DBackward(x, windows, divisor) if _recording(x) else None
    return Tensor._from_op(out, node, x.dtype, x._backend)
