"""Rows on raw backend arrays, untaped: what backward formulas are written
with, so that one formula serves every backend (and a later change can run
the same formula as taped ops, for higher-order gradients)."""
from ..backends import backend_of
from ..declarations.op_table import BY_NAME
from .broadcasting import broadcast_shapes


def run(name, *arrays, out=None):
    """The row ``name`` on arrays of one dtype and backend, broadcast against
    each other; into ``out`` when given (it may be one of them)."""
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
