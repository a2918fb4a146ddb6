"""Weight initialisations, named and defined as in ``torch.nn.init``.

Every function fills its tensor in place under ``no_grad`` (so it works on
parameters that require grad), bumps its version once, and returns it.
Random values come from nbgrad's generator (``nbgrad.manual_seed``).
"""
import math
import numbers
import warnings

import numpy as np

from .. import dtypes
from ..tape.grad_mode import no_grad
from ..tensor import Tensor


def _generator(generator=None):
    """The NumPy stream to draw from: ``generator``'s, else nbgrad's default."""
    if generator is not None:
        return generator._stream
    from .. import creation
    return creation._generator


def _check(tensor, method):
    """PyTorch's errors: not a tensor (``tensor.method`` does not exist), or a
    random fill of a bool or integer tensor."""
    if not isinstance(tensor, Tensor):
        raise AttributeError(f"'{type(tensor).__name__}' object has no attribute '{method}'")
    kernel = {"uniform_": "check_uniform_bounds", "normal_": "normal_kernel_cpu"}.get(method)
    if kernel and not tensor.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{tensor.dtype.tensor_type[:-6]}'")


def _write(tensor, values):
    _check(tensor, "copy_")
    with no_grad():
        from ..creation import tensor as make_tensor
        tensor.copy_(make_tensor(np.asarray(values, dtype=tensor.dtype.numpy), dtype=tensor.dtype,
                                 device=tensor.device))
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0):
    """Fill ``tensor`` with values drawn uniformly from [a, b)."""
    _check(tensor, "uniform_")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={a} > to={b}")
    return _write(tensor, _generator().uniform(a, b, size=tuple(tensor.shape)))


def normal_(tensor, mean=0.0, std=1.0):
    """Fill ``tensor`` with values drawn from N(mean, std**2)."""
    _check(tensor, "normal_")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _write(tensor, _generator().normal(mean, std, size=tuple(tensor.shape)))


def constant_(tensor, val):
    """Fill ``tensor`` with ``val`` (refused, as ``fill_``, when the dtype cannot hold it)."""
    _check(tensor, "fill_")
    if not isinstance(val, (numbers.Number, np.bool_)):
        raise TypeError(f"fill_(): argument 'value' must be Number, not {type(val).__name__}")
    dtypes.check_scalar(val, tensor.dtype)
    return _write(tensor, np.full(tuple(tensor.shape), val))


def zeros_(tensor):
    return constant_(tensor, 0)


def ones_(tensor):
    return constant_(tensor, 1)


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Normal values redrawn until they fall in [a, b]."""
    _check(tensor, "normal_")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={a} > to={b}")
    gen = _generator()
    values = gen.normal(mean, std, size=tuple(tensor.shape))
    bad = (values < a) | (values > b)
    while bad.any():
        values[bad] = gen.normal(mean, std, size=int(bad.sum()))
        bad = (values < a) | (values > b)
    return _write(tensor, values)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill ``tensor`` with a (semi) orthogonal matrix, as ``torch.nn.init.orthogonal_``.

    Args:
        tensor: an n-dimensional tensor, n >= 2 (trailing dimensions are flattened)
        gain: optional scaling factor
        generator: the generator to sample from (default: nbgrad's)

    The Q of a QR factorisation of a normal matrix, with signs fixed by R's
    diagonal so that Q is uniform over orthogonal matrices (computed by NumPy
    on the host: an init is not a hot path).
    """
    _check(tensor, "copy_")
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _generator(generator).normal(0.0, 1.0, size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tuple(tensor.shape)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill the 2-D ``tensor`` from N(0, std**2) and zero a ``sparsity``
    fraction of each column (``ceil(sparsity * rows)`` entries at random rows)."""
    _check(tensor, "normal_")
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    gen = _generator(generator)
    values = gen.normal(0.0, std, size=(rows, cols))
    for col in range(cols):
        values[gen.permutation(rows)[:num_zeros], col] = 0
    return _write(tensor, values)


def dirac_(tensor, groups=1):
    """Fill the 3-, 4- or 5-D ``tensor`` with the Dirac delta, so a convolution
    with it preserves the identity of its inputs (per group of ``groups``)."""
    _check(tensor, "zero_")
    dimensions = tensor.dim()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    values = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _write(tensor, values)


def _make_deprecate(meth):
    """The old name without the trailing underscore, with PyTorch's FutureWarning."""
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"{old_name}(...): deprecated in favor of ``{new_name}``."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)


__all__ = ["orthogonal_", "sparse_", "dirac_", "calculate_gain", "uniform_", "normal_",
           "constant_", "zeros_", "ones_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_"]


def default_layer_init_(weight, bias=None):
    """PyTorch's reset_parameters for Linear and Conv layers: Kaiming-uniform
    weights (a=sqrt(5)) and a bias uniform in +-1/sqrt(fan_in)."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
