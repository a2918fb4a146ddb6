"""``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``, ``MaxUnpool1d/2d/3d`` and ``LPPool1d/2d/3d``."""
from . import functional as F
from .module import Module


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


# -- 1-D and adaptive pooling (issue 16) -------------------------------------------
def _one(value):
    return value if isinstance(value, tuple) else (value,)


class MaxPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _one(kernel_size)
        self.stride = _one(stride if stride is not None else kernel_size)
        self.padding = _one(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptivePool(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        if self._max:
            self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    _max = False

    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    _max = False

    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    _max = True

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptivePool):
    _max = True

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


# -- 3-D pooling (issue 16) ----------------------------------------------------------
class MaxPool3d(MaxPool2d):
    """Max pooling over (N, C, D, H, W) or (C, D, H, W) inputs."""

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(AvgPool2d):
    """Average pooling over (N, C, D, H, W) or (C, D, H, W) inputs."""

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptivePool):
    _max = False

    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptivePool):
    _max = True

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


# -- unpooling and power-average pooling (issue 16) -------------------------------------
class _MaxUnpool(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        nd = self._nd
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, nd)
        self.padding = _ntuple(padding, nd)

    def forward(self, input, indices, output_size=None):
        return getattr(F, f"max_unpool{self._nd}d")(input, indices, self.kernel_size,
                                                    self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _ntuple(value, nd):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * nd


class MaxUnpool1d(_MaxUnpool):
    """The partial inverse of ``MaxPool1d``: maxima put back at their indices, zeros elsewhere."""

    _nd = 1


class MaxUnpool2d(_MaxUnpool):
    """The partial inverse of ``MaxPool2d``: maxima put back at their indices, zeros elsewhere."""

    _nd = 2


class MaxUnpool3d(_MaxUnpool):
    """The partial inverse of ``MaxPool3d``: maxima put back at their indices, zeros elsewhere."""

    _nd = 3


class _LPPool(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, f"lp_pool{self._nd}d")(input, float(self.norm_type), self.kernel_size,
                                                 self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """The ``norm_type``-norm of each window (power-average pooling) over (N, C, L)."""

    _nd = 1


class LPPool2d(_LPPool):
    """The ``norm_type``-norm of each window (power-average pooling) over (N, C, H, W)."""

    _nd = 2


class LPPool3d(_LPPool):
    """The ``norm_type``-norm of each window (power-average pooling) over (N, C, D, H, W)."""

    _nd = 3
