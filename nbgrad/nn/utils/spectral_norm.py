"""The hook-based ``spectral_norm`` / ``remove_spectral_norm``, as
``torch.nn.utils.spectral_norm``: ``weight = weight_orig / sigma``, sigma the
largest singular value estimated by power iteration (buffers ``weight_u``,
``weight_v``, updated in place in training mode)."""
from ...tape.grad_mode import no_grad
from .. import functional as F
from ..conv import ConvTranspose1d, ConvTranspose2d
from ..lazy import UninitializedParameter
from ..parameter import Parameter
from .weight_norm import _remove_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def _reshape_weight_to_matrix(weight, dim):
    """``dim`` first, the rest flattened."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.shape[0], -1)


def _power_iteration(weight_mat, u, v, n, eps):
    """``n`` steps of power iteration, written into the buffers ``u`` and ``v`` in place."""
    with no_grad():
        w = weight_mat.detach()
        for _ in range(n):
            v.copy_(F.normalize(w.t() @ u, dim=0, eps=eps))
            u.copy_(F.normalize(w @ v, dim=0, eps=eps))


class SpectralNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_orig``."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        return _reshape_weight_to_matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            _power_iteration(weight_mat, u, v, self.n_power_iterations, self.eps)
            # clones: the next in-place update must not touch what backward saved
            u, v = u.clone(), v.clone()
        sigma = u.dot(weight_mat @ v)
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        from ... import creation
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(creation.randn(h, dtype=weight.dtype, device=weight.device), dim=0,
                            eps=fn.eps)
            v = F.normalize(creation.randn(w, dtype=weight.dtype, device=weight.device), dim=0,
                            eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Apply spectral normalization to a parameter in the given module:
    :math:`\mathbf{W}_{SN} = \mathbf{W} / \sigma(\mathbf{W})`.

    Args:
        module (nn.Module): containing module
        name (str, optional): name of weight parameter
        n_power_iterations (int, optional): number of power iterations to calculate spectral norm
        eps (float, optional): epsilon for numerical stability in calculating norms
        dim (int, optional): dimension corresponding to number of outputs,
            the default is ``0``, except for ConvTranspose modules, for which it is ``1``

    Returns:
        The original module with the spectral norm hook
    """
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Remove the spectral normalization reparameterization from a module.

    Args:
        module (Module): containing module
        name (str, optional): name of weight parameter
    """
    return _remove_hook(module, SpectralNorm, name, "spectral_norm")
