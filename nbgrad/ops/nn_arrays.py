"""Sliding windows and per-row picks on raw backend arrays: what the
gradients of nn's layers and losses are made of, untaped.

Each operation here has an adjoint here (its gradient is the other one, see
``nbgrad.ops.nn_taped``): ``im2col``/``col2im`` (a convolution's columns),
``gather_windows``/``scatter_windows`` (pooling) and
``take_per_row``/``scatter_per_row`` (a loss's pick of one class per row;
``take_per_row`` is the backend's). A backward formula reaches them through
``nbgrad.ops.arrays.ops_for``, so the same formula runs on raw arrays (a plain
backward: these functions) and on Tensors (a backward that builds a graph:
their taped forms). They work on any backend: the strided adds, selects and
copies are backend primitives.
"""
import collections
import functools
import itertools


class Windows(collections.namedtuple("Windows", "x_shape kernel stride dilation pads out_hw")):
    """Where the windows of a 2-D layer look: an ``x_shape`` (N, C, H, W)
    input, zero-padded by ``pads`` (top, bottom, left, right), read by windows
    of ``kernel`` (kh, kw) elements ``dilation`` apart, one every ``stride``,
    ``out_hw`` (Ho, Wo) of them. Pooling's windows may have any number of
    spatial dimensions (N, C, *spatial; ``pads`` a (before, after) pair per
    spatial dimension); convolution's are 2-D."""

    __slots__ = ()

    def padded_hw(self):
        pads = self.pads
        return tuple(size + pads[2 * d] + pads[2 * d + 1]
                     for d, size in enumerate(self.x_shape[2:]))

    def offsets(self):
        """``(k, rows, cols)`` for each kernel offset ``k`` (row-major): the
        slices of the padded input that offset reads for every output position
        (a slice per spatial dimension)."""
        return _offsets(self.kernel, self.stride, self.dilation, self.out_hw)


@functools.lru_cache(maxsize=256)
def _offsets(kernel, stride, dilation, out_hw):
    # Made once per geometry: a layer's backward runs them every step.
    return tuple((k, *(slice(i * d, i * d + s * (o - 1) + 1, s)
                       for i, s, d, o in zip(position, stride, dilation, out_hw)))
                 for k, position in enumerate(itertools.product(*map(range, kernel))))


def offset_slices(i, j, stride, dilation, out_hw):
    """Where kernel offset (i, j) reads, for every output position."""
    hi = i * dilation[0]
    wj = j * dilation[1]
    return (slice(hi, hi + stride[0] * (out_hw[0] - 1) + 1, stride[0]),
            slice(wj, wj + stride[1] * (out_hw[1] - 1) + 1, stride[1]))


def pad_nhwc(x, pads, empty):
    """``x`` (N, C, H, W) as a channels-last array with a zero border."""
    n, c, h, w = x.shape
    top, bottom, left, right = pads
    out = empty((n, h + top + bottom, w + left + right, c), x.dtype)
    # A negative bottom/right pad crops (a transposed convolution's output_padding
    # beyond its padding: the last rows are read by no window).
    h, w = h + min(bottom, 0), w + min(right, 0)
    out[:, :top] = 0
    out[:, top + h:] = 0
    out[:, top:top + h, :left] = 0
    out[:, top:top + h, left + w:] = 0
    out[:, top:top + h, left:left + w, :] = x[:, :, :h, :w].transpose(0, 2, 3, 1)
    return out


def windows_nhwc(backend, xp, kernel, stride, dilation, out_hw):
    """(N, Ho, Wo, kh, kw, C) strided view of the windows of padded NHWC ``xp``
    (the view NumPy's ``sliding_window_view`` would give, strided and dilated)."""
    sn, sh, sw, sc = xp.strides
    return backend.as_strided(xp, (xp.shape[0], *out_hw, *kernel, xp.shape[3]),
                              (sn, sh * stride[0], sw * stride[1], sh * dilation[0],
                               sw * dilation[1], sc))


def pad_nchw(backend, x, pads, fill):
    """``x`` (N, C, *spatial) with a border of ``fill`` (``x`` itself without
    one); ``pads`` a (before, after) pair per spatial dimension."""
    if not any(pads):
        return x
    spatial = x.shape[2:]
    out = backend.full(x.shape[:2] + tuple(size + pads[2 * d] + pads[2 * d + 1]
                                            for d, size in enumerate(spatial)), fill, x.dtype)
    out[_interior(pads, spatial)] = x
    return out


def _interior(pads, spatial):
    """Where the unpadded input lies in its padded buffer."""
    return (slice(None), slice(None)) + tuple(slice(pads[2 * d], pads[2 * d] + size)
                                              for d, size in enumerate(spatial))


# ----------------------------------------------------------- convolution
def im2col(backend, x, windows, offsets_first=False, out=None):
    """The windows of ``x`` (N, C, H, W) as columns: an (N*Ho*Wo, kh*kw*C)
    matrix, a row per output position (the forward's GEMM operand), or with
    ``offsets_first`` a (kh*kw, N*Ho*Wo, C) block per kernel offset. A copy,
    from the backend's caching allocator, or written into ``out``."""
    if not offsets_first:  # the backend's one-pass form, where it has one
        cols = backend.conv_columns(x, windows.kernel, windows.stride, windows.dilation,
                                    windows.pads, windows.out_hw, out)
        if cols is not None:
            return cols
    n, c = x.shape[:2]
    kh, kw = windows.kernel
    ho, wo = windows.out_hw
    empty = backend.empty
    view = windows_nhwc(backend, pad_nhwc(x, windows.pads, empty), windows.kernel,
                        windows.stride, windows.dilation, windows.out_hw)
    if offsets_first:
        cols = empty((kh * kw, n * ho * wo, c), x.dtype) if out is None else out
        cols.reshape(kh, kw, n, ho, wo, c)[...] = view.transpose(3, 4, 0, 1, 2, 5)
    else:
        cols = empty((n * ho * wo, kh * kw * c), x.dtype) if out is None else out
        cols.reshape(n, ho, wo, kh, kw, c)[...] = view
    return cols


def col2im(backend, cols, windows, offsets_first=False, out=None):
    """The adjoint of ``im2col``: each column element added back where it was
    read, into zeros of the input's shape (N, C, H, W), padding dropped. One
    strided add per kernel offset (``kh*kw`` adds, never one per element),
    into a padded channels-last buffer; the (kh*kw, N*Ho*Wo, C) layout
    (``offsets_first``) adds contiguous blocks. A new array, or ``out``."""
    if not offsets_first:
        dx = backend.conv_add_columns(cols, windows.x_shape, windows.kernel, windows.stride,
                                      windows.dilation, windows.pads, windows.out_hw, out)
        if dx is not None:
            return dx
    n, c, h, w = windows.x_shape
    kh, kw = windows.kernel
    ho, wo = windows.out_hw
    top, _, left, _ = windows.pads
    empty = backend.empty
    dxp = empty((n, *windows.padded_hw(), c), cols.dtype)
    dxp.fill(0)
    if offsets_first:
        blocks = cols.reshape(kh * kw, n, ho, wo, c)
    else:
        by_offset = cols.reshape(n, ho, wo, kh, kw, c)
    for k, rows, columns in windows.offsets():
        block = blocks[k] if offsets_first else by_offset[:, :, :, k // kw, k % kw, :]
        backend.add_into(dxp[:, rows, columns, :], block)
    dx = empty((n, c, h, w), cols.dtype) if out is None else out
    bottom, right = windows.pads[1], windows.pads[3]
    if bottom < 0 or right < 0:  # rows/columns no window reads (see pad_nhwc)
        dx.fill(0)
        h, w = h + min(bottom, 0), w + min(right, 0)
        dx[:, :, :h, :w] = dxp[:, top:top + h, left:left + w, :].transpose(0, 3, 1, 2)
        return dx
    dx[...] = dxp[:, top:top + h, left:left + w, :].transpose(0, 3, 1, 2)
    return dx


def contiguous_permute(backend, a, axes):
    """``a``'s dimensions permuted by ``axes``, copied into a new C-contiguous
    array from the caching allocator."""
    shape = a.shape
    out = backend.empty(tuple([shape[k] for k in axes]), a.dtype)
    out[...] = a.transpose(*axes)
    return out


# ---------------------------------------------------------------- pooling
def gather_windows(backend, x, windows, argmax=None):
    """Per output position (N, C, *out) of ``x`` (N, C, *spatial) zero-padded:
    the sum of its window, or with ``argmax`` (each window's kernel offset)
    the element that offset picks."""
    n, c = x.shape[:2]
    xp = pad_nchw(backend, x, windows.pads, 0)
    out = backend.zeros((n, c, *windows.out_hw), x.dtype)
    every = (slice(None), slice(None))
    for k, *where in windows.offsets():
        if argmax is None:
            backend.add_into(out, xp[every + tuple(where)])
        else:  # a select (never a product with a 0/1 mask): inf and NaN elsewhere stay out
            out = backend.where(argmax == k, xp[every + tuple(where)], out)
    return out


def scatter_windows(backend, values, windows, argmax=None):
    """The adjoint of ``gather_windows``: zeros of the input's shape (N, C,
    *spatial) with each output position's value (N, C, *out) added at every
    element of its window, or with ``argmax`` at the element that picks. A
    view of a padded buffer (one strided add per kernel offset into it), or
    the backend's one-pass form for 2-D max pooling."""
    if argmax is not None:
        dx = backend.max_pool2d_scatter(values, argmax, windows.x_shape, windows.kernel,
                                        windows.stride, windows.dilation, windows.pads)
        if dx is not None:
            return dx
    n, c = windows.x_shape[:2]
    dxp = backend.zeros((n, c, *windows.padded_hw()), values.dtype)
    zero = values.dtype.type(0)
    every = (slice(None), slice(None))
    for k, *where in windows.offsets():
        backend.add_into(dxp[every + tuple(where)],
                         values if argmax is None else backend.where(argmax == k, values, zero))
    return dxp[_interior(windows.pads, windows.x_shape[2:])]


# ----------------------------------------------------------------- losses
def scatter_per_row(backend, values, index, columns):
    """The adjoint of the backend's ``take_per_row``: (rows, ``columns``) zeros
    with ``values[i]`` (or ``values`` itself, one NumPy scalar) at
    ``index[i, 0]`` in row ``i``."""
    out = backend.zeros((index.shape[0], columns), values.dtype)
    backend.put_per_row(out, index, values)
    return out
