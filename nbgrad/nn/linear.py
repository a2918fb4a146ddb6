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
        weight = self.weight  # a module attribute lookup (Module.__getattr__): read once
        if isinstance(input, Tensor):  # F.linear names anything else in a TypeError
            shape = input._data.shape
            if not shape or shape[-1] != self.in_features:
                raise RuntimeError(f"{self._get_name()}({self.extra_repr()}): expected input with "
                                   f"last dimension {self.in_features}, got shape {list(shape)}")
            if input.dtype is not weight.dtype:
                raise RuntimeError(f"{self._get_name()}({self.extra_repr()}): expected input of "
                                   f"dtype {weight.dtype}, got {input.dtype} (convert the input "
                                   f"with .to({weight.dtype}) or the layer with "
                                   f".to({input.dtype}))")
        return F.linear(input, weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
