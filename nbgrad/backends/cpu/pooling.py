"""Max pooling on the CPU.

- ``max_pool2d_windows`` / ``max_pool2d_scatter``: 2-D max pooling and its
  backward in one compiled pass each, a plane (image, channel) per task, the
  forward generated per kernel size (its offsets unrolled). The generic form
  below takes a pass per kernel offset forward and two (a select, a strided
  add) per offset backward: on the demo CNN's (64, 32, 8, 8), 2x2, forward
  500 us against 190 here, backward 600 against 150.
- ``max_pool_step``: the generic form's running maximum, one fused Numba pass
  per kernel offset (the same step as ``backends/cuda/pooling.py``), per
  number of (coalesced) dimensions, serial for small outputs and ``prange``
  for large: 1-D and 3-D pooling and any other layout use it.

Both keep PyTorch's rule: a later offset takes the maximum and its index
only when its value is larger, or NaN (so NaN propagates); the padding reads
as -inf.
"""
import numpy as np

from ..kernel_source import load_module
from .elementwise import PARALLEL_THRESHOLD, _coalesce, _module_source, _variant

_PRELUDE = '''import numba
import numpy as np

_FLAGS = dict(cache=True, nogil=True, parallel=True, error_model="numpy")
'''


def _offset_lines(kh, kw):
    """The body of a window's loop, its kernel offsets unrolled (runtime loops
    of two or three steps cost 2.5x the whole kernel's time on 8 x 8 planes)."""
    lines = []
    for i in range(kh):
        lines += [f"ih = oh * sh + {i} * dh - top", "row = 0 <= ih < h"]
        for j in range(kw):
            k = i * kw + j
            lines += [f"iw = ow * sw + {j} * dw - left",
                      "v = src[ih, iw] if row and 0 <= iw < w else low"]
            lines += (["m = v", "at = 0"] if k == 0 else
                      ["if v > m or v != v:", "    m = v", f"    at = {k}"])
    return "\n                ".join(lines)


def _max_pool_source(kh, kw):
    return _PRELUDE + f'''

@numba.njit(**_FLAGS)
def max_pool(x, sh, sw, dh, dw, top, left, low, best, argmax):
    """best/argmax (N, C, Ho, Wo): each {kh}x{kw} window's maximum and its kernel offset."""
    n, c, h, w = x.shape
    ho, wo = best.shape[2], best.shape[3]
    for plane in numba.prange(n * c):
        src = x[plane // c, plane % c]
        dst = best[plane // c, plane % c]
        arg = argmax[plane // c, plane % c]
        for oh in range(ho):
            for ow in range(wo):
                {_offset_lines(kh, kw)}
                dst[oh, ow] = m
                arg[oh, ow] = at
'''


_SCATTER_SOURCE = _PRELUDE + '''

@numba.njit(**_FLAGS)
def max_pool_scatter(grad, argmax, kw, sh, sw, dh, dw, top, left, dx):
    """dx (N, C, H, W), zeros but for each output's gradient added at its pick
    (in output order, as PyTorch's CPU kernel adds them)."""
    n, c, h, w = dx.shape
    ho, wo = grad.shape[2], grad.shape[3]
    for plane in numba.prange(n * c):
        b = plane // c
        ch = plane % c
        for ih in range(h):
            for iw in range(w):
                dx[b, ch, ih, iw] = 0
        for oh in range(ho):
            for ow in range(wo):
                k = np.int64(argmax[b, ch, oh, ow])
                ih = oh * sh + (k // kw) * dh - top
                iw = ow * sw + (k % kw) * dw - left
                if 0 <= ih < h and 0 <= iw < w:
                    dx[b, ch, ih, iw] += grad[b, ch, oh, ow]
'''

_modules_2d = {}
UNROLLED_OFFSETS = 25  # larger kernels (global pooling) take the generic form


def _windows(tag, make_source, size):
    """The module ``tag`` of ``make_source()`` (generated on first use only):
    a serial build for small layers (waking the thread pool costs more than
    their work), else the parallel one."""
    parallel = size >= PARALLEL_THRESHOLD
    key = (tag, parallel)
    module = _modules_2d.get(key)
    if module is None:
        source = make_source()
        if not parallel:
            source, tag = source.replace("parallel=True", "parallel=False"), tag + "_serial"
        module = _modules_2d[key] = load_module(source, {}, None, tag)
    return module


def _floats(a):
    return a.dtype.kind == "f" and a.dtype.itemsize >= 4 and a.ndim == 4


def max_pool2d_windows(x, kernel, stride, dilation, pads, out_hw, index_dtype):
    """(maximum, kernel offset of the maximum) of each window of (N, C, H, W)
    ``x``, padded by ``pads`` (top, bottom, left, right) with -inf; the
    offsets in ``index_dtype``. None where the one-pass form does not apply."""
    if not _floats(x) or len(kernel) != 2 or kernel[0] * kernel[1] > UNROLLED_OFFSETS:
        return None
    shape = x.shape[:2] + tuple(out_hw)
    best, argmax = np.empty(shape, x.dtype), np.empty(shape, index_dtype)
    if best.size:
        kh, kw = kernel
        module = _windows(f"max_pool2d_{kh}x{kw}", lambda: _max_pool_source(kh, kw), x.size)
        module.max_pool(np.ascontiguousarray(x), *stride, *dilation, pads[0], pads[2],
                        x.dtype.type(-np.inf), best, argmax)
    return best, argmax


def max_pool2d_scatter(grad, argmax, x_shape, kernel, stride, dilation, pads):
    """The adjoint of ``max_pool2d_windows``: a new (N, C, H, W) array of
    zeros with each output's ``grad`` added where its window's maximum was
    read. None where the one-pass form does not apply."""
    if not _floats(grad) or len(kernel) != 2 or len(x_shape) != 4:
        return None
    dx = np.empty(x_shape, grad.dtype)
    if dx.size:
        _windows("max_pool2d_scatter", lambda: _SCATTER_SOURCE, dx.size).max_pool_scatter(
            np.ascontiguousarray(grad), np.ascontiguousarray(argmax), kernel[1], *stride,
            *dilation, pads[0], pads[2], dx)
    return dx


_modules = {}


def _body(with_index):
    def body_for(ix):
        lines = [f"v = value{ix}", f"if v > best{ix} or v != v:", f"    best{ix} = v"]
        if with_index:
            lines.append(f"    argmax{ix} = k")
        return lines
    return body_for


def _module(ndim, with_index):
    key = (ndim, with_index)
    module = _modules.get(key)
    if module is None:
        signature = "best, value, argmax, k" if with_index else "best, value, k"
        source = _module_source(signature, ndim, _body(with_index), "best")
        module = _modules[key] = load_module(source, {}, None, "max_pool_step")
    return module


def max_pool_step(best, argmax, value, k):
    """``if value > best or value is NaN: best = value (and argmax = k)``:
    NaN propagates and a later offset takes the index only when its value is
    larger or NaN, PyTorch's rule; ``argmax`` may be None."""
    if best.size == 0:
        return
    if best.dtype == np.float16:  # (Numba has no float16: NumPy's select, the same rule)
        take = (value > best) | (value != value)
        np.copyto(best, value, where=take)
        if argmax is not None:
            np.copyto(argmax, k, where=take)
        return
    arrays = [best, value] + ([] if argmax is None else [argmax])
    ndim, views = _coalesce(best.shape, arrays)
    kernel = _variant(_module(ndim, argmax is not None), best.size)
    if argmax is None:
        kernel(views[0], views[1], k)
    else:
        kernel(views[0], views[1], views[2], k)
