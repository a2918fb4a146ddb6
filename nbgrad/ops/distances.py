"""Distances and similarities between vectors: ``cosine_similarity``,
``pairwise_distance`` and ``cdist``, composed from primitives as PyTorch
composes them (so their gradients, at every order, are the primitives')."""
import numbers

from .. import dtypes
from ..tape import grad_mode
from ..tensor import Tensor
from .arithmetic import clamp
from .registry import FUNCTIONS, tensor_op
from .statistics import vector_norm
from .broadcasting import broadcast_shapes

_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                  "donot_use_mm_for_euclid_dist")


def _tensor(value, fn, name, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


@tensor_op(method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """cosine_similarity(x1, x2, dim=1, eps=1e-8) -> Tensor

    ``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` over ``dim``, the
    inputs broadcast. As PyTorch, each input is divided by its clamped norm
    before the product, and the clamp is outside the graph (the gradient
    flows through the norm as if unclamped)."""
    _tensor(x1, "cosine_similarity", "x1", 1)
    _tensor(x2, "cosine_similarity", "x2", 2)
    common = dtypes.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{common.type_name}")
    shape = broadcast_shapes(x1.shape, x2.shape)
    x1, x2 = x1.to(common).expand(shape), x2.to(common).expand(shape)
    n1 = vector_norm(x1, 2, dim, keepdim=True).clone()
    n2 = vector_norm(x2, 2, dim, keepdim=True).clone()
    with grad_mode.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@tensor_op(method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> Tensor

    The ``p``-norm of ``x1 - x2 + eps`` over the last dimension of the
    broadcast inputs."""
    _tensor(x1, "pairwise_distance", "x1", 1)
    _tensor(x2, "pairwise_distance", "x2", 2)
    innermost = max(x1.ndim, x2.ndim) - 1
    return vector_norm(x1 - x2 + eps, p, innermost if innermost >= 0 else None, keepdim)


def _euclidean_mm(x1, x2):
    """Euclidean distances from one matrix product, as PyTorch's
    ``_euclidean_dist``: ``|x|^2 + |y|^2 - 2 x.y``, clamped at 0."""
    cat = FUNCTIONS["cat"]  # as bound: with its tangent rule (forward mode)
    x_norm = (x1 * x1).sum(-1, keepdim=True)
    y_norm = (x2 * x2).sum(-1, keepdim=True)
    x_ = cat([x1 * -2, x_norm, x_norm.new_ones(x_norm.shape)], -1)
    y_ = cat([x2, y_norm.new_ones(y_norm.shape), y_norm], -1)
    return clamp(x_ @ y_.mT, min=0).sqrt()


@tensor_op(method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary') -> Tensor

    The ``p``-norm distance between each row vector of ``x1`` (``B x P x M``)
    and each of ``x2`` (``B x R x M``): ``B x P x R``, batch dims broadcast.
    For ``p = 2`` the distances come from one matrix product when ``P`` or
    ``R`` exceeds 25 (or always/never, per ``compute_mode``), as PyTorch's."""
    _tensor(x1, "cdist", "x1", 1)
    _tensor(x2, "cdist", "x2", 2)
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{x.dtype.type_name}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype.type_name} but found "
                           f"{x2.dtype.type_name}")
    if not isinstance(p, numbers.Real) or p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    x1 = x1.expand(batch + x1.shape[-2:])
    x2 = x2.expand(batch + x2.shape[-2:])
    rows, cols = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == "use_mm_for_euclid_dist_if_necessary" and (rows > 25 or cols > 25)))
    if use_mm:
        return _euclidean_mm(x1, x2)
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)
