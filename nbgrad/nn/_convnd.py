"""Grouped, 1-D and transposed convolutions as one autograd primitive (3-D ones
composed of 2-D ones, see the end).

Every case runs on the 2-D im2col machinery of ``nbgrad.ops.nn_arrays``: a
1-D convolution is a 2-D one over an (N, C, 1, L) view, ``groups`` splits the
channels of the columns into G blocks multiplied in one batched GEMM, and a
transposed convolution is the input gradient of the convolution it
transposes (col2im of ``x @ W``), its own gradients being that convolution's
forward (for the input) and weight gradient. The three steps are written
once against ``ops_for`` (raw arrays or taped Tensors), so gradients can be
differentiated again.
"""
from .. import creation
from ..ops.arrays import ops_for
from ..ops.nn_arrays import Windows
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor
from .padding import pad


def _g_blocks(xp, a2, groups):
    """(M, G*B) -> (G, M, B)."""
    m, width = a2.shape
    if groups == 1:
        return xp.reshape(a2, (1, m, width))
    return xp.contiguous_permute(xp.reshape(a2, (m, groups, width // groups)), (1, 0, 2))


def _from_g_blocks(xp, a3):
    """(G, M, B) -> (M, G*B)."""
    g, m, width = a3.shape
    if g == 1:
        return xp.reshape(a3, (m, width))
    return xp.reshape(xp.contiguous_permute(a3, (1, 0, 2)), (m, g * width))


def _weight_blocks(xp, w4, groups):
    """Weight (O, Cg, kh, kw) as (G, O/G, kh*kw*Cg), channels innermost (the columns' order)."""
    o, cg, kh, kw = w4.shape
    wt = xp.contiguous_permute(w4, (0, 2, 3, 1))
    return xp.reshape(wt, (groups, o // groups, kh * kw * cg))


def _col_blocks(xp, cols, k, groups):
    """Columns (M, K*C) as (G, M, K*Cg)."""
    m, width = cols.shape
    if groups == 1:
        return xp.reshape(cols, (1, m, width))
    cg = width // (k * groups)
    return xp.reshape(xp.contiguous_permute(xp.reshape(cols, (m, k, groups, cg)), (2, 0, 1, 3)),
                      (groups, m, k * cg))


def _rows_by_channel(xp, y4):
    """(N, O, Ho, Wo) -> (N*Ho*Wo, O)."""
    n, o, ho, wo = y4.shape
    return xp.reshape(xp.contiguous_permute(y4, (0, 2, 3, 1)), (n * ho * wo, o))


def conv_forward(xp, x4, w4, windows, groups, cols=None, bias=None):
    """Convolution of (N, C, H, W) ``x4`` by (O, C/G, kh, kw) ``w4`` over
    ``windows``: (N, O, Ho, Wo). Returns (output, columns)."""
    n = x4.shape[0]
    o, _, kh, kw = w4.shape
    ho, wo = windows.out_hw
    if cols is None:
        cols = xp.im2col(x4, windows)
    out3 = xp.matmul(_col_blocks(xp, cols, kh * kw, groups),
                     xp.swapaxes(_weight_blocks(xp, w4, groups), 1, 2))  # (G, M, O/G)
    out2 = _from_g_blocks(xp, out3)
    if bias is not None:
        out2 = out2 + bias
    return xp.contiguous_permute(xp.reshape(out2, (n, ho, wo, o)), (0, 3, 1, 2)), cols


def conv_input_grad(xp, g4, w4, windows, groups):
    """The adjoint of ``conv_forward`` in its input: (N, C, H, W) from (N, O, Ho, Wo)."""
    o, cg, kh, kw = w4.shape
    k = kh * kw
    g_blocks = _g_blocks(xp, _rows_by_channel(xp, g4), groups)  # (G, M, O/G)
    dcols = xp.matmul(g_blocks, _weight_blocks(xp, w4, groups))  # (G, M, K*Cg)
    m = dcols.shape[1]
    if groups != 1:
        dcols = xp.contiguous_permute(xp.reshape(dcols, (groups, m, k, cg)), (1, 2, 0, 3))
    return xp.col2im(xp.reshape(dcols, (m, k * cg * groups)), windows)


def conv_weight_grad(xp, g4, cols, w_shape, groups):
    """The weight gradient (O, C/G, kh, kw) from the output gradient and the columns."""
    o, cg, kh, kw = w_shape
    g_blocks = _g_blocks(xp, _rows_by_channel(xp, g4), groups)  # (G, M, O/G)
    dw = xp.matmul(xp.swapaxes(g_blocks, 1, 2), _col_blocks(xp, cols, kh * kw, groups))
    return xp.contiguous_permute(xp.reshape(dw, (o, kh, kw, cg)), (0, 3, 1, 2))


class ConvolutionBackward(Node):
    """A (grouped, 1-D or 2-D, possibly transposed) convolution's backward."""

    __slots__ = ("cols", "windows", "groups", "transposed", "shapes", "has_bias")
    op_name = "Convolution"
    returns_fresh = True

    def __init__(self, x, weight, bias, cols, windows, groups, transposed, shapes):
        super().__init__([x, weight] if bias is None else [x, weight, bias])
        self.save(x, weight)
        self.cols = cols if (self.needs_grad(1) and not transposed) else None
        self.windows, self.groups, self.transposed = windows, groups, transposed
        self.shapes = shapes  # (x4, w4, out4) shapes: 1-D layers run as 2-D ones
        self.has_bias = bias is not None

    def release_saved(self):
        super().release_saved()
        self.cols = None

    def backward(self, grad):
        xp = ops_for(grad)
        x, weight = self.saved_values(xp.graph)
        x4_shape, w4_shape, out4_shape = self.shapes
        g4 = xp.reshape(grad, out4_shape)
        x4 = xp.reshape(x, x4_shape)
        w4 = xp.reshape(weight, w4_shape)
        grads = [None, None]
        if not self.transposed:
            if self.needs_grad(0):
                grads[0] = xp.reshape(conv_input_grad(xp, g4, w4, self.windows, self.groups),
                                      x.shape)
            if self.needs_grad(1):
                cols = xp.im2col(x4, self.windows) if (xp.graph or self.cols is None) \
                    else self.cols
                grads[1] = xp.reshape(conv_weight_grad(xp, g4, cols, w4_shape, self.groups),
                                      weight.shape)
        else:
            # The transposed layer's input is the gradient of a convolution over the output.
            if self.needs_grad(0):
                dx, _ = conv_forward(xp, g4, w4, self.windows, self.groups)
                grads[0] = xp.reshape(dx, x.shape)
            if self.needs_grad(1):
                cols = xp.im2col(g4, self.windows)
                grads[1] = xp.reshape(conv_weight_grad(xp, x4, cols, w4_shape, self.groups),
                                      weight.shape)
        if self.has_bias:
            grads.append(xp.column_sums(_rows_by_channel(xp, g4)) if self.needs_grad(2)
                         else None)
        return grads


def _recording(*tensors):
    return grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad
                                               for t in tensors)


def convolution(x, weight, bias, x4_shape, w4_shape, windows, groups, transposed, out_shape):
    """Raw (grouped, transposed) convolution of batched ``x`` by ``weight``,
    run on their 2-D views of shapes ``x4_shape``/``w4_shape``; arguments
    checked. ``windows`` is the geometry of the (non-transposed) convolution
    over the input (or, transposed, over the output); ``out_shape`` the
    result's shape."""
    xp = ops_for(x._data)
    x4 = x._data.reshape(x4_shape)
    w4 = weight._data.reshape(w4_shape)
    b = None if bias is None else bias._data
    cols = None
    if not transposed:
        out4, cols = conv_forward(xp, x4, w4, windows, groups, bias=b)
    else:
        out4 = conv_input_grad(xp, x4, w4, windows, groups)
        if b is not None:
            out4 += b.reshape(1, -1, 1, 1)
    out4_shape = out4.shape
    out = out4.reshape(out_shape)
    node = None
    if _recording(x, weight, bias):
        node = ConvolutionBackward(x, weight, bias, cols, windows, groups, transposed,
                                   (x4_shape, w4_shape, out4_shape))
    return Tensor._from_op(out, node, x.dtype, x._backend)


__all__ = ["convolution", "Windows", "ConvolutionBackward"]


# ------------------------------------------------------------ functional forms
_C_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}
_POSITIONS = {"input": 1, "weight": 2, "bias": 3}


def _check_tensor(name, value, arg):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {_POSITIONS[arg]}) must be Tensor, "
                        f"not {type(value).__name__}")


def ntuple(value, n, name):
    """``value`` (an int or a sequence of ints) as a tuple of ``n`` ints."""
    if isinstance(value, bool) or not hasattr(value, "__len__"):
        try:
            return (int(value),) * n
        except TypeError:
            raise TypeError(f"argument '{name}' must be tuple of ints, not "
                            f"{type(value).__name__}") from None
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


def _same_pads(kernel, dilation, stride):
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def conv(name, input, weight, bias, stride, padding, dilation, groups, dims, transposed=False,
         output_padding=0):
    """``F.conv1d``/``conv2d``/``conv_transpose1d``/``conv_transpose2d``:
    arguments checked in PyTorch's order, then :func:`convolution`."""
    _check_tensor(name, input, "input")
    _check_tensor(name, weight, "weight")
    stride = ntuple(stride, dims, "stride")
    dilation = ntuple(dilation, dims, "dilation")
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        pads = [(0, 0)] * dims if padding == "valid" else None
    else:
        pads = [(p, p) for p in ntuple(padding, dims, "padding")]
    out_pad = ntuple(output_padding, dims, "output_padding") if transposed else (0,) * dims
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    if pads is not None and min(min(p) for p in pads) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(out_pad) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if input.ndim not in (dims + 1, dims + 2) or weight.ndim != dims + 2:
        kind = {1: ("2D", "3D"), 2: ("3D", "4D"), 3: ("4D", "5D")}[dims]
        raise RuntimeError(f"Expected {kind[0]} (unbatched) or {kind[1]} (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    batched = input.ndim == dims + 2
    x = input if batched else input.unsqueeze(0)
    w_shape = list(weight.shape)
    if not transposed and w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{w_shape}] instead")
    want = w_shape[0] if transposed else w_shape[1] * groups
    if x.shape[1] != want:
        what = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {what}, weight of size {w_shape}, expected input"
                           f"{list(x.shape)} to have {want} channels, but got {x.shape[1]} "
                           "channels instead")
    if transposed and w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{w_shape}] instead")
    if input._backend is not weight._backend:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           f"devices, {input.device} and {weight.device}!")
    kernel = tuple(w_shape[2:])
    if pads is None:
        pads = _same_pads(kernel, dilation, stride)
    out_channels = w_shape[1] * groups if transposed else w_shape[0]
    if transposed:
        for axis, (op, s, d) in enumerate(zip(out_pad, stride, dilation)):
            if op >= s and op >= d:
                names = ("depth", "height", "width")[3 - dims:]
                raise RuntimeError(
                    "output padding must be smaller than either stride or dilation, but got " +
                    " ".join(f"output_padding_{n}: {v}" for n, v in zip(names, out_pad)) + " " +
                    " ".join(f"stride_{n}: {v}" for n, v in zip(names, stride)) + " " +
                    " ".join(f"dilation_{n}: {v}" for n, v in zip(names, dilation)))
    else:
        padded = [size + a + b for size, (a, b) in zip(x.shape[2:], pads)]
        effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
        if any(p < e for p, e in zip(padded, effective)):
            def show(v):
                return " x ".join(map(str, v))
            raise RuntimeError(f"Calculated padded input size per channel: ({show(padded)}). "
                               f"Kernel size: ({show(effective)}). Kernel size can't be greater "
                               "than actual input size")
    if bias is not None:
        _check_tensor(name, bias, "bias")
        if tuple(bias.shape) != (out_channels,):
            raise RuntimeError(f"Given weight of size {w_shape}, expected bias to be "
                               f"1-dimensional with {out_channels} elements, but got bias of "
                               f"size {list(bias.shape)} instead")
        if bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({_C_NAMES[input.dtype.name].lower()}) and bias type "
                               f"({_C_NAMES[bias.dtype.name].lower()}) should be the same")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.tensor_type[:-6]} but found "
                           f"{weight.dtype.tensor_type[:-6]}")
    if not x.is_floating_point():
        raise RuntimeError(f'"{name}" not implemented for \'{_C_NAMES[x.dtype.name]}\'')
    n, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    if transposed:
        out_sp = tuple((size - 1) * s - 2 * p[0] + d * (k - 1) + op + 1 for size, s, p, d, k, op
                       in zip(spatial, stride, pads, dilation, kernel, out_pad))
        if min(out_sp) < 1:
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, spatial))})."
                               " Calculated output size per channel: "
                               f"({' x '.join(map(str, out_sp))}). Output size is too small")
        geo_pads = [(p[0], p[1] - op) for p, op in zip(pads, out_pad)]
        geo_in, geo_out = out_sp, spatial
    else:
        out_sp = tuple((size + p[0] + p[1] - d * (k - 1) - 1) // s + 1 for size, p, d, k, s
                       in zip(spatial, pads, dilation, kernel, stride))
        geo_pads, geo_in, geo_out = pads, spatial, out_sp
    if dims == 3:
        by_depth = _transposed_by_depth if transposed else _by_depth
        out = by_depth(x, weight, bias, stride, pads, dilation, groups, out_pad, out_sp)
        return out if batched else out.squeeze(0)
    lead = (1,) * (2 - dims)  # a 1-D layer as a 2-D one of height 1
    geo_ch = out_channels if transposed else c
    windows = Windows((n, geo_ch) + lead + geo_in, lead + kernel, lead + stride, lead + dilation,
                      tuple(v for p in [(0, 0)] * (2 - dims) + list(geo_pads) for v in p),
                      lead + geo_out)
    x4_shape = (n, c) + lead + spatial
    w4_shape = tuple(w_shape[:2]) + lead + kernel
    out = convolution(x, weight, bias, x4_shape, w4_shape, windows, groups, transposed,
                      (n, out_channels) + out_sp)
    return out if batched else out.squeeze(0)


# ------------------------------------------------ 3-D, as 2-D convolutions by depth
# A 3-D convolution is the sum over the kernel's depth k of 2-D convolutions:
# the input's depth slices that offset k reads (every stride-th from k *
# dilation), as a batch of N * Do images, by the weight's slice k. Its
# transpose adds each 2-D transposed convolution at the output depths that
# slice reaches. Composed of taped ops, so every order of gradient, forward
# mode and every device come with them (the node names are theirs, not
# PyTorch's ConvolutionBackward).
def _as_images(t):
    """(N, C, D, H, W) as (N * D, C, H, W), depth-major."""
    n, c, d = t.shape[:3]
    return t.permute(0, 2, 1, 3, 4).reshape(n * d, c, *t.shape[3:])


def _from_images(t, n):
    """(N * D, O, H, W) as (N, O, D, H, W)."""
    return t.reshape(n, t.shape[0] // n, *t.shape[1:]).permute(0, 2, 1, 3, 4)


def _by_depth(x, weight, bias, stride, pads, dilation, groups, out_pad, out_sp):
    if any(v for p in pads for v in p):
        x = pad(x, [v for p in reversed(pads) for v in p])
    n, depth = x.shape[0], out_sp[0]
    total = None
    for k in range(weight.shape[2]):
        start = k * dilation[0]
        slab = _as_images(x[:, :, start:start + stride[0] * (depth - 1) + 1:stride[0]])
        y = conv("conv2d", slab, weight[:, :, k], None, stride[1:], 0, dilation[1:], groups, 2)
        total = y if total is None else total + y
    out = _from_images(total, n)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out.contiguous()


def _transposed_by_depth(x, weight, bias, stride, pads, dilation, groups, out_pad, out_sp):
    n, depth = x.shape[0], x.shape[2]
    full = (depth - 1) * stride[0] + dilation[0] * (weight.shape[2] - 1) + 1 + out_pad[0]
    slab = _as_images(x)
    total = None
    for k in range(weight.shape[2]):
        y = _from_images(conv("conv_transpose2d", slab, weight[:, :, k], None, stride[1:],
                              [p[0] for p in pads[1:]], dilation[1:], groups, 2, True,
                              out_pad[1:]), n)
        at = creation.arange(depth, device=x.device) * stride[0] + k * dilation[0]
        zeros = creation.zeros(y.shape[0], y.shape[1], full, *y.shape[3:], dtype=y.dtype,
                               device=x.device)
        placed = zeros.index_add(2, at, y)
        total = placed if total is None else total + placed
    out = total[:, :, pads[0][0]:pads[0][0] + out_sp[0]]
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out.contiguous()
