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
import functools

import numpy as np

from ..backends import backend_of, contract
from ..declarations.op_table import BY_NAME
from .broadcasting import broadcast_shapes
from . import nn_arrays


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


def divide_windows(sums, divisor):
    """Average pooling's window ``sums`` divided by their ``divisor`` (positive),
    in place for floats; int64 sums as PyTorch divides them, truncating toward
    zero (exact: the quotient of the magnitudes, given the sums' signs)."""
    if sums.dtype.kind == "f":
        sums /= divisor
        return sums
    return run("mul", run("sign", sums), run("floor_divide", run("abs", sums), divisor))


def first_in_bounds(argmax, windows):
    """Max pooling's ``argmax`` (each window's kernel offset) with PyTorch's pick
    where a window's first offset lies in the padding and kept the index: nothing
    in the window beat the padding's lowest value, so every element equals it,
    and PyTorch (which never reads padding) takes the window's first offset
    inside the input."""
    starts = _window_starts(windows)
    if not any((start < 0).any() for start in starts):
        return argmax
    nd = len(starts)
    lifted = [(1,) * k + (-1,) + (1,) * (nd - k - 1) for k in range(nd)]  # dim k on its axis
    firsts = [np.where(start < 0, (-start + d - 1) // d, 0).reshape(shape)  # first i inside
              for start, d, shape in zip(starts, windows.dilation, lifted)]
    first = np.ravel_multi_index(firsts, windows.kernel).astype(argmax.dtype)  # (*out)
    in_padding = functools.reduce(np.logical_or, [(start < 0).reshape(shape)  # offset 0's
                                                  for start, shape in zip(starts, lifted)])
    backend = backend_of(argmax)
    kept = run("logical_and", run("eq", argmax, backend.zeros((), argmax.dtype)),
               backend.asarray(in_padding))
    return backend.where(kept, backend.asarray(first), argmax)


def _window_starts(windows):
    """Per spatial dimension, where each window starts in the unpadded input."""
    return [np.arange(o) * s - windows.pads[2 * k]
            for k, (o, s) in enumerate(zip(windows.out_hw, windows.stride))]


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

    # -- functional forms of writes (each taped form is a differentiable op;
    # the pairs are each other's gradients)
    def put_along(self, shape, indices, values, axis):
        """Zeros of ``shape`` with ``values`` put at ``indices`` along ``axis``
        (the indices pick distinct elements); the adjoint of ``take_along_axis``."""
        out = self.backend.zeros(shape, values.dtype)
        self.backend.put_along_axis(out, indices, values, axis)
        return out

    def index_add(self, shape, key, values):
        """Zeros of ``shape`` with ``values`` (of the shape ``key`` selects)
        added at the advanced ``key``, repeated indices accumulating; the
        adjoint of ``gather``. An empty ``values`` writes nothing (its indices
        may be out of range)."""
        out = self.backend.zeros(shape, values.dtype)
        if values.size:
            self.backend.add_at(out, key, values)
        return out

    # gathers and scatters along an axis (issue 15, nbgrad.ops.scatter): gather_along
    # (the backend's) and scatter_add_along are each other's adjoint, zero_along its own
    def scatter_add_along(self, shape, indices, values, axis):
        """Zeros of ``shape`` with ``values`` added at ``indices`` along ``axis``."""
        out = self.backend.zeros(tuple(shape), values.dtype)
        self.backend.scatter_along(out, indices, values, axis, "sum")
        return out

    def zero_along(self, a, indices, axis):
        """A copy of ``a`` with zeros at ``indices`` along ``axis``."""
        out = self.backend.copy(a)
        self.backend.scatter_along(out, indices, out.dtype.type(0), axis)
        return out

    def scatter_reduce_along(self, a, indices, values, axis, reduce, include_self):
        """PyTorch's scatter_reduce of ``values`` into a copy of ``a``."""
        from .scatter import scatter_reduce_raw
        return scatter_reduce_raw(self.backend, a, indices, values, axis, reduce, include_self)[0]

    @staticmethod
    def gather(a, key):
        """``a[key]`` for an advanced ``key`` selecting a non-empty region,
        laid out as PyTorch's index gives it; the adjoint of ``index_add``."""
        return _gather(a, key)

    @staticmethod
    def zero_at(a, key):
        """A copy of ``a`` with zeros at the advanced ``key`` (selecting a
        non-empty region); its own adjoint."""
        out = a.copy()
        out[key] = 0
        return out

    def replace_view(self, a, view_fn, values):
        """A C-contiguous copy of ``a`` with ``values`` (None: zeros) where
        ``view_fn`` looks; for ``a`` its adjoint is ``replace_view(g, view_fn,
        None)``, for ``values`` ``apply_view``."""
        out = self.backend.copy(a)
        region = view_fn(out)
        region[...] = 0 if values is None else values
        return out

    @staticmethod
    def to_backend(a, backend):
        """``a`` copied to ``backend``'s device (itself when already there)."""
        return backend.asarray(a)

    # -- nn's layers and losses (issue 14): nbgrad.ops.nn_arrays, whose adjoint
    # pairs nbgrad.ops.nn_taped tapes (take_per_row, column_sums: the backend's)
    def im2col(self, x, windows, offsets_first=False):
        return nn_arrays.im2col(self.backend, x, windows, offsets_first)

    def col2im(self, cols, windows, offsets_first=False):
        return nn_arrays.col2im(self.backend, cols, windows, offsets_first)

    def gather_windows(self, x, windows, argmax=None):
        return nn_arrays.gather_windows(self.backend, x, windows, argmax)

    def scatter_windows(self, values, windows, argmax=None, linked=None):
        """(``linked``: taped, an input of zero gradient; see nn_taped)"""
        return nn_arrays.scatter_windows(self.backend, values, windows, argmax)

    def scatter_per_row(self, values, index, columns, linked=None):
        return nn_arrays.scatter_per_row(self.backend, values, index, columns)

    def contiguous_permute(self, a, axes):
        return nn_arrays.contiguous_permute(self.backend, a, axes)

    @staticmethod
    def constant(value):
        """A raw array or NumPy scalar that a formula uses as it is (no gradient)."""
        return value


def _gather(a, key):
    # Bound on first use (nbgrad.ops.indexing builds on this module).
    global _gather
    from .indexing import gather_array
    _gather = gather_array
    return gather_array(a, key)


_RAW = {}
_RAW_BY_CLASS = {}  # a raw array's class -> its backend's RawArrays (backend_of goes by class)
TAPED = {}  # backend -> the taped operations on its Tensors (nbgrad.ops.taped fills it)


def ops_for(value):
    """The operations for a formula whose gradient is ``value``: untaped on
    raw arrays, taped on Tensors."""
    raw = _RAW_BY_CLASS.get(value.__class__)  # a plain backward's case, first
    if raw is not None:
        return raw
    taped = TAPED.get(getattr(value, "_backend", None))
    if taped is not None:
        return taped
    backend = backend_of(value)
    raw = _RAW.get(backend)
    if raw is None:
        raw = _RAW[backend] = RawArrays(backend)
    if not hasattr(value, "_backend"):  # (not a Tensor, should one come before taped's import)
        _RAW_BY_CLASS[value.__class__] = raw
    return raw
