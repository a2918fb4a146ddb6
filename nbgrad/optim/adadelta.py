"""Adadelta, as ``torch.optim.Adadelta``."""
from ..declarations.optimizer_updates import ADADELTA as _UPDATE
from .optimizer import Optimizer, _check_lr, _value


class Adadelta(Optimizer):
    """PyTorch's Adadelta: ``v = rho * v + (1 - rho) * g * g``, ``delta =
    sqrt(acc + eps) / sqrt(v + eps) * g``, ``acc = rho * acc + (1 - rho) *
    delta ** 2``, ``p -= lr * delta``; one fused kernel."""

    _capturable_xla = False

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        if not state:
            state["step"] = self._step_counter()
            state["square_avg"] = self._state_buffer(p)
            state["acc_delta"] = self._state_buffer(p)
        self._count_step(state)
        t = param.dtype.type
        rho = group["rho"]
        return _UPDATE, (param, grad, self._flat(state["square_avg"]),
                         self._flat(state["acc_delta"])), (
            t(group["weight_decay"]), t(rho), t(1 - rho), t(group["eps"]),
            t(-_value(group["lr"])), bool(group["maximize"]))
