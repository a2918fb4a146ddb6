"""Dense linear algebra with gradients: inverse, determinant, solve (the
backends' ``linalg_inv``/``linalg_det``/``linalg_solve``: NumPy's LAPACK on
the host; CUDA arrays are staged through host memory). Exported through
``nbgrad.linalg`` (inv, det, solve) and as ``nbgrad.inverse``/``nbgrad.det``
and the methods of those names. Backward formulas are written once against
``ops_for(grad)``; a taped backward calls these ops again, so second
derivatives come too."""
import numpy as np

from ..tape.graph import Node, SavedTensor
from ..tensor import Tensor
from . import dual
from .arrays import ops_for
from .broadcasting import broadcast_shapes
from .reductions import _recording
from .registry import tensor_op


class LinAlgError(RuntimeError):
    """A linear algebra routine failed (a singular matrix); PyTorch's
    ``torch.linalg.LinAlgError``, a RuntimeError."""


def _raw(value):
    return value._data if isinstance(value, Tensor) else value


def _check_square(A, fn):
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    rows, cols = A.shape[-2], A.shape[-1]
    if rows != cols:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {rows} by "
                           f"{cols} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype.tensor_type[:-6]}")


def _raise_singular(info, batched, message):
    """PyTorch's error for the first failed matrix (``info``: LAPACK's, per matrix)."""
    flat = np.asarray(info).reshape(-1)
    bad = int(np.flatnonzero(flat)[0])
    where = f"(Batch element {bad}): " if batched else ""
    raise LinAlgError(message(where, int(flat[bad])))


def _inv_raw(backend, a):
    """The inverses, raising PyTorch's error for a singular matrix."""
    inverse, info = backend.linalg_inv(a)
    if inverse is None or np.asarray(info).any():
        _raise_singular(info, a.ndim > 2, lambda where, i: (
            f"linalg.inv: {where}The diagonal element {i} is zero, the inversion could not be "
            "completed because the input matrix is singular."))
    return inverse


class LinalgInvExBackward(Node):
    """-inv^T @ grad @ inv^T."""

    __slots__ = ()
    op_name = "LinalgInvEx"

    def backward(self, grad):
        xp = ops_for(grad)
        (inverse,) = self.saved_values(xp.graph)
        t = xp.swap_last(inverse)
        return [xp.scale(xp.matmul(xp.matmul(t, grad), t), -1.0)]


@dual.tangent_rule(dual.BY_VJP)
def inv(A):
    """linalg.inv(A) -> Tensor

    The inverse of each square matrix of ``A`` (..., n, n); a singular one
    raises ``nbgrad.linalg.LinAlgError`` (a RuntimeError) naming the zero pivot."""
    _check_square(A, "linalg.inv")
    backend = A._backend
    data = _inv_raw(backend, A._data) if A._data.size else backend.empty(A.shape, A._data.dtype)
    data = backend.ascontiguous(backend.asarray(data, A._data.dtype))
    node = LinalgInvExBackward([A]) if _recording(A) else None
    result = Tensor._from_op(data, node, A.dtype, backend)
    if node is not None:
        node.saved = (SavedTensor(result, output_of="LinalgInvEx"),)
    return result


@tensor_op(tangent=dual.BY_VJP, out=True)
def inverse(self):
    """inverse(input) -> Tensor

    The inverse of each square matrix (``nbgrad.linalg.inv``)."""
    return inv(self)


def _adjugate_transpose(backend, a):
    """adj(A)^T (the determinant's gradient) of each matrix, singular ones too:
    from the SVD A = U S Vh, det(U) det(Vh) U diag(prod of the other s) Vh,
    on the host."""
    host = backend.to_numpy(a)
    try:
        u, s, vh = np.linalg.svd(host)
    except np.linalg.LinAlgError:  # (NaN or inf entries: no gradient to speak of)
        return backend.full(host.shape, np.nan, host.dtype)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, -1), -1) for i in range(n)], -1) if n else s
    sign = np.linalg.det(u) * np.linalg.det(vh)
    adj_t = sign[..., None, None] * np.matmul(u * others[..., None, :], vh)
    return backend.asarray(adj_t.astype(host.dtype))


class LinalgDetBackward(Node):
    """grad * det * inv(A)^T; for a singular matrix grad * adj(A)^T (by the SVD:
    a first derivative, which a taped backward uses as a constant)."""

    __slots__ = ()
    op_name = "LinalgDet"

    def backward(self, grad):
        xp = ops_for(grad)
        a, det = self.saved_values(xp.graph)
        backend = xp.backend
        scale = xp.run("mul", grad, det)
        kept = tuple(_raw(det).shape) + (1, 1)
        scale = xp.reshape(scale, kept)
        inverse, info = backend.linalg_inv(_raw(a))
        if inverse is None or np.asarray(info).any():
            adj_t = xp.constant(_adjugate_transpose(backend, _raw(a)))
            return [xp.run("mul", xp.reshape(grad, kept), adj_t)]
        inverse = inv(a) if xp.graph else inverse
        return [xp.run("mul", scale, xp.swap_last(inverse))]


@dual.tangent_rule(dual.BY_VJP)
def det(A):
    """linalg.det(A) -> Tensor

    The determinant of each square matrix of ``A`` (..., n, n)."""
    _check_square(A, "linalg.det")
    backend = A._backend
    data = backend.ascontiguous(backend.asarray(backend.linalg_det(A._data), A._data.dtype))
    node = LinalgDetBackward([A]) if _recording(A) else None
    result = Tensor._from_op(data, node, A.dtype, backend)
    if node is not None:
        node.saved = (SavedTensor(A), SavedTensor(result, output_of="LinalgDet"))
    return result


@tensor_op("det", tangent=dual.BY_VJP)
def _det(self):
    """det(input) -> Tensor

    The determinant of each square matrix (``nbgrad.linalg.det``)."""
    return det(self)


class LinalgSolveExBackward(Node):
    """grad_B = solve(A^T, grad); grad_A = -grad_B X^T."""

    __slots__ = ("vector", "left")
    op_name = "LinalgSolveEx"

    def __init__(self, inputs, vector, left=True):
        super().__init__(inputs)
        self.vector, self.left = vector, left

    def backward(self, grad):
        xp = ops_for(grad)
        a, x = self.saved_values(xp.graph)
        if not self.left:  # X A = B is A^T X^T = B^T: its gradients, transposed back
            a, x, grad = xp.swap_last(a), xp.swap_last(x), xp.swap_last(grad)
            grad_a, grad_b = self._left(xp, a, x, grad)
            return [None if grad_a is None else xp.swap_last(grad_a), xp.swap_last(grad_b)]
        return self._left(xp, a, x, grad)

    def _left(self, xp, a, x, grad):
        if self.vector:  # (..., n) as one column
            grad, x = xp.expand_dims(grad, -1), xp.expand_dims(x, -1)
        if xp.graph:
            grad_b = solve(xp.swap_last(a), grad)
        else:
            grad_b = _solve_raw(xp.backend, xp.swap_last(a), grad)
        grad_a = xp.scale(xp.matmul(grad_b, xp.swap_last(x)), -1.0) if self.needs_grad(0) \
            else None
        if self.vector:
            grad_b = xp.squeeze_dims(grad_b, (-1,) if not xp.graph else -1)
        return [grad_a, grad_b]


def _solve_raw(backend, a, b):
    x, info = backend.linalg_solve(a, b)
    if x is None or np.asarray(info).any():
        _raise_singular(info, a.ndim > 2, lambda where, i: (
            f"torch.linalg.solve: {where}The solver failed because the input matrix is "
            "singular.").replace("torch.", "nbgrad."))
    return x


@dual.tangent_rule(dual.BY_VJP)
def solve(A, B, *, left=True):
    """linalg.solve(A, B, *, left=True) -> Tensor

    X with ``A @ X = B`` (``X @ A = B`` when not ``left``) for square ``A``
    (..., n, n) and ``B`` (..., n, k), or a vector ``B`` (..., n); batch
    dims broadcast."""
    _check_square(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found A of "
                           f"type {A.dtype.tensor_type[:-6]} and B of type "
                           f"{B.dtype.tensor_type[:-6]} instead")
    if A.device != B.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                           f"devices, {A.device} and {B.device}!")
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and
                                       tuple(B.shape) == tuple(A.shape[:-1])))
    n = A.shape[-1]
    backend = A._backend
    a, b = A._data, B._data
    if not left:  # X A = B as A^T X^T = B^T
        a, b = backend.swap_last(a), backend.swap_last(b) if b.ndim >= 2 else b
    b = backend.expand_dims(b, -1) if vector else b
    if b.ndim < 2 or b.shape[-2] != n:
        shape = f"{b.shape[-2]}x{b.shape[-1]}" if b.ndim >= 2 else f"{b.shape[0]}"
        raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {shape})")
    batch = broadcast_shapes(b.shape[:-2], a.shape[:-2])  # (PyTorch's order in its error)
    a = backend.broadcast_to(a, batch + (n, n))
    b = backend.broadcast_to(b, batch + b.shape[-2:])
    data = _solve_raw(backend, a, b) if a.size and b.size else backend.zeros(b.shape, b.dtype)
    data = backend.asarray(data, A._data.dtype)
    if vector:
        data = data.reshape(data.shape[:-1])
    elif not left:
        data = backend.swap_last(data)
    data = backend.ascontiguous(data)
    recording = _recording(A) or _recording(B)
    node = LinalgSolveExBackward([A, B], vector, left) if recording else None
    result = Tensor._from_op(data, node, A.dtype, backend)
    if node is not None:
        node.saved = (SavedTensor(A), SavedTensor(result, output_of="LinalgSolveEx"))
    return result
