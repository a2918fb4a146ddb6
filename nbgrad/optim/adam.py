"""Adam and AdamW, as ``torch.optim.Adam`` / ``torch.optim.AdamW``."""
import numpy as np

from .. import creation, dtypes
from ..declarations.optimizer_updates import ADAM as _UPDATE
from .optimizer import Optimizer


class Adam(Optimizer):
    """PyTorch's Adam (``decoupled_weight_decay=True`` gives AdamW). Per step
    and parameter, one fused kernel does the weight decay, both moment
    updates, the optional AMSGrad maximum and the parameter update."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, maximize=False, decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _update(self, group, param, grad, p):
        state = self._state(p)
        if not state:
            state["step"] = creation.tensor(0.0, dtype=dtypes.float32)
            state["exp_avg"] = self._state_buffer(p)
            state["exp_avg_sq"] = self._state_buffer(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = self._state_buffer(p)
        amsgrad = group["amsgrad"]
        if amsgrad and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = self._state_buffer(p)
        step_t = state["step"]
        step_t._data[...] += np.float32(1)
        step = float(step_t._data)
        exp_avg = state["exp_avg"]._data.reshape(-1)
        exp_avg_sq = state["exp_avg_sq"]._data.reshape(-1)
        max_sq = state["max_exp_avg_sq"]._data.reshape(-1) if amsgrad else exp_avg_sq
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        # The scalars in the parameter's dtype, as PyTorch casts them.
        t = param.dtype.type
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        weight1 = t(1 - beta1)
        p._backend.optimizer_update(
            _UPDATE, (param, grad, exp_avg, exp_avg_sq, max_sq),
            (t(weight_decay), t(1 - lr * weight_decay), group["decoupled_weight_decay"], weight1,
             t(1) - weight1, t(beta2), t(1 - beta2), t(-(lr / bias_correction1)),
             t(bias_correction2 ** 0.5), t(group["eps"]), amsgrad, group["maximize"]))


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the Adam step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)
