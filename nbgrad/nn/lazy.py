"""Lazy modules: ``UninitializedParameter`` / ``UninitializedBuffer``, the
``LazyModuleMixin`` and ``LazyLinear``, ``LazyConv1d``, ``LazyConv2d``.

As in PyTorch, a lazy module's parameters have no shape until the first
forward: a forward pre-hook reads the input's feature size, materializes
them, runs ``reset_parameters`` and turns the module into its eager class
(``cls_to_become``: ``LazyLinear`` becomes ``Linear``).
"""
from .. import creation
from ..tensor import Tensor
from .conv import Conv1d, Conv2d
from .linear import Linear
from .parameter import Buffer, Parameter


class UninitializedTensorMixin:
    """What the uninitialized parameter and buffer share: ``materialize``."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor storage of ``shape`` (on its device and dtype unless
        given) and turn it into a ``cls_to_become`` in place, keeping its identity."""
        if isinstance(shape, int):
            shape = (shape,)
        made = creation.empty(*shape, dtype=dtype or self.dtype, device=device or self.device)
        self._data = made._data
        self._backend = made._backend
        self.dtype = made.dtype
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __deepcopy__(self, memo):
        # a fresh uninitialized tensor (Parameter's deepcopy would make a Parameter)
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter with no shape yet (a lazy module's weight)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        param = Parameter.__new__(cls, creation.empty(0, dtype=dtype, device=device),
                                  requires_grad)
        return param

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer with no shape yet."""

    __slots__ = ()
    cls_to_become = Buffer

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        buffer = Buffer.__new__(cls, creation.empty(0, dtype=dtype, device=device),
                                persistent=persistent)
        if requires_grad:
            buffer.requires_grad_(True)
        return buffer

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def is_lazy(param):
    """Whether ``param`` is still uninitialized."""
    return isinstance(param, UninitializedTensorMixin)


class LazyModuleMixin:
    """Infers the parameters' shapes from the first input (a forward pre-hook)."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(
            LazyModuleMixin._infer_parameters)

    def _check_state_dict(self, state_dict, prefix, found):
        """Loading a state dict gives each uninitialized parameter and buffer the
        shape of its value there first (as PyTorch's lazy load hook), so the
        values load; the module infers nothing more at its first call."""
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            value = state_dict.get(prefix + name)
            if t is not None and is_lazy(t) and isinstance(value, Tensor):
                t.materialize(tuple(value.shape))
        super()._check_state_dict(state_dict, prefix, found)

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module (not its children) has no shape yet."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(t) for t in tensors if t is not None)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")

    @staticmethod
    def _infer_parameters(module, args):
        from ..tape.grad_mode import no_grad
        with no_grad():
            module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        # removed from this module's own hook dict (a deep copy's handle would
        # still point at the original's)
        for key, hook in list(module._forward_pre_hooks.items()):
            if hook is LazyModuleMixin._infer_parameters:
                del module._forward_pre_hooks[key]
        module.__dict__.pop("_initialize_hook", None)
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dimension of its first input.

    Args:
        out_features: size of each output sample
        bias: if ``False``, the layer will not learn an additive bias. Default: ``True``
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device, dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
        if self.in_features == 0:  # loaded from a state dict: the input names it (as PyTorch)
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    """``in_channels`` from the first input: dim 1 when batched, dim 0 when not."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            self.weight.materialize((self.out_channels, self.in_channels // self.groups,
                                     *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self.dims + 1
        batched = unbatched + 1
        if not isinstance(input, Tensor) or input.ndim not in (unbatched, batched):
            shape = getattr(input, "shape", None)
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {batched}D (batched) input "
                               f"to {self.__class__.__name__}, but got input of size: {shape}")
        return input.shape[1] if input.ndim == batched else input.shape[0]

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` is inferred from its first input."""

    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` is inferred from its first input."""

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)
