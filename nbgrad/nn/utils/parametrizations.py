"""Parametrizations, as ``torch.nn.utils.parametrizations``: ``weight_norm``."""
from ..module import Module
from . import parametrize

__all__ = ["weight_norm"]


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dimension but ``dim`` (all of them for -1),
    kept as size-1 dimensions (PyTorch's ``norm_except_dim``)."""
    if dim == -1:
        return (v * v).sum().sqrt()
    dims = tuple(d for d in range(v.dim()) if d != dim)
    if not dims:
        return v.abs()
    return (v * v).sum(dim=dims, keepdim=True).sqrt()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """weight_norm(module, name='weight', dim=0) -> Module

    Reparametrize ``module.<name>`` as ``g * v / ||v||`` (the norm over every
    dimension but ``dim``; ``dim=None``: the whole tensor): ``original0`` is
    the magnitude ``g``, ``original1`` the direction ``v``, under
    ``module.parametrizations.<name>``, as PyTorch's."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
