"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and
state dicts, as ``torch.optim.Optimizer``."""
import collections
import copy
import functools
import itertools
import threading
import types
import warnings

import numpy as np

from .. import creation, dtypes
from ..tape import grad_mode
from ..nn.module import zero_grads
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def _value(x):
    """A hyper-parameter as a Python number (a 1-element tensor gives its value)."""
    return x.item() if isinstance(x, Tensor) else x


def _check_lr(lr):
    """PyTorch's first checks on ``lr``."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_adam_family(eps, betas, weight_decay):
    """PyTorch's checks, in its order, on the arguments the Adam family shares."""
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _check_fused(optimizer, fused, foreach, differentiable):
    """PyTorch's refusals for ``fused=True`` (raised after the groups are made, as there)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


_CAPTURABLE_DEVICES = ['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']


def _is_half(array):
    return isinstance(array, np.ndarray) and array.dtype == np.float16


def launch(backend, update, arrays, scalars):
    """``backend.optimizer_update(update, arrays, scalars)``. The CPU's compiled
    kernels have no float16: float16 arrays (a half parameter's state) are
    updated through float32 copies (an array passed twice, one copy) and
    rounded back once, the parameter itself being float32 already
    (``_step_param``): the update computes in float32 as PyTorch's CPU ops
    compute half tensors in float."""
    if not any(_is_half(a) for a in arrays):
        backend.optimizer_update(update, arrays, scalars)
        return
    wide = {}
    for a in arrays:
        if id(a) not in wide:
            wide[id(a)] = a.astype(np.float32) if _is_half(a) else a
    backend.optimizer_update(update, tuple(wide[id(a)] for a in arrays), scalars)
    for a in arrays:
        w = wide.pop(id(a), None)
        if w is not None and w is not a:
            a[...] = w


# ------------------------------------------------------------------ step hooks
# Hooks every optimizer runs around ``step`` (PyTorch's globals of the same names).
_global_optimizer_pre_hooks = collections.OrderedDict()
_global_optimizer_post_hooks = collections.OrderedDict()


def _add_hook(hooks, hook, prepend=False):
    """``hook`` into the ordered dict ``hooks`` (first with ``prepend``), removable."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it
    may return new ``(args, kwargs)``. Returns a ``RemovableHandle``."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` after every optimizer's ``step``.
    Returns a ``RemovableHandle``."""
    return _add_hook(_global_optimizer_post_hooks, hook)


_HOOK_DICTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
               "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
               "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")

# Optimizers whose ``step`` is running in this thread: a subclass's ``step`` that calls
# ``super().step()`` runs the hooks once, around the outer call.
_stepping = threading.local()


def _hooked_step(step):
    """``step`` run between the step hooks: global then own pre-hooks (each may
    replace ``(args, kwargs)``), then own then global post-hooks, as PyTorch's
    ``Optimizer.profile_hook_step``."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if not (self._optimizer_step_pre_hooks or self._optimizer_step_post_hooks
                or _global_optimizer_pre_hooks or _global_optimizer_post_hooks):
            return step(self, *args, **kwargs)  # no hook: the common case, kept cheap
        args = (self, *args)  # the hooks see ``self`` in ``args``, as PyTorch's
        running = _stepping.__dict__.setdefault("ids", set())
        if id(self) in running:
            return step(*args, **kwargs)
        running.add(id(self))
        try:
            for pre_hook in itertools.chain(_global_optimizer_pre_hooks.values(),
                                            self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{step} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
            out = step(*args, **kwargs)
            for post_hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                             _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        finally:
            running.discard(id(self))

    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class: subclasses implement ``_kernel_args(group, p, param, grad)``,
    which makes or reads ``p``'s state (``_state(p)``), counts its step and
    returns ``(update, arrays, scalars)``: the fused update
    (``declarations.optimizer_updates``) that changes the flat C-contiguous
    ``param`` in place in one pass, its arrays (``param``, ``grad``, the
    state buffers) and its scalars (cast to the parameter's dtype, as PyTorch
    casts them) and flags. Small CPU parameters whose updates have the same
    scalars run together, one kernel call per run (``_step_group``). (SGD
    overrides ``_update``: plain SGD keeps no state, as in PyTorch.)

    The flags PyTorch's optimizers take are accepted, kept in the groups (so
    state dicts match) and mean here: ``foreach``, ``fused``: nothing to
    choose (every update is one fused kernel per parameter, or per run of
    small parameters); PyTorch's refusals of ``fused`` with ``foreach`` or
    ``differentiable`` are kept. ``capturable``: there are no CUDA graphs to
    capture; as in PyTorch, a step with a CPU parameter is refused, and the
    step counters stay on the CPU. ``differentiable=True``: the constructor
    takes non-leaf tensors as PyTorch does, but ``step`` raises
    ``NotImplementedError`` (a ``RuntimeError``): the fused kernels are not
    recorded by autograd.

    Hooks, as PyTorch's: ``register_step_pre_hook``/``register_step_post_hook``
    (and the global ``register_optimizer_step_pre_hook``/``_post_hook`` of this
    module) run around every ``step``, a subclass's own ``step`` included;
    ``register_state_dict_pre_hook``/``_post_hook`` and
    ``register_load_state_dict_pre_hook``/``_post_hook`` around the state dicts.
    Each returns a ``RemovableHandle``; hooks are not copied with the optimizer."""

    # ``capturable=True`` refusal text: what must be on the device, and whether PyTorch
    # lists 'xla' among the devices.
    _capturable_what = "params and state_steps"
    _capturable_xla = True

    def __init_subclass__(cls, **kwargs):
        # Every ``step`` runs its hooks, a subclass's own ``step`` (LBFGS's) too.
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if isinstance(step, types.FunctionType) and not getattr(step, "hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults):
        for name in _HOOK_DICTS:
            setattr(self, name, collections.OrderedDict())
        self.defaults = defaults
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got nbgrad.{params.dtype.tensor_type}")
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        # Hooks are not pickled (PyTorch's rule): an unpickled optimizer starts without any.
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                setattr(self, name, collections.OrderedDict())

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\nParameter Group {0}".format(i)
            for key in sorted(group):
                if key != "params":
                    text += "\n    {0}: {1}".format(key, group[key])
        return text + "\n)"

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use "
                            "a list instead.")
        else:
            param_group["params"] = list(params)
        named = [p for p in param_group["params"] if isinstance(p, tuple)]
        if named:  # named parameters, as from module.named_parameters()
            if len(named) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = [name for name, _ in param_group["params"]]
            param_group["params"] = [p for _, p in param_group["params"]]
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(param).__name__)
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
            if not param.is_floating_point():
                raise ValueError("optimizer can only optimize floating point Tensors")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization "
                                 f"parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(set(ids)) != len(ids):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} to the optimizer")
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if existing & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    # ------------------------------------------------------------- stepping
    @_hooked_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        with grad_mode.no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _check_group(self, group):
        """PyTorch's refusals at ``step`` time for the group's flags."""
        if group.get("differentiable"):
            raise NotImplementedError(
                f"{type(self).__name__}(differentiable=True): nbgrad's optimizers update "
                "parameters with fused kernels that autograd does not record, so the step "
                "cannot be differentiated")
        if group.get("capturable"):
            for p in group["params"]:
                if p.grad is not None and p.device.type != "cuda":
                    devices = _CAPTURABLE_DEVICES if self._capturable_xla else \
                        _CAPTURABLE_DEVICES[:-1]
                    raise AssertionError(f"If capturable=True, {self._capturable_what} must be "
                                         f"on supported devices: {devices}.")

    def _step_group(self, group):
        """Every parameter with a gradient, in the group's order. Parameters
        below their backend's ``update_foreach_below`` (small CPU ones) whose
        gradient and state buffers match them (type, shape, dtype, C layout)
        and whose updates have the same scalars go to one kernel call per run:
        a call per parameter costs more than a small parameter's update."""
        self._check_group(group)
        batch, key = [], None
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            data, g = p._data, grad._data
            if not (data.size < p._backend.update_foreach_below and type(g) is type(data)
                    and not _is_half(data)
                    and g.shape == data.shape and g.dtype == data.dtype
                    and data.flags.c_contiguous and g.flags.c_contiguous
                    and g.flags.writeable):  # (a read-only array would not type in the tuple)
                if batch:
                    self._run_batch(batch, key)
                self._step_param(group, p, grad)
                continue
            update, arrays, scalars = self._kernel_args(group, p, data.ravel(), g.ravel())
            if not all(type(a) is type(data) and a.dtype == data.dtype and a.ndim == 1
                       and a.flags.c_contiguous and a.flags.writeable for a in arrays[2:]):
                if batch:
                    self._run_batch(batch, key)
                p._backend.optimizer_update(update, arrays, scalars)
                p._version_counter.bump(type(self).__name__ + ".step")
                continue
            here = (update, p._backend, data.dtype, scalars)
            if batch and here != key:
                self._run_batch(batch, key)
            key = here
            batch.append((p, arrays))
        if batch:
            self._run_batch(batch, key)

    def _run_batch(self, batch, key):
        update, backend, _, scalars = key
        ps, arrays = zip(*batch)
        if len(ps) == 1:
            backend.optimizer_update(update, arrays[0], scalars)
        else:
            backend.optimizer_update_foreach(update, tuple(zip(*arrays)), scalars)
        name = type(self).__name__ + ".step"
        for p in ps:  # one in-place write, one version bump each (as param.add_)
            p._version_counter.bump(name)
        batch.clear()

    def _step_param(self, group, p, grad):
        data = p._data
        g = grad._data
        if g.shape != data.shape:
            raise RuntimeError(f"{type(self).__name__}: gradient of shape {list(grad.shape)} does "
                               f"not match its parameter of shape {list(p.shape)}")
        if g.dtype != data.dtype:
            g = g.astype(data.dtype)
        backend = p._backend
        g = backend.ascontiguous(g).reshape(-1)
        if _is_half(data):  # computed in float32 (scalars too), rounded back once
            wide = data.astype(np.float32)
            self._update(group, wide.reshape(-1), g.astype(np.float32), p)
            data[...] = wide
        elif data.flags.c_contiguous:
            self._update(group, data.reshape(-1), g, p)
        else:
            target = backend.ascontiguous(data)
            self._update(group, target.reshape(-1), g, p)
            data[...] = target
        # One in-place write, one version bump (as PyTorch's param.add_ does).
        p._version_counter.bump(type(self).__name__ + ".step")

    def _state(self, p):
        """``p``'s state (made on first use, as PyTorch's ``self.state[p]``),
        checked to live on ``p``'s device."""
        state = self.state[p]
        if state:
            self._check_devices(p, state)
        return state

    def _state_buffer(self, p):
        """A zero-filled state tensor shaped and typed like ``p``, on its device."""
        return Tensor._wrap(p._backend.zeros(p._data.shape, p._data.dtype), p.dtype, p._backend)

    @staticmethod
    def _check_devices(p, state):
        """State buffers live on their parameter's device. A module moved with
        ``.to()`` after the optimizer made its state leaves that state behind
        (PyTorch does the same): say so rather than mix devices in a kernel.
        (``step`` counters stay on the CPU, as PyTorch keeps them.)"""
        for name, value in state.items():
            if (name != "step" and isinstance(value, Tensor) and value.dim() > 0
                    and value._backend is not p._backend):
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    f"devices, {p.device} and {value.device}! (optimizer state '{name}' was "
                    "created before the parameters moved: move the model before creating the "
                    "optimizer, or load the optimizer's state_dict again, which moves the state "
                    "to each parameter's device)")

    def _update(self, group, param, grad, p):
        """Update the flat C-contiguous ``param`` of ``p`` in place from ``grad``."""
        update, arrays, scalars = self._kernel_args(group, p, param, grad)
        launch(p._backend, update, arrays, scalars)

    def _kernel_args(self, group, p, param, grad):
        """``(update, arrays, scalars)`` for one step of ``p`` (see the class)."""
        raise NotImplementedError

    # -------------------------------------------------------- state helpers
    def _state_full(self, p, value):
        """A state tensor shaped and typed like ``p``, filled with ``value``."""
        buffer = self._state_buffer(p)
        if value != 0:
            with grad_mode.no_grad():
                buffer.fill_(value)
        return buffer

    @staticmethod
    def _step_counter(p=None):
        """A new ``step`` counter: a float32 0-dim tensor on the CPU (as PyTorch keeps
        it unless ``capturable`` or ``fused``), or on ``p``'s device when given."""
        if p is None:
            return creation.tensor(0.0, dtype=dtypes.float32)
        return creation.tensor(0.0, dtype=dtypes.float32, device=p.device)

    @staticmethod
    def _count_step(state):
        """``state["step"] += 1``; the new count as a Python float."""
        step_t = state["step"]
        if isinstance(step_t._data, np.ndarray):
            step_t._data[...] += step_t._data.dtype.type(1)
            return float(step_t._data)
        with grad_mode.no_grad():  # a counter on the device (ASGD's)
            step_t.fill_(step_t.item() + 1)
        return float(step_t.item())

    @staticmethod
    def _scalar_value(t):
        """A 0-dim state tensor's value as a Python float (a CPU one read directly)."""
        return float(t._data) if isinstance(t._data, np.ndarray) else float(t.item())

    @staticmethod
    def _set_scalar(t, value):
        """Overwrite a 0-dim state tensor (a CPU one written directly: ``fill_``
        costs more than a small parameter's whole update)."""
        if isinstance(t._data, np.ndarray):
            t._data[...] = value
            t._version_counter.bump("Optimizer.step")
        else:
            with grad_mode.no_grad():
                t.fill_(value)

    @staticmethod
    def _unused(p):
        """A placeholder for a buffer an update's flags leave unread: an empty array
        of ``p``'s type (passing one of the live arrays twice would make the
        foreach kernel's loop fail its alias check and run ~10x slower)."""
        return p._backend.zeros((0,), p._data.dtype)

    @staticmethod
    def _flat(t):
        """The flat view of a (C-contiguous) state tensor's array."""
        return t._data.reshape(-1)

    # ---------------------------------------------------------------- hooks
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before this optimizer's ``step``; it
        may return new ``(args, kwargs)``. Returns a ``RemovableHandle``."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after this optimizer's ``step``.
        Returns a ``RemovableHandle``."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` before ``state_dict`` builds its result
        (``prepend``: before the hooks already registered). Returns a ``RemovableHandle``."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` on ``state_dict``'s result; it may
        change it in place or return a new one. Returns a ``RemovableHandle``."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` on a shallow copy of what
        ``load_state_dict`` is given; it may change it or return a new one to
        load. Returns a ``RemovableHandle``."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` after ``load_state_dict``. Returns a
        ``RemovableHandle``."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---------------------------------------------------------- state dicts
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters
        replaced by their index in the order of the groups, as in PyTorch.
        State tensors are the optimizer's own (save them, or clone them).
        The state dict hooks run before and after (a post-hook may replace
        the result)."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping = {}
        index = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                if id(p) not in mapping:
                    mapping[id(p)] = index
                    index += 1
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for p, value in self.state.items():
            key = mapping[id(p)] if isinstance(p, Tensor) else p
            state[key] = value
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Restore hyper-parameters and state. Everything is checked before
        anything changes; state tensors are copied (cast to each parameter's
        dtype and device, except the ``step`` counter). The load hooks run
        before (on a shallow copy, which they may replace) and after."""
        if isinstance(state_dict, collections.abc.Mapping):
            state_dict = state_dict.copy() if hasattr(state_dict, "copy") else dict(state_dict)
            for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
                result = pre_hook(self, state_dict)
                if result is not None:
                    state_dict = result
        if not isinstance(state_dict, collections.abc.Mapping) or "param_groups" not in state_dict \
                or "state" not in state_dict:
            raise ValueError("optimizer state dict must be a dict with 'state' and 'param_groups'")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match "
                                 "the size of optimizer's group")
        id_map = {}
        for group, saved in zip(self.param_groups, saved_groups):
            for old, p in zip(saved["params"], group["params"]):
                id_map[old] = p
        new_state = collections.defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key not in id_map:
                new_state[key] = copy.deepcopy(value)
                continue
            p = id_map[key]
            converted = {}
            for name, item in value.items():
                converted[name] = self._cast_state(p, name, item)
            new_state[p] = converted
        new_groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            new = {k: copy.deepcopy(v) for k, v in saved.items() if k != "params"}
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                new["param_names"] = group["param_names"]
            new_groups.append(new)
        self.state = new_state
        self.param_groups = new_groups
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # Where ``step`` counters live: the CPU (False), or the parameter's device (ASGD, as PyTorch).
    _step_on_param_device = False
    # Whether state tensors of one or more dimensions must have their parameter's shape.
    _elementwise_state = True

    def _cast_state(self, p, name, value):
        """PyTorch's policy: ``step`` stays a float32 counter (on the CPU, or on
        ``p``'s device where this optimizer keeps it there); other state tensors
        take ``p``'s dtype (if floating) and device; lists, tuples and dicts are
        cast item by item. Everything is copied (and made C-contiguous)."""
        if name == "step":
            device = p.device if self._step_on_param_device else "cpu"
            if isinstance(value, Tensor):
                return value.detach().to(device, dtype=dtypes.float32, copy=True)
            return creation.tensor(float(value), dtype=dtypes.float32, device=device)
        if isinstance(value, Tensor):
            if (self._elementwise_state and value.dim() > 0
                    and tuple(value.shape) != tuple(p.shape)):
                raise ValueError(f"state '{name}' of shape {list(value.shape)} does not match its "
                                 f"parameter of shape {list(p.shape)}")
            dtype = p.dtype if p.is_floating_point() else value.dtype
            return value.detach().to(p.device, dtype=dtype, copy=True).contiguous()
        if isinstance(value, dict):
            return {k: self._cast_state(p, k, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._cast_state(p, None, v) for v in value)
        return copy.deepcopy(value)
