"""In-place writes: the checks before them, the version bump, and the history
rebase after them (including PyTorch's CopySlices for writes through a view)."""
from ..tape import grad_mode
from ..tape.graph import _SECOND_BACKWARD, Node
from ..tensor import no_grad_view_error


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


def _check_autograd(self, others_require_grad):
    if not grad_mode.is_grad_enabled() or not (self.requires_grad or others_require_grad):
        return
    base = self._base
    if base is not None:
        if self._view_no_grad:
            raise no_grad_view_error(self, "is being")
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
    gradient is applied to the view's region of the base's gradient."""

    __slots__ = ("view_fn", "fn", "backend", "base_overlaps")
    op_name = "CopySlices"

    def __init__(self, base, view_fn, fn):
        super().__init__([base])
        # PyTorch first copies the gradient into a buffer of the base's strides, which refuses
        # an expanded base.
        self.base_overlaps = has_internal_overlap(base._data)
        self.next_edges += fn.next_edges[1:]
        self.input_meta += fn.input_meta[1:]
        self.view_fn = view_fn
        self.fn = fn
        self.backend = base._backend

    def name(self):
        return "CopySlices"

    def backward(self, grad):
        if self.fn is None:  # released by an earlier backward, even if fn saved nothing
            raise RuntimeError(_SECOND_BACKWARD)
        if self.base_overlaps:
            raise RuntimeError(_INTERNAL_OVERLAP)
        backend = self.backend
        grad = backend.copy(grad)
        region = self.view_fn(grad)
        fn_grads = self.fn.backward(backend.copy(region))
        if fn_grads[0] is None:
            region[...] = 0
        elif self.needs_grad(0) and has_internal_overlap(region):
            raise RuntimeError(_INTERNAL_OVERLAP)  # PyTorch copies it in with copy_, which refuses
        else:
            region[...] = fn_grads[0]
        return [grad, *fn_grads[1:]]

    def release_saved(self):
        # As PyTorch's CopySlices, drop the op's node: running again needs retain_graph.
        if self.fn is not None:
            self.fn.release_saved()
            self.fn = None


def rebase_history(self, node):
    """Make ``node`` (built from the pre-write state) the history of ``self``."""
    base = self._base
    owner = self if base is None else base  # a write through a view rebases its base
    if base is not None:
        node = CopySlices(base, self._view_fn, node)
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
    self._version_counter.bump(op_name)
    if node is not None:
        node.after_write(self)
        rebase_history(self, node)
    return self
