"""Loss functions (``F.l1_loss``, ``F.smooth_l1_loss``, ``F.huber_loss``,
``F.binary_cross_entropy``, ``F.kl_div``, ``F.poisson_nll_loss``,
``F.gaussian_nll_loss``, ``F.cosine_embedding_loss``,
``F.margin_ranking_loss``, ``F.triplet_margin_loss``,
``F.multilabel_soft_margin_loss``) with PyTorch's arguments, checks and
graphs.

Where PyTorch's loss is one native op (mse, smooth L1, Huber, binary cross
entropy) it is one node here too, ``<Name>Backward``: its elementwise row
(``declarations.loss_table``) and the reduction together. Its backward is
the row's derivative rows applied to the expanded gradient: raw arrays in a
plain backward, taped with ``create_graph``. The others are PyTorch's
compositions of ops, so their graphs match PyTorch's.
"""
import math
import warnings

import numpy as np

from .. import creation, dtypes
from ..backends import backend_of
from ..declarations import loss_table, op_table
from ..declarations.derivation import derivative_row
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..ops.registry import FUNCTIONS
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's mapping of the deprecated size_average/reduce arguments."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  "reduction='mean' instead.", stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_tensor(name, value, arg, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _warn_size(input, target, stacklevel=3):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.",
                      stacklevel=stacklevel)


# ------------------------------------------------------------ fused losses
class PointwiseLossBackward(Node):
    """A pointwise loss row and its reduction as one node: the gradient of
    each tensor input is the row's derivative at the expanded incoming
    gradient (times 1/n for ``mean``)."""

    __slots__ = ("row", "numbers", "reduction", "shape", "_op_name")

    def __init__(self, row, tensors, numbers, reduction):
        super().__init__(tensors)
        self.save(*tensors)
        self.row, self.numbers, self.reduction = row, numbers, reduction
        self.shape = tensors[0]._data.shape
        self._op_name = row.op_name

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        saved = self.saved_values(xp.graph)
        if xp.graph:
            tensors = saved
            g = grad
        else:  # raw arrays as Tensors without history: the derivative rows run as ops
            dtype = dtypes.from_numpy_dtype(grad.dtype)
            backend = backend_of(grad)
            tensors = [Tensor._wrap(a, dtype, backend) for a in saved]
            g = Tensor._wrap(grad, dtype, backend)
        if self.reduction != "none":
            count = 1
            for s in self.shape:
                count *= s
            if self.reduction == "mean":
                g = g * (1.0 / count) if count else g * math.nan
            g = g.expand(self.shape)
        values = dict(zip(self.row.inputs, list(tensors) + list(self.numbers)))
        values["g"] = g
        grads = []
        for i in range(len(tensors)):
            if not self.needs_grad(i):
                grads.append(None)
                continue
            derivative = derivative_row(self.row, i)
            result = derivative(*(values[p] for p in derivative.parent_params))
            grads.append(result if xp.graph else result._data)
        return grads


def _fused_loss(row, tensors, numbers, reduction):
    """``row(*tensors, *numbers)`` reduced, recorded as one node."""
    with grad_mode.no_grad():
        plain = [t.detach() for t in tensors]
        loss = _reduce(row(*plain, *numbers), reduction)
    node = None
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors):
        node = PointwiseLossBackward(row, tensors, numbers, reduction)
    return Tensor._from_op(loss._data, node, loss.dtype, loss._backend)


def _broadcast_pair(input, target):
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    from ..ops.broadcasting import broadcast_shapes
    shape = broadcast_shapes(tuple(input.shape), tuple(target.shape))
    return input.expand(shape), target.expand(shape)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (one ``MseLossBackward`` node)."""
    _check_tensor("mse_loss", input, "input", 1)
    _check_tensor("mse_loss", target, "target", 2)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size(input, target)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        diff = a - b
        return _reduce(diff * diff * weight, reduction)
    return _fused_loss(loss_table.mse_loss, [a, b], (), reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error (PyTorch's composition: abs of the difference, reduced)."""
    _check_tensor("l1_loss", input, "input", 1)
    _check_tensor("l1_loss", target, "target", 2)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 * x**2 / beta where |x| < beta, else |x| - 0.5 * beta (x = input - target)."""
    _check_tensor("smooth_l1_loss", input, "input", 1)
    _check_tensor("smooth_l1_loss", target, "target", 2)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    a, b = _broadcast_pair(input, target)
    if beta == 0.0:  # PyTorch: the L1 loss
        return l1_loss(a, b, reduction=reduction)
    return _fused_loss(loss_table.smooth_l1_loss, [a, b], (float(beta),), reduction)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 * x**2 where |x| < delta, else delta * (|x| - 0.5 * delta)."""
    _check_tensor("huber_loss", input, "input", 1)
    _check_tensor("huber_loss", target, "target", 2)
    _check_reduction(reduction)
    _warn_size(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        loss = _fused_loss(loss_table.huber_loss, [a, b], (float(delta),), "none") * weight
        return _reduce(loss, reduction)
    return _fused_loss(loss_table.huber_loss, [a, b], (float(delta),), reduction)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(y * log(x) + (1 - y) * log(1 - x)), each log clamped at -100, times ``weight``."""
    _check_tensor("binary_cross_entropy", input, "input", 1)
    _check_tensor("binary_cross_entropy", target, "target", 2)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if input.numel():
        with grad_mode.no_grad():
            bad = input.min().item() < 0 or input.max().item() > 1
        if bad:
            raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None and weight.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError("The function 'binary_cross_entropy' is not differentiable with "
                           "respect to argument 'weight'. This input cannot have requires_grad "
                           "True.")
    if weight is None:
        w = Tensor._wrap(input._backend.full((), 1.0, input._data.dtype), input.dtype,
                         input._backend)
    else:
        w = weight
    from ..ops.broadcasting import broadcast_shapes
    shape = broadcast_shapes(tuple(input.shape), tuple(w.shape))
    if shape != tuple(input.shape):
        raise RuntimeError(f"The size of tensor a ({input.shape[-1]}) must match the size of "
                           f"tensor b ({w.shape[-1]}) at non-singleton dimension "
                           f"{input.ndim - 1}")
    w = w.expand(shape)
    return _fused_loss(loss_table.binary_cross_entropy, [input, target, w], (), reduction)


# -------------------------------------------------------- composed losses
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence of ``target`` from ``input`` (log-probabilities)."""
    _check_tensor("kl_div", input, "input", 1)
    _check_tensor("kl_div", target, "target", 2)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        from ..declarations import op_table
        positive = target > 0
        logs = op_table.BY_NAME["where"](positive, target, 1.0).log()
        loss = target * logs - target * input
    if reduction == "batchmean":
        if input.ndim == 0:
            return loss.sum()
        return loss.sum() / input.shape[0]
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log-likelihood of ``target`` under a Poisson of rate ``input``
    (``exp(input)`` with ``log_input``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        from ..declarations import op_table
        where = op_table.BY_NAME["where"]
        safe = where(target > 1, target, 1.0)
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        loss = loss + where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of ``target`` under a Gaussian of mean ``input``
    and variance ``var`` (clamped at ``eps``, with no gradient through the clamp)."""
    if isinstance(var, (int, float)):
        var = Tensor._wrap(input._backend.full(tuple(input.shape), float(var),
                                               input._data.dtype), input.dtype, input._backend)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    with grad_mode.no_grad():
        if (var < 0).any().item():
            raise ValueError("var has negative entry/entries")
    # var.clamp(min=eps) with the gradient of the identity, as PyTorch's in-place clamp under no_grad
    with grad_mode.no_grad():
        shift = var.clamp(eps, None) - var
    var = var + shift
    diff = input - target
    loss = 0.5 * (var.log() + diff * diff / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.ndim != input2.ndim or tuple(input1.shape) != tuple(input2.shape):
        raise RuntimeError(f"cosine_embedding_loss : All input tensors should have same shape "
                           f"but got {list(input1.shape)} and {list(input2.shape)}")
    targ_dim = target.ndim
    if targ_dim > 1:
        raise RuntimeError(f"1D target tensor expected, multi-target not supported")
    if input1.ndim != targ_dim + 1:
        raise RuntimeError(f"{input1.ndim}D target tensor expects {targ_dim + 1}D input tensors, "
                           f"but found inputs with sizes {list(input1.shape)} and "
                           f"{list(input2.shape)}.")
    from ..declarations import op_table
    where = op_table.BY_NAME["where"]
    eps = 1e-12
    dim = input1.ndim - 1
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zeros = cos * 0.0
    pos = where(target == 1, 1.0 - cos, zeros)
    neg = where(target == -1, (cos - margin).clamp(0.0, None), zeros)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0.0), reduction)


def _pairwise_distance(x1, x2, p, eps):
    diff = x1 - x2 + eps
    dim = diff.ndim - 1
    if p == 2:
        return (diff * diff).sum(dim).sqrt()
    return diff.abs().pow(p).sum(dim).pow(1.0 / p)


def _check_triplet(anchor, positive, negative):
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a_dim}D, positive "
                           f"{p_dim}D, and negative {n_dim}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with d the p-norm distance."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_triplet(anchor, positive, negative)
    if margin <= 0:
        raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} "
                         "instead")
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(_pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(y * log sigmoid(x) + (1 - y) * log sigmoid(-x)), averaged over the classes."""
    from .functional_activation import logsigmoid
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    dim = input.ndim - 1
    loss = loss.sum(dim) / input.shape[dim]
    return _reduce(loss, reduction)


_WHERE = op_table.BY_NAME["where"]


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``input`` where the target is 1, ``max(0, margin - input)`` where it is -1
    (PyTorch's composition: other targets add both)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zeros = input * 0.0
    output = (_WHERE(target != 1, (margin - input).clamp_min(0.0), zeros)
              + _WHERE(target != -1, input, zeros))
    return _reduce(output, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``, elementwise."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce((-input * target).exp().log1p(), reduction)


def _class_rows(name, input, target):
    """(N, C) input and (N,) target of a multi-class margin loss (unbatched: N = 1)."""
    if input.ndim > 2 or target.ndim > 1:
        raise RuntimeError(f"{name}: Expected non-empty vector or matrix with optional 0-dim "
                           f"batch size, but got: {list(input.shape)}")
    rows = input.reshape(1, -1) if input.ndim < 2 else input
    return rows, target.reshape(-1)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """``sum over i != y of max(0, margin - x[y] + x[i])**p (* weight[y]) / C`` per sample."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    rows, labels = _class_rows("multi_margin_loss", input, target)
    n, classes = rows.shape
    if labels.shape[0] != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                           f"{list(weight.shape)}")
    if labels.numel() and bool(((labels < 0) | (labels >= classes)).any()):
        raise RuntimeError("target out of range")
    labels = labels.long()
    z = (margin - rows.gather(1, labels.unsqueeze(1)) + rows).clamp_min(0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[labels].unsqueeze(1)
    own = labels.unsqueeze(1) == creation.arange(classes, device=input.device)
    loss = _WHERE(own, z * 0.0, z).sum(1) / classes
    return _reduce(loss if input.ndim == 2 else loss.reshape(()), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum over target labels j and other classes i of max(0, 1 - (x[j] - x[i])) / C``;
    each row of ``target`` lists its labels up to the first -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    rows = input.reshape(1, -1) if input.ndim < 2 else input
    labels = target.reshape(1, -1) if target.ndim < 2 else target
    if tuple(labels.shape) != tuple(rows.shape) or input.ndim > 2:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    n, classes = rows.shape
    listed = labels.cpu().numpy().astype(np.int64)
    valid = np.cumprod(listed != -1, axis=1).astype(bool)  # the labels before the first -1
    if ((listed < 0) | (listed >= classes))[valid].any():
        raise RuntimeError("argument #2 'target' is out of range")
    positions = np.where(valid, listed, 0)
    is_target = np.zeros((n, classes), bool)
    is_target[np.nonzero(valid)[0], listed[valid]] = True
    device = input.device
    x_j = rows.gather(1, creation.tensor(positions, device=device))  # (N, K)
    pairs = (1.0 - x_j.unsqueeze(2) + rows.unsqueeze(1)).clamp_min(0.0)  # (N, K, C)
    keep = creation.tensor(valid[:, :, None] & ~is_target[:, None, :], device=device)
    loss = _WHERE(keep, pairs, pairs * 0.0).sum((1, 2)) / classes
    return _reduce(loss if input.ndim == 2 else loss.reshape(()), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``distance_function`` (by
    default the pairwise distance)."""
    _check_reduction(reduction)
    _check_triplet(anchor, positive, negative)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    distance = distance_function if distance_function is not None else FUNCTIONS[
        "pairwise_distance"]
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "cosine_embedding_loss",
           "margin_ranking_loss", "triplet_margin_loss", "multilabel_soft_margin_loss",
           "ctc_loss", "hinge_embedding_loss", "soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_with_distance_loss"]


from ._ctc import ctc_loss  # noqa: E402  (its own module: the loss is a dynamic programme)
