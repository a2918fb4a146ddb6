"""Parametrized module tensors, with ``torch.nn.utils.parametrize``'s
functions, layout and error messages.

``register_parametrization(m, "weight", p)`` moves the tensor into
``m.parametrizations.weight`` (a :class:`ParametrizationList`, as
``original`` or ``original0, original1, ...``) and turns ``m.weight`` into a
property computing ``p(original)``. For that, ``m`` gets a class of its own,
``Parametrized<Class>``, a subclass of its former class."""
import contextlib
import copy
from collections.abc import Sequence

from ...tape import grad_mode
from ...tensor import Tensor
from ..container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations"]

# Nesting depth of cached() blocks, and the values computed inside them,
# keyed by (id(module), tensor name).
_cache_depth = 0
_cache = {}


@contextlib.contextmanager
def cached():
    r"""Context manager: inside it each parametrized tensor is computed once,
    on first access, and reused (e.g. a weight read at every time step of a
    recurrent network). The values are dropped when the outermost block ends.
    """
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _register(owner, name, tensor):
    if isinstance(tensor, Parameter):
        owner.register_parameter(name, tensor)
    else:
        owner.register_buffer(name, tensor)


def _assign(dest, src):
    # dest keeps its identity (optimizers hold it) and takes src's values.
    dest.data = src.detach()


class ParametrizationList(ModuleList):
    r"""ParametrizationList(modules, original, unsafe=False)

    The parametrizations of one tensor, applied in order. Built by
    :func:`register_parametrization`, not by hand.

    At construction the ``right_inverse`` methods of ``modules`` (where
    present) are applied to ``original`` last to first. A single tensor comes
    out: ``original`` takes its value and is kept as ``self.original``. A
    sequence of tensors: they become ``self.original0, self.original1, ...``
    (parameters when ``original`` is one). Calling the list evaluates the
    parametrized tensor.

    Args:
        modules (sequence of Module): the parametrizations, first applied first.
        original (Tensor): the tensor being parametrized.
        unsafe (bool): skip the checks that the result keeps ``original``'s
            dtype and shape. Default: ``False``.
    """

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with grad_mode.no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # this step is taken as the identity
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"dtype.\noriginal.dtype: {dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if new.device != original.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"device.\noriginal.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            with grad_mode.no_grad():
                _assign(original, new)
            _register(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     "tensors (list, tuple...). Got element "
                                     f"{i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register(self, f"original{i}", part)
        if unsafe:
            return
        value = self()
        if not isinstance(value, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
        if value.dtype != dtype:
            raise ValueError("Registering a parametrization may not change the dtype of the "
                             "tensor, unless `unsafe` flag is enabled.\n"
                             f"unparametrized dtype: {dtype}\nparametrized dtype: {value.dtype}")
        if value.shape != shape:
            raise ValueError("Registering a parametrization may not change the shape of the "
                             "tensor, unless `unsafe` flag is enabled.\n"
                             f"unparametrized shape: {shape}\nparametrized shape: {value.shape}")

    def _originals(self):
        if self.is_tensor:
            return [self.original]
        return [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value):
        r"""Sets the originals so that the parametrized tensor becomes ``value``
        (every parametrization must define ``right_inverse``); this is what
        ``module.<name> = value`` does."""
        with grad_mode.no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError("`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _assign(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, (dest, src) in enumerate(zip(self._originals(), value, strict=True)):
                if not isinstance(src, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or "
                                     f"reference-type opaques. Got element {i} of type "
                                     f"{type(src).__name__}.")
                if src.dtype != dest.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{src.dtype} while `original{i}` has dtype {dest.dtype}")
                _assign(dest, src)

    def forward(self):
        first, *rest = list(self)
        result = first(*self._originals())
        for module in rest:
            result = module(result)
        return result


def _copy_through_dict(self, memo):
    # copy.deepcopy would go through __getstate__, which parametrized modules refuse.
    if id(self) in memo:
        return memo[id(self)]
    clone = type(self).__new__(type(self))
    memo[id(self)] = clone
    clone.__dict__ = copy.deepcopy(self.__dict__, memo)
    return clone


def _refuse_pickling(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _give_own_class(module):
    base = type(module)
    namespace = {"__getstate__": _refuse_pickling}
    if not hasattr(base, "__deepcopy__"):
        namespace["__deepcopy__"] = _copy_through_dict
    module.__class__ = type(f"Parametrized{base.__name__}", (base,), namespace)


def _add_property(module, name):
    if hasattr(module, name):
        raise AssertionError(f"Module already has an attribute named '{name}'")

    def compute(self):
        plist = self.parametrizations[name]
        if not _cache_depth:
            return plist()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = plist()
        return _cache[key]

    def assign(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(compute, assign))


def _check_stacked(module, name, parametrization):
    """The checks made when a further parametrization is put on ``module.<name>``."""
    current = getattr(module, name)
    out = parametrization(current)
    if not isinstance(out, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(out).__name__}.")
    for attr in ("dtype", "shape"):
        if getattr(out, attr) != getattr(current, attr):
            raise ValueError(
                f"Registering a parametrization may not change the {attr} of the tensor, unless "
                f"the `unsafe` flag is enabled.\nmodule.{name}.{attr}: {getattr(current, attr)}\n"
                f"parametrization(module.{name}).{attr}: {getattr(out, attr)}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        back = parametrization.right_inverse(out)
    except NotImplementedError:
        return
    if not isinstance(back, Tensor):
        raise ValueError("parametrization.right_inverse must return a tensor. Got: "
                         f"{type(back).__name__}")
    for attr in ("dtype", "shape"):
        if getattr(back, attr) != getattr(current, attr):
            raise ValueError(
                f"The tensor returned by parametrization.right_inverse must have the same {attr} "
                f"as module.{name}, unless the `unsafe` flag is enabled.\n"
                f"module.{name}.{attr}: {getattr(current, attr)}\n"
                f"returned {attr}: {getattr(back, attr)}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    r"""register_parametrization(module, tensor_name, parametrization, *, unsafe=False) -> Module

    Makes ``module.<tensor_name>`` (a parameter or buffer) the output of
    ``parametrization``: each access computes ``parametrization(original)``,
    and ``original`` (under ``module.parametrizations[tensor_name]``) is what
    gets trained and saved. Registering again on the same name chains the
    parametrizations, the first registered applied first.

    If ``parametrization`` has a ``right_inverse(X)`` method, it initialises
    ``original`` from the current tensor (returning either one tensor or a
    sequence of them, which then become ``original0, original1, ...``) and
    makes ``module.<tensor_name> = value`` assign through it. A
    ``right_inverse`` raising ``NotImplementedError`` counts as the identity.

    The module's class is replaced by ``Parametrized<Class>``, a subclass
    (see :func:`type_before_parametrizations`); such modules can be saved
    through ``state_dict()`` only, not pickled.

    Args:
        module (Module): the module owning the tensor.
        tensor_name (str): the name of the parameter or buffer.
        parametrization (Module): maps ``original`` to the tensor.
        unsafe (bool): allow the parametrization to change the tensor's dtype
            or shape (the checks are skipped). Default: ``False``.

    Returns:
        Module: ``module``.

    Example::

        >>> class MirrorUpper(nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).transpose(-1, -2)
        >>> m = register_parametrization(nn.Linear(3, 3), "weight", MirrorUpper())
        >>> bool((m.weight == m.weight.T).all())
        True
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_stacked(module, tensor_name, parametrization)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe  # once unsafe, the chain stays so
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    plist = ParametrizationList([parametrization], getattr(module, tensor_name), unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _give_own_class(module)
        module.parametrizations = ModuleDict()
    _add_property(module, tensor_name)
    module.parametrizations[tensor_name] = plist
    return module


def is_parametrized(module, tensor_name=None):
    r"""is_parametrized(module, tensor_name=None) -> bool

    Whether ``module.<tensor_name>`` is parametrized (for ``None``: whether
    any tensor of ``module`` is)."""
    plists = getattr(module, "parametrizations", None)
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    r"""remove_parametrizations(module, tensor_name, leave_parametrized=True) -> Module

    Undoes :func:`register_parametrization` on ``module.<tensor_name>``,
    which becomes a plain parameter (or buffer) again, holding its current
    parametrized value (``leave_parametrized=True``) or the original one.
    The last removal restores the module's former class.

    Args:
        module (Module): the module.
        tensor_name (str): the parametrized tensor.
        leave_parametrized (bool): keep the parametrized value. It must be
            ``True`` when the originals are a sequence of tensors. Default: ``True``.

    Returns:
        Module: ``module``.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with grad_mode.no_grad():
                _assign(original, getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that "
                         "is parametrized in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module):
    r"""type_before_parametrizations(module) -> type

    The class ``module`` had before it was parametrized (its class if it is not)."""
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)
