"""The composite functions of ``torch.special`` (and ``mvlgamma``, which
PyTorch also has as ``torch.mvlgamma`` and ``Tensor.mvlgamma``), composed
from differentiable rows, so their gradients are the rows'."""
import math

from .. import creation, dtypes
from ..declarations.op_table import BY_NAME
from .registry import tensor_op

_SQRT_HALF = math.sqrt(0.5)


def _floating(input):
    return input if input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())


def _order(p, name):
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"{name}(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


@tensor_op()
def mvlgamma(input, p):
    """mvlgamma(input, p) -> Tensor

    The multivariate log-gamma function of dimension ``p``, elementwise:
    ``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(input - j / 2)``."""
    _order(p, "mvlgamma")
    x = _floating(input)
    shifts = creation.arange(p, dtype=x.dtype, device=x.device) * 0.5
    terms = BY_NAME["lgamma"](x.unsqueeze(-1) - shifts)
    return terms.sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


@tensor_op(function=False)
def mvlgamma_(self, p):
    """``mvlgamma_(p)``: in-place ``mvlgamma``."""
    _order(p, "mvlgamma_")
    return self.copy_(mvlgamma(self, p))


def ndtr(input):
    """ndtr(input) -> Tensor

    The standard normal distribution's cumulative distribution function,
    ``erfc(-input / sqrt(2)) / 2``: accurate in the lower tail, where
    PyTorch's ``(1 + erf(input / sqrt(2))) / 2`` cancels to 0 (below about -8.3)."""
    return BY_NAME["erfc"](_floating(input) * -_SQRT_HALF) * 0.5
