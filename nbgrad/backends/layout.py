"""The memory layout PyTorch gives a new result: elementwise outputs follow
their inputs (TensorIterator's ``fast_set_up``, ``compute_strides``,
``reorder_dimensions`` and ``allocate_or_resize_outputs``), and copies made
with ``memory_format=torch.preserve_format`` (``clone``, ``*_like``) keep the
strides of a dense input, else its order of dimensions (``infer_dense_strides``);
a leaf's ``.grad`` follows the gradient layout contract (AccumulateGrad).

The functions read ``shape``/``strides``/``flags`` of raw arrays of any
backend (NumPy or CUDA ``DeviceArray``). Strides here are in elements, as
``Tensor.stride()`` gives them; None stands for C order, which callers
allocate as they always did. Empty results are always C order."""


def _element_strides(a):
    itemsize = a.itemsize
    return tuple(s // itemsize for s in a.strides)


def is_dense(shape, strides):
    """PyTorch's is_non_overlapping_and_dense: contiguous in some order of the
    dimensions (size-1 dimensions, whatever their stride, do not count)."""
    dims = sorted((s, n) for s, n in zip(strides, shape) if n != 1)
    expected = 1
    for s, n in dims:
        if n == 0:
            return True
        if s != expected:
            return False
        expected *= n
    return True


def _order(shape, operand_strides):
    """Dimensions from the fastest-varying to the slowest, as TensorIterator's
    reorder_dimensions sorts them: by each operand's strides in turn, a
    broadcast (0) stride telling nothing, equal strides putting the smaller
    dimension first; ties keep C order."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        for strides in operand_strides:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):  # insertion sort with ambiguous comparisons, as PyTorch's
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def elementwise_strides(shape, arrays, numbers=False):
    """Strides of the output of an elementwise op of broadcast ``shape`` over
    the raw arrays ``arrays`` (as given, not broadcast), or None for C order.
    ``numbers``: Python numbers take part too (so the shapes differ)."""
    ndim = len(shape)
    if ndim < 2 or 0 in shape:
        return None
    if not numbers and all(a.shape == shape for a in arrays):  # fast_set_up
        if all(a.flags.c_contiguous for a in arrays):
            return None
        first = _element_strides(arrays[0])
        if is_dense(shape, first) and all(_element_strides(a) == first for a in arrays[1:]):
            return first
    operand_strides = []
    for a in arrays:  # compute_strides: broadcast dimensions get stride 0
        lead = ndim - a.ndim
        strides = [0] * lead
        for k, (n, s) in enumerate(zip(a.shape, _element_strides(a))):
            strides.append(0 if n == 1 and shape[lead + k] != 1 else s)
        operand_strides.append(strides)
    perm = _order(shape, operand_strides)
    if perm == list(range(ndim - 1, -1, -1)):
        return None
    out = [0] * ndim
    step = 1
    for d in perm:
        out[d] = step
        step *= shape[d]
    return tuple(out)


def preserve_strides(a):
    """Strides ``torch.empty_like(a)`` (memory_format=preserve_format) gives a
    copy of the raw array ``a``, or None for C order."""
    if a.ndim < 2 or a.size == 0:
        return None
    strides = _element_strides(a)
    if a.flags.c_contiguous or is_dense(a.shape, strides):  # exactly (size-1 dims too)
        return None if list(strides) == _c_strides(a.shape) else strides
    perm = _order(a.shape, [strides])  # infer_dense_strides
    out = [0] * a.ndim
    step = 1
    for d in perm:
        out[d] = step
        step *= max(a.shape[d], 1)
    return None if out == _c_strides(a.shape) else tuple(out)


def _c_strides(shape):
    out, step = [0] * len(shape), 1
    for k in range(len(shape) - 1, -1, -1):
        out[k] = step
        step *= max(shape[k], 1)
    return out


def empty(backend, shape, strides, dtype):
    """A new raw array of ``shape`` with element ``strides`` (None: C order)."""
    if strides is None:
        return backend.empty(shape, dtype)
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    buffer = backend.empty((extent,), dtype)
    itemsize = buffer.itemsize
    return backend.as_strided(buffer, shape, tuple(s * itemsize for s in strides))


def gradient_strides(variable):
    """Strides of a leaf's first ``.grad`` (PyTorch's gradient layout contract):
    the leaf's own when it is dense, else C order (None)."""
    strides = _element_strides(variable)
    return strides if variable.size and is_dense(variable.shape, strides) else None


def obeys_gradient_layout(grad, variable):
    """PyTorch's obeys_layout_contract: may ``grad`` be kept as the leaf's
    ``.grad`` as it is? (Strides of size-1 dimensions do not count, but must
    not be 0.)"""
    if grad.flags.c_contiguous and variable.flags.c_contiguous:
        return True
    wanted = gradient_strides(variable)
    if wanted is None:
        return grad.flags.c_contiguous
    return all(s == w if n != 1 else s != 0
               for n, s, w in zip(grad.shape, _element_strides(grad), wanted))


def copy(backend, a, strides):
    """A new copy of the raw array ``a`` with element ``strides`` (None: C order)."""
    if strides is None:
        return backend.copy(a)
    out = empty(backend, a.shape, strides, a.dtype)
    out[...] = a
    return out
