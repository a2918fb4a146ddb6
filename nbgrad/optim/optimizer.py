"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and
state dicts, as ``torch.optim.Optimizer``."""
import collections
import copy
import warnings

from .. import creation, dtypes
from ..tape import grad_mode
from ..nn.module import zero_grads
from ..tensor import Tensor


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: subclasses implement ``_update(group, param, grad, p)``,
    which updates one parameter in place with one fused kernel and reads
    ``p``'s state (``_state(p)``) only if it has some, as PyTorch's
    optimizers do (plain SGD keeps none)."""

    def __init__(self, params, defaults):
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
            param_group["param_names"] = [name for name, _ in param_group["params"]]
            param_group["params"] = [p for _, p in param_group["params"]]
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(param).__name__)
            if not param.is_leaf:
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
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if existing & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    # ------------------------------------------------------------- stepping
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

    def _step_group(self, group):
        for p in group["params"]:
            grad = p.grad
            if grad is not None:
                self._step_param(group, p, grad)

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
        if data.flags.c_contiguous:
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
            if name != "step" and isinstance(value, Tensor) and value._backend is not p._backend:
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    f"devices, {p.device} and {value.device}! (optimizer state '{name}' was "
                    "created before the parameters moved: move the model before creating the "
                    "optimizer, or load the optimizer's state_dict again, which moves the state "
                    "to each parameter's device)")

    def _update(self, group, param, grad, p):
        """Update the flat C-contiguous ``param`` of ``p`` in place from ``grad``."""
        raise NotImplementedError

    # ---------------------------------------------------------- state dicts
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters
        replaced by their index in the order of the groups, as in PyTorch.
        State tensors are the optimizer's own (save them, or clone them)."""
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
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore hyper-parameters and state. Everything is checked before
        anything changes; state tensors are copied (cast to each parameter's
        dtype and device, except the ``step`` counter)."""
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

    @staticmethod
    def _cast_state(p, name, value):
        if name == "step":
            if isinstance(value, Tensor):
                return value.detach().to(dtypes.float32, copy=True)
            return creation.tensor(float(value), dtype=dtypes.float32)
        if isinstance(value, Tensor):
            if tuple(value.shape) != tuple(p.shape):
                raise ValueError(f"state '{name}' of shape {list(value.shape)} does not match its "
                                 f"parameter of shape {list(p.shape)}")
            dtype = p.dtype if value.is_floating_point() else value.dtype
            return value.detach().to(p.device, dtype=dtype, copy=True)
        return copy.deepcopy(value)
