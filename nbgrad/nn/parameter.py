"""``nn.Parameter``: a leaf tensor that a Module registers and an optimizer updates."""
from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor that requires grad by default and that ``Module`` registers
    when it is assigned as an attribute.

    ``Parameter(t)`` shares memory and the version counter with ``t`` (as
    ``t.detach()`` does) but is a leaf of its own.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, not {type(data).__name__}")
        param = cls._wrap(data._data, data.dtype, data._backend)
        param._version_counter = data._version_counter
        if requires_grad:
            if not param.dtype.is_floating_point:  # PyTorch's wording for a Parameter
                raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                                   "gradients")
            param.requires_grad_(True)
        return param

    def __init__(self, data=None, requires_grad=True):  # Tensor.__init__ refuses direct calls
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return Parameter, (self.detach(), self.requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        copied = Parameter(Tensor._wrap(self._backend.copy(self._data), self.dtype, self._backend),
                           self.requires_grad)
        if self._grad is not None:
            copied._grad = Tensor._wrap(self._backend.copy(self._grad._data), self._grad.dtype,
                                        self._backend)
        memo[id(self)] = copied
        return copied


class Buffer(Tensor):
    """Buffer(data=None, *, persistent=True)

    A Tensor that a Module registers as a buffer (not a parameter) when it is
    assigned as an attribute, as ``register_buffer(name, data, persistent)``
    does: it shares memory and the version counter with ``data``; a
    ``persistent=False`` buffer stays out of the state dict."""

    __slots__ = ("persistent",)

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, not {type(data).__name__}")
        buffer = cls._wrap(data._data, data.dtype, data._backend)
        buffer._version_counter = data._version_counter
        if data.requires_grad:
            buffer.requires_grad_(True)
        buffer.persistent = persistent
        return buffer

    def __init__(self, data=None, *, persistent=True):  # Tensor.__init__ refuses direct calls
        pass

    def __reduce_ex__(self, protocol):
        return _buffer, (self.detach(), self.persistent)


def _buffer(data, persistent):
    """A pickled Buffer made again (``Buffer.__reduce_ex__``)."""
    return Buffer(data, persistent=persistent)
