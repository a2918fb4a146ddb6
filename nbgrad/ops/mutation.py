"""In-place writes: the checks before them, the version bump, and the history
rebase after them (including PyTorch's CopySlices for writes through a view)."""
from ..tape import grad_mode
from ..tape.graph import _SECOND_BACKWARD, Node, SavedTensor
from ..tensor import Tensor, multi_view_error, no_grad_view_error
from .arrays import ops_for
from .views import ApplyViewBackward


_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers "
                     "to a single memory location. Please clone() the tensor before performing the "
                     "operation.")


def has_internal_overlap(data):
    """PyTorch's has_internal_overlap(...) == Yes for a raw array: a dimension of
    size > 1 with stride 0 (an empty array has no element to write twice; NumPy
    may give it stride 0)."""
    return bool(data.ndim and data.size
                and any(s == 0 and n > 1 for s, n in zip(data.strides, data.shape)))


def check_inplace(self, others_require_grad, internal=True):
    """Raise, before anything changes, if writing into ``self`` would corrupt
    autograd state. Mirrors PyTorch's check_inplace. ``internal``: then also
    refuse a ``self`` whose elements share memory, as PyTorch's kernels do
    after its autograd layer (its fill_ with a number does not ask: every
    element gets the one value)."""
    _check_autograd(self, others_require_grad)
    if internal and has_internal_overlap(self._data):
        raise RuntimeError(_INTERNAL_OVERLAP)


# A custom Function's output that is a view or an input returned as-is
# (nbgrad.autograd.function) holds (output number, the Function's name, or None
# when it has no history): PyTorch refuses in-place writes into it, which would
# replace the Function's backward.
Tensor._function_view = None
_IN_FUNCTION = (" This view was created inside a custom Function (or because an input was returned "
                "as-is) and the autograd logic to handle view+inplace would override the custom "
                "backward associated with the custom Function, leading to incorrect gradients. This "
                "behavior is forbidden. You can fix this by cloning the output of the custom Function.")


def _check_autograd(self, others_require_grad):
    if not grad_mode.is_grad_enabled() or not (self.requires_grad or others_require_grad):
        return
    made_by = self._function_view
    if made_by is not None:
        number, function = made_by
        raise RuntimeError((f"Output {number} of {function} is a view and is being modified inplace."
                            if function else "A view was created in no_grad mode and is being "
                            "modified inplace with grad mode enabled.") + _IN_FUNCTION)
    base = self._base
    if base is not None:
        if self._view_no_grad:
            raise no_grad_view_error(self, "is being")
        if self._multi_view is not None:
            raise multi_view_error(self, "is being")
        if self.requires_grad and base.is_leaf:  # PyTorch asks no more of the base
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.")
    # PyTorch asks the stored grad_fn, not re-derived: a view made while its base needed no
    # gradient is a leaf here until its history is read, even once the base has one.
    if self.requires_grad and self._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to "
                    "tensor refer to a single memory location. Please clone() the tensor before "
                    "performing the operation.")


def _dense(a):
    """Non-overlapping and dense: contiguous in some order of its dimensions."""
    expected = a.itemsize
    for stride, size in sorted((abs(st), n) for st, n in zip(a.strides, a.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _overlap(backend, dst, src):
    """PyTorch's get_overlap_status for raw arrays of ``backend``: "full" (the
    very same elements), "partial", or None (disjoint, or too hard to tell:
    one of them is not dense)."""
    if dst.size == 0 or src.size == 0 or not (_dense(dst) and _dense(src)):
        return None
    if not backend.may_share_memory(dst, src):
        return None
    a, b = backend.data_pointer(dst), backend.data_pointer(src)
    if a == b and dst.nbytes == src.nbytes:
        return "full" if dst.strides == src.strides else "partial"
    if a < b + src.nbytes and b < a + dst.nbytes:
        return "partial"
    return None


def check_no_partial_overlap(backend, dst, src):
    """PyTorch's assert_no_partial_overlap for a write of ``src`` into ``dst``
    (raw arrays of ``backend``): refused when both are dense and their memory
    ranges overlap without being the very same elements."""
    if _overlap(backend, dst, src) == "partial":
        raise RuntimeError(_PARTIAL_OVERLAP)


def same_elements(backend, dst, src):
    """PyTorch's copy_ early exit: ``src`` is ``dst``'s very elements (one
    address, shape, strides and dtype), so a copy would change nothing."""
    return (dst.shape == src.shape and dst.strides == src.strides and dst.dtype == src.dtype
            and backend.data_pointer(dst) == backend.data_pointer(src))


def check_no_overlap(dst, src):
    """PyTorch's assert_no_overlap (index_put_) for a write of the tensor
    ``src`` into ``dst``: as ``check_no_partial_overlap``, and the very same
    elements are refused too; so is the very same tensor, whatever its layout
    (PyTorch compares the two tensors first)."""
    if dst is src or _overlap(dst._backend, dst._data, src._data) is not None:
        raise RuntimeError(_PARTIAL_OVERLAP)


class CopySlices(Node):
    """The base's history after an in-place op on one of its views: the op's
    gradient is applied to the view's region of the base's gradient (a copy
    of it, its region replaced: a functional op, so the same formula builds
    a graph)."""

    __slots__ = ("view_fn", "fn", "base_overlaps", "region_overlaps")
    op_name = "CopySlices"

    def __init__(self, base, view_fn, fn, view_data=None):
        super().__init__([base])
        # PyTorch first copies the gradient into a buffer of the base's strides, which refuses
        # an expanded base; then the op's gradient into the view's region of it (copy_), which
        # refuses an expanded view. ``view_data``: the view's array, whose strides tell that.
        self.base_overlaps = has_internal_overlap(base._data)
        self.region_overlaps = has_internal_overlap(
            view_fn(base._data) if view_data is None else view_data)
        self.next_edges += fn.next_edges[1:]
        self.input_meta += fn.input_meta[1:]
        self.view_fn = view_fn
        self.fn = fn

    def name(self):
        return "CopySlices"

    def backward(self, grad):
        if self.fn is None:  # released by an earlier backward, even if fn saved nothing
            raise RuntimeError(_SECOND_BACKWARD)
        if self.base_overlaps:
            raise RuntimeError(_INTERNAL_OVERLAP)
        xp = ops_for(grad)
        region = xp.apply_view(grad, self.view_fn, grad.shape)
        fn_grads = self._fn_backward_graph(grad, region) if xp.graph else self.fn.backward(region)
        out = xp.replace_view(grad, self.view_fn, fn_grads[0])
        if fn_grads[0] is not None and self.region_overlaps and self.needs_grad(0):
            raise RuntimeError(_INTERNAL_OVERLAP)  # PyTorch copies it in with copy_, which refuses
        return [out, *fn_grads[1:]]

    def _fn_backward_graph(self, grad, region):
        """The op's gradients as taped ops. What it saved of its output (the
        view after the write) is read as PyTorch reads it: as a view of the
        base's new history (this node), so the graph built never reaches the
        op's node, which runs only here and is released with this one. (Set
        for the call only: kept, it would make a reference cycle.)"""
        outputs = [s for s in self.fn.saved
                   if s.__class__ is SavedTensor and s.tensor_ref is None]
        if not outputs:
            return self.fn.backward_graph(region)
        base = Tensor._from_op(grad._data, self, grad.dtype, grad._backend)  # (for its edge)
        history = ApplyViewBackward(base, self.view_fn, tuple(grad.shape))
        for s in outputs:
            s.history = history
        try:
            return self.fn.backward_graph(region)
        finally:
            for s in outputs:
                s.history = None

    def release_saved(self):
        # As PyTorch's CopySlices, drop the op's node: running again needs retain_graph.
        if self.fn is not None:
            self.fn.release_saved()
            self.fn = None


class ReplaceViewBackward(Node):
    """``replace_view``'s backward: the gradient zeroed where the view looks
    (for the tensor written into), and the gradient where it looks (for the
    values written): each a ``replace_view`` or an ``apply_view`` again."""

    __slots__ = ("view_fn", "shape")
    op_name = "AsStridedScatter"  # PyTorch's functional form of the write: as_strided_scatter

    def __init__(self, inputs, view_fn, shape):
        super().__init__(inputs)
        self.view_fn, self.shape = view_fn, shape

    def backward(self, grad):
        xp = ops_for(grad)
        grads = [xp.replace_view(grad, self.view_fn, None) if self.needs_grad(0) else None]
        if len(self.next_edges) > 1:  # values were written (not zeros)
            grads.append(xp.apply_view(grad, self.view_fn, self.shape) if self.needs_grad(1)
                         else None)
        return grads


def replace_view(self, view_fn, values):
    """A copy of the Tensor ``self`` with the Tensor ``values`` (None: zeros)
    where ``view_fn`` (a view of raw arrays) looks; taped."""
    if values is not None and values.dtype is not self.dtype:
        values = values.to(self.dtype)
    data = ops_for(self._data).replace_view(self._data, view_fn,
                                            None if values is None else values._data)
    inputs = [self] if values is None else [self, values]
    node = None
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in inputs):
        node = ReplaceViewBackward(inputs, view_fn, self._data.shape)
    return Tensor._from_op(data, node, self.dtype, self._backend)


def rebase_history(self, node):
    """Make ``node`` (built from the pre-write state) the history of ``self``."""
    base = self._base
    owner = self if base is None else base  # a write through a view rebases its base
    if base is not None:
        node = CopySlices(base, self._view_fn, node, self._data)
    old = owner._grad_fn
    if old is not None:  # retain_grad moves to the new history (not kept on both)
        node.retained, old.retained = old.retained, None
    owner._grad_fn = node
    if base is not None:
        self._view_version = -1  # re-derive this view's history from the base's
        self.grad_fn


def write(self, op_name, kernel, make_node, others_require_grad, checked=False):
    """Run ``kernel()`` (the raw write into ``self``) with autograd bookkeeping.
    ``make_node()`` builds the backward node from the pre-write state; it is
    only called when the write is recorded. ``checked``: the caller has run
    ``check_inplace`` already (before its own argument checks, as PyTorch does)."""
    if not checked:
        check_inplace(self, others_require_grad)
    record = grad_mode.is_grad_enabled() and (self.requires_grad or others_require_grad)
    node = make_node() if record else None
    kernel()
    self._version_counter.bump(op_name, self._data)
    if node is not None:
        node.after_write(self)
        rebase_history(self, node)
    return self
