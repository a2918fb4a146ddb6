r"""Stochastic Weight Averaging and exponential moving averages of a model's
weights, as ``torch.optim.swa_utils``: :class:`AveragedModel`, :class:`SWALR`,
:func:`update_bn` and the averaging functions.

The multi-tensor averages (the default SWA and :func:`get_ema_multi_avg_fn`)
are ``torch._foreach_lerp_``: one fused kernel (``declarations.optimizer_updates.LERP``)
per parameter, and on the CPU one call for all the small parameters of a
dtype, rather than a chain of tensor ops per parameter.
"""
import copy
import itertools
import math
import warnings

import numpy as np

from .. import creation, dtypes
from ..declarations.optimizer_updates import LERP as _LERP
from ..nn.module import Module
from ..nn.normalization import _BatchNorm
from ..tape import grad_mode
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


# ------------------------------------------------------------ fused lerp
def _fusable(a, b):
    """Whether ``a.lerp_(b, w)`` can run as the fused kernel: one array type,
    float32/float64 (the CPU kernels have no float16), one shape, C layout."""
    return (type(a) is type(b) and a.dtype == b.dtype
            and a.dtype in (np.float32, np.float64) and a.shape == b.shape
            and a.flags.c_contiguous and b.flags.c_contiguous
            and a.flags.writeable and b.flags.writeable)


def _foreach_lerp_(targets, ends, weight):
    """``t.lerp_(e, weight)`` for each pair (``torch._foreach_lerp_`` with a
    scalar weight): a fused kernel per tensor, the small CPU ones of a dtype
    together in one call (a call per tensor costs more than a small update);
    anything the kernels do not take (float16, strided) through ``lerp_``."""
    weight = float(weight)
    batches = {}  # (backend, dtype) -> [(target, flat arrays)]
    with grad_mode.no_grad():
        for t, e in zip(targets, ends):
            a, b = t._data, e._data
            if not _fusable(a, b) or t._backend is not e._backend:
                t.lerp_(e, weight)
                continue
            arrays = (a.reshape(-1), b.reshape(-1))
            if a.size < t._backend.update_foreach_below:
                batches.setdefault((t._backend, a.dtype), []).append((t, arrays))
                continue
            w = a.dtype.type(weight)
            t._backend.optimizer_update(_LERP, arrays, (w, a.dtype.type(1) - w))
            t._version_counter.bump("_foreach_lerp_")
    for (backend, dtype), batch in batches.items():
        w = dtype.type(weight)
        scalars = (w, dtype.type(1) - w)
        if len(batch) == 1:
            backend.optimizer_update(_LERP, batch[0][1], scalars)
        else:
            backend.optimizer_update_foreach(_LERP, tuple(zip(*(arrays for _, arrays in batch))),
                                             scalars)
        for t, _ in batch:  # one in-place write, one version bump each (as lerp_)
            t._version_counter.bump("_foreach_lerp_")


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         "range.")


# ------------------------------------------------------------ averaging functions
def get_ema_multi_avg_fn(decay=0.999):
    r"""Get the function applying exponential moving average (EMA) across multiple params.

    The EMA is computed as:

    .. math::
        W_0^{\text{EMA}} = W_0^{\text{model}}

    .. math::
        W_{t+1}^{\text{EMA}} = \text{decay} \times W_t^{\text{EMA}}
        + (1 - \text{decay}) \times W_{t+1}^{\text{model}}

    Args:
        decay (float): Decay rate for EMA. Must be in the range [0, 1]. Default: 0.999

    Returns:
        Callable: ``ema_update(ema_param_list, current_param_list, num_averaged)``,
        which updates the EMA parameters in place (a fused lerp for floating-point ones).
    """
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point():
            _foreach_lerp_(ema_param_list, current_param_list, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """Get the function applying stochastic weight average (SWA) across multiple params.

    Returns:
        Callable: ``swa_update(averaged_param_list, current_param_list, num_averaged)``,
        which moves each averaged parameter ``1 / (num_averaged + 1)`` of the way
        to the current one, in place (a fused lerp for floating-point ones).
    """
    @grad_mode.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point():
            # A tensor count gives a weight of the default dtype (float32), as in PyTorch.
            weight = 1 / (num_averaged + 1)
            _foreach_lerp_(averaged_param_list, current_param_list,
                           weight.item() if isinstance(weight, Tensor) else weight)
            return
        # Integer tensors: PyTorch's addcdiv_ (a tensor count) or add_ with a float alpha
        # (a number) refuses them, with these errors.
        if not isinstance(num_averaged, Tensor):
            raise RuntimeError("For integral input tensors, argument alpha must not be a "
                               "floating point number.")
        diffs = [c - a for a, c in zip(averaged_param_list, current_param_list)]
        for a, d in zip(averaged_param_list, diffs):
            a.addcdiv_(d, num_averaged + 1)

    return swa_update


def get_ema_avg_fn(decay=0.999):
    r"""Get the function applying exponential moving average (EMA) to a single param.

    ``ema_update(ema_param, current_param, num_averaged)`` returns
    ``decay * ema_param + (1 - decay) * current_param``.

    Args:
        decay (float): Decay rate for EMA. Must be in the range [0, 1]. Default: 0.999

    Returns:
        Callable: the update, returning the new EMA value.
    """
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """Get the function applying stochastic weight average (SWA) to a single param.

    ``swa_update(averaged_param, current_param, num_averaged)`` returns
    ``averaged_param + (current_param - averaged_param) / (num_averaged + 1)``.
    """
    @grad_mode.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


# ------------------------------------------------------------ AveragedModel
def _group_by_device_and_dtype(averaged, current):
    """``{(device, dtype): ([averaged], [current])}`` in order of first appearance."""
    groups = {}
    for a, c in zip(averaged, current):
        lists = groups.setdefault((str(a.device), a.dtype), ([], []))
        lists[0].append(a)
        lists[1].append(c)
    return groups


class AveragedModel(Module):
    r"""Implements averaged model for Stochastic Weight Averaging (SWA) and
    Exponential Moving Average (EMA).

    A copy of ``model`` (on ``device`` if given) whose parameters (and, with
    ``use_buffers``, buffers) hold a running average of ``model``'s, updated by
    :meth:`update_parameters`; calling it runs the copy.

    Args:
        model (nbgrad.nn.Module): model to use with SWA/EMA
        device (nbgrad.device, optional): if provided, the averaged model will be
            stored on the :attr:`device`
        avg_fn (function, optional): the averaging function used to update
            parameters; the function must take in the current value of the
            :class:`AveragedModel` parameter, the current value of :attr:`model`
            parameter, and the number of models already averaged; if None,
            an equally weighted average is used (default: None)
        multi_avg_fn (function, optional): the averaging function used to update
            parameters inplace; the function must take in the current values of the
            :class:`AveragedModel` parameters as a list, the current values of
            :attr:`model` parameters as a list, and the number of models already
            averaged; if None, an equally weighted average is used (default: None)
        use_buffers (bool): if ``True``, it will compute running averages for
            both the parameters and the buffers of the model. (default: ``False``)

    Example::

        >>> swa_model = nbgrad.optim.swa_utils.AveragedModel(model)
        >>> ema_model = nbgrad.optim.swa_utils.AveragedModel(
        ...     model, multi_avg_fn=nbgrad.optim.swa_utils.get_ema_multi_avg_fn(0.9))
        >>> for epoch in range(epochs):
        ...     train(model)
        ...     swa_model.update_parameters(model)

    .. note::
        The first :meth:`update_parameters` (``n_averaged == 0``) copies
        ``model``'s parameters; later ones average. ``avg_fn`` and
        ``multi_avg_fn`` are not saved in the :meth:`state_dict`, whose keys
        are ``n_averaged`` and ``module.*``.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", creation.tensor(0, dtype=dtypes.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Forward pass: the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Update the averages from ``model``'s current parameters (and buffers
        with ``use_buffers``; otherwise the buffers are copied from ``model``)."""
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers())
                      if self.use_buffers else self.parameters())
        model_param = (itertools.chain(model.parameters(), model.buffers())
                       if self.use_buffers else model.parameters())
        self_param_detached = []
        model_param_detached = []
        copy_param = bool(self.n_averaged == 0)
        with grad_mode.no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach()
                if p_model_._backend is not p_averaged._backend:  # (``to`` costs ~10 us)
                    p_model_ = p_model_.to(p_averaged.device)
                self_param_detached.append(p_averaged.detach())
                model_param_detached.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)

            if not copy_param:
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    groups = _group_by_device_and_dtype(self_param_detached, model_param_detached)
                    for (_, dtype), (self_params, model_params) in groups.items():
                        n_averaged = self.n_averaged.to(self_params[0].device)
                        if self.multi_avg_fn:
                            self.multi_avg_fn(self_params, model_params, n_averaged)
                        elif dtype.is_floating_point:
                            # The fused path, on every device, weighted 1 / (n + 1) exactly
                            # (in the parameters' dtype) as PyTorch's division on the CPU.
                            get_swa_multi_avg_fn()(self_params, model_params,
                                                   int(n_averaged.item()))
                        else:  # integer buffers: truncated, as PyTorch's CPU path
                            avg_fn = get_swa_avg_fn()
                            for p_averaged, p_model in zip(self_params, model_params, strict=True):
                                p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
                else:
                    for p_averaged, p_model in zip(self_param_detached, model_param_detached,
                                                   strict=True):
                        n_averaged = self.n_averaged.to(p_averaged.device)
                        p_averaged.detach().copy_(
                            self.avg_fn(p_averaged.detach(), p_model, n_averaged))

            if not self.use_buffers:
                # Without running averages of the buffers, keep them in sync with the model.
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


# ------------------------------------------------------------ update_bn
@grad_mode.no_grad()
def update_bn(loader, model, device=None):
    r"""Update BatchNorm running_mean, running_var buffers in the model.

    It performs one pass over data in ``loader`` to estimate the activation
    statistics for BatchNorm layers in the model: their running statistics
    are reset and re-estimated as a cumulative average (``momentum=None``);
    the momenta and the model's training mode are restored afterwards.

    Args:
        loader (nbgrad.utils.data.DataLoader): dataset loader to compute the
            activation statistics on. Each data batch should be either a
            tensor, or a list/tuple whose first element is a tensor
            containing data.
        model (nbgrad.nn.Module): model for which we seek to update BatchNorm
            statistics.
        device (nbgrad.device, optional): If set, data will be transferred to
            :attr:`device` before being passed into :attr:`model`.

    Example::

        >>> nbgrad.optim.swa_utils.update_bn(loader, swa_model)
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum

    if not momenta:
        return

    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None

    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)

    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


# ------------------------------------------------------------ SWALR
class SWALR(LRScheduler):
    r"""Anneals the learning rate in each parameter group to a fixed value.

    This learning rate scheduler is meant to be used with Stochastic Weight
    Averaging (SWA) method (see :class:`AveragedModel`).

    Args:
        optimizer (nbgrad.optim.Optimizer): wrapped optimizer
        swa_lr (float or list): the learning rate value for all param groups
            together or separately for each group.
        anneal_epochs (int): number of epochs in the annealing phase
            (default: 10)
        anneal_strategy (str): "cos" or "linear"; specifies the annealing
            strategy: "cos" for cosine annealing, "linear" for linear annealing
            (default: "cos")
        last_epoch (int): the index of the last epoch (default: -1)

    Example::

        >>> swa_scheduler = nbgrad.optim.swa_utils.SWALR(
        ...     optimizer, anneal_strategy="linear", anneal_epochs=20, swa_lr=0.05)
        >>> for i in range(300):
        ...     train_one_epoch(model, optimizer)
        ...     if i > swa_start:
        ...         swa_scheduler.step()
        ...     else:
        ...         scheduler.step()
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        # Everything is checked before a group gets its ``swa_lr`` (PyTorch writes it
        # first): a refused scheduler leaves the optimizer as it was.
        swa_lrs = _per_group("swa_lr", optimizer, swa_lr)
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        for swa_lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = swa_lr
        self._set_anneal_func(anneal_strategy)
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        r"""The learning rates of the step being taken: each group's ``lr``
        moved toward its ``swa_lr`` along :attr:`anneal_func` over
        :attr:`anneal_epochs` epochs, then held at ``swa_lr``. To read the
        current rates use :meth:`get_last_lr`."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self):
        """The state of the scheduler as a :class:`dict`: every attribute but the
        optimizer and ``anneal_func`` (restored from ``_anneal_strategy``)."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Load the scheduler's state.

        Args:
            state_dict (dict): scheduler state. Should be an object returned
                from a call to :meth:`state_dict`.
        """
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
