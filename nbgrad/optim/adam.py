"""Adam and AdamW, as ``torch.optim.Adam`` / ``torch.optim.AdamW``."""
from ..declarations.optimizer_updates import ADAM as _UPDATE
from ..tensor import Tensor
from .optimizer import Optimizer, _check_adam_family, _check_fused, _check_lr, _value


class Adam(Optimizer):
    """PyTorch's Adam (``decoupled_weight_decay=True`` gives AdamW). Per step
    and parameter, one fused kernel does the weight decay, both moment
    updates, the optional AMSGrad maximum and the parameter update."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
        _check_lr(lr)
        _check_adam_family(eps, betas, weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for k in (0, 1):
            if isinstance(betas[k], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{k}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if betas[k].numel() != 1:
                    raise ValueError(f"Tensor betas[{k}] must be 1-element")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        if not state:
            state["step"] = self._step_counter()
            state["exp_avg"] = self._state_buffer(p)
            state["exp_avg_sq"] = self._state_buffer(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = self._state_buffer(p)
        amsgrad = group["amsgrad"]
        if amsgrad and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = self._state_buffer(p)
        step = self._count_step(state)
        exp_avg = self._flat(state["exp_avg"])
        exp_avg_sq = self._flat(state["exp_avg_sq"])
        max_sq = self._flat(state["max_exp_avg_sq"]) if amsgrad else self._unused(p)
        beta1, beta2 = (_value(b) for b in group["betas"])
        lr, weight_decay = _value(group["lr"]), group["weight_decay"]
        # The scalars in the parameter's dtype, as PyTorch casts them.
        t = param.dtype.type
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        weight1 = t(1 - beta1)
        return _UPDATE, (param, grad, exp_avg, exp_avg_sq, max_sq), (
            t(weight_decay), t(1 - lr * weight_decay), bool(group["decoupled_weight_decay"]),
            weight1, t(1) - weight1, t(beta2), t(1 - beta2), t(-(lr / bias_correction1)),
            t(bias_correction2 ** 0.5), t(group["eps"]), bool(amsgrad), bool(group["maximize"]))


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the Adam step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
