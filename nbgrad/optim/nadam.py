"""NAdam, as ``torch.optim.NAdam``."""
from ..declarations.optimizer_updates import NADAM as _UPDATE
from ..tape import grad_mode
from .optimizer import Optimizer, _check_adam_family, _check_lr, _value


class NAdam(Optimizer):
    """PyTorch's NAdam (Nesterov Adam with momentum decay; optionally the
    decoupled weight decay of AdamW). The momentum schedule's running product
    ``mu_product`` is a 0-dim float32 tensor on the CPU, multiplied in its own
    dtype as PyTorch does; the elementwise step is one fused kernel."""

    _capturable_what = "params, mu_products and state_steps"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_adam_family(eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _kernel_args(self, group, p, param, grad):
        state = self._state(p)
        if not state:
            state["step"] = self._step_counter()
            state["mu_product"] = self._step_counter()
            with grad_mode.no_grad():
                state["mu_product"].fill_(1.0)
            state["exp_avg"] = self._state_buffer(p)
            state["exp_avg_sq"] = self._state_buffer(p)
        step = self._count_step(state)
        beta1, beta2 = group["betas"]
        lr, weight_decay = _value(group["lr"]), group["weight_decay"]
        momentum_decay = group["momentum_decay"]
        bias_correction2 = 1 - beta2 ** step
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # mu_product *= mu, in the product's dtype (float32 unless loaded onto a float64 param)
        mu_product_t = state["mu_product"]
        kind = mu_product_t.dtype.numpy.type
        mu_product = float(kind(self._scalar_value(mu_product_t)) * kind(mu))
        self._set_scalar(mu_product_t, mu_product)
        mu_product_next = mu_product * mu_next
        t = param.dtype.type
        weight1 = t(1 - beta1)
        return _UPDATE, (param, grad, self._flat(state["exp_avg"]),
                         self._flat(state["exp_avg_sq"])), (
            t(weight_decay), t(1 - lr * weight_decay), weight1, t(1) - weight1, t(beta2),
            t(1 - beta2), t(bias_correction2), t(group["eps"]),
            t(-lr * (1.0 - mu) / (1.0 - mu_product)), t((-lr * mu_next) / (1.0 - mu_product_next)),
            bool(group["decoupled_weight_decay"]), bool(group["maximize"]))
