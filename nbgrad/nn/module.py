"""``nn.Module``: the base class of layers and models, as in PyTorch.

Parameters, buffers and submodules are registered by attribute assignment;
``state_dict``/``load_state_dict`` save and restore them by dotted name.
"""
import collections
import warnings

from .. import dtypes
from ..tape import grad_mode
from ..ops.copying import to_arguments
from ..tensor import Tensor
from ..utils.hooks import BackwardHook, RemovableHandle
from .parameter import Buffer, Parameter

_StateDict = collections.OrderedDict
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line for line in lines)


def _typename(value):
    """PyTorch's ``torch.typename``: a tensor's type string (``nbgrad.FloatTensor``),
    otherwise the qualified name of the value's class."""
    if isinstance(value, Tensor):
        if hasattr(value, "type"):
            return value.type()
        cuda = ".cuda" if value.device.type == "cuda" else ""
        return f"nbgrad{cuda}.{value.dtype.tensor_type}"
    return type(value).__module__ + "." + type(value).__qualname__ \
        if type(value).__module__ != "builtins" else type(value).__qualname__


class Module:
    """Base class for all neural network modules.

    Subclasses call ``super().__init__()`` and then assign parameters,
    buffers and submodules as attributes; ``forward`` says what a call does.
    """

    training: bool

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        for name in ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
                     "_backward_pre_hooks"):
            object.__setattr__(self, name, collections.OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)

    # ------------------------------------------------------------ forward
    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        """``__call__`` with hooks, in PyTorch's order: forward pre-hooks, the
        backward hooks' aliases of the inputs, ``forward``, forward hooks, the
        backward hooks' aliases of the outputs. Forward hooks registered with
        ``always_call`` also run when the call raises."""
        called = set()
        result = None
        try:
            for hook_id, hook in list(self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
            bw_hook = None
            if self._backward_hooks or self._backward_pre_hooks:
                full = list(self._backward_hooks.values()) if self._is_full_backward_hook else []
                pre = list(self._backward_pre_hooks.values())
                if full or pre:
                    bw_hook = BackwardHook(self, full, pre)
                    args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    new = hook(self, args, kwargs, result)
                else:
                    new = hook(self, args, result)
                if new is not None:
                    result = new
            if bw_hook:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  f"Tensor or a tuple of Tensors but received {type(result)}",
                                  stacklevel=2)
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            self._run_always_called(args, kwargs, result, called)
            raise

    def _run_always_called(self, args, kwargs, result, called):
        """The forward hooks registered with ``always_call`` that did not run
        before the call raised (their own errors become warnings)."""
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id not in self._forward_hooks_always_called or hook_id in called:
                continue
            try:
                if hook_id in self._forward_hooks_with_kwargs:
                    new = hook(self, args, kwargs, result)
                else:
                    new = hook(self, args, result)
                if new is not None:
                    result = new
            except Exception as error:
                warnings.warn("module forward hook with ``always_call=True`` raised an exception "
                              f"that was silenced as another error was raised in forward: "
                              f"{error}", stacklevel=3)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """register_forward_pre_hook(hook, *, prepend=False, with_kwargs=False)

        ``hook(module, args)`` runs before ``forward`` and may return new args
        (a single value is wrapped in a tuple); with ``with_kwargs``,
        ``hook(module, args, kwargs)`` may return ``(args, kwargs)``.
        ``prepend``: run before the hooks already registered."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """register_forward_hook(hook, *, prepend=False, with_kwargs=False, always_call=False)

        ``hook(module, args, output)`` (with ``with_kwargs``: ``hook(module,
        args, kwargs, output)``) runs after ``forward`` and may return a new
        output. ``prepend``: run before the hooks already registered;
        ``always_call``: run even when the call raises."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """register_full_backward_pre_hook(hook, prepend=False) -> RemovableHandle

        ``hook(module, grad_output)`` runs when the gradients of the module's
        outputs are known, before the module's own backward; it may return
        new ``grad_output`` (a tuple, None for non-Tensor outputs). The module's
        forward then sees aliases of its input tensors, and the caller aliases
        of its output tensors."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """register_full_backward_hook(hook, prepend=False) -> RemovableHandle

        ``hook(module, grad_input, grad_output)`` runs when the gradients of
        the module's positional inputs are known (when no input requires
        grad: when those of its outputs are); it may return new ``grad_input``,
        which replace the gradients that go on to the inputs."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on "
                               "a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    # -------------------------------------------------------- registration
    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(nbgrad.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                "the value in the forward() method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(nbgrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """add_module(name, module) -> None

        Register ``module`` (or None) as the child ``name``: it is then
        reached as an attribute and by traversal, state dicts and ``to``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        def remove_from(*stores):
            for store in stores:
                if name in store:
                    if isinstance(store, dict):
                        del store[name]
                    else:
                        store.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(nbgrad.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(nbgrad.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(nbgrad.nn.Buffer, nbgrad.Tensor or None expected)")
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Only called when normal lookup fails.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(
            self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)

    # ----------------------------------------------------------- traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target):
        """get_submodule(target) -> Module

        The submodule at the dotted path ``target`` (``""``: this module)."""
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        """set_submodule(target, module, strict=False) -> None

        Put ``module`` at the dotted path ``target``; with ``strict``, only
        where a submodule is already."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """get_parameter(target) -> Parameter

        The parameter at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """get_buffer(target) -> Tensor

        The buffer at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        buffer = getattr(module, name)
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buffer

    def get_extra_state(self):
        """get_extra_state() -> object

        Override (with ``set_extra_state``) to save more than parameters and
        buffers: the value goes into the state dict as ``<prefix>_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state):
        """set_extra_state(state) -> None

        Restore what ``get_extra_state`` returned, from a state dict."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    def apply(self, fn):
        """apply(fn) -> Module

        Call ``fn`` on every submodule (children first) and on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------- modes
    def train(self, mode=True):
        """train(mode=True) -> Module: training mode (or evaluation) for this
        module and every submodule."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """eval() -> Module: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on every parameter: ``False`` freezes the module."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """zero_grad(set_to_none=True) -> None

        Drop every parameter's gradient (``set_to_none``), or zero it in place."""
        zero_grads(self.parameters(), set_to_none)

    # --------------------------------------------------- device and dtype
    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's data by ``fn(data)``, keeping
        the Parameter objects (so optimizers keep working), as PyTorch does;
        a gradient follows its parameter."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        with grad_mode.no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p.data = new
                if p.grad is not None:
                    new_grad = fn(p.grad)
                    if new_grad is not p.grad:
                        p.grad.data = new_grad
            for key, b in self._buffers.items():
                if b is not None:
                    self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """to(device=None, dtype=None, non_blocking=False) -> Module

        ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``.
        Floating-point parameters and buffers take the dtype; all take the device."""
        if "copy" in kwargs:  # Tensor.to's keyword, not Module.to's
            raise TypeError("to() received an invalid combination of arguments: ['copy']")
        device, dtype, _ = to_arguments(args, kwargs)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")

        def convert(t):
            out = t
            if device is not None and out.device != device:
                out = out.to(device)
            if dtype is not None and out.is_floating_point() and out.dtype is not dtype:
                out = out.to(dtype)
            return out

        return self._apply(convert)

    def cpu(self):
        """cpu() -> Module: parameters and buffers moved to the CPU."""
        return self.to("cpu")

    def cuda(self, device=None):
        """cuda(device=None) -> Module: parameters and buffers moved to a CUDA device."""
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int)
                       else device)

    def _cast_floating(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def half(self):
        """half() -> Module: floating-point parameters and buffers cast to float16."""
        float16 = getattr(dtypes, "float16", None)
        if float16 is None:
            raise TypeError("nbgrad has no float16 dtype yet")
        return self._cast_floating(float16)

    def float(self):
        """float() -> Module: floating-point parameters and buffers cast to float32."""
        return self._cast_floating(dtypes.float32)

    def double(self):
        """double() -> Module: floating-point parameters and buffers cast to float64."""
        return self._cast_floating(dtypes.float64)

    def type(self, dst_type):
        """type(dst_type) -> Module: every parameter and buffer cast to ``dst_type``
        (integer buffers too, as ``Tensor.type`` casts)."""
        if isinstance(dst_type, dtypes.dtype) and not hasattr(Tensor, "type"):
            return self._apply(lambda t: t.to(dst_type))
        return self._apply(lambda t: t.type(dst_type))

    # ---------------------------------------------------------- state dict
    _version = 1  # saved in the state dict's ``_metadata``, as PyTorch's

    def _has_extra_state(self, which):
        return getattr(type(self), which) is not getattr(Module, which)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """state_dict(*, destination=None, prefix='', keep_vars=False) -> OrderedDict

        An ordered dict of every parameter and persistent buffer by dotted
        name (and ``_extra_state`` where a module defines ``get_extra_state``).
        Values are detached aliases (they share memory with the module); with
        ``keep_vars`` the parameters themselves."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = _StateDict()
            destination._metadata = collections.OrderedDict()
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = dict(version=self._version)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def _local_state(self):
        state = collections.OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                state[name] = p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                state[name] = b
        return state

    def _check_state_dict(self, state_dict, prefix, found):
        """Walk this module and its children (a shared child under each of its
        names, as ``state_dict`` lists it) against ``state_dict``: ``found``
        gathers the missing keys, the unexpected ones (as PyTorch finds them),
        the problems and the (module, name, target, value) pairs to load."""
        missing, unexpected, problems, loads = found
        local = self._local_state()
        for name, target in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                problems.append(f'While copying the parameter named "{key}", expected nbgrad.Tensor '
                                f"or Tensor-like object from checkpoint but received {type(value)}")
                continue
            if target.ndim == 0 and tuple(value.shape) == (1,):
                value = value[0]
            if tuple(value.shape) != tuple(target.shape):
                problems.append(f"size mismatch for {key}: copying a param with shape {value.shape} "
                                f"from checkpoint, the shape in current model is {target.shape}.")
                continue
            loads.append((self, name, target, value))
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state("set_extra_state"):
            if extra_key in state_dict:
                loads.append((self, _EXTRA_STATE_KEY_SUFFIX, None, state_dict[extra_key]))
            else:
                missing.append(extra_key)
        elif extra_key in state_dict:
            unexpected.append(extra_key)
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                head, dot, _ = key[len(prefix):].partition(".")
                if (head not in self._modules) if dot else (head not in local):
                    unexpected.append(key)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child._check_state_dict({k: v for k, v in state_dict.items()
                                         if k.startswith(child_prefix)}, child_prefix, found)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """load_state_dict(state_dict, strict=True, assign=False) -> NamedTuple

        Copy parameters and buffers from ``state_dict`` (with ``assign``: make
        its tensors the module's own, as Parameters where parameters were).

        Every problem is found before anything is written: missing and
        unexpected keys (when ``strict``), values that are not tensors and
        mis-shaped values are all reported together in one RuntimeError, and
        the module is left unchanged. Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        found = missing, unexpected, problems, loads = [], [], [], []
        self._check_state_dict(state_dict, "", found)
        if strict:
            if unexpected:
                problems.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                problems.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if problems:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(problems)))
        with grad_mode.no_grad():
            for module, name, target, value in loads:
                if target is None:
                    module.set_extra_state(value)
                elif assign:
                    if isinstance(target, Parameter):
                        if isinstance(value, Parameter):
                            value.requires_grad_(target.requires_grad)
                        else:
                            value = Parameter(value, requires_grad=target.requires_grad)
                    setattr(module, name, value)
                elif value is not target and value._data is not target._data:
                    target.copy_(value)  # crosses devices (a CPU checkpoint, a CUDA model)
        return _IncompatibleKeys(missing, unexpected)

    # --------------------------------------------------------------- repr
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _check_name(name, kind):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


def zero_grads(parameters, set_to_none=True):
    """``Module.zero_grad`` and ``Optimizer.zero_grad``: drop each gradient,
    or zero it in place (detached from any graph), as PyTorch does."""
    for p in parameters:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()
