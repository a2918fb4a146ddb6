"""The negative log-likelihood loss as one autograd primitive.

PyTorch computes ``nll_loss`` (and ``cross_entropy``, which is ``log_softmax``
followed by it) as one node, ``NllLossBackward0`` (``NllLoss2DBackward0`` for
inputs with spatial dimensions), whose backward writes ``-weight[t] * g``
(divided by the total weight for ``mean``) at each sample's target class and
zero elsewhere. So does this one: one gather forward, one scatter backward,
instead of an index, a product, a sum and a division taped separately.

Targets arrive as a host array (``functional._host_targets``), already checked
against the number of classes; log-probabilities, the loss and the gradient
stay on the input's device.

The backward formula is written against ``ops_for(grad)``: with
``create_graph=True`` its scatter is a taped op whose gradient is the gather
at the targets, so the gradient can be differentiated again.
"""
import numpy as np

from ..ops.arrays import ops_for
from ..tape import grad_mode
from ..tape.graph import Node
from ..tensor import Tensor


def _class_last(data, backend):
    """(M, C) with classes last from a raw (C,), (N, C) or (N, C, d1, ...) array."""
    if data.ndim == 1:
        return data.reshape(1, -1)
    if data.ndim == 2:
        return data
    dims = (0, *range(2, data.ndim), 1)
    return backend.ascontiguous(data.transpose(dims)).reshape(-1, data.shape[1])


class NllLossBackward(Node):
    __slots__ = ("index", "coef", "shape", "per_sample", "backend", "_op_name")
    # The gradient is a new zero-filled array: the engine may hand it on without a copy.
    returns_fresh = True

    def __init__(self, logp, index, coef, per_sample):
        super().__init__([logp])
        self.save(logp)  # as PyTorch: writing into the log-probabilities before backward is caught
        self.index, self.coef, self.per_sample = index, coef, per_sample
        self.shape = logp._data.shape
        self.backend = logp._backend
        self._op_name = "NllLoss2D" if logp.ndim > 2 else "NllLoss"

    @property
    def op_name(self):
        return self._op_name

    def release_saved(self):
        super().release_saved()
        self.index = self.coef = None

    def backward(self, grad):
        xp = ops_for(grad)
        (logp,) = self.saved_values(xp.graph)  # raises if modified in place
        shape = self.shape
        classes = shape[0] if len(shape) == 1 else shape[1]
        rows = self.index.shape[0]
        # d loss / d logp[i, t_i] = coef_i * g_i (per sample) or coef_i * g (reduced);
        # coef is one scalar when every sample weighs the same. As taped ops the
        # gradient is linear in ``grad`` alone: its own gradient is a gather (and
        # zeros for the log-probabilities, as PyTorch's).
        picked = (xp.reshape(grad, (rows,)) if self.per_sample else grad) * xp.constant(self.coef)
        out = xp.scatter_per_row(picked, self.index, classes, logp)
        if len(shape) <= 2:
            return [xp.reshape(out, shape)]
        spatial = (shape[0], *shape[2:], classes)
        dims = (0, len(shape) - 1, *range(1, len(shape) - 1))
        return [xp.ascontiguous(xp.permute(xp.reshape(out, spatial), dims))]


def _check_bounds(flat, ignored, classes):
    """IndexError for the first target outside [0, classes) that is not ignored."""
    bad = (flat < 0) | (flat >= classes)
    if ignored is not None:
        bad &= ~ignored
    if bad.any():
        raise IndexError(f"Target {int(flat[bad][0])} is out of bounds.")


def nll_loss(logp, target, weight, ignore_index, reduction, loss_shape):
    """``logp``: log-probabilities (C,), (N, C) or (N, C, d1, ...); ``target``:
    class indices as a host array; ``weight``: raw class weights on ``logp``'s
    device, or None. Returns the loss (``loss_shape`` for ``reduction="none"``)
    and the total weight of the counted samples (the divisor of ``mean``)."""
    backend = logp._backend
    data = logp._data
    dtype = logp.dtype
    np_dtype = dtype.numpy
    classes = data.shape[0] if data.ndim == 1 else data.shape[1]
    flat = target.reshape(-1).astype(np.int64, copy=False)
    rows = flat.shape[0]
    # The common case (no class weights, a reduced loss) in one pass where the backend
    # has one, instead of a call per step (compare, any, min, max, gather, sum).
    fast = None
    if weight is None and reduction != "none" and data.ndim == 2 and rows:
        fast = backend.picked_sum(data, flat, ignore_index)
    if fast is not None:
        picked_sum, counted, bad = fast
        if bad >= 0:
            raise IndexError(f"Target {int(flat[bad])} is out of bounds.")
        if counted == rows:  # nothing ignored: every sample weighs 1
            coef = np_dtype.type(-1)
            # In NumPy scalars (the dtype's rounding, as the 0-d array's ops), then one 0-d
            # array: an in-place division of a 0-d array costs 1 us more.
            value = np_dtype.type(-picked_sum)
            if reduction == "mean":
                divisor = np_dtype.type(rows)
                value = value / divisor
                coef = coef / divisor
            loss = backend.full((), value, np_dtype)
            node = None
            if grad_mode.is_grad_enabled() and logp.requires_grad:
                node = NllLossBackward(logp, backend.asarray(flat.reshape(-1, 1)), coef, False)
            return Tensor._from_op(loss, node, dtype, backend), rows
    ignored = flat == ignore_index
    if not ignored.any():
        ignored = None
    if rows and (ignored is not None or flat.min() < 0 or flat.max() >= classes):
        _check_bounds(flat, ignored, classes)
    safe = flat if ignored is None else np.where(ignored, 0, flat)
    index = backend.asarray(safe.reshape(-1, 1))
    picked = backend.take_per_row(_class_last(data, backend), index)
    per_sample = reduction == "none"
    if weight is None and ignored is None:
        # Every sample weighs 1: one scalar coefficient, no weight arrays.
        total = rows
        loss = -picked
        coef = np_dtype.type(-1)
    else:
        scale = np.ones(rows, np_dtype) if weight is None else \
            backend.to_numpy(weight)[safe].astype(np_dtype)
        if ignored is not None:
            scale[ignored] = 0
        total = scale.sum()
        coef = backend.asarray(-scale)
        loss = picked * coef
    if per_sample:
        loss = loss.reshape(loss_shape)
    else:
        loss = backend.reduce_sum(loss, None, False, np_dtype)  # a 0-d array
        if reduction == "mean":
            # Divided by the total weight of the counted samples (0/0: NaN, as in PyTorch);
            # in place, so that the result stays a 0-d array.
            divisor = np_dtype.type(total)
            with np.errstate(divide="ignore", invalid="ignore"):
                loss /= divisor
                coef = coef / divisor
    node = None
    if grad_mode.is_grad_enabled() and logp.requires_grad:
        node = NllLossBackward(logp, index, coef, per_sample)
    return Tensor._from_op(loss, node, dtype, backend), total
