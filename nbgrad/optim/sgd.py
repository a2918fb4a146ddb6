"""Stochastic gradient descent with momentum, as ``torch.optim.SGD``."""
from . import _kernels
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """PyTorch's SGD: with weight decay ``g += wd * p``; with momentum
    ``buf = momentum * buf + (1 - dampening) * g`` (``buf = g`` on the first
    step) and ``g = buf`` (or ``g + momentum * buf`` with nesterov); then
    ``p -= lr * g``. One fused kernel per parameter."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, group, param, grad, state, p):
        momentum = group["momentum"]
        first = False
        buf = param  # unused when there is no momentum
        if momentum != 0:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = state["momentum_buffer"] = self._state_buffer(p)
                first = True
            buf = buffer._data.reshape(-1)
        _kernels.sgd(param, grad, buf, lr=group["lr"], weight_decay=group["weight_decay"],
                     momentum=momentum, dampening=group["dampening"], first=first,
                     nesterov=group["nesterov"], maximize=group["maximize"])
