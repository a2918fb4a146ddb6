"""A convolution's im2col, col2im and output on the CPU, each one compiled pass.

The generic forms (``nbgrad.ops.nn_arrays``) pad the input into a channels-last
buffer, then copy the windows out of it (two passes), and accumulate the column
gradient into a zero-filled padded buffer, one strided add per kernel offset,
before a transposing copy back (three). Here:

- ``conv_columns``: the (N*Ho*Wo, kh*kw*C) columns straight from the NCHW
  input, zeros where a window reads the padding.
- ``conv_add_columns``: per image, the column gradient added into a small
  channels-last accumulator (one image's, it stays in cache), then written to
  the NCHW result. Contributions to an element are added in the generic form's
  order (kernel offsets in row-major order, from +0), so the result is the same
  to the bit.
- ``conv_output``: the GEMM's (N*Ho*Wo, O) rows plus the bias, written
  channels-first (N, O, Ho, Wo) in one pass (NumPy's broadcast add and
  transposing copy took twice as long).

Each runs in parallel over images above the elementwise kernels' threshold;
im2col and col2im keep one buffer per chunk of images (a thread's), not one
per image (allocating and zeroing it took ~40% of im2col at the demo's sizes).
"""
import numba
import numpy as np

from ..kernel_source import lazy_module
from .allocator import pool
from .elementwise import PARALLEL_THRESHOLD

# Columns of a block of images that stay in a core's L2 cache (2 MiB here) while
# the block's GEMM reads them (see nbgrad.nn._conv).
BLOCK_BYTES = 1 << 19

_SOURCE = '''import numba
import numpy as np

_FLAGS = dict(cache=True, nogil=True, parallel=True, error_model="numpy")


@numba.njit(**_FLAGS)
def columns(x, kh, kw, sh, sw, dh, dw, top, left, ho, wo, hp, wp, cols, chunks):
    n, c, h, w = x.shape
    h = min(h, hp - top)  # a negative bottom/right pad crops (rows no window reads)
    w = min(w, wp - left)
    span = kw * c
    for k in numba.prange(chunks):
        # One image at a time, padded and channels-last, in cache: each window row is
        # then kw runs of c contiguous elements (one run of kw*c without dilation).
        # A buffer per chunk of images: each image rewrites its interior, the
        # border stays zero.
        padded = np.zeros((hp, wp * c), x.dtype)
        for b in range(k * n // chunks, (k + 1) * n // chunks):
            for ch in range(c):
                for ih in range(h):
                    target = padded[ih + top]
                    for iw in range(w):
                        target[(iw + left) * c + ch] = x[b, ch, ih, iw]
            for oh in range(ho):
                for ow in range(wo):
                    row = cols[(b * ho + oh) * wo + ow]
                    for i in range(kh):
                        src = padded[oh * sh + i * dh]
                        start = ow * sw * c
                        if dw == 1:
                            # Views and a range index: LLVM vectorizes the copy (a slice
                            # assignment checked for overlap, a computed index for wraparound).
                            dst = row[i * span:(i + 1) * span]
                            run = src[start:start + span]
                            for t in range(span):
                                dst[t] = run[t]
                        else:
                            for j in range(kw):
                                dst = row[i * span + j * c:i * span + (j + 1) * c]
                                run = src[start + j * dw * c:start + (j * dw + 1) * c]
                                for ch in range(c):
                                    dst[ch] = run[ch]


@numba.njit(**_FLAGS)
def add_columns(cols, kh, kw, sh, sw, dh, dw, top, left, ho, wo, dx, chunks):
    n, c, h, w = dx.shape
    for k in numba.prange(chunks):
        acc = np.empty((h, w, c), dx.dtype)  # a chunk's images' accumulator, in turn
        for b in range(k * n // chunks, (k + 1) * n // chunks):
            acc[:] = 0
            for i in range(kh):  # kernel offsets outermost: the generic form's order of adds
                for j in range(kw):
                    base = (i * kw + j) * c
                    for oh in range(ho):
                        ih = oh * sh + i * dh - top
                        if ih < 0 or ih >= h:
                            continue
                        for ow in range(wo):
                            iw = ow * sw + j * dw - left
                            if iw < 0 or iw >= w:
                                continue
                            seg = cols[(b * ho + oh) * wo + ow, base:base + c]
                            target = acc[ih, iw]
                            for ch in range(c):
                                target[ch] += seg[ch]
            for ch in range(c):
                for ih in range(h):
                    for iw in range(w):
                        dx[b, ch, ih, iw] = acc[ih, iw, ch]


@numba.njit(**_FLAGS)
def channels_first(rows, bias, out):
    n, o, p = out.shape
    for b in numba.prange(n):
        src = rows[b * p:(b + 1) * p]
        dst = out[b]
        for k in range(o):
            bk = bias[k]
            d = dst[k]
            for q in range(p):
                d[q] = src[q, k] + bk
'''

# Small layers take a serial build: waking the thread pool costs more than their work.
_parallel_kernels = lazy_module(_SOURCE, "convolution")
_serial_kernels = lazy_module(_SOURCE.replace("parallel=True", "parallel=False"),
                              "convolution_serial")


def _kernels(size):
    return _parallel_kernels() if size >= PARALLEL_THRESHOLD else _serial_kernels()


def _chunks(size, images):
    """The chunks of images im2col and col2im split ``images`` into: a buffer each,
    one chunk per thread (serially, one)."""
    return min(images, numba.get_num_threads()) if size >= PARALLEL_THRESHOLD else 1


def _applies(a):
    return a.dtype.kind == "f" and a.dtype.itemsize >= 4 and a.ndim == 4


def conv_columns(x, kernel, stride, dilation, pads, out_hw, out=None):
    if not _applies(x) or len(kernel) != 2:
        return None
    n, c = x.shape[:2]
    kh, kw = kernel
    ho, wo = out_hw
    cols = pool.empty((n * ho * wo, kh * kw * c), x.dtype) if out is None else out
    if cols.size:
        hp = x.shape[2] + pads[0] + pads[1]
        wp = x.shape[3] + pads[2] + pads[3]
        _kernels(cols.size).columns(np.ascontiguousarray(x), kh, kw, *stride, *dilation,
                                    pads[0], pads[2], ho, wo, hp, wp, cols,
                                    _chunks(cols.size, n))
    return cols


def conv_output(rows, bias, out):
    if out.dtype.kind != "f" or out.dtype.itemsize < 4 or out.ndim != 4 \
            or rows.dtype != out.dtype or not out.flags.c_contiguous:
        return None
    n, o = out.shape[:2]
    bias = np.zeros(o, out.dtype) if bias is None else bias
    if out.size:
        _kernels(out.size).channels_first(np.ascontiguousarray(rows), bias,
                                          out.reshape(n, o, -1))
    return out


def conv_add_columns(cols, x_shape, kernel, stride, dilation, pads, out_hw, out=None):
    if len(x_shape) != 4 or len(kernel) != 2 or cols.dtype.kind != "f" \
            or cols.dtype.itemsize < 4 or cols.ndim != 2:
        return None
    kh, kw = kernel
    ho, wo = out_hw
    dx = pool.empty(x_shape, cols.dtype) if out is None else out
    if dx.size:
        _kernels(cols.size).add_columns(np.ascontiguousarray(cols), kh, kw, *stride, *dilation,
                                        pads[0], pads[2], ho, wo, dx,
                                        _chunks(cols.size, x_shape[0]))
    return dx
