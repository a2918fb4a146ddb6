"""Parametrizations, as ``torch.nn.utils.parametrizations``: ``weight_norm``
and ``spectral_norm``."""
from ..module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


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


class _SpectralNorm(Module):
    """``weight / sigma``, sigma estimated by power iteration on buffers ``_u``,
    ``_v`` (15 steps at registration, ``n_power_iterations`` per training forward);
    a 1-D weight is simply normalized."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            from ... import creation
            from .. import functional as F
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            u = creation.randn(h, dtype=weight.dtype, device=weight.device)
            v = creation.randn(w, dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        from ...tape.grad_mode import no_grad
        from .. import functional as F
        with no_grad():  # the buffers are written in place, as torch's out=
            w = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(w @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(w.t() @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        from .. import functional as F
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.dot(weight_mat @ v)
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Apply spectral normalization to a parameter in the given module, as a
    parametrization: :math:`\mathbf{W}_{SN} = \mathbf{W} / \sigma(\mathbf{W})`.

    Args:
        module (nn.Module): containing module
        name (str, optional): name of weight parameter. Default: ``"weight"``.
        n_power_iterations (int, optional): number of power iterations to
            calculate spectral norm. Default: ``1``.
        eps (float, optional): epsilon for numerical stability in calculating norms.
            Default: ``1e-12``.
        dim (int, optional): dimension corresponding to number of outputs.
            Default: ``0``, except for ConvTranspose modules, for which it is ``1``

    Returns:
        The original module with a new parametrization registered to the specified weight
    """
    from ...tensor import Tensor
    from ..conv import ConvTranspose1d, ConvTranspose2d
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
