"""``Unfold`` / ``Fold`` (``F.unfold`` / ``F.fold``): the convolution's
im2col and col2im in PyTorch's (N, C*kh*kw, L) layout, each the other's
gradient (written against ``ops_for``, so differentiable again)."""
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..ops.nn_arrays import Windows
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor
from ._convnd import ntuple
from .module import Module


def _unfold(xp, x, windows):
    """(N, C, H, W) -> (N, C*K, L)."""
    n, c = windows.x_shape[:2]
    k = windows.kernel[0] * windows.kernel[1]
    length = windows.out_hw[0] * windows.out_hw[1]
    cols = xp.reshape(xp.im2col(x, windows), (n, length, k, c))
    return xp.reshape(xp.contiguous_permute(cols, (0, 3, 2, 1)), (n, c * k, length))


def _fold(xp, a, windows):
    """(N, C*K, L) -> (N, C, H, W), overlapping blocks summed."""
    n, c = windows.x_shape[:2]
    k = windows.kernel[0] * windows.kernel[1]
    length = windows.out_hw[0] * windows.out_hw[1]
    cols = xp.contiguous_permute(xp.reshape(a, (n, c, k, length)), (0, 3, 2, 1))
    return xp.col2im(xp.reshape(cols, (n * length, k * c)), windows)


class _WindowsBackward(Node):
    __slots__ = ("windows", "shape")

    def __init__(self, x, windows):
        super().__init__([x])
        self.windows, self.shape = windows, tuple(x.shape)


class Im2ColBackward(_WindowsBackward):
    __slots__ = ()
    op_name = "Im2Col"

    def backward(self, grad):
        xp = ops_for(grad)
        g = xp.reshape(grad, (self.windows.x_shape[0],) + tuple(grad.shape[-2:]))
        return [xp.reshape(_fold(xp, g, self.windows), self.shape)]


class Col2ImBackward(_WindowsBackward):
    __slots__ = ()
    op_name = "Col2Im"

    def backward(self, grad):
        xp = ops_for(grad)
        g = xp.reshape(grad, self.windows.x_shape)
        return [xp.reshape(_unfold(xp, g, self.windows), self.shape)]


def _geometry(name, kernel_size, dilation, padding, stride):
    kernel = ntuple(kernel_size, 2, "kernel_size")
    dilation = ntuple(dilation, 2, "dilation")
    padding = ntuple(padding, 2, "padding")
    stride = ntuple(stride, 2, "stride")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kernel[0]} kernel_width: {kernel[1]}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dilation[0]} dilation_width: {dilation[1]}")
    if min(padding) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: "
                           f"{stride[0]} stride_width: {stride[1]}")
    return kernel, dilation, padding, stride


def _windows(x_shape, kernel, dilation, padding, stride):
    out = tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                for s, p, d, k, st in zip(x_shape[2:], padding, dilation, kernel, stride))
    pads = (padding[0], padding[0], padding[1], padding[1])
    return Windows(tuple(x_shape), kernel, stride, dilation, pads, out)


@tangent_rule()  # forward mode: from its backward
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of (N, C, H, W) or (C, H, W) ``input`` as columns:
    (N, C*kh*kw, L)."""
    kernel, dilation, padding, stride = _geometry("unfold", kernel_size, dilation, padding,
                                                  stride)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size"
                           f" for input, but got: {list(input.shape)}")
    x4 = input._data if input.ndim == 4 else input._data.reshape((1,) + input._data.shape)
    windows = _windows(x4.shape, kernel, dilation, padding, stride)
    if min(windows.out_hw) < 1:
        raise RuntimeError(f"Given input with spatial size ({x4.shape[2]}, {x4.shape[3]}), "
                           f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, "
                           f"{dilation[1]}), padding=({padding[0]}, {padding[1]}), calculated "
                           f"shape of the array of sliding blocks as ({windows.out_hw[0]}, "
                           f"{windows.out_hw[1]}), but its components must be at least one.")
    data = _unfold(ops_for(x4), x4, windows)
    if input.ndim == 3:
        data = data.reshape(data.shape[1:])
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = Im2ColBackward(input, windows)
    return Tensor._from_op(data, node, input.dtype, input._backend)


@tangent_rule()  # forward mode: from its backward
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum (N, C*kh*kw, L) or (C*kh*kw, L) blocks into (N, C, H, W) of ``output_size``."""
    kernel, dilation, padding, stride = _geometry("fold", kernel_size, dilation, padding, stride)
    output_size = ntuple(output_size, 2, "output_size")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size"
                           f" for input, but got: {list(input.shape)}")
    a = input._data if input.ndim == 3 else input._data.reshape((1,) + input._data.shape)
    n, ck, length = a.shape
    k = kernel[0] * kernel[1]
    if ck % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ck} and kernel_size=("
                           f"{kernel[0]}, {kernel[1]})")
    windows = _windows((n, ck // k) + output_size, kernel, dilation, padding, stride)
    blocks = windows.out_hw[0] * windows.out_hw[1]
    if blocks != length:
        raise RuntimeError(f"Given output_size=({output_size[0]}, {output_size[1]}), "
                           f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, "
                           f"{dilation[1]}), padding=({padding[0]}, {padding[1]}), stride=("
                           f"{stride[0]}, {stride[1]}), expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {windows.out_hw[0]} * "
                           f"{windows.out_hw[1]} = {blocks}, but got input.size(2)={length}.")
    data = _fold(ops_for(a), a, windows)
    if input.ndim == 2:
        data = data.reshape(data.shape[1:])
    node = None
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = Col2ImBackward(input, windows)
    return Tensor._from_op(data, node, input.dtype, input._backend)


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


__all__ = ["unfold", "fold", "Unfold", "Fold"]
