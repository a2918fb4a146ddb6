"""``F.ctc_loss`` and its autograd node: the per-sequence loss as one
primitive (PyTorch's ``CtcLossBackward``; the backend's dynamic programme,
``backends/cpu/ctc.py``), then PyTorch's reduction composed on top
(``mean``: each loss over its target length, then the batch mean)."""
import numbers

import numpy as np

from ..backends import backend_of
from ..ops.arrays import ops_for
from ..ops.registry import FUNCTIONS
from ..ops.scatter import NotImplementedBackward
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor

_INVALID = ("ctc_loss() received an invalid combination of arguments - got ({got}), but "
            "expected one of:\n"
            " * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
            "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool "
            "zero_infinity = False)\n"
            " * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
            "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n")


class CtcLossBackward(Node):
    """The gradient of each sequence's loss in the log-probabilities (PyTorch's formula)."""

    __slots__ = ("args", "nll", "log_alpha", "zero_infinity")
    op_name = "CtcLoss"

    def __init__(self, log_probs, args, nll, log_alpha, zero_infinity):
        super().__init__([log_probs])
        self.save(log_probs)
        self.args, self.nll, self.log_alpha = args, nll, log_alpha
        self.zero_infinity = zero_infinity

    def backward(self, grad):
        xp = ops_for(grad)
        (log_probs,) = self.saved_values(xp.graph)
        if not xp.graph:
            return [backend_of(grad).ctc_loss_backward(grad, log_probs, *self.args, self.nll,
                                                       self.log_alpha, self.zero_infinity)]
        # A graph of the gradient, as PyTorch's: its own derivative is not implemented.
        raw = grad._backend.ctc_loss_backward(grad._data, log_probs._data, *self.args, self.nll,
                                              self.log_alpha, self.zero_infinity)
        node = NotImplementedBackward([grad, log_probs], "aten::_ctc_loss_backward") if (
            grad_mode.is_grad_enabled() and (grad.requires_grad or log_probs.requires_grad)) \
            else None
        return [Tensor._from_op(raw, node, log_probs.dtype, log_probs._backend)]


def _ints(value):
    return isinstance(value, (tuple, list)) and all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value)


def _lengths(value, name, batch):
    """A length argument (a tensor or a sequence of ints) as host int64 (batch,)."""
    if isinstance(value, Tensor):
        if value.dtype.is_floating_point:
            raise RuntimeError(f"{name} must be integral")
        data = np.asarray(value.cpu().numpy(), np.int64).reshape(-1)
    else:
        data = np.asarray(value, np.int64).reshape(-1)
    if data.shape[0] != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return data


def _padded_targets(targets, target_lengths, batch):
    """Targets (N, S) or concatenated (sum of lengths,) as host int64 (N, S)."""
    data = np.asarray(targets.cpu().numpy()).astype(np.int64)
    if data.ndim == 2:
        longest = int(target_lengths.max(initial=0))
        if data.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                               f"but got size {data.shape[1]} for argument #2 'targets' (while "
                               "checking arguments for ctc_loss_allocate_outputs)")
        return data
    total = int(target_lengths.sum())
    if data.shape[0] < total:
        raise RuntimeError(f"Expected tensor to have size at least {total} at dimension 0, but "
                           f"got size {data.shape[0]} for argument #2 'targets' (while checking "
                           "arguments for ctc_loss_allocate_outputs)")
    padded = np.zeros((batch, int(target_lengths.max(initial=0))), np.int64)
    start = 0
    for b, length in enumerate(target_lengths):
        padded[b, :length] = data[start:start + length]
        start += length
    return padded


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean',
    zero_infinity=False) -> Tensor

    The connectionist temporal classification loss of ``log_probs`` (T, N, C)
    or (T, C), log-probabilities of the C classes at each of T steps (from
    ``log_softmax``), against ``targets`` (N, S) padded, or concatenated
    (sum(target_lengths),), with the class ``blank`` between labels.
    ``reduction='mean'`` divides each sequence's loss by its target length
    before the batch mean; ``zero_infinity`` replaces infinite losses (and
    their gradients) by zero. The gradient is PyTorch's (see
    ``nbgrad.backends.cpu.ctc``)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    lengths_given = [input_lengths, target_lengths]
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if unbatched:
        targets = targets.unsqueeze(0)
        lengths_given = [v.reshape(1) if isinstance(v, Tensor) else v for v in lengths_given]
    steps, batch, classes = lp.shape
    # PyTorch's two signatures: both lengths tensors, or both sequences of ints
    if not (all(isinstance(v, Tensor) for v in lengths_given) or all(map(_ints, lengths_given))):
        got = ", ".join(["Tensor", "Tensor", *(type(v).__name__ for v in lengths_given),
                         "int", "int", "bool"])
        raise TypeError(_INVALID.format(got=got))
    in_len, tg_len = (_lengths(v, n, batch) for v, n in zip(lengths_given,
                                                          ("input_lengths", "target_lengths")))
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for b in range(batch):
        if in_len[b] > steps or in_len[b] < 0:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got "
                               f"value {in_len[b]} (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
    padded = _padded_targets(targets, tg_len, batch)
    args = (padded, in_len, tg_len, blank)
    nll, log_alpha = lp._backend.ctc_loss(lp._data, *args)
    node = None
    if grad_mode.is_grad_enabled() and lp.requires_grad:
        node = CtcLossBackward(lp, args, nll, log_alpha, zero_infinity)
    loss = Tensor._from_op(nll, node, lp.dtype, lp._backend)
    if zero_infinity:  # (as PyTorch's where: the gradient is zero there too)
        loss = FUNCTIONS["where"](loss == float("inf"), loss.new_zeros(()), loss)
    if unbatched:
        loss = loss.squeeze(0)
    if reduction == "mean":
        divisor = Tensor._from_op(np.maximum(tg_len, 1).astype(lp.dtype.numpy), None, lp.dtype)
        if unbatched:
            divisor = divisor.squeeze(0)
        return (loss / divisor.to(lp.device)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss
