"""Shape and joining ops of issue 15: splitting (``chunk split unbind``),
views (``narrow diagonal movedim swapaxes unflatten broadcast_to
broadcast_tensors meshgrid``), copies (``flip roll repeat tile
repeat_interleave tril triu diag diag_embed``) and the stacks (``hstack
vstack dstack column_stack``, with ``atleast_1d/2d/3d``).

What PyTorch makes a view is a view here (``views.make_view``: storage,
version counter and ``_base`` shared, strides as PyTorch's), what it copies
is copied. Every backward is written once against ``arrays.ops_for(grad)``,
so each op can be differentiated again; the forward-mode rule of each is
``dual.LINEAR`` (for the ops returning several tensors, ``LINEAR_EACH``).
"""
import itertools
import math
import numbers
import threading
import warnings

import numpy as np

from .. import dtypes
from ..backends import backend_of, layout
from ..tape import grad_mode
from ..tape.graph import Node, fill_node, input_meta
from ..tape.version_counter import user_stacklevel
from ..tensor import Tensor
from ..backends import cpu
from . import copying, dual, joining, views
from .arrays import ops_for
from .broadcasting import broadcast_shapes
from .registry import FUNCTIONS, tensor_op
from .views import ShapeBackward, make_view


def _linear_each(fn, args, kwargs, out):
    """Forward mode of an op linear in its inputs that may return several
    tensors: each output's tangent is the op applied to the tangents."""
    tangents = dual.LINEAR(fn, args, kwargs, out)
    if out.__class__ is Tensor:
        return tangents
    for o, t in zip(out, tangents):
        if o.dtype.is_floating_point:
            dual.set_tangent(o, t)
    return None


LINEAR_EACH = _linear_each


def _recording(t):
    return grad_mode.is_grad_enabled() and t.requires_grad


def _int_arg(name, arg, value, position=None):
    """``value`` as an int, or PyTorch's TypeError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, Tensor) and not value.dtype.is_floating_point and value.numel() == 1:
            return int(value.item())
        where = f" (position {position})" if position else ""
        raise TypeError(f"{name}(): argument '{arg}'{where} must be int, not "
                        f"{dtypes.type_name(value)}")
    return int(value)


def _int_list(name, arg, values, position=None, sequence=False):
    """A tuple of ints from an int, a sequence, or varargs (``f(1, 2)``);
    ``sequence``: one sequence is required (PyTorch's functions, unlike
    their methods, take no bare int)."""
    where = f" (position {position})" if position else ""
    if len(values) == 1 and isinstance(values[0], (tuple, list)):
        values = tuple(values[0])
    elif len(values) == 1 and isinstance(values[0], Tensor) and values[0].ndim == 1:
        values = tuple(values[0].tolist())
    elif len(values) == 1 and (sequence or not isinstance(values[0], numbers.Integral)
                               or isinstance(values[0], bool)):
        raise TypeError(f"{name}(): argument '{arg}'{where} must be tuple of ints, not "
                        f"{dtypes.type_name(values[0])}")
    for k, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name}(): argument '{arg}'{where} must be tuple of ints, but found "
                            f"element of type {dtypes.type_name(v)} at pos {k}")
    return tuple(int(v) for v in values)


def _varargs(name, arg, args, keyword):
    """A method's sizes given as varargs or as the keyword ``arg`` (a sequence)."""
    if keyword is not None:
        if args:
            raise TypeError(f"{name}() got multiple values for argument '{arg}'")
        return (keyword,)
    if not args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')
    return args


def _no_dims_error(dim):
    return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


# ------------------------------------------------ several views of one input
class SplitBackward(Node):
    """The one node of an op that returns several views of its input
    (``split``, ``chunk``, ``unbind``), as PyTorch's: it runs once, after the
    nodes of the outputs that got a gradient (``_OutputBackward``, which hand
    it their gradients and send it a flag each), and joins the gradients
    (zeros for the others) with ``combine(grads, xp)``: one pass, where a
    node per output would each scatter into a whole-input buffer."""

    __slots__ = ("_op_name", "combine", "shapes", "dtype", "pending")
    returns_fresh = True

    def __init__(self, source, op_name, shapes, combine):
        super().__init__([source])
        self._op_name, self.combine, self.shapes = op_name, combine, shapes
        self.dtype = source._data.dtype
        self.pending = {}  # thread -> {output number: gradient}

    @property
    def op_name(self):
        return self._op_name

    def receive(self, k, grad):
        self.pending.setdefault(threading.get_ident(), {})[k] = grad

    def backward(self, flags):
        received = self.pending.pop(threading.get_ident(), {})
        flags = flags._data if flags.__class__ is Tensor else flags
        grads = [received.get(k) if flags[k] else None for k in range(len(self.shapes))]
        xp = ops_for(next(g for g in grads if g is not None))
        return [self.combine([xp.zeros(shape, self.dtype) if g is None else g
                              for g, shape in zip(grads, self.shapes)], xp)]


class _OutputBackward(Node):
    """The node of output ``k`` of a SplitBackward: named and read as it."""

    __slots__ = ("main", "k", "flag")

    def __init__(self, main, k, n):
        flag = np.zeros(n)
        flag[k] = 1.0
        fill_node(self, [main], [input_meta(Tensor._wrap(flag, dtypes.float64, cpu))])
        self.saved = ()
        self.main, self.k, self.flag = main, k, flag

    def name(self):
        return self.main.name()

    @property
    def op_name(self):
        return self.main.op_name

    @property
    def next_functions(self):
        return self.main.next_functions

    def backward(self, grad):
        self.main.receive(self.k, grad)
        return [self.flag.copy()]

    def backward_graph(self, grad):
        self.main.receive(self.k, grad)
        return [Tensor._wrap(self.flag.copy(), dtypes.float64, cpu)]


def _split_views(self, op_name, keys, combine):
    """Views ``self[key]`` for each basic ``key``, sharing one SplitBackward."""
    outs = tuple(make_view(self, op_name, lambda a, key=key: a[key], None) for key in keys)
    for k, o in enumerate(outs):  # refused as targets of in-place writes, as PyTorch's
        o._multi_view = k
    if outs and outs[0]._grad_fn is not None:
        main = SplitBackward(self, op_name, [o._data.shape for o in outs], combine)
        for k, o in enumerate(outs):
            o._grad_fn = _OutputBackward(main, k, len(outs))
    return outs


def _concatenate_along(dim):
    return lambda grads, xp: xp.concatenate(grads, dim)


def _sized_splits(self, sizes, dim, op_name):
    lead = (slice(None),) * dim
    bounds = itertools.accumulate(sizes, initial=0)
    starts = list(bounds)
    keys = [lead + (slice(start, start + n),) for start, n in zip(starts, sizes)]
    return _split_views(self, op_name, keys, _concatenate_along(dim))


def _split_by_size(self, split_size, dim):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    dim = self._dim(dim)
    n = self._data.shape[dim]
    if split_size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}")
    count = max(-(-n // split_size) if split_size else 1, 1)
    last = split_size - (split_size * count - n)
    return _sized_splits(self, [split_size] * (count - 1) + [last], dim, "Split")


def _split_with_sizes(self, sizes, dim):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = self._dim(dim)
    n = self._data.shape[dim]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={list(sizes)}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes={list(sizes)}")
    return _sized_splits(self, list(sizes), dim, "SplitWithSizes")


@tensor_op("split", function=False, tangent=LINEAR_EACH)
def split_method(self, split_size, dim=0):
    """split(split_size, dim=0) -> tuple of Tensors

    Views of ``self`` along ``dim``: pieces of ``split_size`` (the last one
    shorter), or of the sizes in a list."""
    return split(self, split_size, dim)


@tensor_op(method=False, tangent=LINEAR_EACH)
def split(self, split_size_or_sections, dim=0):
    """split(tensor, split_size_or_sections, dim=0) -> tuple of Tensors

    Views of ``tensor`` along ``dim``: pieces of ``split_size`` (the last
    one shorter), or of the sizes in a list."""
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = _int_list("split_with_sizes", "split_sizes", (split_size_or_sections,), 2)
        return _split_with_sizes(self, sizes, dim)
    if not isinstance(split_size_or_sections, numbers.Integral) \
            or isinstance(split_size_or_sections, bool):  # PyTorch's overloads end with this one
        _int_list("split_with_sizes", "split_sizes", (split_size_or_sections,), 2)
    return _split_by_size(self, _int_arg("split", "split_size", split_size_or_sections), dim)


@tensor_op(tangent=LINEAR_EACH)
def split_with_sizes(self, split_sizes, dim=0):
    """split_with_sizes(input, split_sizes, dim=0) -> tuple of Tensors"""
    return _split_with_sizes(self, _int_list("split_with_sizes", "split_sizes", (split_sizes,), 2),
                             dim)


@tensor_op(tangent=LINEAR_EACH)
def chunk(self, chunks, dim=0):
    """chunk(input, chunks, dim=0) -> tuple of Tensors

    At most ``chunks`` views of equal size (the last may be smaller) along ``dim``."""
    chunks = _int_arg("chunk", "chunks", chunks, 2)
    if self.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = self._dim(dim)
    n = self._data.shape[dim]
    size = -(-n // chunks)
    if size == 0 and n == 0:  # PyTorch: ``chunks`` empty pieces
        return _sized_splits(self, [0] * chunks, dim, "SplitWithSizes")
    return _split_by_size(self, size, dim)


@tensor_op(tangent=LINEAR_EACH)
def unbind(self, dim=0):
    """unbind(input, dim=0) -> tuple of Tensors

    The slices along ``dim``, as views without that dimension."""
    if self.ndim == 0:
        raise _no_dims_error(0)
    dim = self._dim(dim)
    lead = (slice(None),) * dim
    keys = [lead + (k,) for k in range(self._data.shape[dim])]
    return _split_views(self, "Unbind", keys, lambda grads, xp: xp.stack(grads, dim))


# ------------------------------------------------------------ single views
@tensor_op(tangent=dual.LINEAR)
def narrow(self, dim, start, length):
    """narrow(input, dim, start, length) -> Tensor

    The view of ``length`` elements from ``start`` along ``dim``."""
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start = _int_arg("narrow", "start", start)
    length = _int_arg("narrow", "length", length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = self._dim(dim)
    n = self._data.shape[dim]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if start > n - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return self[(slice(None),) * dim + (slice(start, start + length),)]  # SliceBackward


def _diagonal_view(a, offset, d1, d2):
    """The raw array's diagonal ``offset`` over dims ``d1``, ``d2`` (moved
    last), as a view with PyTorch's strides and offset."""
    n1, n2 = a.shape[d1], a.shape[d2]
    length = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    keep = [d for d in range(a.ndim) if d not in (d1, d2)]
    shape = tuple(a.shape[d] for d in keep) + (length,)
    strides = tuple(a.strides[d] for d in keep) + (a.strides[d1] + a.strides[d2],)
    if length:  # start at the first element of the diagonal
        key = [slice(None)] * a.ndim
        key[d1 if offset < 0 else d2] = slice(abs(offset), None)
        a = a[tuple(key)]
    return backend_of(a).as_strided(a, shape, strides)


def _diagonal_dims(self, ndim, dim1, dim2):
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _wrap_dim(dim, ndim):
    ndim = max(ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


@tensor_op(tangent=dual.LINEAR)
def diagonal(self, offset=0, dim1=0, dim2=1):
    """diagonal(input, offset=0, dim1=0, dim2=1) -> Tensor

    The view of the diagonal ``offset`` (above the main one when positive)
    of the matrices over ``dim1`` and ``dim2``, as the last dimension."""
    offset = _int_arg("diagonal", "offset", offset, 2)
    d1, d2 = _diagonal_dims(self, self.ndim, dim1, dim2)
    shape = self._data.shape

    def view_fn(a):
        return _diagonal_view(a, offset, d1, d2)
    return make_view(self, "Diagonal", view_fn,
                     lambda g, xp: xp.scatter_into_view(shape, view_fn, g))


@tensor_op("movedim", "moveaxis", tangent=dual.LINEAR)
def movedim(self, source, destination):
    """movedim(input, source, destination) -> Tensor

    The view with dimensions ``source`` moved to ``destination`` (the others
    keep their order)."""
    src = (source,) if isinstance(source, numbers.Integral) else tuple(source)
    dst = (destination,) if isinstance(destination, numbers.Integral) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    ndim = self.ndim
    src_n = [_wrap_dim(d, ndim) for d in src]
    dst_n = [_wrap_dim(d, ndim) for d in dst]
    if len(set(src_n)) != len(src_n):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(dst_n)) != len(dst_n):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    order = [None] * ndim
    for s, d in zip(src_n, dst_n):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src_n)
    order = [next(rest) if o is None else o for o in order]
    return views.permute(self, tuple(order))


@tensor_op(tangent=dual.LINEAR)
def swapaxes(self, axis0, axis1):
    """swapaxes(input, axis0, axis1) -> Tensor (``transpose``)"""
    return views.transpose(self, axis0, axis1)


@tensor_op(tangent=dual.LINEAR)
def swapdims(self, dim0, dim1):
    """swapdims(input, dim0, dim1) -> Tensor (``transpose``)"""
    return views.transpose(self, dim0, dim1)


@tensor_op(tangent=dual.LINEAR)
def unflatten(self, dim, sizes):
    """unflatten(input, dim, sizes) -> Tensor

    The view with dimension ``dim`` split into ``sizes`` (one may be -1)."""
    sizes = _int_list("unflatten", "sizes", (sizes,), 3, sequence=True)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    dim = self._dim(dim)
    n = self._data.shape[dim]
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in sizes:
        if known == 0 or n % known:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                               f"size of dim {dim} ({n}) in the input tensor")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({n}) in the input tensor")
    shape = self._data.shape
    return views.view(self, shape[:dim] + sizes + shape[dim + 1:])


@tensor_op(tangent=dual.LINEAR)
def broadcast_to(self, size):
    """broadcast_to(input, size) -> Tensor (``expand``)"""
    return views.expand(self, tuple(size))


@tensor_op(method=False, tangent=LINEAR_EACH)
def broadcast_tensors(*tensors):
    """broadcast_tensors(*tensors) -> tuple of Tensors

    Views of the tensors expanded to their common shape (a tensor of that
    shape already is returned as it is, as in PyTorch)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors)) if tensors else ()
    return tuple(t if t.shape == shape else views.expand(t, shape) for t in tensors)


@tensor_op(method=False, tangent=LINEAR_EACH)
def meshgrid(*tensors, indexing=None):
    """meshgrid(*tensors, indexing=None) -> tuple of Tensors

    Coordinate grids of 0-d or 1-d tensors (``indexing='ij'``: the first
    tensor varies along the first dimension; ``'xy'``: the first two
    swapped), each a view (an expand) of its input."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("nbgrad.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=user_stacklevel())
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"nbgrad.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t!r}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t._backend is not tensors[0]._backend:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'nbgrad.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    tensors = list(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t.numel() for t in tensors)
    grids = []
    for k, t in enumerate(tensors):
        view_shape = tuple(-1 if j == k else 1 for j in range(len(tensors)))
        grids.append(views.expand(views.view(t, view_shape), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ----------------------------------------------------------------- copies
def _copy_result(self, op_name, data, inverse):
    """A new tensor ``data`` computed from ``self`` alone, with
    ``inverse(g, xp)`` as its backward."""
    node = ShapeBackward(self, op_name, inverse) if _recording(self) else None
    return Tensor._from_op(data, node, self.dtype, self._backend)


def _flip_view(a, dims):
    key = [slice(None)] * a.ndim
    for d in dims:
        key[d] = slice(None, None, -1)
    return a[tuple(key)]


@tensor_op("flip", method=False, tangent=dual.LINEAR)
def flip_function(input, dims=None):
    """flip(input, dims) -> Tensor

    A copy with the order of the elements reversed along ``dims`` (a sequence)."""
    if dims is None:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    return flip(input, _int_list("flip", "dims", (dims,), 2, sequence=True))


@tensor_op(function=False, tangent=dual.LINEAR)
def flip(self, *args, dims=None):
    """flip(*dims) -> Tensor

    A copy with the order of the elements reversed along ``dims``."""
    dims = _varargs("flip", "dims", args, dims)
    dims = _int_list("flip", "dims", dims, 1)
    wrapped = [self._dim(d) for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if self.ndim == 0:
        wrapped = []
    shape = self._data.shape

    def view_fn(a):
        return _flip_view(a, wrapped)
    # PyTorch's result is laid out as the input (empty_like, preserve_format).
    data = layout.copy(self._backend, view_fn(self._data), layout.preserve_strides(self._data))
    return _copy_result(self, "Flip", data, lambda g, xp: xp.apply_view(g, view_fn, shape))


@tensor_op(tangent=dual.LINEAR)
def fliplr(self):
    """fliplr(input) -> Tensor: ``flip(input, [1])``."""
    if self.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(self, 1)


@tensor_op(tangent=dual.LINEAR)
def flipud(self):
    """flipud(input) -> Tensor: ``flip(input, [0])``."""
    if self.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(self, 0)


def _roll_pieces(shape, shifts):
    """(destination key, source key) pairs that a roll by ``shifts`` (dim ->
    shift, in [1, n)) copies: two slices along each rolled dimension."""
    per_dim = []
    for d, n in enumerate(shape):
        s = shifts.get(d, 0)
        per_dim.append([(slice(None), slice(None))] if not s else
                       [(slice(s, None), slice(0, n - s)), (slice(0, s), slice(n - s, None))])
    for combo in itertools.product(*per_dim):
        yield tuple(c[0] for c in combo), tuple(c[1] for c in combo)


class RollBackward(Node):
    """``roll``'s backward: the gradient rolled back (for a backward that
    builds a graph, by ``roll`` itself, so to any order)."""

    __slots__ = ("shifts",)
    op_name = "Roll"

    def __init__(self, source, shifts):
        super().__init__([source])
        self.shifts = shifts  # dim -> shift, in [1, n)

    def backward(self, grad):
        back = {d: grad.shape[d] - s for d, s in self.shifts.items()}
        if grad.__class__ is Tensor:
            return [roll(grad, tuple(back.values()), tuple(back)) if back else grad]
        return [_rolled(backend_of(grad), grad, back) if back else grad]


def _rolled(backend, a, shifts):
    """A C-order copy of the raw array ``a`` rolled by ``shifts`` (dim -> shift in [1, n))."""
    out = backend.empty(a.shape, a.dtype)
    if a.size:
        for dst, src in _roll_pieces(a.shape, shifts):
            out[dst] = a[src]
    return out


@tensor_op(tangent=dual.LINEAR)
def roll(self, shifts, dims=None):
    """roll(input, shifts, dims=None) -> Tensor

    A copy with the elements shifted by ``shifts`` along ``dims`` (those
    leaving at one end come back at the other); without ``dims`` the
    flattened tensor is rolled and its shape restored."""
    shifts = ((shifts,) if isinstance(shifts, numbers.Integral) and not isinstance(shifts, bool)
              else _int_list("roll", "shifts", (shifts,), 2))
    given = () if dims is None else ((dims,) if isinstance(dims, numbers.Integral)
                                     else _int_list("roll", "dims", (dims,), 3))
    if not shifts:
        raise RuntimeError("`shifts` required")
    backend, a = self._backend, self._data
    if dims is None and len(shifts) == 1:  # the flattened tensor, one Roll node as PyTorch's
        n = a.size
        total = {0: shifts[0] % n} if n and shifts[0] % n else {}
        data = _rolled(backend, a.reshape(-1), total).reshape(a.shape)
        node = _FlatRollBackward(self, total) if _recording(self) else None
        return Tensor._from_op(data, node, self.dtype, backend)
    if len(shifts) != len(given):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(given)}")
    total = {}
    for d, s in zip(given, shifts):
        d = self._dim(d)
        n = a.shape[d] if a.ndim else 1
        total[d] = (total.get(d, 0) + s) % n if n else 0
    total = {d: s for d, s in total.items() if s and a.ndim}
    node = RollBackward(self, total) if _recording(self) else None
    return Tensor._from_op(_rolled(backend, a, total), node, self.dtype, backend)


class _FlatRollBackward(RollBackward):
    """``roll`` without dims: the gradient flattened, rolled back, reshaped."""

    __slots__ = ("shape",)

    def __init__(self, source, shifts):
        super().__init__(source, shifts)
        self.shape = source._data.shape

    def backward(self, grad):
        xp = ops_for(grad)
        (flat,) = RollBackward.backward(self, xp.reshape(grad, (-1,)))
        return [xp.reshape(flat, self.shape)]


def _repeat_shapes(shape, repeats):
    """(the input's shape padded with leading ones, the shape interleaving
    each repeat with its size, the result's shape)."""
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    interleaved = tuple(x for r, n in zip(repeats, padded) for x in (r, n))
    return padded, interleaved, tuple(r * n for r, n in zip(repeats, padded))


class RepeatBackward(Node):
    """``repeat``'s backward: the gradient's copies summed back."""

    __slots__ = ("shape", "interleaved")
    op_name = "Repeat"
    returns_fresh = True

    def __init__(self, source, interleaved):
        super().__init__([source])
        self.shape, self.interleaved = source._data.shape, interleaved

    def backward(self, grad):
        xp = ops_for(grad)
        axes = tuple(range(0, len(self.interleaved), 2))
        summed = xp.reduce_sum(xp.reshape(grad, self.interleaved), axes)
        return [xp.reshape(summed, self.shape)]


@tensor_op(function=False, tangent=dual.LINEAR)
def repeat(self, *args, repeats=None):
    """repeat(*repeats) -> Tensor

    A copy tiled ``repeats[k]`` times along each dimension (more repeats
    than dimensions add leading ones)."""
    repeats = _varargs("repeat", "repeats", args, repeats)
    repeats = _int_list("repeat", "repeats", repeats, 1)
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    padded, interleaved, shape = _repeat_shapes(self._data.shape, repeats)
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(shape)}")
    backend, a = self._backend, self._data
    spread = a.reshape(tuple(x for n in padded for x in (1, n)))
    data = backend.copy(backend.broadcast_to(spread, interleaved)).reshape(shape)
    node = RepeatBackward(self, interleaved) if _recording(self) else None
    return Tensor._from_op(data, node, self.dtype, backend)


@tensor_op("tile", method=False, tangent=dual.LINEAR)
def tile_function(input, dims=None):
    """tile(input, dims) -> Tensor

    ``repeat`` with ``dims`` (a sequence) padded with leading ones to the tensor's rank."""
    if dims is None:
        raise TypeError('tile() missing 1 required positional arguments: "dims"')
    return tile(input, _int_list("tile", "dims", (dims,), 2, sequence=True))


@tensor_op(function=False, tangent=dual.LINEAR)
def tile(self, *args, dims=None):
    """tile(*dims) -> Tensor

    ``repeat`` with ``dims`` padded with leading ones to the tensor's rank."""
    dims = _varargs("tile", "dims", args, dims)
    dims = _int_list("tile", "dims", dims, 1)
    return repeat(self, (1,) * (self.ndim - len(dims)) + dims)


class IndexSelectBackward(Node):
    """The gradient of a selection along one dimension: added back where read."""

    __slots__ = ("shape", "key")
    op_name = "IndexSelect"

    def __init__(self, source, key):
        super().__init__([source])
        self.shape, self.key = source._data.shape, key

    def backward(self, grad):
        return [ops_for(grad).index_add(self.shape, self.key, grad)]


def _repeat_index(counts):
    """[0, 0, 1, 2, 2, ...]: each position ``counts[k]`` times (NumPy int64)."""
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def _repeats_of(repeats, n, dim=0):
    """The repeat counts of a tensor ``repeats`` for ``n`` slices (NumPy)."""
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dtype.is_floating_point or repeats.dtype is dtypes.bool_:
        name = "Bool" if repeats.dtype is dtypes.bool_ else repeats.dtype.tensor_type[:-6]
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for \'{name}\'')
    counts = np.asarray(repeats._data if repeats._backend is cpu
                        else repeats._backend.to_numpy(repeats._data), dtype=np.int64).reshape(-1)
    if counts.size == 1:
        counts = np.repeat(counts, n)
    elif counts.size != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size({dim}) = {n}")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    return counts


@tensor_op(tangent=dual.LINEAR)
def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
    """repeat_interleave(input, repeats, dim=None, *, output_size=None) -> Tensor

    Each slice along ``dim`` (of the flattened input without it) repeated
    ``repeats`` times, in place: an int, or a tensor of one count per
    slice. ``repeat_interleave(repeats)`` alone gives the indices
    ``[0, ..., 0, 1, ...]`` it would select."""
    if repeats is None:  # repeat_interleave(repeats_tensor)
        counts = _repeats_of(self, self.numel())
        index = _repeat_index(counts)
        if output_size is not None and output_size != index.size:
            raise RuntimeError("allocated size does not match required size")
        return Tensor._wrap(self._backend.asarray(index), dtypes.int64, self._backend)
    if dim is None:
        self, dim = views.reshape(self, -1), 0
    dim = self._dim(dim)
    n = self._data.shape[dim] if self.ndim else 1
    if isinstance(repeats, Tensor):
        counts = _repeats_of(repeats, n, dim)
        return _select_repeated(self, dim, counts, output_size)
    repeats = _int_arg("repeat_interleave", "repeats", repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if output_size is not None and output_size != n * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * repeats} but "
                           f"got {output_size}")
    # PyTorch's: unsqueeze, expand, a contiguous clone, then flatten (a view).
    spread = views.unsqueeze(self, dim + 1)
    shape = list(spread.shape)
    shape[dim + 1] = repeats
    cloned = copying.contiguous(views.expand(spread, tuple(shape)))
    return views.flatten(cloned, dim, dim + 1)


def _select_repeated(self, dim, counts, output_size):
    index = _repeat_index(counts)
    if output_size is not None and output_size != index.size:
        raise RuntimeError("allocated size does not match required size")
    key = (slice(None),) * dim + (index,)
    backend, a = self._backend, self._data
    shape = a.shape[:dim] + (index.size,) + a.shape[dim + 1:]
    if index.size and a.size:
        data = layout.c_order(backend, ops_for(a).gather(a, key))
    else:
        data = backend.empty(shape, a.dtype)
    node = IndexSelectBackward(self, key) if _recording(self) else None
    return Tensor._from_op(data, node, self.dtype, backend)


# -------------------------------------------------------- triangles, diagonals
def _triangle_mask(backend, shape, diagonal, lower):
    """A bool raw array of the last two dims of ``shape``: True where ``tril``
    (``lower``) or ``triu`` keeps the element."""
    n, m = shape[-2], shape[-1]
    mask = np.tri(n, m, diagonal, dtype=bool) if lower else ~np.tri(n, m, diagonal - 1, dtype=bool)
    return backend.asarray(mask)


def _triangle(name, lower):
    title = name.title()

    def check(self, diagonal):
        if self.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return _int_arg(name, "diagonal", diagonal, 2)

    def inverse_for(mask):
        def inverse(g, xp):
            return xp.where(xp.constant(mask), g, _zero(g))
        return inverse

    def op(self, diagonal=0):
        diagonal = check(self, diagonal)
        backend, a = self._backend, self._data
        mask = _triangle_mask(backend, a.shape, diagonal, lower)
        data = layout.c_order(backend, backend.where(mask, a, a.dtype.type(0)))
        return _copy_result(self, title, data, inverse_for(mask))

    def op_(self, diagonal=0):
        from . import mutation
        diagonal = check(self, diagonal)
        backend, a = self._backend, self._data
        mask = _triangle_mask(backend, a.shape, diagonal, lower)

        def kernel():
            a[...] = backend.where(mask, a, a.dtype.type(0))
        return mutation.write(self, f"{name}_", kernel,
                              lambda: ShapeBackward(self, title, inverse_for(mask)),
                              others_require_grad=False)

    op.__name__, op_.__name__ = name, name + "_"
    op.__doc__ = (f"{name}(input, diagonal=0, *, out=None) -> Tensor\n\n    A copy with the "
                  f"elements {'above' if lower else 'below'} the diagonal ``diagonal`` of the "
                  f"last two dimensions zeroed.")
    op_.__doc__ = f"{name}_(diagonal=0) -> Tensor: ``{name}`` written into ``self``."
    tensor_op(tangent=dual.LINEAR, out=True)(op)
    tensor_op(function=False, tangent=dual.LINEAR_IN_PLACE)(op_)
    return op, op_


def _zero(g):
    """A zero of ``g``'s dtype (raw arrays; a Python 0 for Tensors, which the
    ``where`` row takes as a weak number)."""
    return 0 if g.__class__ is Tensor else g.dtype.type(0)


tril, tril_ = _triangle("tril", lower=True)
triu, triu_ = _triangle("triu", lower=False)


class _DiagonalCopyBackward(Node):
    """``diag`` of a matrix: the diagonal copied; its gradient scattered back."""

    __slots__ = ("shape", "view_fn")
    op_name = "Diagonal"

    def __init__(self, source, view_fn):
        super().__init__([source])
        self.shape, self.view_fn = source._data.shape, view_fn

    def name(self):
        return "DiagonalBackward_copy"  # PyTorch's DiagonalBackward0_copy (diagonal_copy)

    def backward(self, grad):
        return [ops_for(grad).scatter_into_view(self.shape, self.view_fn, grad)]


@tensor_op(tangent=dual.LINEAR)
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor

    Matrices (over the new dims ``dim1``, ``dim2``) whose diagonal ``offset``
    holds the last dimension of ``input``, zeros elsewhere."""
    offset = _int_arg("diag_embed", "offset", offset, 2)
    ndim = self.ndim + 1
    d1, d2 = _diagonal_dims(self, ndim, dim1, dim2)
    n = self._data.shape[-1] + abs(offset)
    shape = list(self._data.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    shape = tuple(shape)
    backend = self._backend
    data = backend.zeros(shape, self._data.dtype)

    def view_fn(a):
        return _diagonal_view(a, offset, d1, d2)
    view_fn(data)[...] = self._data
    return _copy_result(self, "DiagEmbed", data,
                        lambda g, xp: xp.apply_view(g, view_fn, shape))


@tensor_op(tangent=dual.LINEAR, out=True)
def diag(self, diagonal=0):
    """diag(input, diagonal=0, *, out=None) -> Tensor

    A vector's square matrix with it on the diagonal ``diagonal``, or a
    matrix's diagonal ``diagonal`` as a vector (a copy)."""
    if self.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")
    diagonal = _int_arg("diag", "diagonal", diagonal, 2)
    if self.ndim == 1:
        return diag_embed(self, diagonal, 0, 1)

    def view_fn(a):
        return _diagonal_view(a, diagonal, 0, 1)
    data = self._backend.copy(view_fn(self._data))
    node = _DiagonalCopyBackward(self, view_fn) if _recording(self) else None
    return Tensor._from_op(data, node, self.dtype, self._backend)


# ----------------------------------------------------------------- stacks
def _atleast(ndim, tensors, name):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument 'tensors' must be tuple of Tensors, not "
                            f"{dtypes.type_name(t)}")
        out.append(_at_least(t, ndim))
    return out[0] if single else tuple(out)


def _at_least(t, ndim):
    if t.ndim >= ndim:
        return t
    if t.ndim == 0:
        return views.reshape(t, (1,) * ndim)
    if ndim == 2 or t.ndim == 2:  # (n) -> (1, n); 3-d: (n, m) -> (n, m, 1)
        t = views.unsqueeze(t, 0) if t.ndim == 1 else t
        return t if ndim == 2 else views.unsqueeze(t, -1)
    return views.unsqueeze(views.unsqueeze(t, 0), -1)  # (n) -> (1, n, 1)


def _atleast_op(ndim):
    name = f"atleast_{ndim}d"

    def op(*tensors):
        return _atleast(ndim, tensors, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{name}(*tensors) -> Tensor or tuple of Tensors\n\n    Each tensor with "
                  f"at least {ndim} dimensions (a view).")
    tensor_op(name, method=False, tangent=LINEAR_EACH)(op)
    return op


atleast_1d, atleast_2d, atleast_3d = (_atleast_op(n) for n in (1, 2, 3))


def _stack_op(name, prepare, dim_of):
    def op(tensors, *, out=None):
        tensors = joining._tensor_list(tensors, name)
        if not tensors:
            raise RuntimeError(f"{name} expects a non-empty TensorList")
        parts = [prepare(t) for t in tensors]
        cat = FUNCTIONS["cat"]  # PyTorch's stacks call cat (its out= refusals say "cat()")
        dim = dim_of(parts)
        return cat(parts, dim) if out is None else cat(parts, dim, out=out)
    op.__name__ = op.__qualname__ = name
    return op


def _column(t):
    return views.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t


hstack = _stack_op("hstack", lambda t: _at_least(t, 1), lambda ts: 0 if ts[0].ndim == 1 else 1)
vstack = _stack_op("vstack", lambda t: _at_least(t, 2), lambda ts: 0)
dstack = _stack_op("dstack", lambda t: _at_least(t, 3), lambda ts: 2)
column_stack = _stack_op("column_stack", _column, lambda ts: 1)
hstack.__doc__ = ("hstack(tensors, *, out=None) -> Tensor\n\n    ``cat`` along the second "
                  "dimension (the first for 1-d tensors), after ``atleast_1d``.")
vstack.__doc__ = "vstack(tensors, *, out=None) -> Tensor\n\n    ``cat`` of ``atleast_2d`` along 0."
dstack.__doc__ = "dstack(tensors, *, out=None) -> Tensor\n\n    ``cat`` of ``atleast_3d`` along 2."
column_stack.__doc__ = ("column_stack(tensors, *, out=None) -> Tensor\n\n    ``cat`` along 1, "
                        "0-d and 1-d tensors as columns.")
for _op in (hstack, vstack, dstack, column_stack):
    tensor_op(method=False, tangent=dual.LINEAR)(_op)
tensor_op("row_stack", method=False, tangent=dual.LINEAR)(vstack)
