"""Normalization and embedding functions (``F.batch_norm``, ``F.layer_norm``,
``F.group_norm``, ``F.instance_norm``, ``F.rms_norm``, ``F.normalize``,
``F.local_response_norm``, ``F.embedding``, ``F.embedding_bag``).

Each normalization is one autograd node over the backend's fused kernels
(``norm_row_*``/``norm_channel_*``, see ``backends/cpu/normalization.py``):
one pass for the statistics, one for the output, one for the backward, with
PyTorch's node names (``NativeBatchNormBackward``, ``NativeLayerNormBackward``,
``NativeGroupNormBackward``). A backward that builds a graph
(``create_graph=True``) runs the same formula as taped Tensor ops instead,
with the statistics recomputed from the saved input so that they carry its
history, and can be differentiated again.
"""
import math
import numbers

import numpy as np

from .. import dtypes
from ..backends import backend_of
from ..ops.arrays import ops_for
from ..ops.dual import tangent_rule
from ..tape import grad_mode
from ..tape.graph import Node, SavedValue
from ..tensor import Tensor


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _check_tensor(name, value, arg="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _recording(*tensors):
    return grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _raw(t, dtype):
    """``t``'s data in ``dtype`` (None for None)."""
    if t is None:
        return None
    data = t._data
    return data if data.dtype == dtype else t._backend.cast(data, dtype)


def _wrap(data, like):
    return Tensor._wrap(data, like.dtype, like._backend)


# ------------------------------------------------------------------ batch norm
class NativeBatchNormBackward(Node):
    """Batch norm's backward over (A, C, B) views: the fused kernel, or with
    ``create_graph`` the formula as taped ops."""

    __slots__ = ("shape", "view", "train", "eps")
    op_name = "NativeBatchNorm"
    # Its gradients are new arrays (the kernel's or taped results): a leaf takes them
    # as its .grad without a copy.
    returns_fresh = True

    def __init__(self, x, weight, bias, mean, rstd, view, train, eps):
        super().__init__([x, weight, bias])
        self.save(x, weight)
        self.saved += (SavedValue((mean, rstd)),)
        self.shape = x._data.shape
        self.view, self.train, self.eps = view, train, eps

    def backward(self, grad):
        xp = ops_for(grad)
        x, weight, stats = self.saved_values(xp.graph)
        mean, rstd = stats
        if xp.graph:
            return self._graph(grad, x, weight, mean, rstd)
        backend = backend_of(grad)
        g = backend.ascontiguous(grad).reshape(self.view)
        dx, dw, db = backend.norm_channel_backward(
            g, backend.ascontiguous(x).reshape(self.view), mean, rstd, weight, self.train,
            self.needs_grad(0))
        return [None if dx is None else dx.reshape(self.shape),
                dw if self.needs_grad(1) else None, db if self.needs_grad(2) else None]

    def _graph(self, grad, x, weight, mean, rstd):
        g = grad.reshape(self.view)
        x = x.reshape(self.view)
        axes = (0, 2)
        if self.train:  # the statistics are functions of x: recomputed with its history
            centered = x - x.mean(axes, keepdim=True)
            rstd_t = ((centered * centered).mean(axes, keepdim=True) + self.eps).sqrt().reciprocal()
        else:
            centered = x - _wrap(mean, x).reshape(1, -1, 1)
            rstd_t = _wrap(rstd, x).reshape(1, -1, 1)
        xhat = centered * rstd_t
        gw = g if weight is None else g * weight.reshape(1, -1, 1)
        if self.train:
            dx = rstd_t * (gw - gw.mean(axes, keepdim=True)
                           - xhat * (gw * xhat).mean(axes, keepdim=True))
        else:
            dx = gw * rstd_t
        return [dx.reshape(self.shape) if self.needs_grad(0) else None,
                (g * xhat).sum(axes) if self.needs_grad(1) else None,
                g.sum(axes) if self.needs_grad(2) else None]


def _check_param(name, t, channels):
    if t is not None and t.numel() != channels:
        raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Normalize each channel (dim 1) of ``input`` by the batch's statistics
    (``training``, which also updates the running ones) or by the running ones."""
    _check_tensor("batch_norm", input)
    if input.ndim < 2:
        raise ValueError(f"Expected 2D or more input (got {input.ndim}D input)")
    shape = input._data.shape
    channels = shape[1]
    if training:
        size = _prod(shape) // channels if channels else 0
        if size == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_param(name, t, channels)
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if not training and running_var is None:
        raise RuntimeError("running_var must be defined in evaluation mode")
    backend = input._backend
    dtype = input._data.dtype
    view = (shape[0], channels, _prod(shape[2:]))
    x = backend.ascontiguous(input._data).reshape(view)
    if training:
        mean, var, rstd = backend.norm_channel_stats(x, eps)
        if running_mean is not None or running_var is not None:
            _update_running(input, running_mean, running_var, mean, var, momentum, view)
    else:
        mean = _raw(running_mean, dtype)
        with grad_mode.no_grad():
            rstd = _raw((running_var.to(input.dtype) + eps).sqrt().reciprocal(), dtype)
    w, b = _raw(weight, dtype), _raw(bias, dtype)
    out = backend.norm_channel_forward(x, mean, rstd, w, b).reshape(shape)
    node = None
    if _recording(input, weight, bias):
        node = NativeBatchNormBackward(input, weight, bias, mean, rstd, view, training, eps)
    return Tensor._from_op(out, node, input.dtype, backend)


def _update_running(input, running_mean, running_var, mean, var, momentum, view):
    """running = (1 - momentum) * running + momentum * batch statistic, the
    variance unbiased, in place (as PyTorch's kernel writes them): one backend
    call each, the tensors' versions counted."""
    count = view[0] * view[2]
    unbiased = count / (count - 1) if count > 1 else math.nan
    for running, batch, scale in ((running_mean, mean, 1.0), (running_var, var, unbiased)):
        if running is None:
            continue
        data = running._data
        if data.dtype == batch.dtype and data.flags.c_contiguous and \
                running._backend is input._backend:
            input._backend.norm_running_update(data, batch, momentum, scale)
            running._version_counter.bump("native_batch_norm")
        else:
            with grad_mode.no_grad():
                stat = _wrap(batch, input).to(running.dtype) * scale
                running.mul_(1.0 - momentum).add_(stat * momentum)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Normalize each channel of each sample, as PyTorch: batch norm of the
    input seen as (1, N*C, ...), with the running statistics averaged over N."""
    _check_tensor("instance_norm", input)
    if use_input_stats:
        size = _prod(input.shape[2:])
        if size == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape}")
    n, c = input.shape[0], input.shape[1]
    folded = input.reshape(1, n * c, *input.shape[2:])
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    rm = None if running_mean is None else running_mean.repeat(n)
    rv = None if running_var is None else running_var.repeat(n)
    out = batch_norm(folded, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        with grad_mode.no_grad():  # the per-sample running statistics, averaged back
            if running_mean is not None:
                running_mean.copy_(rm.reshape(n, c).mean(0))
            if running_var is not None:
                running_var.copy_(rv.reshape(n, c).mean(0))
    return out.reshape(input.shape)


# ------------------------------------------------------------- row norms
class _RowNormBackward(Node):
    """Layer, group and RMS norm's backward over (R, D) rows, (N, G, Cg, S)
    when its statistics are seen per group."""

    __slots__ = ("shape", "groups", "inner", "rms", "eps", "_op_name")
    returns_fresh = True  # new arrays, as batch norm's

    def __init__(self, op_name, x, weight, bias, mean, rstd, groups, inner, rms, eps):
        super().__init__([x, weight, bias])
        self.save(x, weight)
        self.saved += (SavedValue((mean, rstd)),)
        self.shape = x._data.shape
        self._op_name = op_name
        self.groups, self.inner, self.rms, self.eps = groups, inner, rms, eps

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        x, weight, (mean, rstd) = self.saved_values(xp.graph)
        rows = mean.shape[0]
        if xp.graph:
            return self._graph(grad, x, weight, rows)
        backend = backend_of(grad)
        cols = _prod(self.shape) // rows if rows else 0
        dx, dw, db = backend.norm_row_backward(
            backend.ascontiguous(grad).reshape(rows, cols),
            backend.ascontiguous(x).reshape(rows, cols), mean, rstd,
            None if weight is None else backend.ascontiguous(weight).reshape(-1),
            self.groups, self.inner, self.rms, self.needs_grad(0))
        grads = [None if dx is None else dx.reshape(self.shape), None, None]
        for k, total in ((1, dw), (2, db)):
            if self.needs_grad(k):
                grads[k] = total.reshape(self.input_meta[k].shape)
        return grads

    def _graph(self, grad, x, weight, rows):
        view = (rows // self.groups, self.groups, -1, self.inner)
        x4, g4 = x.reshape(view), grad.reshape(view)
        axes = (2, 3)
        if self.rms:
            centered = x4
        else:
            centered = x4 - x4.mean(axes, keepdim=True)
        rstd = ((centered * centered).mean(axes, keepdim=True) + self.eps).sqrt().reciprocal()
        xhat = centered * rstd
        gw = g4 if weight is None else g4 * weight.reshape(1, self.groups, -1, 1)
        inner = gw if self.rms else gw - gw.mean(axes, keepdim=True)
        dx = rstd * (inner - xhat * (gw * xhat).mean(axes, keepdim=True))
        grads = [dx.reshape(self.shape) if self.needs_grad(0) else None, None, None]
        for k, value in ((1, g4 * xhat), (2, g4)):
            if self.needs_grad(k):
                grads[k] = value.sum((0, 3)).reshape(self.input_meta[k].shape)
        return grads


def _row_norm(op_name, input, weight, bias, rows, groups, inner, eps, rms):
    backend = input._backend
    dtype = input._data.dtype
    shape = input._data.shape
    cols = _prod(shape) // rows if rows else 0
    x = backend.ascontiguous(input._data).reshape(rows, cols)
    w = None if weight is None else backend.ascontiguous(_raw(weight, dtype)).reshape(-1)
    b = None if bias is None else backend.ascontiguous(_raw(bias, dtype)).reshape(-1)
    fused = backend.norm_row_stats_forward(x, eps, rms, w, b, groups, inner)
    if fused is None:
        mean, rstd = backend.norm_row_stats(x, eps, rms)
        out = backend.norm_row_forward(x, mean, rstd, w, b, groups, inner)
    else:  # one pass over memory instead of two
        out, mean, rstd = fused
    out = out.reshape(shape)
    node = None
    if _recording(input, weight, bias):
        node = _RowNormBackward(op_name, input, weight, bias, mean, rstd, groups, inner, rms,
                                eps)
    return Tensor._from_op(out, node, input.dtype, backend)


def _normalized_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _check_normalized(name, input, normalized, weight, bias):
    if not normalized:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = []")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and tuple(t.shape) != normalized:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but "
                               f"got {what} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(normalized)}")
    shape = tuple(input.shape)
    if len(shape) < len(normalized) or shape[len(shape) - len(normalized):] != normalized:
        raise RuntimeError(f"Given normalized_shape={list(normalized)}, expected input with "
                           f"shape [*, {', '.join(str(s) for s in normalized)}], but got input "
                           f"of size{list(shape)}")


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalize over the last ``len(normalized_shape)`` dimensions."""
    _check_tensor("layer_norm", input)
    normalized = _normalized_shape(normalized_shape)
    _check_normalized("layer_norm", input, normalized, weight, bias)
    rows = _prod(input.shape[:input.ndim - len(normalized)])
    return _row_norm("NativeLayerNorm", input, weight, bias, rows, 1, 1, eps, False)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x**2) + eps) over the last dimensions, times ``weight``;
    ``eps`` None: the dtype's machine epsilon, as PyTorch."""
    _check_tensor("rms_norm", input)
    normalized = _normalized_shape(normalized_shape)
    _check_normalized("rms_norm", input, normalized, weight, None)
    if eps is None:
        eps = float(np.finfo(input.dtype.numpy).eps)
    rows = _prod(input.shape[:input.ndim - len(normalized)])
    return _row_norm("FusedRmsNorm", input, weight, None, rows, 1, 1, eps, True)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalize each group of ``num_groups`` channel groups of each sample."""
    _check_tensor("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups={num_groups}")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of "
                               f"channels in input, but got {what} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    inner = _prod(input.shape[2:])
    return _row_norm("NativeGroupNorm", input, weight, bias, n * num_groups, num_groups, inner,
                     eps, False)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    _check_tensor("normalize", input)
    norm = input.abs().pow(p).sum(dim, keepdim=True).pow(1.0 / p) if p != 2.0 else \
        (input * input).sum(dim, keepdim=True).sqrt()
    result = input / norm.clamp(eps, None).expand_as(input)
    if out is not None:
        out.copy_(result)
        return out
    return result


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divide each element by (k + alpha/size * sum of squares over ``size``
    neighbouring channels) ** beta (PyTorch's composition)."""
    _check_tensor("local_response_norm", input)
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    from ..ops import joining
    sq = input * input
    c = input.shape[1]
    before, after = size // 2, (size - 1) // 2
    zeros_shape = list(input.shape)
    parts = []
    if before:
        zeros_shape[1] = before
        parts.append(_zeros_like_shape(input, zeros_shape))
    parts.append(sq)
    if after:
        zeros_shape[1] = after
        parts.append(_zeros_like_shape(input, zeros_shape))
    padded = joining.cat(parts, 1) if len(parts) > 1 else sq
    total = padded.narrow(1, 0, c)
    for j in range(1, size):
        total = total + padded.narrow(1, j, c)
    div = (total * (alpha / size) + k).pow(beta)
    return input / div


def _zeros_like_shape(like, shape):
    return Tensor._wrap(like._backend.zeros(tuple(shape), like._data.dtype), like.dtype,
                        like._backend)


# ------------------------------------------------------------------ embedding
class EmbeddingBackward(Node):
    """The rows of ``weight`` picked by ``indices``: the gradient adds each
    row of the incoming gradient at its index (none at ``padding_idx``)."""

    __slots__ = ("shape", "padding_idx", "scale_by_freq")
    op_name = "Embedding"
    returns_fresh = True

    def __init__(self, weight, indices, padding_idx, scale_by_freq):
        super().__init__([weight])
        self.saved = (SavedValue(indices),)
        self.shape = weight._data.shape
        self.padding_idx, self.scale_by_freq = padding_idx, scale_by_freq

    def backward(self, grad):
        xp = ops_for(grad)
        (index,), counts, kept = self.saved[0].unpack()
        rows = xp.reshape(grad, (-1, self.shape[1]))
        if kept is not None:
            rows = xp.gather(rows, (kept,))
        if counts is not None:
            rows = xp.run("mul", rows, xp.constant(counts))
        if index.shape[0] == 0:
            return [xp.zeros(self.shape, self.input_meta[0].np_dtype)]
        return [xp.index_add(self.shape, (index,), rows)]


def _host_indices(input):
    return input._backend.to_numpy(input._data).reshape(-1).astype(np.int64, copy=False)


def _renorm_(weight, host_index, max_norm, norm_type):
    """PyTorch's embedding_renorm_: rows referenced whose norm exceeds
    ``max_norm`` scaled to it (in place, without a gradient)."""
    rows = np.unique(host_index)
    backend = weight._backend
    with grad_mode.no_grad():
        idx = Tensor._wrap(backend.asarray(rows), dtypes.int64, backend)
        picked = weight[idx]
        norms = picked.abs().pow(norm_type).sum(1).pow(1.0 / norm_type)
        host_norms = backend.to_numpy(norms._data)
        scale = np.where(host_norms > max_norm, max_norm / (host_norms + 1e-7), 1.0)
        factor = Tensor._wrap(backend.asarray(scale.astype(weight.dtype.numpy)), weight.dtype,
                              backend)
        weight[idx] = picked * factor.reshape(-1, 1)


@tangent_rule()  # forward mode: the Jacobian-vector product from its backward
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` at the integer indices ``input``: a tensor of
    shape ``input.shape + (embedding_dim,)``."""
    _check_tensor("embedding", input, "indices", 2)
    _check_tensor("embedding", weight, "weight", 1)
    if input.is_floating_point() or input.dtype is dtypes.bool_:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{input.type()} instead (while checking arguments "
                           "for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = num + padding_idx
    host = _host_indices(input)
    if host.size and (host.min() < 0 or host.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_(weight, host, max_norm, norm_type)
    backend = weight._backend
    index = host  # index keys are host arrays (the backends' gathers take them so)
    data = ops_for(weight._data).gather(weight._data, (index,)) if host.size else \
        backend.empty((0, weight.shape[1]), weight._data.dtype)
    data = data.reshape(tuple(input.shape) + (weight.shape[1],))
    node = None
    if _recording(weight):
        kept = None
        saved_index = index
        if padding_idx is not None and (host == padding_idx).any():
            kept = np.nonzero(host != padding_idx)[0]
            saved_index = host[kept]
        counts = None
        if scale_grad_by_freq:
            used = host if padding_idx is None else host[host != padding_idx]
            freq = np.bincount(used, minlength=num)
            counts = backend.asarray((1.0 / freq[used]).astype(weight.dtype.numpy)
                                     .reshape(-1, 1))
        node = EmbeddingBackward(weight, None, padding_idx, scale_grad_by_freq)
        node.saved = (SavedValue(((saved_index,), counts, kept)),)
    return Tensor._from_op(data, node, weight.dtype, backend)


__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "normalize",
           "local_response_norm", "embedding", "embedding_bag"]

from ._embedding_bag import embedding_bag  # noqa: E402  (one EmbeddingBagBackward node)
