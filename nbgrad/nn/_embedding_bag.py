"""``embedding_bag``: sums, means or maxima of bags of embedding rows, recorded
as one ``EmbeddingBagBackward`` node, as PyTorch's (re-exported by
``nbgrad.nn.functional``).

The bags are bookkept on the host (which kept position belongs to which bag;
index arrays, as every gather here takes them); the rows stay on the weight's
device. Sum and mean: a gather of the kept rows, each scaled (1/count for a
mean, its per-sample weight for a sum), added into its bag (``index_add``).
Max: a running maximum over the k-th kept row of every bag (the backend's
``max_pool_step``; a bag shorter than k re-reads its last row), remembering
which row won for each element. The backward is written once against
``ops_for`` (gather and index_add are each other's adjoint), so it can be
differentiated again; padding and the positions past the last bag are left out
(selected away, never multiplied by zero).
"""
import numpy as np

from .. import dtypes
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tape.graph import Node, SavedValue
from ..tensor import Tensor


def _check_tensor(value, arg, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"embedding_bag(): argument '{arg}' (position {position}) must be "
                        f"Tensor, not {type(value).__name__}")


def _check_indices(t):
    if t.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {t.type()} instead "
                           "(while checking arguments for embedding_bag)")


def _host(t):
    return t._backend.to_numpy(t._data).reshape(-1).astype(np.int64, copy=False)


class _Bags:
    """Where each kept position goes: ``pos`` (kept positions of the flat
    input), ``bag`` (its bag), ``idx`` (its row of the weight), ``counts``
    (kept rows per bag), ``bags`` (how many), ``length`` (the input's)."""

    def __init__(self, host, offsets, include_last_offset, padding_idx):
        self.length = host.size
        # (with include_last_offset the last value is not an end: PyTorch's last bag,
        # as every other, runs to the next start or to the end of the input)
        starts = offsets[:-1] if include_last_offset else offsets
        ends = np.append(starts[1:], host.size)
        self.bags = starts.size
        lengths = np.maximum(ends - starts, 0)
        bag_of = np.repeat(np.arange(self.bags), lengths)
        position = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths)]) \
            if self.bags else np.zeros(0, np.int64)
        kept = np.ones(position.size, bool) if padding_idx is None else \
            host[position] != padding_idx
        self.pos, self.bag = position[kept], bag_of[kept]
        self.idx = host[self.pos]
        self.counts = np.bincount(self.bag, minlength=self.bags)


class EmbeddingBagBackward(Node):
    """The gradient of each bag goes back to the rows it was made of."""

    __slots__ = ("weight_shape", "psw_shape")
    op_name = "EmbeddingBag"

    def __init__(self, weight, psw, plan):
        super().__init__([weight] if psw is None else [weight, psw])
        # the weight's rows give the per-sample weights' gradient, and those scale the rows'
        self.save(weight if psw is not None and psw.requires_grad else None,
                  psw if psw is not None and weight.requires_grad else None)
        self.saved += (SavedValue(plan),)  # index arrays, freed with the graph as PyTorch's
        self.weight_shape = weight._data.shape
        self.psw_shape = None if psw is None else psw._data.shape

    def backward(self, grad):
        xp = ops_for(grad)
        weight, psw, (kind, bag, idx, factor, pos, ones) = self.saved_values(xp.graph)
        grads = [None] * len(self.next_edges)
        if kind == "max":  # (bag: the non-empty bags; idx: the row each element came from)
            if self.needs_grad(0) and bag.size:
                columns = np.arange(self.weight_shape[1])[None, :]
                grads[0] = xp.index_add(self.weight_shape, (idx, columns),
                                        xp.gather(grad, (bag,)))
            elif self.needs_grad(0):
                grads[0] = xp.zeros(self.weight_shape, grad.dtype)
            return grads
        if not bag.size:  # nothing kept: no row receives anything
            grads[0] = xp.zeros(self.weight_shape, grad.dtype) if self.needs_grad(0) else None
            if len(grads) > 1 and self.needs_grad(1):
                grads[1] = xp.zeros(self.psw_shape, grad.dtype)
            return grads
        g = xp.gather(grad, (bag,))  # (kept, dim): each kept row's bag gradient
        if self.needs_grad(0):
            rows = g if factor is None else g * xp.constant(factor)
            if psw is not None:
                rows = rows * xp.reshape(xp.gather(xp.reshape(psw, (-1,)), (pos,)), (-1, 1))
            grads[0] = xp.index_add(self.weight_shape, (idx,), rows)
        if len(grads) > 1 and self.needs_grad(1):
            picked = xp.gather(weight, (idx,)) * g
            dots = xp.reshape(xp.matmul(picked, xp.constant(ones)), (-1,))  # row sums
            grads[1] = xp.reshape(xp.index_add((int(np.prod(self.psw_shape)),), (pos,), dots),
                                  self.psw_shape)
        return grads


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embeddings: ``input`` 2-D (one bag per
    row), or 1-D with ``offsets`` giving where each bag starts (with
    ``include_last_offset``, also where the last one ends). ``padding_idx``
    rows are left out of every bag (and of a mean's count); an empty bag is zeros."""
    _check_tensor(input, "indices", 2)
    _check_tensor(weight, "weight", 1)
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        include_last_offset = False
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx = padding_idx % num
    _check_indices(input)
    host = _host(input)
    if input.ndim == 2:
        starts = np.arange(0, host.size, input.shape[1]) if input.shape[1] else \
            np.zeros(input.shape[0], np.int64)
    else:
        _check_indices(offsets)
        starts = _host(offsets)
        if starts.size and starts[0] != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                               "mini-batch has to start from position 0. However, got "
                               f"{starts[0]}\n[ nbgrad.LongTensor{{}} ]")
        if starts.size and starts[-1] > host.size:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {host.size} "
                               f"but got offsets[-1] of {starts[-1]}")
    bags = _Bags(host, starts, include_last_offset, padding_idx)
    bad = np.nonzero((bags.idx < 0) | (bags.idx >= num))[0]
    if bad.size:
        raise RuntimeError(f"Index {bags.pos[bad[0]]} of input takes value {bags.idx[bad[0]]} "
                           f"which is not in the valid range [0, {num})")
    if max_norm is not None:  # (after every check: a refused call changes nothing)
        from .functional_norm import _renorm_
        _renorm_(weight, host, max_norm, norm_type)
    if per_sample_weights is not None and per_sample_weights._backend is not weight._backend:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {weight.device} and {per_sample_weights.device}!")
    backend = weight._backend
    xp = ops_for(weight._data)
    np_dtype = weight._data.dtype
    if mode == "max":
        out, plan = _max_bags(backend, xp, weight._data, bags, dim)
    else:
        factor = None
        if mode == "mean":
            factor = (1.0 / np.maximum(bags.counts, 1))[bags.bag]
        if scale_grad_by_freq:
            factor = (1.0 if factor is None else factor) / _frequencies(host, num)[bags.idx]
        factor_array = None if factor is None else backend.asarray(
            factor.astype(np_dtype).reshape(-1, 1))
        ones = None if per_sample_weights is None else backend.asarray(np.ones((dim, 1), np_dtype))
        plan = ("sum", bags.bag, bags.idx, factor_array, bags.pos, ones)
        out = backend.zeros((bags.bags, dim), np_dtype)
        if bags.pos.size:
            rows = xp.gather(weight._data, (bags.idx,))
            if mode == "mean":
                rows = rows * backend.asarray(
                    (1.0 / bags.counts[bags.bag]).astype(np_dtype).reshape(-1, 1))
            if per_sample_weights is not None:
                psw = xp.gather(per_sample_weights._data.reshape(-1), (bags.pos,))
                rows = rows * psw.reshape(-1, 1)
            out = xp.index_add((bags.bags, dim), (bags.bag,), rows)
    node = None
    psw_grad = per_sample_weights is not None and per_sample_weights.requires_grad
    if grad_mode.is_grad_enabled() and (weight.requires_grad or psw_grad):
        node = EmbeddingBagBackward(weight, per_sample_weights, plan)
    return Tensor._from_op(out, node, weight.dtype, backend)


def _frequencies(host, num):
    """The divisor of each row's gradient under ``scale_grad_by_freq``, as
    PyTorch's CPU kernel computes it: it walks the distinct indices in
    ascending order and divides the k-th one's gradient by the count of
    ``sorted(indices)[k]`` (its own count only when the indices are few or
    already grouped so; PyTorch's quirk, reproduced so that values match)."""
    ordered = np.sort(host)
    distinct = np.unique(ordered)
    divisor = np.ones(num)
    divisor[distinct] = np.bincount(host, minlength=num)[ordered[:distinct.size]]
    return divisor


def _max_bags(backend, xp, w, bags, dim):
    """Each non-empty bag's elementwise maximum and the row each element came
    from (the first maximum, NaN propagating: the backend's ``max_pool_step``)."""
    full = np.nonzero(bags.counts)[0]
    out = backend.zeros((bags.bags, dim), w.dtype)
    if not full.size or not dim:
        return out, ("max", np.zeros(0, np.int64), None, None, None, None)
    first = np.searchsorted(bags.bag, full)  # where each non-empty bag's kept rows begin
    counts = bags.counts[full]
    longest = int(counts.max())
    argmax = backend.zeros((full.size, dim), backend.pool_index_dtype(longest))
    best = None
    for k in range(longest):
        rows = bags.idx[first + np.minimum(k, counts - 1)]
        value = xp.gather(w, (rows,))
        if best is None:
            best = value
        else:
            backend.max_pool_step(best, argmax, value, k)
    offsets = np.minimum(backend.to_numpy(argmax).astype(np.int64), (counts - 1)[:, None])
    source = bags.idx[first[:, None] + offsets]  # (bags, dim): the row of each maximum
    out = xp.index_add((bags.bags, dim), (full,), best)
    return out, ("max", full, source, None, None, None)
