"""Stochastic gradient descent with momentum, as ``torch.optim.SGD``."""
import numpy as np

from ..declarations.optimizer_updates import SGD as _UPDATE
from ..tensor import Tensor
from .optimizer import Optimizer, _check_fused, launch, required

# (dtype, hyper-parameters) -> the update's scalars before and after ``first``, cast
# to the parameter's dtype as PyTorch casts them. Casting them costs more than a small
# parameter's update, and they change only when a scheduler changes the group.
# Bounded: cleared past _SCALARS_MAX.
_scalars = {}
_SCALARS_MAX = 256
_PLAIN = (float, int, bool)


def _scalars_of(t, group):
    lr, weight_decay, momentum, dampening = (group["lr"], group["weight_decay"],
                                             group["momentum"], group["dampening"])
    nesterov, maximize = group["nesterov"], group["maximize"]
    # Only plain numbers are remembered: a tensor (a learning rate, say) may change in place.
    plain = (type(lr) in _PLAIN and type(weight_decay) in _PLAIN and type(momentum) in _PLAIN
             and type(dampening) in _PLAIN)
    key = (t, lr, weight_decay, momentum, dampening, nesterov, maximize)
    cached = _scalars.get(key) if plain else None
    if cached is None:
        cached = ((t(-lr), t(weight_decay), t(momentum), t(1 - dampening), momentum != 0),
                  (bool(nesterov), bool(maximize)))
        if plain:
            if len(_scalars) >= _SCALARS_MAX:
                _scalars.clear()
            _scalars[key] = cached
    return cached


class SGD(Optimizer):
    """PyTorch's SGD: with weight decay ``g += wd * p``; with momentum
    ``buf = momentum * buf + (1 - dampening) * g`` (``buf = g`` on the first
    step) and ``g = buf`` (or ``g + momentum * buf`` with nesterov); then
    ``p -= lr * g``. One fused kernel per parameter, or per run of small
    CPU parameters (``_step_group``)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)

    def _step_group(self, group):
        """Parameters below their backend's ``update_foreach_below`` (small CPU
        ones) whose gradients match them (type, shape, dtype, C layout) and
        that need no new momentum buffer are updated in one kernel call per run
        of one backend and dtype: a call per parameter costs more than a small
        parameter's update. The rest go one by one; the order of the updates
        is the group's."""
        self._check_group(group)
        momentum = group["momentum"]
        state = self.state
        batch = []  # (p, flat param, flat grad, flat momentum buffer), in the group's order
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            data, g = p._data, grad._data
            if (data.size < p._backend.update_foreach_below and type(g) is type(data)
                    and data.dtype != np.float16
                    and g.shape == data.shape and g.dtype == data.dtype
                    and data.flags.c_contiguous and g.flags.c_contiguous
                    and g.flags.writeable):  # (a read-only array would not type in the tuple)
                flat = data.ravel()  # a view: C-contiguous
                buf = flat  # unused without momentum
                if momentum != 0:
                    buffer = state[p].get("momentum_buffer") if p in state else None
                    buf = None if buffer is None else buffer._data
                    if (type(buf) is not type(data) or buf.dtype != data.dtype
                            or buf.shape != data.shape or not buf.flags.c_contiguous):
                        buf = None  # a first step (a new buffer) or a foreign one: one by one
                    else:
                        buf = buf.ravel()
                if buf is not None:
                    if batch and (batch[0][1].dtype != data.dtype
                                  or batch[0][0]._backend is not p._backend):
                        self._step_batch(group, batch)
                    batch.append((p, flat, g.ravel(), buf))
                    continue
            if batch:
                self._step_batch(group, batch)
            self._step_param(group, p, grad)
        if batch:
            self._step_batch(group, batch)

    def _step_batch(self, group, batch):
        ps, params, grads, bufs = zip(*batch)
        head, tail = _scalars_of(params[0].dtype.type, group)
        ps[0]._backend.optimizer_update_foreach(_UPDATE, (params, grads, bufs),
                                                (*head, False, *tail))
        for p, *_ in batch:  # one in-place write, one version bump each (as param.add_)
            p._version_counter.bump("SGD.step")
        batch.clear()

    def _update(self, group, param, grad, p):
        momentum = group["momentum"]
        first = False
        buf = param  # unused when there is no momentum (nor is any state made, as in PyTorch)
        if momentum != 0:
            state = self._state(p)
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = state["momentum_buffer"] = self._state_buffer(p)
                first = True
            buf = buffer._data.reshape(-1)
        head, tail = _scalars_of(param.dtype.type, group)
        launch(p._backend, _UPDATE, (param, grad, buf), (*head, first, *tail))
