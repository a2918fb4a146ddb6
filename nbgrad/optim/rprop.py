"""Resilient backpropagation, as ``torch.optim.Rprop``."""
from ..declarations.optimizer_updates import RPROP as _UPDATE
from .optimizer import Optimizer, _check_lr, _value


class Rprop(Optimizer):
    """PyTorch's Rprop: each element's step size grows by ``etaplus`` while its
    gradient keeps its sign and shrinks by ``etaminus`` when it flips (that
    step then skipped and its gradient forgotten), clamped to ``step_sizes``;
    ``p -= sign(g) * step_size``. One fused kernel."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        if not state:
            state["step"] = self._step_counter()
            state["prev"] = self._state_buffer(p)
            state["step_size"] = self._state_full(p, _value(group["lr"]))
        self._count_step(state)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        t = param.dtype.type
        return _UPDATE, (param, grad, self._flat(state["prev"]),
                         self._flat(state["step_size"])), (
            t(etaplus), t(etaminus), t(step_size_min), t(step_size_max), t(1), t(0),
            bool(group["maximize"]))
