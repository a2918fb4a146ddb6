"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict``, as PyTorch's (names, numbering, repr, argument checks)."""
import collections
import collections.abc
import itertools
import operator

from ..tensor import Tensor
from .module import Module, _addindent, _typename
from .parameter import Parameter


def _abs_index(container, idx):
    """``idx`` (any integer-like, negative from the end) as a position in ``container``."""
    size = len(container)
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


def _renumber(module):
    """Keep the numbering compact after a deletion, as PyTorch does."""
    module._modules = collections.OrderedDict(
        (str(i), m) for i, m in enumerate(module._modules.values()))


def _no_digit_keys(keys):
    return [key for key in keys if not key.isdigit()]


class Sequential(Module):
    """Sequential(*modules) or Sequential(OrderedDict of named modules)

    Modules applied in order: ``Sequential(a, b)(x) == b(a(x))``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(collections.OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_abs_index(self, idx)]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_abs_index(self, idx)]
        setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules)[idx]:
                delattr(self, key)
        else:
            delattr(self, list(self._modules)[_abs_index(self, idx)])
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __dir__(self):
        return _no_digit_keys(super().__dir__())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        combined = Sequential()
        for layer in itertools.chain(self, other):
            combined.append(layer)
        return combined

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def _check_factor(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other):
        self._check_factor(other)
        combined = Sequential()
        for offset, module in enumerate(m for _ in range(other) for m in self):
            combined.add_module(str(offset), module)
        return combined

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        self._check_factor(other)
        original = list(self._modules.values())
        offset = len(self)
        for _ in range(other - 1):
            for i, module in enumerate(original):
                self.add_module(str(i + offset), module)
            offset += len(original)
        return self

    def pop(self, key):
        """pop(key) -> Module: remove the module at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def append(self, module):
        """append(module) -> Sequential: add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """insert(index, module) -> Sequential: put ``module`` before position ``index``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        """extend(sequential) -> Sequential: append every module of ``sequential``."""
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """ModuleList(modules=None)

    A list of modules whose parameters the parent registers."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(self, idx))]

    def __setitem__(self, idx, module):
        setattr(self, str(_abs_index(self, idx)), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(self, idx)))
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(itertools.chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __dir__(self):
        return _no_digit_keys(super().__dir__())

    def insert(self, index, module):
        """insert(index, module) -> None: put ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        """append(module) -> ModuleList: add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """pop(key) -> Module: remove the module at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        """extend(modules) -> ModuleList: append every module of the iterable ``modules``."""
        if not isinstance(modules, collections.abc.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __repr__(self):
        # PyTorch collapses runs of identical children: "(0-2): 3 x Linear(...)".
        children = [repr(m) for m in self]
        if not children:
            return self._get_name() + "()"
        lines = []
        start = 0
        for end in range(1, len(children) + 1):
            if end == len(children) or children[end] != children[start]:
                if end - start == 1:
                    line = f"({start}): {children[start]}"
                else:
                    line = f"({start}-{end - 1}): {end - start} x {children[start]}"
                lines.append(_addindent(line, 2))
                start = end
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def _pairs(values, kind):
    """The (key, value) pairs of an ``update`` argument that is not a mapping,
    checked as PyTorch checks them."""
    for j, pair in enumerate(values):
        if not isinstance(pair, collections.abc.Iterable):
            raise TypeError(f"{kind} update sequence element #{j} should be Iterable; is"
                            + type(pair).__name__)
        if not len(pair) == 2:
            raise ValueError(f"{kind} update sequence element #{j} has length {len(pair)}; 2 is "
                             "required")
        yield pair[0], pair[1]


class ModuleDict(Module):
    """ModuleDict(modules=None)

    A dict of modules whose parameters the parent registers (insertion order)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """clear() -> None: remove every module."""
        self._modules.clear()

    def pop(self, key):
        """pop(key) -> Module: remove the module named ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """update(modules) -> None: add the modules of a mapping or of an
        iterable of (name, module) pairs."""
        if not isinstance(modules, collections.abc.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (collections.OrderedDict, ModuleDict, collections.abc.Mapping)):
            for key, module in modules.items():
                self[key] = module
        else:
            for key, module in _pairs(modules, "ModuleDict"):
                self[key] = module


def _describe(key, value, type_name):
    """A line of ParameterList's and ParameterDict's ``extra_repr``."""
    if isinstance(value, Tensor):
        size = "x".join(str(s) for s in value.shape)
        device = f" ({value.device})" if value.device.type == "cuda" else ""
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{type_name(value)} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    """ParameterList(values=None)

    A list of parameters that the module registers; a tensor put in it
    becomes a Parameter, any other object is kept as it is."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(self, idx)))

    def __setitem__(self, idx, param):
        idx = _abs_index(self, idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return _no_digit_keys(super().__dir__())

    def append(self, value):
        """append(value) -> ParameterList: add ``value`` at the end."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values):
        """extend(values) -> ParameterList: append every value of the iterable ``values``."""
        if not isinstance(values, collections.abc.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_describe(k, p, lambda t: t.dtype) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """ParameterDict(parameters=None)

    A dict of parameters that the module registers (insertion order; a plain
    dict's items are added sorted by key, as PyTorch adds them); a tensor
    put in it becomes a Parameter, any other object is kept as it is."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key):
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a "
                            f"string (type is '{type(key).__name__}'). Open an issue on github if "
                            "you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key, value):
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        """copy() -> ParameterDict: a new dict holding the same parameters."""
        return ParameterDict(collections.OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        """setdefault(key, default=None) -> the value at ``key`` (``default`` put there first
        if absent)."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        """clear() -> None: remove every entry."""
        for k in self._keys.copy():
            del self[k]

    def pop(self, key):
        """pop(key) -> the value at ``key``, removed."""
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        """popitem() -> (key, value): the last entry, removed."""
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key, default=None):
        """get(key, default=None) -> the value at ``key``, or ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        """fromkeys(keys, default=None) -> ParameterDict with ``default`` at each key."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """update(parameters) -> None: add the entries of a mapping (a plain
        one sorted by key) or of an iterable of (key, value) pairs."""
        if not isinstance(parameters, collections.abc.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (collections.OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, collections.abc.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for key, parameter in _pairs(parameters, "ParameterDict"):
                self[key] = parameter

    def extra_repr(self):
        return "\n".join(_describe(k, p, _typename) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other):
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other):
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other):
        self.update(other)
        return self
