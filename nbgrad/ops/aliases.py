"""PyTorch's other names for ops nbgrad has (``absolute`` for ``abs``,
``greater`` for ``gt``, ...), and ``div``'s ``rounding_mode``."""
from .. import dtypes
from ..declarations.op_table import BY_NAME
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor
from .arrays import ops_for
from .pointwise import floor_divide
from .registry import tensor_op

# alias -> op, each with its in-place form where the op has one
ALIASES = {"absolute": "abs", "negative": "neg", "subtract": "sub", "multiply": "mul",
           "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
           "not_equal": "ne", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
           "arctan2": "atan2", "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh",
           "fix": "trunc"}
FUNCTION_ALIASES = {"concat": "cat", "concatenate": "cat"}
# The in-place ops PyTorch also exports as functions (``torch.relu_(t)``)
INPLACE_FUNCTIONS = ("neg_", "reciprocal_", "exp_", "log_", "sqrt_", "abs_", "sin_", "cos_",
                     "tanh_", "sigmoid_", "relu_", "rsqrt_", "log1p_", "expm1_", "log2_",
                     "log10_", "exp2_", "square_", "floor_", "ceil_", "round_", "trunc_",
                     "frac_", "erf_", "erfc_", "atan_", "asin_", "acos_", "sinh_", "cosh_",
                     "asinh_", "acosh_", "atanh_", "clamp_", "clamp_min_", "clamp_max_",
                     "xlogy_", "fix_", "negative_", "arccos_", "arcsin_",
                     "arctan_", "arccosh_", "arcsinh_", "arctanh_", "tan_", "deg2rad_",
                     "rad2deg_", "logit_", "sinc_")

_ROUNDING = (None, "trunc", "floor")


class RoundedDivBackward(Node):
    """``div`` with a rounding mode: PyTorch's gradient, zero (materialized) for both inputs."""

    __slots__ = ()
    op_name = "Div"

    def backward(self, grad):
        xp = ops_for(grad)
        return [xp.zeros(grad.shape, grad.dtype) for _ in self.next_edges]


def _rounded_division(input, other, rounding_mode):
    with grad_mode.no_grad():
        result = _rounded_values(input, other, rounding_mode)
    sources = [t for t in (input, other) if isinstance(t, Tensor)]
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in sources):
        return Tensor._from_op(result._data, RoundedDivBackward(sources), result.dtype,
                               result._backend)
    return result


def _rounded_values(input, other, rounding_mode):
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if dtypes.result_type((input, other)).is_floating_point:
        return BY_NAME["div"](input, other).trunc()  # PyTorch's trunc(a / b)
    # Integers: floor division, moved one up where the exact quotient is
    # negative and not whole (C's truncating division, as PyTorch's).
    floored = floor_divide(input, other)  # (refuses a zero divisor)
    inexact = (floored * other) != input
    negative = (input < 0) != (other < 0)
    return floored + (inexact & negative).to(floored.dtype)


def _check_rounding(rounding_mode, name):
    if rounding_mode not in _ROUNDING:
        raise RuntimeError(f"{name} expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")


@tensor_op("div", "divide", out=True)
def div(input, other, *, rounding_mode=None):
    """div(input, other, *, rounding_mode=None, out=None) -> Tensor

    ``input / other`` (true division, integers promoted to float), or rounded
    toward zero (``'trunc'``) or down (``'floor'``) in the promoted type, as
    PyTorch's ``div``."""
    if rounding_mode is None:
        return BY_NAME["div"](input, other)
    _check_rounding(rounding_mode, "div")
    return _rounded_division(input, other, rounding_mode)


@tensor_op("div_", "divide_", function=False)
def div_(self, other, *, rounding_mode=None):
    """In-place ``div``: writes ``div(self, other, rounding_mode=...)`` into ``self``."""
    if rounding_mode is None:
        return BY_NAME["div"].inplace(self, other)
    _check_rounding(rounding_mode, "div_")
    return self.copy_(_rounded_division(self, other, rounding_mode))


@tensor_op()
def positive(input):
    """positive(input) -> Tensor: ``input`` itself (refused for bool, as PyTorch's)."""
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@tensor_op()
def ravel(input):
    """ravel(input) -> Tensor: ``input`` flattened to 1-D (a view where possible)."""
    return input.reshape(-1)


@tensor_op()
def msort(input):
    """msort(input) -> Tensor: ``input`` sorted along its first dimension."""
    return input.sort(dim=0).values


@tensor_op(function=False)
def ndimension(self):
    """The number of dimensions (``dim()``)."""
    return self.ndim


@tensor_op(method=False)
def is_floating_point(input):
    """True if ``input``'s dtype is a floating-point type."""
    return input.is_floating_point()


@tensor_op()
def is_complex(input):
    """False: nbgrad has no complex dtypes."""
    return False


def install_methods(tensor_class):
    """Bind the aliases on Tensor, once the ops they name are bound."""
    for alias, name in ALIASES.items():
        for suffix in ("", "_"):
            if hasattr(tensor_class, name + suffix):
                setattr(tensor_class, alias + suffix, getattr(tensor_class, name + suffix))


def function_aliases(functions, tensor_class):
    """``nbgrad.<alias>`` for each alias whose op is among ``functions``, and
    the in-place ops PyTorch exports as functions (``nbgrad.relu_(t)``)."""
    names = {**ALIASES, **FUNCTION_ALIASES}
    aliases = {alias: functions[name] for alias, name in names.items() if name in functions}
    aliases.update({name: _inplace_function(tensor_class, name) for name in INPLACE_FUNCTIONS})
    return aliases


def _inplace_function(tensor_class, name):
    def inplace(input, *args, **kwargs):
        return getattr(tensor_class, name)(input, *args, **kwargs)
    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"``input.{name}(...)``: writes into ``input``."
    return inplace
