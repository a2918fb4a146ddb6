"""``Identity`` and ``Linear``."""

from .. import creation
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class _WeightedLayer(Module):
    """A layer with a ``weight`` whose first dimension is the output's and an
    optional ``bias`` of that size (Linear, Conv2d), initialised as PyTorch's."""

    def _add_weight_and_bias(self, weight_shape, bias, dtype, device):
        self.weight = Parameter(creation.empty(*weight_shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(creation.empty(weight_shape[0], dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.default_layer_init_(self.weight, self.bias)


class Linear(_WeightedLayer):
    """``y = x @ weight.T + bias``; weight ``(out_features, in_features)``.
    Initialised as in PyTorch: kaiming_uniform_(a=sqrt(5)) and a bias
    uniform in ±1/sqrt(in_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self._add_weight_and_bias((out_features, in_features), bias, dtype, device)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
