"""Linear-algebra products of issue 15: ``bmm baddbmm addmm addmv mv dot vdot``
(each one node, as PyTorch's: ``BmmBackward``, ``AddmmBackward``, ...),
``linalg.cross``/``cross`` (``LinalgCrossBackward``), and the composites
PyTorch builds from other ops, whose results carry their last part's node
as PyTorch's do: ``outer``/``ger`` (a mul), ``kron`` (a mul, then an unsafe
view), ``tensordot`` (permutes, reshapes, an mm, a view) and ``einsum``.

``einsum`` follows PyTorch's own evaluation (aten's ``einsum`` without
opt_einsum): each operand's repeated subscripts become diagonals, its
dimensions are permuted to one order (output subscripts first, then the
summed ones) with size-1 dimensions for subscripts it lacks; one operand is
then summed, several are contracted left to right, each pair by one batched
matrix product over the subscripts they share (``sumproduct_pair``) after
summing those only one of them has. Its gradients (of any order) and tangents
are those of the ops it is made of.

The one-node products' backwards are written once against
``arrays.ops_for(grad)``, so each is differentiable again.
"""
import math
import numbers
import warnings

import numpy as np

from .. import dtypes
from ..tape import grad_mode
from ..tape.graph import Node
from ..tape.version_counter import user_stacklevel
from ..tensor import Tensor
from . import dual, mutation, reductions, views
from .arrays import ops_for
from .elementwise import _TYPE_NAMES, _device_error
from .linalg import _c_name, _dims, mm
from .out import with_out
from .registry import tensor_op


def _name(t):
    return _TYPE_NAMES[t.dtype.name]


def _cpp_name(t):
    """PyTorch's C++ name of ``t``'s dtype ("float", "long int")."""
    names = getattr(dtypes, "CPP_NAMES", None)
    return names[t.dtype.name] if names else _c_name(t.dtype)


def _tensor_args(op, pairs):
    """PyTorch's TypeError for an argument that is not a Tensor; its device error."""
    for k, (arg, t) in enumerate(pairs):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{arg}' (position {k + 1}) must be Tensor, "
                            f"not {type(t).__name__}")
    first = pairs[0][1]
    for _, t in pairs[1:]:
        if t._backend is not first._backend:
            raise _device_error(first, t)


def _not_for_bool(kernel, *tensors):
    if any(t.dtype is dtypes.bool_ for t in tensors):
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _scalar(value, dtype):
    """``alpha``/``beta`` as a number of ``dtype``'s kind (a 0-d tensor's item)."""
    if isinstance(value, Tensor):
        value = value.item()
    return value if dtype.is_floating_point else int(value)


def _recording(*tensors):
    return grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors)


# ---------------------------------------------------------------- one node each
class ProductBackward(Node):
    """Backward of a product with an optional added input:
    ``beta * input + alpha * (left x right)``, where ``x`` is ``kind``: "mm"
    (matrices or batches of them), "mv" (matrix times vector) or "dot"."""

    __slots__ = ("_op_name", "kind", "alpha", "beta", "offset")

    def __init__(self, op_name, kind, inputs, alpha=1, beta=1):
        super().__init__(inputs)
        self._op_name, self.kind, self.alpha, self.beta = op_name, kind, alpha, beta
        self.offset = len(inputs) - 2  # 1 when an input is added
        left, right = inputs[-2:]
        # Each side's gradient needs the other side only.
        self.save(right if self.needs_grad(self.offset) else None,
                  left if self.needs_grad(self.offset + 1) else None)

    @property
    def op_name(self):
        return self._op_name

    def backward(self, grad):
        xp = ops_for(grad)
        right, left = self.saved_values(xp.graph)
        grads = []
        if self.offset:  # PyTorch's maybe_multiply(grad, beta); the engine undoes broadcasting
            grads.append(_times(xp, grad, self.beta) if self.needs_grad(0) else None)
        grad_left = grad_right = None
        if self.kind == "mm":
            if right is not None:
                grad_left = xp.matmul(grad, xp.swap_last(right))
            if left is not None:
                grad_right = xp.matmul(xp.swap_last(left), grad)
        elif self.kind == "mv":
            if right is not None:  # the outer product grad x vec
                grad_left = xp.run("mul", xp.reshape(grad, (-1, 1)), xp.reshape(right, (1, -1)))
            if left is not None:
                grad_right = xp.matmul(xp.swap_last(left), grad)
        else:  # dot
            if right is not None:
                grad_left = xp.run("mul", grad, right)
            if left is not None:
                grad_right = xp.run("mul", grad, left)
        grads.append(None if grad_left is None else _times(xp, grad_left, self.alpha))
        grads.append(None if grad_right is None else _times(xp, grad_right, self.alpha))
        return grads


def _times(xp, a, factor):
    """PyTorch's maybe_multiply: ``a`` itself when ``factor`` is 1."""
    return a if factor == 1 else xp.scale(a, factor)


def _result(data, node, dtype, backend):
    return Tensor._from_op(backend.ascontiguous(data), node, dtype, backend)


def _product_data(backend, left, right):
    """``left @ right`` for raw matrices, batches or a matrix and a vector,
    as a new array (an empty contraction gives zeros)."""
    return backend.matmul(left, right)


def _add_scaled(self, product, dtype, shape, alpha, beta):
    """``beta * self + alpha * product`` (raw arrays; ``self`` broadcast to
    ``shape``; ignored when ``beta`` is 0, so its NaNs do not propagate)."""
    backend = self._backend
    xp = ops_for(product)
    if alpha != 1:
        product = xp.scale(product, alpha)
    if beta == 0:
        return product
    added = self._data if self._data.shape == shape else backend.broadcast_to(self._data, shape)
    if beta != 1:
        added = xp.scale(added, beta)
    return xp.run("add", product, added)


def _expanded_shape(self, shape):
    """Check that ``self`` expands to ``shape`` (PyTorch's expand error)."""
    views.expand(self.detach(), shape)


@tensor_op(tangent=dual.BILINEAR, out=True)
def bmm(input, mat2):
    """bmm(input, mat2, *, out=None) -> Tensor

    The batched matrix product of ``input`` (b, n, m) and ``mat2`` (b, m, p)."""
    _tensor_args("bmm", [("input", input), ("mat2", mat2)])
    _bmm_check(input, mat2)
    _not_for_bool("bmm", input)
    data = _product_data(input._backend, input._data, mat2._data)
    node = ProductBackward("Bmm", "mm", [input, mat2]) if _recording(input, mat2) else None
    return _result(data, node, input.dtype, input._backend)


def _bmm_check(batch1, batch2):
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    b, _, m = batch1.shape
    if batch2.shape[:2] != (b, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {_name(batch1)} but found {_name(batch2)}")


def _size(t, d):
    """``t.size(d)`` with PyTorch's IndexError."""
    return t.shape[t._dim(d)]


@tensor_op(tangent=dual.BY_VJP, out=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None) -> Tensor

    ``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices
    (``input`` broadcast to the result; ignored when ``beta`` is 0)."""
    _tensor_args("baddbmm", [("input", input), ("batch1", batch1), ("batch2", batch2)])
    if input.dtype is not batch1.dtype:
        names = (_cpp_name(t) for t in (input, batch1, batch2))
        raise RuntimeError("Input dtypes must be the same, got: input {}, batch1: {}, "
                           "batch2: {}".format(*names))
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {_name(batch1)} but found {_name(batch2)}")
    shape = (_size(batch1, 0), _size(batch1, 1), _size(batch2, 2))
    _expanded_shape(input, shape)
    _bmm_check(batch1, batch2)
    _not_for_bool("baddbmm", input)
    alpha, beta = _scalar(alpha, input.dtype), _scalar(beta, input.dtype)
    product = _product_data(input._backend, batch1._data, batch2._data)
    data = _add_scaled(input, product, input.dtype, shape, alpha, beta)
    node = ProductBackward("Baddbmm", "mm", [input, batch1, batch2], alpha, beta) \
        if _recording(input, batch1, batch2) else None
    return _result(data, node, input.dtype, input._backend)


@tensor_op(tangent=dual.BY_VJP, out=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None) -> Tensor

    ``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcast to the
    result; ignored when ``beta`` is 0)."""
    _tensor_args("addmm", [("input", input), ("mat1", mat1), ("mat2", mat2)])
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_name(input)} and "
                           f"{_name(mat2)}")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_name(mat1)} and "
                           f"{_name(mat2)}")
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(mat1.shape)} and "
                           f"{_dims(mat2.shape)})")
    shape = (mat1.shape[0], mat2.shape[1])
    _expanded_shape(input, shape)
    _not_for_bool("addmm_impl_cpu_", input)
    alpha, beta = _scalar(alpha, input.dtype), _scalar(beta, input.dtype)
    product = _product_data(input._backend, mat1._data, mat2._data)
    data = _add_scaled(input, product, input.dtype, shape, alpha, beta)
    node = ProductBackward("Addmm", "mm", [input, mat1, mat2], alpha, beta) \
        if _recording(input, mat1, mat2) else None
    return _result(data, node, input.dtype, input._backend)


def _mv_checks(input_size, input_ndim, mat, vec):
    if not (mat.ndim == 2 and vec.ndim == 1 and input_ndim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {input_ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0] or input_size not in (1, mat.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({input_size}), mat ({_dims(mat.shape)}), "
                           f"vec ({vec.shape[0]})")


def _mv_dtypes(first, mat, vec):
    if not first.dtype is mat.dtype is vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_name(first)}, {_name(mat)}, and {_name(vec)}")


@tensor_op(tangent=dual.BILINEAR, out=True)
def mv(input, vec):
    """mv(input, vec, *, out=None) -> Tensor

    The product of the matrix ``input`` (n, m) and the vector ``vec`` (m)."""
    _tensor_args("mv", [("input", input), ("vec", vec)])
    _mv_checks(input.shape[0] if input.ndim else 1, 1, input, vec)
    _mv_dtypes(vec, input, vec)
    _not_for_bool("addmv_impl_cpu", input)
    data = _product_data(input._backend, input._data, vec._data)
    node = ProductBackward("Mv", "mv", [input, vec]) if _recording(input, vec) else None
    return _result(data, node, input.dtype, input._backend)


@tensor_op(tangent=dual.BY_VJP, out=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """addmv(input, mat, vec, *, beta=1, alpha=1, out=None) -> Tensor

    ``beta * input + alpha * (mat @ vec)`` (``input`` broadcast to the
    result; ignored when ``beta`` is 0)."""
    _tensor_args("addmv", [("input", input), ("mat", mat), ("vec", vec)])
    _mv_checks(input.shape[0] if input.ndim else 1, input.ndim, mat, vec)
    _mv_dtypes(input, mat, vec)
    _not_for_bool("addmv_impl_cpu", input)
    shape = (mat.shape[0],)
    alpha, beta = _scalar(alpha, input.dtype), _scalar(beta, input.dtype)
    product = _product_data(input._backend, mat._data, vec._data)
    data = _add_scaled(input, product, input.dtype, shape, alpha, beta)
    node = ProductBackward("Addmv", "mv", [input, mat, vec], alpha, beta) \
        if _recording(input, mat, vec) else None
    return _result(data, node, input.dtype, input._backend)


def _write_product(self, function, op_name, kind, left, right, beta, alpha):
    """``self`` takes ``function(self, left, right, beta=, alpha=)`` (addmm,
    addmv, baddbmm), whose shape it must have; taped as the product."""
    others = isinstance(left, Tensor) and isinstance(right, Tensor) and (
        left.requires_grad or right.requires_grad)
    mutation.check_inplace(self, others)
    with grad_mode.no_grad():
        result = function(self, left, right, beta=beta, alpha=alpha)
    if result.shape != self.shape:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and "
                           f"output tensor size {list(result.shape)} should match")
    alpha, beta = _scalar(alpha, self.dtype), _scalar(beta, self.dtype)

    def kernel():
        self._data[...] = result._data
    return mutation.write(self, function.__name__ + "_", kernel, lambda: ProductBackward(
        op_name, kind, [self, left, right], alpha, beta), others, checked=True)


@tensor_op(function=False)
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """addmm_(mat1, mat2, *, beta=1, alpha=1) -> Tensor

    ``addmm`` written into ``self``."""
    return _write_product(self, addmm, "Addmm", "mm", mat1, mat2, beta, alpha)


@tensor_op(function=False)
def addmv_(self, mat, vec, *, beta=1, alpha=1):
    """addmv_(mat, vec, *, beta=1, alpha=1) -> Tensor

    ``addmv`` written into ``self``."""
    return _write_product(self, addmv, "Addmv", "mv", mat, vec, beta, alpha)


@tensor_op(function=False)
def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """baddbmm_(batch1, batch2, *, beta=1, alpha=1) -> Tensor

    ``baddbmm`` written into ``self``."""
    return _write_product(self, baddbmm, "Baddbmm", "mm", batch1, batch2, beta, alpha)


def _dot(name, input, other):
    _tensor_args(name, [("input", input), ("tensor", other)])
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_name(input)} and {_name(other)}")
    n, m = input.shape[0], other.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           f"respectively")
    _not_for_bool("dot", input)
    data = _product_data(input._backend, input._data, other._data)
    node = ProductBackward(name.title(), "dot", [input, other]) \
        if _recording(input, other) else None
    return _result(data, node, input.dtype, input._backend)


@tensor_op(tangent=dual.BILINEAR, out=True)
def dot(input, tensor):
    """dot(input, tensor, *, out=None) -> Tensor

    The inner product of two 1-D tensors of one dtype."""
    return _dot("dot", input, tensor)


@tensor_op(tangent=dual.BILINEAR, out=True)
def vdot(input, other):
    """vdot(input, other, *, out=None) -> Tensor

    The inner product of two 1-D tensors, the first conjugated (real
    tensors: ``dot``)."""
    return _dot("vdot", input, other)


# ------------------------------------------------------------------ cross
class LinalgCrossBackward(Node):
    """``a x b`` along ``dim``: the gradients are ``b x g`` and ``g x a``."""

    __slots__ = ("dim",)
    op_name = "LinalgCross"

    def __init__(self, a, b, dim):
        super().__init__([a, b])
        self.dim = dim
        self.save(b if self.needs_grad(0) else None, a if self.needs_grad(1) else None)

    def backward(self, grad):
        xp = ops_for(grad)
        b, a = self.saved_values(xp.graph)
        cross = _taped_cross if xp.graph else _raw_cross
        return [None if b is None else cross(xp, b, grad, self.dim),
                None if a is None else cross(xp, grad, a, self.dim)]


def _raw_cross(xp, a, b, dim):
    """``a x b`` along ``dim`` for raw arrays of one shape (a new array)."""
    lead = (slice(None),) * dim
    pa = [a[lead + (k,)] for k in range(3)]
    pb = [b[lead + (k,)] for k in range(3)]
    parts = [xp.run("sub", xp.run("mul", pa[i], pb[j]), xp.run("mul", pa[j], pb[i]))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    return xp.stack(parts, dim)


def _taped_cross(xp, a, b, dim):
    return linalg_cross(a, b, dim=dim)


@dual.tangent_rule(dual.BILINEAR)
def linalg_cross(input, other, *, dim=-1):
    """linalg.cross(input, other, *, dim=-1, out=None) -> Tensor

    The cross product of 3-vectors along ``dim`` (the inputs broadcast)."""
    _tensor_args("linalg_cross", [("input", input), ("other", other)])
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = input._dim(dim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    from .broadcasting import broadcast_shapes
    shape = broadcast_shapes(input.shape, other.shape)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_name(input)} but found {_name(other)}")
    _not_for_bool("linalg_cross", input)
    backend = input._backend
    a = input._data if input.shape == shape else backend.broadcast_to(input._data, shape)
    b = other._data if other.shape == shape else backend.broadcast_to(other._data, shape)
    data = _raw_cross(ops_for(a), a, b, d)
    node = LinalgCrossBackward(input, other, d) if _recording(input, other) else None
    return _result(data, node, input.dtype, backend)


@tensor_op(tangent=dual.BILINEAR, out=True)
def cross(input, other, dim=None):
    """cross(input, other, dim=None, *, out=None) -> Tensor

    ``linalg.cross`` along ``dim``; without it (deprecated, with PyTorch's
    warning) along the first dimension of size 3."""
    _tensor_args("cross", [("input", input), ("other", other)])
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
            "change to agree with that of linalg.cross in a future release.", UserWarning,
            stacklevel=user_stacklevel())
        from .broadcasting import broadcast_shapes
        shape = broadcast_shapes(input.shape, other.shape) if input.ndim == other.ndim \
            else input.shape
        dim = next((k for k, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


# --------------------------------------------------------------- composites
@tensor_op("outer", "ger", tangent=dual.BILINEAR, out=True)
def outer(input, vec2):
    """outer(input, vec2, *, out=None) -> Tensor

    The outer product of two vectors (``input[:, None] * vec2``; the dtypes
    promote)."""
    _tensor_args("outer", [("input", input), ("vec2", vec2)])
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return views.reshape(input, (-1, 1)) * vec2


class _UnsafeViewBackward(Node):
    """PyTorch's ``_unsafe_view``: a reshape that is not a view."""

    __slots__ = ("shape",)
    op_name = "UnsafeView"

    def __init__(self, source):
        super().__init__([source])
        self.shape = source._data.shape

    def backward(self, grad):
        return [ops_for(grad).reshape(grad, self.shape)]


def _unsafe_view(t, shape):
    node = _UnsafeViewBackward(t) if _recording(t) else None
    return Tensor._from_op(t._data.reshape(shape), node, t.dtype, t._backend)


@tensor_op(tangent=dual.BILINEAR, out=True)
def kron(input, other):
    """kron(input, other, *, out=None) -> Tensor

    The Kronecker product: blocks ``input[i] * other`` (the shorter shape
    padded with leading ones)."""
    _tensor_args("kron", [("input", input), ("other", other)])
    ndim = max(input.ndim, other.ndim)
    a_shape = (1,) * (ndim - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (ndim - other.ndim) + tuple(other.shape)
    a = views.reshape(input, tuple(x for n in a_shape for x in (n, 1)))
    b = views.reshape(other, tuple(x for n in b_shape for x in (1, n)))
    return _unsafe_view(a * b, tuple(m * n for m, n in zip(a_shape, b_shape)))


def _dims_list(dims):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, numbers.Integral):
        return [int(dims)]
    return [int(d) for d in dims]


@tensor_op(method=False, tangent=dual.BILINEAR, out=True)
def tensordot(a, b, dims=2):
    """tensordot(a, b, dims=2, out=None) -> Tensor

    The sum of products over the last ``dims`` dimensions of ``a`` and the
    first of ``b``, or over the dimension lists ``dims = (dims_a, dims_b)``."""
    _tensor_args("tensordot", [("a", a), ("b", b)])
    if isinstance(dims, Tensor) and dims.ndim == 0:
        dims = dims.item()
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = (_dims_list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims_a = [a._dim(d) for d in dims_a]
    dims_b = [b._dim(d) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} "
                               f"in dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    size = int(np.prod([a.shape[d] for d in dims_a], dtype=np.int64))
    rows = int(np.prod([a.shape[d] for d in free_a], dtype=np.int64))
    cols = int(np.prod([b.shape[d] for d in free_b], dtype=np.int64))
    left = views.reshape(views.permute(a, tuple(free_a + dims_a)), (rows, size))
    right = views.reshape(views.permute(b, tuple(dims_b + free_b)), (size, cols))
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    return views.reshape(mm(left, right), shape)


# ------------------------------------------------------------------ einsum
_ELLIPSIS = "..."


def _letter(k):
    """The subscript of number ``k`` in the sublist format: A-Z then a-z."""
    if not 0 <= k < 52:
        raise ValueError(f"einsum(): subscript in subscript list is not within the valid range "
                         f"[0, 52)")
    return chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26)


def _from_sublists(args):
    """``einsum(op1, sublist1, op2, sublist2, ..., [out])`` as (equation, operands)."""
    operands, terms = [], []
    args = list(args)
    while len(args) >= 2:
        operands.append(args.pop(0))
        terms.append("".join(_ELLIPSIS if s is Ellipsis else _letter(s) for s in args.pop(0)))
    equation = ",".join(terms)
    if args:
        equation += "->" + "".join(_ELLIPSIS if s is Ellipsis else _letter(s) for s in args[0])
    return equation, operands


def _parse(equation, operands):
    """(each operand's labels, a list with "." for its ellipsis; the output's
    subscripts and their position in the equation, or None for the implicit
    output)."""
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    labels, position = [], 0
    for k, term in enumerate(terms):
        labels.append(_labels(term, k, position))
        position += len(term) + 1
    # the output's subscripts are read after the operands' are checked, as PyTorch's
    return labels, (rhs, len(lhs) + 2) if arrow else None


def _labels(term, operand, position):
    out, i = [], 0
    while i < len(term):
        c = term[i]
        if c == " ":
            i += 1
            continue
        if c == ".":
            if "." in out:
                raise RuntimeError(
                    f"einsum(): found '.' for operand {operand} for which an ellipsis was already "
                    "found" if operand is not None else
                    "einsum(): found '.' for output but an ellipsis (...) was already found")
            if term[i:i + 3] != _ELLIPSIS or (operand is not None and i + 3 > len(term)):
                raise RuntimeError(
                    f"einsum(): found '.' for operand {operand} that is not part of any ellipsis"
                    if operand is not None else
                    "einsum(): found '.' for output that is not part of any ellipsis (...)")
            out.append(".")
            i += 3
            continue
        if not ("a" <= c <= "z" or "A" <= c <= "Z"):
            raise RuntimeError(f"einsum(): invalid subscript given at index {position + i} in "
                               "the equation string, subscripts must be in [a-zA-Z]")
        out.append(c)
        i += 1
    return out


def _sort_key(label):
    return label  # PyTorch's label order: A-Z, then a-z (ASCII)


def einsum(*args):
    """einsum(equation, *operands) -> Tensor

    The sum of products of the operands' elements that the equation (NumPy's
    subscripts: ``'ij,jk->ik'``, ``'...ij'``, repeated subscripts for
    diagonals, an implicit output without ``->``) or the sublist format
    (``einsum(a, [0, 1], b, [1, 2], [0, 2])``) describes."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _from_sublists(args)
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got "
                            f"{type(t).__name__}")
    return _einsum_of(equation, *operands)


@dual.tangent_rule(dual.BILINEAR)  # linear in each operand
def _einsum_of(equation, *operands):
    labels, out = _parse(equation, operands)
    return _einsum(labels, out, operands)


def _einsum(op_labels, output, operands):
    # -- the number of dimensions the ellipsis covers, and each operand's check
    ell_ndim = 0
    counts = {}
    for k, (labels, t) in enumerate(zip(op_labels, operands)):
        named = len(labels) - ("." in labels)
        if "." in labels:
            if t.ndim < named:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({named}) is more than the number of dimensions "
                                   f"({t.ndim}) for operand {k}")
            ell_ndim = max(ell_ndim, t.ndim - named)
        elif t.ndim != named:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) "
                               f"does not match the number of dimensions ({t.ndim}) for "
                               f"operand {k} and no ellipsis was given")
        for c in labels:
            counts[c] = counts.get(c, 0) + 1
    out_labels = None if output is None else _labels(output[0], None, output[1])
    # -- the order of the permuted dimensions: output first, then the summed ones
    order = []  # labels, "." standing for the ellipsis's dims
    if out_labels is None:
        if "." in counts:
            order.append(".")
        order += sorted((c for c, n in counts.items() if c != "." and n == 1), key=_sort_key)
    else:
        for c in out_labels:
            if c != "." and c not in counts:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
            if c in order:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
            order.append(c)
    out_order = list(order)
    if "." not in order and "." in counts:
        order.append(".")
    order += sorted((c for c in counts if c != "." and c not in order), key=_sort_key)
    positions, p = {}, 0
    for c in order:
        positions[c] = p
        p += ell_ndim if c == "." else 1
    total = p
    out_ndim = sum(ell_ndim if c == "." else 1 for c in out_order)
    # -- each operand: diagonals of repeated labels, size-1 dims for missing ones, permuted
    sizes = {}
    permuted = []
    for k, (labels, t) in enumerate(zip(op_labels, operands)):
        perm = [None] * total
        covered = {}  # permuted position -> the operand's dim, for the ellipsis's dims
        first = {}
        j = 0
        for c in labels:
            if c == ".":
                missing = ell_ndim - (t.ndim - (len(labels) - 1))
                for _ in range(missing):
                    t = views.unsqueeze(t, j)
                for e in range(ell_ndim):
                    perm[positions["."] + e] = j
                    if e >= missing:
                        covered[positions["."] + e] = j - missing
                    j += 1
            elif c in first:
                d = first[c]
                if t.shape[j] != t.shape[d]:
                    raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but "
                                       f"the sizes don't match, {t.shape[j]} != {t.shape[d]}")
                t = _movedim(_diagonal(t, d, j), -1, d)
            else:
                first[c] = j
                perm[positions[c]] = j
                j += 1
        missing = [q for q in range(total) if perm[q] is None]
        if missing:  # size-1 dims at the end for the labels it lacks (one view)
            t = views.reshape(t, tuple(t.shape) + (1,) * len(missing))
            for q in missing:
                perm[q] = j
                j += 1
        t = views.permute(t, tuple(perm))
        for q, n in enumerate(t.shape):  # sizes must agree, or be 1 (broadcast)
            seen = sizes.get(q)
            if n != 1:
                if seen is not None and seen != n:
                    if q in covered:
                        raise RuntimeError(
                            f"einsum(): dimension {covered[q]} covered by ellipsis in operand "
                            f"{k}has size {n} which does not broadcast with previously seen "
                            f"ellipsis with size {seen} for the respective dimension")
                    label = _label_at(order, positions, q)
                    raise RuntimeError(f"einsum(): subscript {label} has size {n} for operand "
                                       f"{k} which does not broadcast with previously seen size "
                                       f"{seen}")
                sizes[q] = n
        permuted.append(t)
    # -- the result
    if len(permuted) == 1:
        result = permuted[0]
        if total > out_ndim:
            result = reductions.sum(result, tuple(range(out_ndim, total)))
        return result
    # PyTorch's order, left to right; a greedy one (opt_einsum's idea) where it
    # needs under half the multiplications (the result's strides may then
    # differ from PyTorch's)
    operands = list(permuted)
    for i, j in _path([tuple(t.shape) for t in operands], out_ndim):
        others = [t for k, t in enumerate(operands) if k not in (i, j)]
        result = _contract(operands[i], operands[j], others, out_ndim)
        operands = operands[:i] + [result] + [t for k, t in enumerate(operands)
                                              if k > i and k != j]
    result = operands[0]
    if total > out_ndim:
        result = views.view(result, tuple(result.shape[:out_ndim]))
    return result


def _contract(a, b, others, out_ndim):
    """``a`` and ``b`` contracted over the summed dims (from ``out_ndim`` on)
    that no operand in ``others`` has: those both have by one batched product,
    those one has by a sum first (PyTorch's loop body)."""
    sum_dims = []
    for d in range(out_ndim, a.ndim):
        if any(t.shape[d] != 1 for t in others):
            continue
        if a.shape[d] != 1 and b.shape[d] != 1:
            sum_dims.append(d)
        elif a.shape[d] != 1:
            a = reductions.sum(a, d, True)
        elif b.shape[d] != 1:
            b = reductions.sum(b, d, True)
    return _sumproduct_pair(a, b, sum_dims)


def _path(shapes, out_ndim):
    """The pairs (i, j) to contract in turn (the result takes i's place):
    left to right, or greedy (each time the pair whose result grows the
    elements held least, then the one of fewest multiplications) when that
    needs under half the multiplications."""
    def pairs(choose):
        ops, total, path = list(shapes), 0, []
        while len(ops) > 1:
            i, j = choose(ops)
            cost, result = _step(ops, i, j, out_ndim)
            total += cost
            path.append((i, j))
            ops = ops[:i] + [result] + [s for k, s in enumerate(ops) if k > i and k != j]
        return total, path

    def greedy(ops):
        def growth(pair):  # ties: the fewer multiplications
            cost, result = _step(ops, *pair, out_ndim)
            return (math.prod(result) - math.prod(ops[pair[0]]) - math.prod(ops[pair[1]]), cost)
        return min(((i, j) for i in range(len(ops)) for j in range(i + 1, len(ops))), key=growth)
    in_order, path = pairs(lambda ops: (0, 1))
    if len(shapes) > 2:
        fewer, greedy_path = pairs(greedy)
        if 2 * fewer < in_order:
            return greedy_path
    return path


def _step(shapes, i, j, out_ndim):
    """(the multiplications, the result's shape) of contracting operands i and j."""
    a, b = shapes[i], shapes[j]
    others = [s for k, s in enumerate(shapes) if k not in (i, j)]
    cost = math.prod(max(m, n) for m, n in zip(a, b))
    kept = tuple(max(a[d], b[d]) if d < out_ndim or any(s[d] != 1 for s in others) else 1
                 for d in range(len(a)))
    return cost, kept


def _label_at(order, positions, q):
    for c in order:
        if c != "." and positions[c] == q:
            return c
    return "..."


def _diagonal(t, d1, d2):
    from .shapes import diagonal
    return diagonal(t, 0, d1, d2)


def _movedim(t, source, destination):
    from .shapes import movedim
    return movedim(t, source, destination)


def _sumproduct_pair(left, right, sum_dims):
    """PyTorch's sumproduct_pair (keepdim): ``(left * right)`` summed over
    ``sum_dims`` as one batched matrix product, the summed dims kept as size 1."""
    if not sum_dims:
        return left * right
    ndim = left.ndim
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = reductions.sum(left, i, True)
            elif sr:
                right = reductions.sum(right, i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:  # (size 1 in both too)
            ro.append(i)
            ro_size *= right.shape[i]
    if lo and ro and ro[-1] < lo[0]:  # then bmm lays the result out in order
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = ([left.shape[i] for i in lro] + [left.shape[i] for i in lo]
                + [1] * len(sum_dims) + [right.shape[i] for i in ro])
    lperm = lro + lo + sum_dims + ro
    rperm = lro + sum_dims + ro + lo
    operm_of = lro + lo + sum_dims + ro
    operm = [0] * ndim
    for k, i in enumerate(operm_of):
        operm[i] = k
    left = views.reshape(views.permute(left, tuple(lperm)), (lro_size, lo_size, sum_size))
    right = views.reshape(views.permute(right, tuple(rperm)), (lro_size, sum_size, ro_size))
    result = bmm(left, right)
    return views.permute(views.view(result, tuple(out_size)), tuple(operm))


tensor_op("einsum", method=False)(einsum)
# ``nbgrad.linalg.cross`` (not a Tensor method, nor ``nbgrad.linalg_cross``)
linalg_cross_function = with_out(linalg_cross, "linalg_cross")
