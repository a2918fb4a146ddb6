"""What backward formulas are written with, so that one formula serves every
backend and both kinds of backward.

A formula asks ``ops_for(grad)`` for its operations: for a raw backend array
(a plain backward) the backend's functions, untaped; for a Tensor (a
backward that builds a graph, ``create_graph=True``) the same functions as
taped Tensor ops (``nbgrad.ops.taped``), so the gradient it returns can be
differentiated again. The functions (see :class:`RawArrays`) take and return
the one kind or the other; a formula never touches a backend or a Tensor
directly.
"""
from ..backends import backend_of, contract
from ..declarations.op_table import BY_NAME
from .broadcasting import broadcast_shapes


def run(name, *arrays, out=None):
    """The row ``name`` on raw arrays of one dtype and backend, broadcast
    against each other; into ``out`` when given (it may be one of them)."""
    backend = backend_of(arrays[0])
    shape = broadcast_shapes(*(a.shape for a in arrays))
    if out is None:
        out = backend.empty(shape, arrays[0].dtype)
    backend.elementwise_forward(BY_NAME[name], out, [
        a if a.shape == shape else backend.broadcast_to(a, shape) for a in arrays])
    return out


def scatter_into_view(backend, base_shape, view_fn, grad):
    """A view's gradient for its base: zeros of ``base_shape`` with ``grad``
    written where ``view_fn`` looks (copied, so -0. stays -0. as PyTorch's;
    an expanded view's elements are summed)."""
    out = backend.zeros(base_shape, grad.dtype)
    backend.write_into_view(out, view_fn, grad)
    return out


class RawArrays:
    """The operations of a formula on raw arrays of one backend: every
    function of the backend contract, plus these."""

    graph = False  # what ``Node.saved_values`` is asked for

    def __init__(self, backend):
        self.backend = backend
        for name in contract.names(contract.Backend):
            setattr(self, name, getattr(backend, name))

    run = staticmethod(run)

    def scatter_into_view(self, base_shape, view_fn, grad):
        return scatter_into_view(self.backend, base_shape, view_fn, grad)

    def apply_view(self, a, view_fn, base_shape):
        """``view_fn(a)`` as a new array (the adjoint of ``scatter_into_view``)."""
        return self.backend.copy(view_fn(a))

    @staticmethod
    def reshape(a, shape):
        return a.reshape(shape)

    @staticmethod
    def permute(a, axes):
        return a.transpose(axes)

    @staticmethod
    def swapaxes(a, d0, d1):
        return a.swapaxes(d0, d1)

    @staticmethod
    def squeeze_dims(a, dims):
        return a.squeeze(dims)

    def scale(self, a, factor):
        """``a * factor`` for a Python number ``factor``, in ``a``'s dtype."""
        return a * a.dtype.type(factor)


_RAW = {}
TAPED = {}  # backend -> the taped operations on its Tensors (nbgrad.ops.taped fills it)


def ops_for(value):
    """The operations for a formula whose gradient is ``value``: untaped on
    raw arrays, taped on Tensors."""
    taped = TAPED.get(getattr(value, "_backend", None))
    if taped is not None:
        return taped
    backend = backend_of(value)
    raw = _RAW.get(backend)
    if raw is None:
        raw = _RAW[backend] = RawArrays(backend)
    return raw
