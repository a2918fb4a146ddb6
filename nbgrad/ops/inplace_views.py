"""The in-place view ops (``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``,
``swapdims_``, ``swapaxes_``, ``as_strided_``): ``self`` takes the shape and
strides of the view its out-of-place op makes, and that view's history
(PyTorch's ``UnsqueezeBackward1`` & co.); its version counter is bumped, as
for any in-place op, so saved values of its storage go stale."""
from . import views
from .mutation import check_inplace
from .registry import tensor_op


def _becomes(self, op_name, make):
    """``self`` becomes ``make(self)``, a view of it: checked first (a leaf
    that requires grad is refused), nothing changed if ``make`` raises."""
    check_inplace(self, False, internal=False)
    view = make(self)
    self._data = view._data
    if self._base is not None:  # still a view of the same base, re-derived one step further
        self._view_fn = view._view_fn
    if view._grad_fn is not None:
        self._grad_fn = view._grad_fn
    counter = self._version_counter
    counter.bump(op_name)
    self._view_version = counter.value  # its new history is current: not re-derived from the base
    return self


@tensor_op(function=False)
def unsqueeze_(self, dim):
    """``unsqueeze_(dim)``: in-place ``unsqueeze``: ``self`` gains a size-1 dim at ``dim``."""
    return _becomes(self, "unsqueeze_", lambda t: views.unsqueeze(t, dim))


@tensor_op(function=False)
def squeeze_(self, dim=None):
    """``squeeze_(dim=None)``: in-place ``squeeze``: size-1 dims (of ``dim``) removed."""
    return _becomes(self, "squeeze_", lambda t: views.squeeze(t, dim))


@tensor_op(function=False)
def t_(self):
    """``t_()``: in-place ``t``: a matrix transposed (<= 2 dims)."""
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _becomes(self, "t_", views.t)


@tensor_op(function=False)
def transpose_(self, dim0, dim1):
    """``transpose_(dim0, dim1)``: in-place ``transpose``: two dims swapped."""
    return _becomes(self, "transpose_", lambda t: views.transpose(t, dim0, dim1))


@tensor_op("swapdims_", "swapaxes_", function=False)
def swapdims_(self, dim0, dim1):
    """``swapdims_(dim0, dim1)`` (``swapaxes_``): in-place ``transpose``."""
    return _becomes(self, "swapdims_", lambda t: views.transpose(t, dim0, dim1))


@tensor_op(function=False)
def as_strided_(self, size, stride, storage_offset=None):
    """``as_strided_(size, stride, storage_offset=None)``: ``self`` becomes
    ``as_strided(self, size, stride, storage_offset)``."""
    return _becomes(self, "as_strided_",
                    lambda t: views.as_strided(t, size, stride, storage_offset))
