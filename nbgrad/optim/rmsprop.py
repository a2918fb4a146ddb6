"""RMSprop, as ``torch.optim.RMSprop``."""
from ..declarations.optimizer_updates import RMSPROP as _UPDATE
from .optimizer import Optimizer, _check_lr, _value


class RMSprop(Optimizer):
    """PyTorch's RMSprop: ``v = alpha * v + (1 - alpha) * g * g``; centered:
    ``v -= lerp(grad_avg, g, 1 - alpha) ** 2``; with momentum ``buf = momentum
    * buf + g / (sqrt(v) + eps)``, ``p -= lr * buf``, else ``p -= lr * g /
    (sqrt(v) + eps)``. One fused kernel per parameter (or run of small ones)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        momentum, centered = group["momentum"], group["centered"]
        if not state:
            state["step"] = self._step_counter()
            state["square_avg"] = self._state_buffer(p)
            if momentum > 0:
                state["momentum_buffer"] = self._state_buffer(p)
            if centered:
                state["grad_avg"] = self._state_buffer(p)
        self._count_step(state)
        t = param.dtype.type
        weight = t(1 - group["alpha"])
        square_avg = self._flat(state["square_avg"])
        grad_avg = self._flat(state["grad_avg"]) if centered else self._unused(p)
        buf = self._flat(state["momentum_buffer"]) if momentum > 0 else self._unused(p)
        return _UPDATE, (param, grad, square_avg, grad_avg, buf), (
            t(group["weight_decay"]), t(group["alpha"]), weight, t(1) - weight, t(group["eps"]),
            t(momentum), t(-_value(group["lr"])), bool(centered), momentum > 0,
            bool(group["maximize"]))
