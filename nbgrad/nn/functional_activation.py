"""Functional activations (``F.silu``, ``F.elu``, ...), each one elementwise
row of ``declarations.activation_table`` where PyTorch's is one kernel, and
PyTorch's composition where its is one (``softsign``, ``tanhshrink``)."""
from .. import dtypes
from ..declarations import activation_table as rows
from ..ops import joining
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor

_C_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "float16": "Half", "bfloat16": "BFloat16"}

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _check(name, input, kernel=None):
    """PyTorch's TypeError for a non-tensor, NotImplementedError for an
    integer or bool tensor (its kernels are dispatched on floating types)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.is_floating_point():
        raise NotImplementedError(f'"{kernel or name}_{input.device.type}" not implemented for '
                                  f"'{_C_NAMES.get(input.dtype.name, input.dtype.name)}'")


def _apply(row, input, inplace, *args):
    return row.inplace(input, *args) if inplace else row(input, *args)


def silu(input, inplace=False):
    """x * sigmoid(x), elementwise."""
    _check("silu", input)
    return _apply(rows.silu, input, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    _check("leaky_relu", input)
    return _apply(rows.leaky_relu, input, inplace, float(negative_slope))


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    _check("elu", input)
    return _apply(rows.elu, input, inplace, float(alpha), 1.0, 1.0)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    _check("selu", input, "elu")
    return _apply(rows.elu, input, inplace, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _check("celu", input, "elu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _apply(rows.celu, input, inplace, float(alpha), 1.0, 1.0 / alpha)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    _check("softplus", input)
    return rows.softplus(input, float(beta), float(threshold))


def softsign(input):
    """x / (1 + |x|) (PyTorch's composition: DivBackward)."""
    return input / (input.abs() + 1)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    _check("hardtanh", input)
    return _apply(rows.hardtanh, input, inplace, float(min_val), float(max_val))


def relu6(input, inplace=False):
    """min(max(0, x), 6): hardtanh(x, 0, 6), as in PyTorch."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """0 below -3, 1 above 3, x / 6 + 1 / 2 between."""
    _check("hardsigmoid", input)
    return _apply(rows.hardsigmoid, input, inplace)


def hardswish(input, inplace=False):
    """x * hardsigmoid(x)."""
    _check("hardswish", input)
    return _apply(rows.hardswish, input, inplace)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    _check("mish", input)
    return _apply(rows.mish, input, inplace)


def tanhshrink(input):
    """x - tanh(x) (PyTorch's composition: SubBackward)."""
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    """value where x <= threshold, else x."""
    if not isinstance(input, Tensor):
        raise TypeError(f"threshold(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return _apply(rows.threshold, input, inplace, threshold, value)


def logsigmoid(input):
    """log(sigmoid(x)), computed without overflow."""
    _check("log_sigmoid", input)
    return rows.log_sigmoid(input)


def prelu(input, weight):
    """x where x > 0, else weight * x, with one weight per channel (dim 1) or one in all."""
    if not isinstance(input, Tensor):
        raise TypeError(f"prelu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_C_NAMES[input.dtype.name]} and {_C_NAMES[weight.dtype.name]}")
    count = weight.numel()
    if count != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if input.ndim == 0 or count != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {count} and channel size = {channels}.")
        if weight.ndim != 1:
            raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                               f"ndim = {weight.ndim}")
        shape = [1] * input.ndim
        shape[1] = count
        weight = weight.reshape(shape)
    elif weight.ndim > 0:
        weight = weight.reshape(())
    return rows.prelu(input, weight)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves a, b of ``input`` along ``dim``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"glu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = dim % input.ndim if -input.ndim <= dim < input.ndim else dim
    if not 0 <= axis < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-input.ndim}, {input.ndim - 1}], but got {dim})")
    size = input.shape[axis]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size {size}")
    with grad_mode.no_grad():
        a, b = input.split(size // 2, axis)
        out = a * b.sigmoid()
    node = GluBackward(input, axis) if grad_mode.is_grad_enabled() and input.requires_grad \
        else None
    return Tensor._from_op(out._data, node, out.dtype, out._backend)


class GluBackward(Node):
    """glu's gradient: (g * sigmoid(b), g * a * sigmoid(b) * (1 - sigmoid(b)))
    joined along the halved dimension; as taped ops with ``create_graph``."""

    __slots__ = ("dim",)
    op_name = "Glu"

    def __init__(self, input, dim):
        super().__init__([input])
        self.save(input)
        self.dim = dim

    def backward(self, grad):
        xp = ops_for(grad)
        (x,) = self.saved_values(xp.graph)
        if not xp.graph:  # raw arrays as Tensors without history, computed as ops
            from ..backends import backend_of
            backend = backend_of(grad)
            dtype = dtypes.from_numpy_dtype(grad.dtype)
            x, grad = Tensor._wrap(x, dtype, backend), Tensor._wrap(grad, dtype, backend)
        a, b = x.split(x.shape[self.dim] // 2, self.dim)
        s = b.sigmoid()
        ga = grad * s
        result = joining.cat([ga, ga * a * (1 - s)], self.dim)
        return [result if xp.graph else result._data]


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``."""
    from .functional import softmax
    if dim is None:
        from .functional import _softmax_dim
        dim = _softmax_dim("softmin", input.ndim)
    return softmax(-input, dim, dtype)


def hardshrink(input, lambd=0.5):
    """0 where -lambd <= x <= lambd, else x."""
    _check("hardshrink", input)
    return rows.hardshrink(input, float(lambd))


_FLOAT_MAX = {"float64": "1.79769e+308", "float32": "3.40282e+38", "float16": "65504",
              "bfloat16": "3.38953e+38"}


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if isinstance(input, Tensor) and not input.is_floating_point():  # checked on every device
        raise NotImplementedError(f'"softshrink_check" not implemented for '
                                  f"'{_C_NAMES.get(input.dtype.name, input.dtype.name)}'")
    _check("softshrink", input)  # (a non-tensor)
    if lambd < 0:
        name = input.dtype.name
        raise RuntimeError(f"lambda must be in range [0, {_FLOAT_MAX.get(name, '')}] for input "
                           f"dtype {_C_NAMES.get(name, name)}, but found {lambd:g}")
    return rows.softshrink(input, float(lambd))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each x <= 0 is multiplied by a slope drawn
    uniformly from [lower, upper]; in eval the slope is (lower + upper) / 2."""
    _check("rrelu", input, "leaky_relu")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return _apply(rows.leaky_relu, input, inplace, (lower + upper) / 2)
    from ..creation import rand
    with grad_mode.no_grad():
        slopes = rand(*input.shape, dtype=input.dtype, device=input.device) * (upper - lower) \
            + lower
        # the noise: a random slope where x <= 0, else 1 (a select, as aten's kernel)
        noise = slopes.where(input.detach() <= 0, 1.0)
    return input.mul_(noise) if inplace else input * noise


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place version of :func:`rrelu`."""
    return rrelu(input, lower, upper, training, True)


def _inplace_form(fn):
    """``fn_(input, ...)``: ``fn(input, ..., inplace=True)``, PyTorch's in-place functional."""
    def inplace(input, *args):
        return fn(input, *args, inplace=True)
    inplace.__name__ = inplace.__qualname__ = fn.__name__ + "_"
    inplace.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return inplace


elu_, selu_, celu_ = _inplace_form(elu), _inplace_form(selu), _inplace_form(celu)
leaky_relu_, hardtanh_ = _inplace_form(leaky_relu), _inplace_form(hardtanh)
threshold_ = _inplace_form(threshold)

__all__ = ["hardshrink", "softshrink", "rrelu", "rrelu_", "elu_", "selu_", "celu_",
           "leaky_relu_", "hardtanh_", "threshold_",
           "silu", "leaky_relu", "elu", "selu", "celu", "softplus", "softsign", "hardtanh",
           "relu6", "hardsigmoid", "hardswish", "mish", "tanhshrink", "threshold", "logsigmoid",
           "prelu", "glu", "softmin"]
