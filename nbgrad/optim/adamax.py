"""Adamax, as ``torch.optim.Adamax``."""
from ..declarations.optimizer_updates import ADAMAX as _UPDATE
from .optimizer import Optimizer, _check_adam_family, _check_lr, _value


class Adamax(Optimizer):
    """PyTorch's Adamax: ``m = lerp(m, g, 1 - beta1)``, ``u = max(beta2 * u,
    |g| + eps)``, ``p -= lr / (1 - beta1 ** step) * m / u``; one fused kernel."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_adam_family(eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        if not state:
            state["step"] = self._step_counter()
            state["exp_avg"] = self._state_buffer(p)
            state["exp_inf"] = self._state_buffer(p)
        step = self._count_step(state)
        beta1, beta2 = group["betas"]
        t = param.dtype.type
        weight1 = t(1 - beta1)
        clr = _value(group["lr"]) / (1 - beta1 ** step)
        return _UPDATE, (param, grad, self._flat(state["exp_avg"]),
                         self._flat(state["exp_inf"])), (
            t(group["weight_decay"]), weight1, t(1) - weight1, t(beta2), t(group["eps"]),
            t(-clr), bool(group["maximize"]))
