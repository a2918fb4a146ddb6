"""The memory layout PyTorch gives a new result: elementwise outputs follow
their inputs (TensorIterator's ``fast_set_up``, ``compute_strides``,
``reorder_dimensions`` and ``allocate_or_resize_outputs``), and copies made
with ``memory_format=torch.preserve_format`` (``clone``, ``*_like``) keep the
strides of a dense input, else its order of dimensions (``infer_dense_strides``);
``cat`` and ``stack`` are C order unless all inputs suggest one channels-last
format (``cat_compute_output_memory_format``); reductions are C order exactly;
a leaf's ``.grad`` follows the gradient layout contract (AccumulateGrad).

The functions read ``shape``/``strides``/``flags`` of raw arrays of any
backend (NumPy or CUDA ``DeviceArray``). Strides here are in elements, as
``Tensor.stride()`` gives them; None stands for C order, which callers
allocate as they always did. Empty results are always C order."""
from types import SimpleNamespace


def broadcast_axes(grad_shape, shape):
    """The axes of a gradient of ``grad_shape`` that undoing a broadcast to it
    from ``shape`` sums: the leading ones ``shape`` lacks and those where
    ``shape`` has size one (the sum keeps them, and a reshape drops the
    leading ones)."""
    lead = len(grad_shape) - len(shape)
    return tuple(range(lead)) + tuple(
        lead + k for k, n in enumerate(shape) if n == 1 and grad_shape[lead + k] != 1)


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


def _as_cast(a):
    """What TensorIterator reads (shape, element strides) of its cast copy of
    the raw array ``a`` (``to``: preserve_format)."""
    c = _c_strides(a.shape)
    strides = preserve_strides(a) or tuple(c)
    contiguous = all(s == k for s, k, n in zip(strides, c, a.shape) if n != 1)  # as NumPy's flag
    return SimpleNamespace(shape=a.shape, ndim=a.ndim, itemsize=1, strides=strides,
                           flags=SimpleNamespace(c_contiguous=contiguous))


def elementwise_strides(shape, arrays, numbers=False, casts=()):
    """Strides of the output of an elementwise op of broadcast ``shape`` over
    the raw arrays ``arrays`` (as given, not broadcast), or None for C order.
    ``numbers``: Python numbers take part too (so the shapes differ).
    ``casts``: per array, whether its dtype is not the computation's: PyTorch's
    CPU TensorIterator casts such an input first, and its copy's layout counts."""
    ndim = len(shape)
    if ndim < 2 or 0 in shape:
        return None
    arrays = [_as_cast(a) if k < len(casts) and casts[k] else a for k, a in enumerate(arrays)]
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


# PyTorch's channels_last (4-D) and channels_last_3d (5-D) memory formats: their
# dimensions from the fastest-varying to the slowest.
_CHANNELS_LAST = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def _suggested_order(shape, strides):
    """PyTorch's suggest_memory_format (is_channels_last_strides_2d_s4/_3d_s5):
    the channels-last order when the strides are like it, else None (contiguous)."""
    order = _CHANNELS_LAST.get(len(shape))
    if order is None or strides[1] == 0:
        return None
    least = 0
    for d in order:
        if shape[d] == 0 or strides[d] < least:
            return None
        if d == 0 and least == strides[1]:  # ambiguous (N111): PyTorch falls back to contiguous
            return None
        least = strides[d] * max(shape[d], 1)
    return order


def _strides_in_order(shape, order):
    """Compact strides laying out the dimensions in ``order`` (fastest first),
    as get_channels_last_strides_2d/_3d (no rounding of size-0/1 dimensions)."""
    out, step = [0] * len(shape), 1
    for d in order:
        out[d] = step
        step *= shape[d]
    return tuple(out)


def _join_order(layouts):
    """cat_compute_output_memory_format over (shape, strides) pairs: the order
    every input suggests, or None (contiguous) when one is contiguous or they differ."""
    orders = {_suggested_order(shape, strides) for shape, strides in layouts}
    return orders.pop() if len(orders) == 1 else None


def cat_strides(shape, arrays):
    """Strides of ``torch.cat`` of the raw ``arrays`` (legacy 1-D empty ones
    included: they vote contiguous) into ``shape``, or None for C order."""
    order = _join_order([(a.shape, _element_strides(a)) for a in arrays])
    return None if order is None else _strides_in_order(shape, order)


def stack_strides(shape, arrays, dim):
    """Strides of ``torch.stack`` of the raw ``arrays`` along ``dim`` into
    ``shape``, or None for C order. PyTorch cats along ``dim`` and views the
    result as ``shape``; for the new last dimension it cats the inputs
    unsqueezed there (stride 1, as unsqueeze gives)."""
    layouts = [(a.shape, _element_strides(a)) for a in arrays]
    if dim == len(shape) - 1:
        order = _join_order([(s + (1,), st + (1,)) for s, st in layouts])
        return None if order is None else _strides_in_order(shape, order)
    order = _join_order(layouts)
    if order is None:
        return None
    cat_shape = shape[:dim] + (shape[dim] * shape[dim + 1],) + shape[dim + 2:]
    return view_strides(cat_shape, _strides_in_order(cat_shape, order), shape)


def view_strides(shape, strides, new_shape):
    """PyTorch's computeStride for a non-empty tensor: the strides of its view
    as ``new_shape``, or None when the memory does not allow one. Runs of
    dimensions that are contiguous with each other (size-1 ones ignored) are
    re-split, each new dimension getting the compact stride within its run."""
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = strides[-1] if strides else 1
    numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != numel * base):  # end of a run
            while view_d >= 0 and (view_numel < numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != numel:
                return None
            if d > 0:
                base, numel, view_numel = strides[d - 1], 1, 1
    return tuple(new) if view_d == -1 else None


def has_c_strides(a):
    """Has the raw array ``a`` PyTorch's exact C-order strides (size-1
    dimensions too, which NumPy's ``c_contiguous`` ignores)?"""
    if not a.flags.c_contiguous:
        return False
    if a.size and 1 not in a.shape:  # no size-1 or empty dimension: C-contiguous says it all
        return True
    return list(_element_strides(a)) == _c_strides(a.shape)


def c_order(backend, a):
    """``a`` with PyTorch's exact C-order strides (size-1 dimensions too): ``a``
    itself, a view of it (only size-1 strides differ), or a C-order copy."""
    if not a.ndim:  # a full reduction's result: the common case
        return a
    if not a.flags.c_contiguous:
        return backend.ascontiguous(a)
    if has_c_strides(a):
        return a
    return backend.as_strided(a, a.shape, tuple(s * a.itemsize for s in _c_strides(a.shape)))


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


def with_strides(backend, a, strides):
    """``a`` laid out with element ``strides`` (None: PyTorch's exact C order):
    ``a`` itself when it already is, else a copy."""
    if strides is None:
        return c_order(backend, a)
    return a if _element_strides(a) == tuple(strides) else copy(backend, a, strides)
