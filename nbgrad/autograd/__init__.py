"""Automatic differentiation (``torch.autograd``): ``backward``, ``grad``,
grad modes, gradcheck."""
from ..gradients import backward, grad
from ..tape.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["backward", "grad", "gradcheck", "GradcheckError", "gradgradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled"]
