"""Functional forms of the layers and losses: ``nbgrad.nn.functional`` (``F``)."""
import numbers
import warnings

import numpy as np

from .. import dtypes
from ..declarations import nn_table, op_table
from ..ops.reductions import log_softmax as _log_softmax
from ..ops.reductions import softmax as _softmax
from ..ops.dual import tangent_rule
from ..tensor import Tensor
from . import _conv, _convnd, _nll

_where = op_table.BY_NAME["where"]

_C_NAMES = dtypes.TYPE_NAMES  # "Float", "Long", "Half"


_POSITIONS = {"input": 1, "weight": 2, "target": 2, "bias": 3}


def _check_tensor(name, value, arg="input"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {_POSITIONS[arg]}) must be Tensor, "
                        f"not {type(value).__name__}")


def _pair(value, name="kernel_size"):
    if isinstance(value, numbers.Integral):
        return (int(value), int(value))
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {value}")
    return value


def _same_dtype(op, a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: expected input and weight to have the same dtype, but got "
                           f"{_C_NAMES[a.dtype.name]} and {_C_NAMES[b.dtype.name]}")


def _same_device(a, b):
    if a._backend is not b._backend:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           f"devices, {a.device} and {b.device}!")


# ------------------------------------------------------------------ linear
@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` over the last dimension of ``input``."""
    _check_tensor("linear", input)
    _check_tensor("linear", weight, "weight")
    # Raw shapes: this runs for every layer call, and the checks are its Python cost.
    x_shape, w_shape = input._data.shape, weight._data.shape
    if len(w_shape) != 2:
        raise RuntimeError(f"linear(): weight must be 2-D, got shape {list(w_shape)}")
    if not x_shape:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D and 2D")
    if x_shape[-1] != w_shape[1]:
        rows = int(np.prod(x_shape[:-1])) if len(x_shape) > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x_shape[-1]} "
                           f"and {w_shape[1]}x{w_shape[0]})")
    _same_device(input, weight)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_C_NAMES[input.dtype.name]} and {_C_NAMES[weight.dtype.name]}")
    if bias is not None:
        _check_tensor("linear", bias, "bias")
        b_shape = bias._data.shape
        if b_shape not in ((w_shape[0],), (1,), ()):
            raise RuntimeError(f"linear(): bias of shape {list(b_shape)} does not match "
                               f"out_features {w_shape[0]}")
        _same_dtype("linear", input, bias)
        if b_shape != (w_shape[0],):
            bias_full = bias.expand(w_shape[0])
            return _conv.linear(input, weight, None) + bias_full
    return _conv.linear(input, weight, bias)


# ------------------------------------------------------------- convolution
def _conv_padding(padding, kernel, dilation, stride):
    """(top, bottom, left, right) from an int, a pair, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            pads = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return tuple(pads)
        raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    ph, pw = _pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    return (ph, ph, pw, pw)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as in PyTorch) of ``input``
    (N, C, H, W) or (C, H, W) with ``weight`` (O, C, kh, kw)."""
    _check_tensor("conv2d", input)
    _check_tensor("conv2d", weight, "weight")
    if groups != 1 or (isinstance(padding, str) and padding not in ("same", "valid")):
        return _convnd.conv("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    if weight.ndim != 4:
        raise RuntimeError(f"conv2d(): weight must be 4-D (out_channels, in_channels, kH, kW), "
                           f"got shape {list(weight.shape)}")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(input.shape)}")
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    if x.shape[1] != weight.shape[1]:
        raise RuntimeError(f"Given groups=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(x.shape)} to have {weight.shape[1]} channels, but got "
                           f"{x.shape[1]} channels instead")
    _same_device(input, weight)
    kernel = tuple(weight.shape[2:])
    pads = _conv_padding(padding, kernel, dilation, stride)
    padded = (x.shape[2] + pads[0] + pads[1], x.shape[3] + pads[2] + pads[3])
    effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if padded[0] < effective[0] or padded[1] < effective[1]:
        raise RuntimeError(f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). "
                           f"Kernel size: ({effective[0]} x {effective[1]}). Kernel size can't be "
                           f"greater than actual input size")
    if bias is not None:
        _check_tensor("conv2d", bias, "bias")
        if tuple(bias.shape) != (weight.shape[0],):
            raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                               f"1-dimensional with {weight.shape[0]} elements, but got bias of "
                               f"size {list(bias.shape)} instead")
        if bias.dtype is not input.dtype:  # PyTorch checks the bias's dtype first
            raise RuntimeError(f"Input type ({_C_NAMES[input.dtype.name].lower()}) and bias type "
                               f"({_C_NAMES[bias.dtype.name].lower()}) should be the same")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.tensor_type[:-6]} but found "
                           f"{weight.dtype.tensor_type[:-6]}")
    if not x.is_floating_point():
        raise RuntimeError(f'"conv2d" not implemented for \'{_C_NAMES[x.dtype.name]}\'')
    out = _conv.conv2d(x, weight, bias, stride, pads, dilation)
    return out if batched else out.squeeze(0)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) of ``input`` (N, C, L) or (C, L)
    with ``weight`` (O, C/groups, k)."""
    return _convnd.conv("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) of ``input`` (N, C, D, H, W) or (C, D, H, W)
    with ``weight`` (O, C/groups, kd, kh, kw)."""
    return _convnd.conv("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 3-D convolution; ``weight`` (C, O/groups, kd, kh, kw)."""
    return _convnd.conv("conv_transpose3d", input, weight, bias, stride, padding, dilation,
                        groups, 3, True, output_padding)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 1-D convolution; ``weight`` (C, O/groups, k)."""
    return _convnd.conv("conv_transpose1d", input, weight, bias, stride, padding, dilation,
                        groups, 1, True, output_padding)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-D convolution; ``weight`` (C, O/groups, kh, kw)."""
    return _convnd.conv("conv_transpose2d", input, weight, bias, stride, padding, dilation,
                        groups, 2, True, output_padding)


# ----------------------------------------------------------------- pooling
def _pool_args(name, input, kernel_size, stride, padding, dilation):
    _check_tensor(name, input)
    kernel = _pair(kernel_size)
    stride = kernel if stride is None or (not isinstance(stride, numbers.Integral)
                                          and len(stride) == 0) else _pair(stride, "stride")
    padding, dilation = _pair(padding, "padding"), _pair(dilation, "dilation")
    if min(kernel) < 1:
        raise RuntimeError(f"{name}: kernel_size must be greater than zero, but got "
                           f"kH: {kernel[0]} kW: {kernel[1]}")
    if min(stride) < 1:
        raise RuntimeError(f"{name}: stride must be greater than zero, but got "
                           f"dH: {stride[0]} dW: {stride[1]}")
    if min(dilation) < 1:
        raise RuntimeError(f"{name}: dilation must be greater than zero, but got "
                           f"dilationH: {dilation[0]} dilationW: {dilation[1]}")
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    if name == "avg_pool2d":  # PyTorch reads input.size(-3) first
        input.size(-3)
    elif input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:  # only the batch may be empty
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{list(input.shape)}")
    # PyTorch's kernels: max pooling takes every dtype but bool; average pooling floats
    # and int64 (averaged with truncating division).
    if input.dtype is dtypes.bool_ or not (name == "max_pool2d" or input.is_floating_point()
                                           or input.dtype is dtypes.int64):
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f'\'{_C_NAMES[input.dtype.name]}\'')
    return kernel, stride, padding, dilation


def _check_pool_output(input, out_hw):
    if out_hw[0] < 1 or out_hw[1] < 1:
        c, h, w = input.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out_hw[0]}x{out_hw[1]}). Output size is too small")


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    kernel, stride, padding, dilation = _pool_args("max_pool2d", input, kernel_size, stride,
                                                   padding, dilation)
    h, w = input.shape[-2:]
    _check_pool_output(input, [_conv.pool_out_size(s, k, st, p, d, ceil_mode) for s, k, st, p, d
                               in zip((h, w), kernel, stride, padding, dilation)])
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    out, argmax = _conv.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode,
                                   need_indices=return_indices)
    if not batched:
        out = out.squeeze(0)
    if not return_indices:
        return out
    indices = _conv.flat_indices(input._backend, argmax, x.shape, (padding[0], 0, padding[1], 0),
                                 kernel, stride, dilation)
    indices = Tensor._wrap(indices if batched else indices[0], dtypes.int64, input._backend)
    return out, indices


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    kernel, stride, padding, _ = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1)
    for p, k in zip(padding, kernel):
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation=1")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    h, w = input.shape[-2:]
    _check_pool_output(input, [_conv.pool_out_size(s, k, st, p, 1, ceil_mode) for s, k, st, p
                               in zip((h, w), kernel, stride, padding)])
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    out = _conv.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad,
                           divisor_override)
    return out if batched else out.squeeze(0)


# ------------------------------------------------------------- activations
def relu(input, inplace=False):
    if not isinstance(input, Tensor):  # PyTorch's text names the op it dispatches to
        raise TypeError(f"relu{'_' if inplace else ''}(): argument 'input' (position 1) must be "
                        f"Tensor, not {type(input).__name__}")
    return input.relu_() if inplace else input.relu()


def relu_(input):
    """In-place version of :func:`relu`."""
    return relu(input, inplace=True)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def gelu(input, approximate="none"):
    if approximate == "none":
        return nn_table.gelu(input)
    if approximate == "tanh":
        return nn_table.gelu_tanh(input)
    raise RuntimeError("approximate argument must be either none or tanh.")


def _softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def softmax(input, dim=None, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return _softmax(input, dim, dtype)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def log_softmax(input, dim=None, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return _log_softmax(input, dim, dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.
    The mask is drawn on the host (nbgrad's generator, as every random
    function) and copied to the input's device."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    from ..creation import rand
    dtype = input.dtype.numpy
    backend = input._backend
    if p == 1.0:
        mask = backend.zeros(tuple(input.shape), dtype)
    else:
        keep = rand(*input.shape, dtype=input.dtype)._data < (1.0 - p)
        mask = backend.asarray(keep.astype(dtype) * dtype.type(1.0 / (1.0 - p)))
    mask = Tensor._wrap(mask, input.dtype, backend)
    return input.mul_(mask) if inplace else input * mask


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


# ------------------------------------------------------------------ losses
_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# mse_loss: one MseLossBackward node, in functional_loss (imported at the end)


def _class_last(input):
    """(M, C) logits with classes last, from (C,), (N, C) or (N, C, d1, ...)."""
    if input.ndim == 1:
        return input.unsqueeze(0)
    if input.ndim == 2:
        return input
    dims = (0, *range(2, input.ndim), 1)
    return input.permute(dims).reshape(-1, input.shape[1])


def _check_targets(input, target):
    """PyTorch's nll_loss_nd checks, in its order and with its messages."""
    if target.is_floating_point() or target.dtype is dtypes.bool_:
        raise RuntimeError(f"expected scalar type Long but found {_C_NAMES[target.dtype.name]}")
    shape, t_shape = input._data.shape, target._data.shape  # raw: no Size per call
    if len(shape) == 1:
        if len(t_shape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if len(t_shape) == 1 and t_shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                             f"{t_shape[0]}")
        return
    batch = t_shape[0] if t_shape else 0
    if batch != shape[0]:
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                         f"({batch}).")
    if len(shape) == 2:
        if len(t_shape) != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif t_shape != (shape[0], *shape[2:]):
        raise RuntimeError(f"Expected target size {[shape[0], *shape[2:]]}, got "
                           f"{list(t_shape)}")


def _loss_shape(input, target):
    return () if input._data.ndim == 1 else target._data.shape


def _weight_array(weight, classes, input):
    """The class weights as a raw array of ``input``'s dtype, on its device."""
    if weight is None:
        return None
    _check_tensor("cross_entropy", weight, "weight")
    if tuple(weight.shape) != (classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    _same_device(input, weight)
    return weight._data.astype(input.dtype.numpy, copy=False)


def _host_targets(input, target):
    """Class indices on the host. They are checked against the number of
    classes before anything is computed (an out-of-range target is an
    IndexError on every device), and they say which log-probabilities to
    pick: a device->host copy of M integers; logits, log-probabilities and
    gradients stay on the device."""
    _same_device(input, target)
    return target._backend.to_numpy(target._data)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``."""
    _check_reduction(reduction)
    _check_tensor("nll_loss", input)
    _check_tensor("nll_loss", target, "target")
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    _check_targets(input, target)
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    w = _weight_array(weight, classes, input)
    loss, _ = _nll.nll_loss(input, _host_targets(input, target), w, ignore_index, reduction,
                            _loss_shape(input, target))
    return loss


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits ``input`` (classes in dim 1, or dim 0 for one
    sample) against class indices or class probabilities ``target``."""
    _check_reduction(reduction)
    _check_tensor("cross_entropy", input)
    _check_tensor("cross_entropy", target, "target")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    ndim = input._data.ndim
    if ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    class_dim = 0 if ndim == 1 else 1
    classes = input._data.shape[class_dim]
    logp = input.log_softmax(class_dim)
    w = _weight_array(weight, classes, input)
    if target._data.shape == input._data.shape:  # PyTorch's rule: then class probabilities
        return _cross_entropy_probs(input, logp, target, w, classes, class_dim, reduction,
                                    label_smoothing)
    if target.dtype is not dtypes.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_C_NAMES[target.dtype.name]}")
    _check_targets(input, target)
    host_target = _host_targets(input, target)
    # NllLoss over LogSoftmax: the two nodes PyTorch's cross_entropy records.
    nll, total_weight = _nll.nll_loss(logp, host_target, w, ignore_index, reduction,
                                      _loss_shape(input, target))
    if label_smoothing == 0.0:
        return nll
    backend = input._backend
    logp2 = _class_last(logp)
    kept = Tensor._wrap(backend.asarray(host_target.reshape(-1) != ignore_index), dtypes.bool_,
                        backend)
    weighted = logp2 if w is None else logp2 * Tensor._wrap(w, input.dtype, backend)
    # Ignored rows are selected away (a product with 0 would turn -inf into NaN), as in PyTorch.
    smooth = _where(kept, -weighted.sum(1), 0.0)
    if reduction == "none":
        smooth = smooth.reshape(_loss_shape(input, target))
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        smooth = smooth.sum() / input.dtype.numpy.type(total_weight)
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / classes)


def _cross_entropy_probs(input, logp, target, w, classes, class_dim, reduction, label_smoothing):
    if not target.is_floating_point():
        raise RuntimeError(f"Expected floating point type for target with class probabilities, "
                           f"got {_C_NAMES[target.dtype.name]}")
    if label_smoothing > 0:
        target = target * (1.0 - label_smoothing) + label_smoothing / classes
    product = logp * target
    if w is not None:
        shape = [1] * input.ndim
        shape[class_dim] = classes
        product = product * Tensor._wrap(w.reshape(shape), input.dtype, input._backend)
    loss = -product.sum(class_dim)
    if reduction == "mean":  # PyTorch divides by the number of samples, not by weights
        return loss.sum() / input.dtype.numpy.type(input.numel() // classes if classes else 0)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid plus binary cross entropy in one numerically stable row."""
    _check_reduction(reduction)
    _check_tensor("binary_cross_entropy_with_logits", input)
    _check_tensor("binary_cross_entropy_with_logits", target, "target")
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    if not target.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_C_NAMES[target.dtype.name]}")
    loss = nn_table.binary_cross_entropy_with_logits(input, target,
                                                  1.0 if pos_weight is None else pos_weight)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


__all__ = ["linear", "conv2d", "max_pool2d", "avg_pool2d", "relu", "relu_", "sigmoid", "tanh",
           "gelu", "softmax", "log_softmax", "dropout", "flatten", "mse_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy_with_logits"]

# -- issue 16 items 1, 2, 5: activations, normalization/embedding and losses, in their modules
from . import functional_activation as _activation  # noqa: E402
from .functional_activation import *  # noqa: E402,F401,F403
from . import functional_norm as _norm  # noqa: E402
from .functional_norm import *  # noqa: E402,F401,F403
from . import functional_loss as _loss  # noqa: E402
from .functional_loss import *  # noqa: E402,F401,F403

__all__ += _activation.__all__ + _norm.__all__ + [n for n in _loss.__all__ if n not in __all__]

# -- distances and encodings
from ..ops.distances import cosine_similarity, pairwise_distance  # noqa: E402
from .functional_encoding import one_hot  # noqa: E402

__all__ += ["cosine_similarity", "pairwise_distance", "one_hot"]

# -- convolution, pooling, padding, resampling, recurrent, attention (issue 16, items 3-4)
from . import functional_layers as _layers  # noqa: E402
from .functional_layers import *  # noqa: E402,F401,F403

__all__ += _layers.__all__ + ["conv1d", "conv_transpose1d", "conv_transpose2d"]

# -- dropout family, bilinear, channel shuffle (issue 16 breadth)
from . import functional_bilinear as _bilinear  # noqa: E402
from . import functional_dropout as _dropout  # noqa: E402
from .functional_bilinear import *  # noqa: E402,F401,F403
from .functional_dropout import *  # noqa: E402,F401,F403

__all__ += _dropout.__all__ + _bilinear.__all__
