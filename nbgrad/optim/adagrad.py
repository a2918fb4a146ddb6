"""Adagrad, as ``torch.optim.Adagrad``."""
from ..declarations.optimizer_updates import ADAGRAD as _UPDATE
from .optimizer import Optimizer, _check_fused, _check_lr, _value


class Adagrad(Optimizer):
    """PyTorch's Adagrad: ``sum += g * g``, ``p -= clr * g / (sqrt(sum) + eps)``
    with ``clr = lr / (1 + (step - 1) * lr_decay)``. As in PyTorch, every
    parameter's state (``step``, ``sum`` filled with
    ``initial_accumulator_value``) is made by the constructor."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], initial_accumulator_value)

    def _init_state(self, p, state, initial_accumulator_value):
        state["step"] = self._step_counter()
        state["sum"] = self._state_full(p, initial_accumulator_value)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        if not state:  # a group added later (PyTorch takes the constructor's initial value)
            self._init_state(p, state, self.defaults["initial_accumulator_value"])
        step = self._count_step(state)
        clr = _value(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        t = param.dtype.type
        return _UPDATE, (param, grad, self._flat(state["sum"])), (
            t(group["weight_decay"]), t(-clr), t(group["eps"]), bool(group["maximize"]))
