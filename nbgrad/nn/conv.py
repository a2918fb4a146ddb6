"""``Conv2d``."""

from . import functional as F
from .functional import _pair
from .linear import _WeightedLayer


class Conv2d(_WeightedLayer):
    """2-D convolution over (N, C, H, W) or (C, H, W) inputs, as ``torch.nn.Conv2d``
    (``padding_mode='zeros'``, ``groups=1``)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups != 1:
            raise NotImplementedError("nbgrad's Conv2d supports groups=1 only")
        if padding_mode != "zeros":
            raise NotImplementedError("nbgrad's Conv2d supports padding_mode='zeros' only")
        if in_channels <= 0 or out_channels <= 0:
            raise ValueError("in_channels and out_channels must be positive integers")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride, "stride")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and self.stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _pair(padding, "padding")
        self.dilation = _pair(dilation, "dilation")
        self.groups = groups
        self.padding_mode = padding_mode
        self._add_weight_and_bias((out_channels, in_channels, *self.kernel_size), bias, dtype,
                                  device)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
