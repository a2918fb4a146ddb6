"""The operations of ``nbgrad.ops.nn_arrays`` as taped Tensor ops, in adjoint
pairs: each one's gradient is the other (``im2col``/``col2im``,
``gather_windows``/``scatter_windows``, ``take_per_row``/``scatter_per_row``),
computed through ``ops_for``, so gradients through nn's layers and losses can
be differentiated to any order. ``TapedArrays`` (``nbgrad.ops.taped``) hands
them to backward formulas under the names ``RawArrays`` gives the raw ones.

Index arrays (a max pool's offsets, a loss's targets) are raw arrays, saved as
values: freed with the graph, as PyTorch frees the indices it saves (a node
without one can be run again, as PyTorch's).

A scatter that is a layer's backward takes the layer's input as ``linked``:
the result does not depend on it, but PyTorch's double backward links it
(``self: zeros_like(self)`` in its derivatives), so its gradient is zeros
rather than none, and ``autograd.grad`` finds it used.
"""
from ..tape import grad_mode
from ..tape.graph import Node, SavedValue
from ..tensor import Tensor
from .arrays import ops_for


def _result(source, data, node_type, args, linked=None):
    """``data`` as the result of an op on ``source`` with fixed ``args``
    (and a ``linked`` input of zero gradient), recorded as a ``node_type``."""
    node = None
    if grad_mode.is_grad_enabled() and (source.requires_grad or (
            linked is not None and linked.requires_grad)):
        node = node_type(source, args, linked)
    return Tensor._from_op(data, node, source.dtype, source._backend)


class _AdjointBackward(Node):
    """A linear op's backward: its adjoint applied to the gradient, with the
    op's fixed arguments (``args``; an index array among them is saved, so a
    freed graph refuses a second backward); zeros for a ``linked`` input."""

    __slots__ = ("args",)
    adjoint = None  # the name of the adjoint in ``ops_for(grad)``

    def __init__(self, source, args, linked=None):
        super().__init__([source] if linked is None else [source, linked])
        self.args = args
        if any(hasattr(a, "shape") for a in args):  # an index array
            self.saved = (SavedValue(args),)

    def backward(self, grad):
        xp = ops_for(grad)
        args = self.saved[0].unpack() if self.saved else self.args
        grads = [getattr(xp, self.adjoint)(grad, *args) if self.next_edges[0] is not None
                 else None]
        if len(self.next_edges) > 1:
            meta = self.input_meta[1]
            grads.append(None if meta is None else xp.zeros(meta.shape, meta.np_dtype))
        return grads


# ----------------------------------------------------------- convolution
class Im2ColBackward(_AdjointBackward):
    __slots__ = ()
    op_name = "Im2Col"
    adjoint = "col2im"


class Col2ImBackward(_AdjointBackward):
    __slots__ = ()
    op_name = "Col2Im"
    adjoint = "im2col"


def im2col(x, windows, offsets_first=False):
    """Taped ``nn_arrays.im2col``."""
    data = ops_for(x._data).im2col(x._data, windows, offsets_first)
    return _result(x, data, Im2ColBackward, (windows, offsets_first))


def col2im(cols, windows, offsets_first=False):
    """Taped ``nn_arrays.col2im``."""
    data = ops_for(cols._data).col2im(cols._data, windows, offsets_first)
    return _result(cols, data, Col2ImBackward, (windows, offsets_first))


# ---------------------------------------------------------------- pooling
class GatherWindowsBackward(_AdjointBackward):
    __slots__ = ()
    adjoint = "scatter_windows"

    @property
    def op_name(self):  # a window sum is avg_poolNd's (PyTorch's double backward of it)
        return f"AvgPool{len(self.args[0].kernel)}D" if self.args[1] is None else "Gather"


class ScatterWindowsBackward(_AdjointBackward):
    __slots__ = ()
    adjoint = "gather_windows"

    @property
    def op_name(self):  # the pooling backward it is
        nd = len(self.args[0].kernel)
        return (f"AvgPool{nd}DBackward" if self.args[1] is None
                else f"MaxPool{nd}DWithIndicesBackward")


def gather_windows(x, windows, argmax=None):
    """Taped ``nn_arrays.gather_windows``."""
    data = ops_for(x._data).gather_windows(x._data, windows, argmax)
    return _result(x, data, GatherWindowsBackward, (windows, argmax))


def scatter_windows(values, windows, argmax=None, linked=None):
    """Taped ``nn_arrays.scatter_windows`` (``linked``: the pooled input)."""
    data = ops_for(values._data).scatter_windows(values._data, windows, argmax)
    return _result(values, data, ScatterWindowsBackward, (windows, argmax), linked)


# ----------------------------------------------------------------- losses
class TakePerRowBackward(_AdjointBackward):
    __slots__ = ()
    op_name = "Gather"
    adjoint = "scatter_per_row"


class ScatterPerRowBackward(_AdjointBackward):
    __slots__ = ()
    op_name = "Scatter"
    adjoint = "take_per_row"


def take_per_row(a, index):
    """Taped ``take_per_row``: ``a[i, index[i, 0]]`` for every row of 2-D ``a``."""
    data = ops_for(a._data).take_per_row(a._data, index)
    return _result(a, data, TakePerRowBackward, (index, a._data.shape[1]))


def scatter_per_row(values, index, columns, linked=None):
    """Taped ``nn_arrays.scatter_per_row``; a 0-d ``values`` goes to every row
    (``linked``: the loss's input)."""
    rows = index.shape[0]
    if values.ndim == 0:
        values = values.expand(rows)
    data = ops_for(values._data).scatter_per_row(values._data, index, columns)
    return _result(values, data, ScatterPerRowBackward, (index,), linked)
