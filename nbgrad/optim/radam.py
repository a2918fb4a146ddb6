"""RAdam, as ``torch.optim.RAdam``."""
from ..declarations.optimizer_updates import RADAM as _UPDATE
from .optimizer import Optimizer, _check_adam_family, _check_lr, _value


class RAdam(Optimizer):
    """PyTorch's RAdam (rectified Adam; optionally AdamW's decoupled weight
    decay): while the variance estimate is too young (``rho_t <= 5``) the step
    is ``lr * m / (1 - beta1 ** step)``, afterwards rectified by the adaptive
    term; one fused kernel, the rectification computed per step in Python as
    in PyTorch."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        _check_adam_family(eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        if not state:
            state["step"] = self._step_counter()
            state["exp_avg"] = self._state_buffer(p)
            state["exp_avg_sq"] = self._state_buffer(p)
        step = self._count_step(state)
        beta1, beta2 = group["betas"]
        lr, weight_decay = _value(group["lr"]), group["weight_decay"]
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        rho_inf = 2 / (1 - beta2) - 1  # the maximum length of the approximated SMA
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        rectified = rho_t > 5.0
        rect = 1.0
        if rectified:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        t = param.dtype.type
        weight1 = t(1 - beta1)
        return _UPDATE, (param, grad, self._flat(state["exp_avg"]),
                         self._flat(state["exp_avg_sq"])), (
            t(weight_decay), t(1 - lr * weight_decay), weight1, t(1) - weight1, t(beta2),
            t(1 - beta2), t(bias_correction1), t(lr), t(bias_correction2 ** 0.5),
            t(group["eps"]), t(rect), t(1), bool(group["decoupled_weight_decay"]),
            bool(rectified), bool(group["maximize"]))
