r"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``: each step rewrites the
``group["lr"]`` of an optimizer, mostly recursively (from the current rate, so that
schedulers compose), giving PyTorch's rates, state dicts and warnings. A learning rate
may be a float or a 1-element tensor, which is then filled in place."""
from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from contextlib import contextmanager
from functools import wraps

from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR", "LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")
_SEE = ("See more details at "
        "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")
_STEP_REPLACED = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    f"`lr_scheduler.step()`. {_SEE}")
_WRONG_ORDER = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
    f"value of the learning rate schedule. {_SEE}")
_NO_INITIAL_LR = (
    "param 'initial_lr' is not specified in param_groups[{}] when resuming scheduler with "
    "last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume training from "
    "a checkpoint but haven't properly loaded the optimizer state\n2. You're using "
    "last_epoch >= 0 for a fresh training run (not recommended)")


def _copy(value):
    # What a scheduler keeps or hands out must never alias a group's tensor.
    return value.clone() if isinstance(value, Tensor) else value


def _group_values(optimizer, key):
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group, key, value):
    if not isinstance(group[key], Tensor):
        group[key] = value
        return
    if isinstance(value, Tensor) and value.dim() != 0:
        value = value.squeeze()
    group[key].fill_(value)


def _per_group(name, optimizer, value):
    """``value`` for each parameter group: given as a list, or one for all."""
    count = len(optimizer.param_groups)
    if not isinstance(value, (list, tuple)):
        return [_copy(value) for _ in range(count)]
    if len(value) != count:
        raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                         f"{name} has {len(value)} values, param_groups has {count}.")
    return [_copy(v) for v in value]


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _set_momentum(group, use_beta1, value):
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _setup_momentum(scheduler, optimizer, cycle_momentum, last_epoch, **ends):
    """Validate ``base_momentum``/``max_momentum`` (in the order given), start each group
    at its maximum momentum and record both ends in the group; return (bases, maxima)."""
    scheduler.cycle_momentum = cycle_momentum
    if not cycle_momentum:
        return None, None
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    ends = {name: _per_group(name, optimizer, value) for name, value in ends.items()}
    if last_epoch == -1:
        for i, group in enumerate(optimizer.param_groups):
            _set_momentum(group, scheduler.use_beta1, ends["max_momentum"][i])
            group["max_momentum"] = ends["max_momentum"][i]
            group["base_momentum"] = ends["base_momentum"][i]
    return ends["base_momentum"], ends["max_momentum"]


def _saved_form(value):
    # A nested scheduler is saved as its state dict; a callable object by its attributes;
    # a plain function cannot be saved at all.
    if isinstance(value, LRScheduler):
        return value.state_dict()
    return None if value is None or isinstance(value, types.FunctionType) else value.__dict__.copy()


def _restore(target, saved):
    if isinstance(target, LRScheduler):
        target.load_state_dict(saved)
    elif saved is not None:
        target.__dict__.update(saved)


@contextmanager
def _raised(scheduler, flag):
    setattr(scheduler, flag, True)
    try:
        yield
    finally:
        setattr(scheduler, flag, False)


def _rule(get_lr):
    """Marks a ``get_lr``: called from outside ``step()`` it warns, as PyTorch's do."""
    @wraps(get_lr)
    def checked(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        return get_lr(self)
    return checked


def _track_optimizer_steps(optimizer):
    """Wrap ``optimizer.step`` (once) so that schedulers can tell whether it has run."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    method = optimizer.step.__func__
    owner = weakref.ref(optimizer)  # the optimizer must not keep itself alive

    @wraps(method)
    def step(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        return method(opt, *args, **kwargs)

    step._wrapped_by_lr_sched = True
    optimizer.step = step


class LRScheduler:
    r"""Base class of the learning-rate schedulers.

    A subclass defines :meth:`get_lr` (the rates of the step being taken) and may
    redefine :meth:`step`. Creating a scheduler takes its first step, which sets each
    ``group["lr"]`` to the schedule's starting value. Typical use::

        scheduler = StepLR(optimizer, step_size=30)
        for epoch in range(100):
            train(...)  # calls optimizer.step()
            scheduler.step()

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        last_epoch (int): index of the last epoch. Default: ``-1`` (a new schedule);
            other values resume one and need ``"initial_lr"`` in every group.

    .. warning::
        Creating a scheduler overwrites ``group["lr"]``: when resuming, create it
        **before** loading the optimizer's state dict.
    """

    _get_lr_called_within_step = False
    _is_initial = False
    _nested_state = ()  # attributes saved by :func:`_saved_form` rather than as they are

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", _copy(group["lr"]))
            elif "initial_lr" not in group:
                raise KeyError(_NO_INITIAL_LR.format(i))
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        with _raised(self, "_is_initial"):
            self.step()

    def state_dict(self):
        """The scheduler's state as a :class:`dict`: every attribute but the optimizer.

        Functions given to the scheduler are saved as ``None``, callable objects by their
        attributes, nested schedulers by their state dicts.
        """
        state = {key: value for key, value in self.__dict__.items() if key != "optimizer"}
        for key in self._nested_state:
            value = state[key]
            multiple = isinstance(value, (list, tuple))
            state[key] = [_saved_form(v) for v in value] if multiple else _saved_form(value)
        return state

    def load_state_dict(self, state_dict):
        """Restore the scheduler's state.

        Args:
            state_dict (dict): a dict returned by :meth:`state_dict`.
        """
        state = dict(state_dict)
        nested = {key: state.pop(key, None) for key in self._nested_state}
        self.__dict__.update(state)
        for key, saved in nested.items():
            target = getattr(self, key)
            if isinstance(target, (list, tuple)):
                for item, item_state in zip(target, saved):
                    _restore(item, item_state)
            else:
                _restore(target, saved)

    def get_last_lr(self):
        r"""The learning rates set by the last step, one per parameter group, of the
        types of the ``group["lr"]``\ s (tensors are copies)."""
        return self._last_lr

    def get_lr(self):
        """The learning rates of the step being taken, one per parameter group.

        :meth:`step` calls it; to read the current rates use :meth:`get_last_lr`.
        """
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance the schedule one step and write the new rates into the optimizer.
        Call it after ``optimizer.step()``.

        Args:
            epoch (int, optional): deprecated; jump to this epoch, through the schedule's
                closed form where it has one.
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_STEP_REPLACED, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_WRONG_ORDER, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        with _raised(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                lrs = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                lrs = closed_form() if closed_form is not None else self.get_lr()
        self._write_lrs(lrs)

    def _write_lrs(self, lrs):
        for group, lr in zip(self.optimizer.param_groups, lrs, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    # A recursive step either keeps the current rates or multiplies them.
    def _current(self):
        return _group_values(self.optimizer, "lr")

    def _current_times(self, factor):
        return [group["lr"] * factor for group in self.optimizer.param_groups]


class _LRScheduler(LRScheduler):
    """Former name of :class:`LRScheduler`, kept for old code."""


class _FunctionScheduler(LRScheduler):
    """Schedules given by user functions of the epoch, one per parameter group."""

    _needs_callables = False
    _nested_state = ("lr_lambdas",)

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        count = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != count:
                raise ValueError(f"Expected {count} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * count
        for fn in self.lr_lambdas if self._needs_callables else ():
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)


class LambdaLR(_FunctionScheduler):
    r"""Sets each learning rate to its initial value times ``lr_lambda(epoch)``.

    Args:
        optimizer (Optimizer): the optimizer.
        lr_lambda (function or list): function of the epoch (an int) giving the factor,
            or a list of them, one per parameter group.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: ``LambdaLR(optimizer, lr_lambda=lambda epoch: 0.95 ** epoch)``.
    """

    @_rule
    def get_lr(self):
        return [base * fn(self.last_epoch)
                for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(_FunctionScheduler):
    r"""Multiplies each learning rate by ``lr_lambda(epoch)`` at every step.

    Args:
        optimizer (Optimizer): the optimizer.
        lr_lambda (function or list): function of the epoch (an int) giving the factor,
            or a list of them, one per parameter group.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: ``MultiplicativeLR(optimizer, lr_lambda=lambda epoch: 0.95)``.
    """

    _needs_callables = True

    @_rule
    def get_lr(self):
        if self._is_initial:
            return self._current()
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


class StepLR(LRScheduler):
    r"""Multiplies the learning rates by ``gamma`` every ``step_size`` epochs.

    Args:
        optimizer (Optimizer): the optimizer.
        step_size (int): epochs between two decays.
        gamma (float): the decay factor. Default: ``0.1``.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: with ``lr=0.05``, ``StepLR(optimizer, step_size=30, gamma=0.1)`` gives 0.05
    for epochs 0-29, 0.005 for 30-59, 0.0005 for 60-89, ...
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @_rule
    def get_lr(self):
        decays = self.last_epoch != 0 and self.last_epoch % self.step_size == 0
        return self._current_times(self.gamma) if decays else self._current()

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    r"""Multiplies the learning rates by ``gamma`` at each milestone (by ``gamma ** n``
    at a milestone listed ``n`` times).

    Args:
        optimizer (Optimizer): the optimizer.
        milestones (list): epoch indices, in any order.
        gamma (float): the decay factor. Default: ``0.1``.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: with ``lr=0.05``, ``MultiStepLR(optimizer, milestones=[30, 80], gamma=0.1)``
    gives 0.05 for epochs 0-29, 0.005 for 30-79, 0.0005 from 80 on.
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @_rule
    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._current()
        return self._current_times(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    r"""Multiplies the learning rates by ``factor`` until epoch ``total_iters``.

    Args:
        optimizer (Optimizer): the optimizer.
        factor (float): the factor, in [0, 1]. Default: ``1/3``.
        total_iters (int): epoch at which the full rates return. Default: ``5``.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: with ``lr=0.05``, ``ConstantLR(optimizer, factor=0.5, total_iters=4)`` gives
    0.025 for epochs 0-3, 0.05 from 4 on.
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    @_rule
    def get_lr(self):
        if self.last_epoch == 0:
            return self._current_times(self.factor)
        if self.last_epoch != self.total_iters:
            return self._current()
        return self._current_times(1.0 / self.factor)

    def _get_closed_form_lr(self):
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    r"""Scales the learning rates by a factor moving linearly from ``start_factor``
    to ``end_factor`` over ``total_iters`` epochs.

    Args:
        optimizer (Optimizer): the optimizer.
        start_factor (float): factor of epoch 0, in (0, 1]. Default: ``1/3``.
        end_factor (float): factor from epoch ``total_iters`` on, in [0, 1]. Default: ``1.0``.
        total_iters (int): epochs the change takes. Default: ``5``.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: with ``lr=0.05``, ``LinearLR(optimizer, start_factor=0.5, total_iters=4)``
    gives 0.025, 0.03125, 0.0375, 0.04375, then 0.05 from epoch 4 on.
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    @_rule
    def get_lr(self):
        k, start, end = self.last_epoch, self.start_factor, self.end_factor
        if k == 0:
            return self._current_times(start)
        if self._is_initial or k > self.total_iters:
            return self._current()
        # factor(k) / factor(k - 1)
        return self._current_times(
            1.0 + (end - start) / (self.total_iters * start + (k - 1) * (end - start)))

    def _get_closed_form_lr(self):
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * progress)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    r"""Multiplies the learning rates by ``gamma`` every epoch.

    Args:
        optimizer (Optimizer): the optimizer.
        gamma (float): the decay factor.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: ``ExponentialLR(optimizer, gamma=0.95)``.
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @_rule
    def get_lr(self):
        return self._current() if self._is_initial else self._current_times(self.gamma)

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    r"""Decays the learning rates to ``(1 - epoch / total_iters) ** power`` times their
    initial values, reaching 0 at epoch ``total_iters``.

    Args:
        optimizer (Optimizer): the optimizer.
        total_iters (int): epochs the decay takes. Default: ``5``.
        power (float): the power of the polynomial. Default: ``1.0``.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: with ``lr=0.001``, ``PolynomialLR(optimizer, total_iters=4, power=1.0)``
    gives 0.001, 0.00075, 0.0005, 0.00025, then 0 from epoch 4 on.
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    @_rule
    def get_lr(self):
        k, total = self.last_epoch, self.total_iters
        if self._is_initial or k > total:
            return self._current()
        return self._current_times(((1.0 - k / total) / (1.0 - (k - 1) / total)) ** self.power)

    def _get_closed_form_lr(self):
        remaining = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * remaining ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneals the learning rates along a cosine from their initial value
    :math:`\eta_{max}` down to ``eta_min`` in ``T_max`` epochs (SGDR without restarts):

    .. math::
        \eta_t = \eta_{min} + \tfrac{1}{2}(\eta_{max} - \eta_{min})
                 \left(1 + \cos\left(\tfrac{T_{cur}}{T_{max}}\pi\right)\right)

    The update is recursive, so other schedulers may change the rates as well; after
    ``T_max`` the cosine rises again.

    Args:
        optimizer (Optimizer): the optimizer.
        T_max (int): epochs of half a period.
        eta_min (float): the lowest learning rate. Default: ``0``.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: ``CosineAnnealingLR(optimizer, T_max=100, eta_min=1e-5)``.
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    @_rule
    def get_lr(self):
        k, period, low = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and k > 0:  # resumed: nothing to recurse from
            return [low + (base - low) * (1 + math.cos(k * math.pi / period)) / 2
                    for base in self.base_lrs]
        if (k - 1 - period) % (2 * period) == 0:  # leaving a minimum, where the ratio is 0/0
            return [group["lr"] + (base - low) * (1 - math.cos(math.pi / period)) / 2
                    for base, group in zip(self.base_lrs, groups, strict=True)]
        ratio = (1 + math.cos(math.pi * k / period)) / (1 + math.cos(math.pi * (k - 1) / period))
        return [ratio * (group["lr"] - low) + low for group in groups]

    def _get_closed_form_lr(self):
        phase = math.cos(math.pi * self.last_epoch / self.T_max)
        return [self.eta_min + (base - self.eta_min) * (1 + phase) / 2 for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing with warm restarts (SGDR): the rates follow
    :class:`CosineAnnealingLR`'s curve down to ``eta_min`` and restart from their
    initial values after ``T_i`` epochs; ``T_0`` is the first period's length and
    each next period is ``T_mult`` times longer. :meth:`step` accepts fractional
    epochs (``epoch + batch / batches``) to move within an epoch.

    Args:
        optimizer (Optimizer): the optimizer.
        T_0 (int): epochs of the first period.
        T_mult (int): growth factor of the periods. Default: ``1``.
        eta_min (float): the lowest learning rate. Default: ``0``.
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example: ``CosineAnnealingWarmRestarts(optimizer, T_0=10, T_mult=2)``.
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    @_rule
    def get_lr(self):
        phase = math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * (1 + phase) / 2 for base in self.base_lrs]

    def step(self, epoch=None):
        """Move to the next epoch, or to ``epoch``.

        Args:
            epoch (float, optional): the epoch to move to, possibly fractional.
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            # period n starts at T_0 (T_mult^n - 1) / (T_mult - 1)
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        with _raised(self, "_get_lr_called_within_step"):
            lrs = self.get_lr()
        self._write_lrs(lrs)


class CyclicLR(LRScheduler):
    r"""Cycles the learning rates between ``base_lr`` and ``max_lr`` (cyclical learning
    rates, Smith 2017), changing them at every batch: call :meth:`step` per batch.

    The cycle's height is scaled per ``mode``: ``"triangular"`` (not at all),
    ``"triangular2"`` (halved every cycle), ``"exp_range"`` (by ``gamma ** iteration``),
    or by a custom ``scale_fn``. With ``cycle_momentum`` the momentum (or Adam's
    ``beta1``) cycles the other way, between ``max_momentum`` and ``base_momentum``.

    Args:
        optimizer (Optimizer): the optimizer.
        base_lr (float or list): lower end, per group or for all.
        max_lr (float or list): upper end, per group or for all.
        step_size_up (int): iterations of the rising half. Default: ``2000``.
        step_size_down (int): iterations of the falling half. Default: ``step_size_up``.
        mode (str): ``"triangular"``, ``"triangular2"`` or ``"exp_range"``; ignored with
            a ``scale_fn``. Default: ``"triangular"``.
        gamma (float): base of ``"exp_range"``'s scaling. Default: ``1.0``.
        scale_fn (function): custom scaling, ``0 <= scale_fn(x) <= 1``. Default: ``None``.
        scale_mode (str): what ``scale_fn`` is given: ``"cycle"`` (the cycle number) or
            ``"iterations"``. Default: ``"cycle"``.
        cycle_momentum (bool): cycle the momentum too. Default: ``True``.
        base_momentum (float or list): lower end of the momentum. Default: ``0.8``.
        max_momentum (float or list): upper end of the momentum. Default: ``0.9``.
        last_epoch (int): index of the last batch. Default: ``-1``.

    Example: ``CyclicLR(optimizer, base_lr=0.01, max_lr=0.1, step_size_up=500)``.
    """

    _nested_state = ("_scale_fn_custom",)

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        self.total_size = up + (up if step_size_down is None else float(step_size_down))
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._fix_scale_mode()
        momenta = _setup_momentum(self, optimizer, cycle_momentum, last_epoch,
                                  base_momentum=base_momentum, max_momentum=max_momentum)
        if cycle_momentum:
            self.base_momentums, self.max_momentums = momenta
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _fix_scale_mode(self):
        # Each built-in mode decides what its scale function is given.
        if self._scale_fn_custom is None:
            self.scale_mode = {"triangular": "cycle", "triangular2": "cycle",
                               "exp_range": "iterations"}.get(self.mode, self.scale_mode)

    def scale_fn(self, x):
        """Scale of the cycle's height at cycle or iteration ``x`` (per ``scale_mode``)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x if self.mode == "exp_range" else 1.0

    @_rule
    def get_lr(self):
        k = self.last_epoch
        cycle = math.floor(1 + k / self.total_size)
        x = 1.0 + k / self.total_size - cycle  # position in the cycle, in [0, 1)
        if x <= self.step_ratio:
            rise = x / self.step_ratio
        else:
            rise = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else k
        lrs = [low + (high - low) * rise * self.scale_fn(at)
               for low, high in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            momenta = [high - (high - low) * rise * self.scale_fn(at)
                       for low, high in zip(self.base_momentums, self.max_momentums, strict=True)]
            for group, momentum in zip(self.optimizer.param_groups, momenta, strict=True):
                _set_momentum(group, self.use_beta1, momentum)
        return lrs

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._fix_scale_mode()


class OneCycleLR(LRScheduler):
    r"""The 1cycle policy (Smith & Topin 2018): the learning rates rise from
    ``max_lr / div_factor`` to ``max_lr`` and then anneal to
    ``max_lr / div_factor / final_div_factor`` over ``total_steps`` batches, while the
    momentum moves the other way between ``max_momentum`` and ``base_momentum``. Call
    :meth:`step` per batch. Give ``total_steps``, or ``epochs`` and ``steps_per_epoch``.

    Args:
        optimizer (Optimizer): the optimizer.
        max_lr (float or list): the peak rate, per group or for all.
        total_steps (int): steps of the cycle. Default: ``None``.
        epochs (int): epochs of training, with ``steps_per_epoch``. Default: ``None``.
        steps_per_epoch (int): steps per epoch. Default: ``None``.
        pct_start (float): fraction of the cycle spent rising. Default: ``0.3``.
        anneal_strategy (str): ``"cos"`` or ``"linear"``. Default: ``"cos"``.
        cycle_momentum (bool): move the momentum (or Adam's ``beta1``) too. Default: ``True``.
        base_momentum (float or list): momentum at the peak rate. Default: ``0.85``.
        max_momentum (float or list): momentum at the lowest rates. Default: ``0.95``.
        div_factor (float): ``initial_lr = max_lr / div_factor``. Default: ``25``.
        final_div_factor (float): ``min_lr = initial_lr / final_div_factor``. Default: ``1e4``.
        three_phase (bool): come back down to ``initial_lr`` before the final annealing
            to ``min_lr``. Default: ``False``.
        last_epoch (int): index of the last batch. Default: ``-1``.

    Example: ``OneCycleLR(optimizer, max_lr=0.01, epochs=10, steps_per_epoch=100)``.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        # Each phase ends at a step and names the group entries it moves between.
        last = self.total_steps - 1
        peak = float(pct_start * self.total_steps) - 1
        rising = (peak, "initial_lr", "max_lr", "max_momentum", "base_momentum")
        if three_phase:
            phases = [rising,
                      (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                      (last, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            phases = [rising, (last, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(keys, phase)) for phase in phases]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        _setup_momentum(self, optimizer, cycle_momentum, last_epoch,
                        max_momentum=max_momentum, base_momentum=base_momentum)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "linear":
            return (end - start) * pct + start
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @_rule
    def get_lr(self):
        k = self.last_epoch
        if k > self.total_steps:
            raise ValueError(f"Tried to step {k} times. The specified number of total steps is "
                             f"{self.total_steps}")
        start = 0.0
        for phase in self._schedule_phases[:-1]:
            if k <= phase["end_step"]:
                break
            start = phase["end_step"]
        else:
            phase = self._schedule_phases[-1]
        pct = (k - start) / (phase["end_step"] - start)
        lrs = []
        for group in self.optimizer.param_groups:
            lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                momentum = self._anneal(group[phase["start_momentum"]],
                                        group[phase["end_momentum"]], pct)
                _set_momentum(group, self.use_beta1, momentum)
        return lrs


class ReduceLROnPlateau(LRScheduler):
    r"""Multiplies the learning rates by ``factor`` once a metric has not improved for
    more than ``patience`` epochs; :meth:`step` is given the metric.

    Args:
        optimizer (Optimizer): the optimizer.
        mode (str): ``"min"`` (the metric should fall) or ``"max"``. Default: ``"min"``.
        factor (float): the reduction factor, below 1. Default: ``0.1``.
        patience (int): epochs without improvement tolerated. Default: ``10``.
        threshold (float): smallest change counted as an improvement. Default: ``1e-4``.
        threshold_mode (str): ``"rel"`` (compare with ``best * (1 -/+ threshold)``) or
            ``"abs"`` (with ``best -/+ threshold``). Default: ``"rel"``.
        cooldown (int): epochs after a reduction in which bad epochs are not counted.
            Default: ``0``.
        min_lr (float or list): lower bound of the rates, per group or for all. Default: ``0``.
        eps (float): reductions smaller than this are skipped. Default: ``1e-8``.

    Example: ``scheduler = ReduceLROnPlateau(optimizer)``, then ``scheduler.step(val_loss)``
    after each epoch's validation.
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        count = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != count:
                raise ValueError(f"expected {count} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * count
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._set_comparison(mode, threshold, threshold_mode)
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def _set_comparison(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    @property
    def in_cooldown(self):
        """Whether bad epochs are ignored (for ``cooldown`` epochs after a reduction)."""
        return self.cooldown_counter > 0

    def _is_better(self, value, best):
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return value < (best * (1.0 - self.threshold) if rel else best - self.threshold)
        return value > (best * (self.threshold + 1.0) if rel else best + self.threshold)

    def step(self, metrics, epoch=None):
        """Record the epoch's metric, and reduce the rates if it has stopped improving.

        Args:
            metrics (float or Tensor): the monitored value.
            epoch (int, optional): deprecated; the epoch's number.
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                _set_group_value(group, "lr", new)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._set_comparison(self.mode, self.threshold, self.threshold_mode)


class _Composite(LRScheduler):
    """Schedulers driven as one; their state dicts are nested in this one's."""

    _nested_state = ("_schedulers",)

    def _check_members(self, optimizer, schedulers, what):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one {what}, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                    "additional kwargs to be specified when calling `step`, but got one at "
                    f"index {i} in the given schedulers sequence.")
            if optimizer != scheduler.optimizer:
                raise ValueError(
                    f"{name} expects all schedulers to belong to the same optimizer, but got "
                    f"scheduler {type(scheduler).__name__} at index {i} has "
                    f"{scheduler.optimizer}, which is different from {type(optimizer).__name__}.")


class SequentialLR(_Composite):
    r"""Runs schedulers one after another, handing over at the milestones.

    Args:
        optimizer (Optimizer): the optimizer of all the schedulers.
        schedulers (list): the schedulers, in order.
        milestones (list): epochs at which the next scheduler takes over (one fewer than
            the schedulers).
        last_epoch (int): index of the last epoch. Default: ``-1``.

    Example:
        >>> warmup = LinearLR(optimizer, start_factor=0.1, total_iters=5)
        >>> decay = ExponentialLR(optimizer, gamma=0.9)
        >>> scheduler = SequentialLR(optimizer, schedulers=[warmup, decay], milestones=[5])
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        self._check_members(optimizer, schedulers, "scheduler")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Creating the members stepped them: restart from the initial rates.
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched=None):
        """Take one epoch back from every scheduler inside ``sched`` (default: this one)."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for inner in target._schedulers:
                self.recursive_undo(inner)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self):
        """Step the active scheduler; at a milestone, start the next one at epoch 0."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    r"""Steps all the given schedulers at each :meth:`step`, so that their recursive
    changes to the learning rates compose.

    Args:
        schedulers (sequence): the schedulers to chain.
        optimizer (Optimizer, optional): their optimizer. Default: the first one's.

    Example:
        >>> scheduler = ChainedScheduler([ConstantLR(optimizer, factor=0.1, total_iters=2),
        ...                               ExponentialLR(optimizer, gamma=0.9)])
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) >= 1:
            optimizer = optimizer or schedulers[0].optimizer
        self._check_members(optimizer, schedulers, "scheduler to be chained")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, "lr")

    def step(self):
        """Step each chained scheduler in turn."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")
