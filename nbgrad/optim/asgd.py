"""Averaged SGD, as ``torch.optim.ASGD``."""
import numpy as np

from .. import creation, dtypes
from ..declarations.optimizer_updates import ASGD as _UPDATE
from .optimizer import Optimizer, _check_lr, _value


class ASGD(Optimizer):
    """PyTorch's ASGD: ``p = p * (1 - lambd * eta) - eta * g``, then the
    average ``ax += (p - ax) * mu`` (``ax = p`` while ``mu == 1``), then the
    next ``eta = lr / (1 + lambd * lr * step) ** alpha`` and ``mu = 1 / max(1,
    step - t0)``. As in PyTorch, ``step``, ``eta`` and ``mu`` are 0-dim float32
    tensors on the parameter's device; the elementwise step is one fused kernel."""

    _capturable_what = "params, mus, etas, and state_steps"
    _step_on_param_device = True

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        lr = _value(group["lr"])
        if not state:
            state["step"] = self._step_counter(p)
            state["eta"] = creation.tensor(lr, dtype=dtypes.float32, device=p.device)
            state["mu"] = creation.tensor(1.0, dtype=dtypes.float32, device=p.device)
            state["ax"] = self._state_buffer(p)
        step = self._count_step(state)
        eta, mu = state["eta"], state["mu"]
        eta_value, mu_value = self._scalar_value(eta), self._scalar_value(mu)
        lambd = group["lambd"]
        t = param.dtype.type
        args = (_UPDATE, (param, grad, self._flat(state["ax"])), (
            t(group["weight_decay"]), t(1 - lambd * eta_value), t(-eta_value), t(mu_value),
            mu_value != 1, bool(group["maximize"])))
        # The next step's eta and mu (PyTorch makes each a float32 tensor, then copies it in).
        self._set_scalar(eta, float(np.float32(lr / ((1 + lambd * lr * step) ** group["alpha"]))))
        self._set_scalar(mu, float(np.float32(1 / max(1, step - group["t0"]))))
        return args
