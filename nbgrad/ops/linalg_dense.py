"""Dense linear algebra with gradients: inverse, determinant, solve and the
singular value decomposition (the backends' ``linalg_inv``/``linalg_det``/
``linalg_solve``/``linalg_svd``: NumPy's LAPACK on the host; CUDA arrays are
staged through host memory). Exported through ``nbgrad.linalg`` (inv, det,
solve, svd, svdvals) and as ``nbgrad.inverse``/``nbgrad.det``/``nbgrad.svd``
and the methods of those names. Backward formulas are written once against
``ops_for(grad)``; a taped backward calls these ops again (or, for the SVD,
reads its saved outputs with their history), so second derivatives come too."""
import threading

import numpy as np

from .. import dtypes
from ..tape.graph import Node, SavedTensor
from ..tensor import Tensor
from . import dual
from .arrays import ops_for
from .broadcasting import broadcast_shapes
from .reductions import _recording, _return_type
from .registry import tensor_op
from .shapes import SplitBackward, _OutputBackward


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
    if A.dtype.itemsize < 4:  # (LAPACK has no half precision; PyTorch's words differ by op)
        name = A.dtype.tensor_type[:-6]
        if fn == "linalg.inv":
            raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {name}")
        raise NotImplementedError(f'"lu_{A.device.type}" not implemented for \'{name}\'')


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



# -- singular value decomposition --------------------------------------------------
SvdResult = _return_type("linalg_svd", ("U", "S", "Vh"))
LegacySvdResult = _return_type("svd", ("U", "S", "V"))
_CUDA_SVD_DRIVERS = ("gesvd", "gesvdj", "gesvda")


def _check_svd(A, full_matrices, driver, short_input=None):
    """PyTorch's checks of linalg.svd's arguments, in its order (``short_input``:
    the message for fewer than 2 dims, torch.svd's own)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_svd(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    if type(full_matrices) is not bool:
        raise TypeError("linalg_svd(): argument 'full_matrices' must be bool, not "
                        f"{dtypes.type_name(full_matrices)}")
    if driver is not None and not isinstance(driver, str):
        raise TypeError(f"linalg_svd(): argument 'driver' must be str, not "
                        f"{dtypes.type_name(driver)}")
    if A.ndim < 2:
        raise RuntimeError(short_input or
                           "linalg.svd: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError("linalg.svd: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.tensor_type[:-6]}")
    if A.dtype.itemsize < 4:  # (LAPACK has no half precision)
        raise NotImplementedError(f'"linalg_svd_{A.device.type}" not implemented for '
                                  f"'{A.dtype.tensor_type[:-6]}'")
    if driver is not None:
        # nbgrad's CUDA tensors are factorized by LAPACK on the host: a driver
        # PyTorch accepts there is taken, and changes nothing.
        if A.device.type != "cuda":
            raise RuntimeError("nbgrad.linalg.svd: keyword argument `driver=` is only supported "
                               "on CUDA inputs with cuSOLVER backend.")
        if driver not in _CUDA_SVD_DRIVERS:
            raise RuntimeError(f"nbgrad.linalg.svd: driver must be one of "
                               f"{', '.join(_CUDA_SVD_DRIVERS)} or None, but got {driver}")


def _svd_raw(backend, a, full_matrices, compute_uv):
    """(U, S, Vh) of the matrices of ``a`` (U, Vh None without ``compute_uv``),
    raising PyTorch's LinAlgError for a matrix with a NaN."""
    u, s, vh, info = backend.linalg_svd(a, full_matrices, compute_uv)
    if s is None or np.asarray(info).any():
        _raise_singular(info, a.ndim > 2, lambda where, i: (
            f"linalg.svd: {where}The algorithm failed to converge because the input matrix "
            + ("contained non-finite values." if i == 1 else
               "is ill-conditioned or has too many repeated singular values.")))
    return u, s, vh


class LinalgSvdBackward(SplitBackward):
    """PyTorch's svd_backward, for all three outputs (U, S, Vh) at once: the
    node of each output (``_OutputBackward``) hands this one its gradient,
    and it runs once with those it got (an output without one adds no term:
    no 0 * inf where a singular value is zero). With ``full_matrices`` the
    columns of U and rows of Vh past min(m, n) get no gradient, as in PyTorch."""

    __slots__ = ("full_matrices",)

    def __init__(self, source, shapes, full_matrices):
        super().__init__(source, "LinalgSvd", shapes, None)
        self.full_matrices = full_matrices

    def receive(self, k, grad):
        # An output may have several nodes (a taped backward reads U, S, Vh
        # through fresh ones): their gradients add up.
        pending = self.pending.setdefault(threading.get_ident(), {})
        pending[k] = grad if k not in pending else ops_for(grad).run("add", pending[k], grad)

    def backward(self, flags):
        received = self.pending.pop(threading.get_ident(), {})
        flags = flags._data if flags.__class__ is Tensor else flags
        g_u, g_s, g_vh = (received.get(k) if flags[k] else None for k in range(3))
        xp = ops_for(next(g for g in (g_u, g_s, g_vh) if g is not None))
        u, s, vh = self.saved_outputs(xp.graph)
        if self.full_matrices:  # (views: a taped backward differentiates through them)
            k = s.shape[-1]
            u, vh = u[..., :, :k], vh[..., :k, :]
            g_u = None if g_u is None else g_u[..., :, :k]
            g_vh = None if g_vh is None else g_vh[..., :k, :]
        return [svd_backward(xp, g_u, g_s, g_vh, u, s, vh)]

    def saved_outputs(self, graph):
        """U, S, Vh as saved: raw arrays, or for a backward that builds a graph
        Tensors whose history is this node (through a fresh output node each)."""
        values = [saved.unpack(graph) for saved in self.saved]
        if not graph:
            return values
        return [Tensor._from_op(v, _OutputBackward(self, k, 3), dtypes.from_numpy_dtype(v.dtype),
                                self.input_meta[0].backend) for k, v in enumerate(values)]


def _eye(xp, k, dtype):
    """The k x k identity (``dtype``: bool for a mask) as a formula constant."""
    return xp.constant(xp.backend.asarray(np.eye(k, dtype=dtype)))


def svd_backward(xp, g_u, g_s, g_vh, u, s, vh):
    """The gradient of A = U diag(S) Vh (the reduced SVD, k = min(m, n)) from
    those of its factors (None: none), as PyTorch's svd_backward:
    U [(skew(U^T gU) S + S skew(Vh gVh^T)) / E + diag(gS)] Vh with
    E_ij = S_j^2 - S_i^2 (1 on the diagonal, where the skews are 0), plus the
    parts of gU (gVh) outside U's (Vh's) span when m > n (m < n)."""
    m, n = u.shape[-2], vh.shape[-1]
    raw_s = s._data if isinstance(s, Tensor) else s
    k = raw_s.shape[-1]
    mul, div = (lambda a, b: xp.run("mul", a, b)), (lambda a, b: xp.run("div", a, b))
    row, column = xp.expand_dims(s, -2), xp.expand_dims(s, -1)  # S as (.., 1, k), (.., k, 1)
    if g_u is None and g_vh is None:  # svdvals: U diag(gS) Vh
        if m >= n:
            return xp.matmul(u, mul(xp.expand_dims(g_s, -1), vh))
        return xp.matmul(mul(u, xp.expand_dims(g_s, -2)), vh)

    def skew(a):
        return xp.run("sub", a, xp.swap_last(a))
    s2 = mul(s, s)
    e = xp.where(_eye(xp, k, bool), xp.constant(xp.backend.full((), 1, raw_s.dtype)),
                 xp.run("sub", xp.expand_dims(s2, -2), xp.expand_dims(s2, -1)))
    uhgu = skew(xp.matmul(xp.swap_last(u), g_u)) if g_u is not None else None
    vhgv = skew(xp.matmul(vh, xp.swap_last(g_vh))) if g_vh is not None else None
    if uhgu is not None and vhgv is not None:
        g_a = div(xp.run("add", mul(uhgu, row), mul(column, vhgv)), e)
    elif uhgu is not None:
        g_a = mul(uhgu, div(row, e))
    else:
        g_a = mul(column, div(vhgv, e))
    if g_s is not None:
        g_a = xp.run("add", g_a, mul(xp.expand_dims(g_s, -1), _eye(xp, k, raw_s.dtype)))
    if m > n and g_u is not None:  # [U gA + (I - U U^T) gU S^-1] Vh
        g_a = xp.matmul(u, g_a)
        g_us = div(g_u, row)
        g_a = xp.run("sub", xp.run("add", g_a, g_us),
                     xp.matmul(u, xp.matmul(xp.swap_last(u), g_us)))
        return xp.matmul(g_a, vh)
    if m < n and g_vh is not None:  # U [gA Vh + S^-1 gVh (I - Vh^T Vh)]
        g_a = xp.matmul(g_a, vh)
        s_gvh = div(g_vh, column)
        g_a = xp.run("sub", xp.run("add", g_a, s_gvh),
                     xp.matmul(xp.matmul(s_gvh, xp.swap_last(vh)), vh))
        return xp.matmul(u, g_a)
    return xp.matmul(u, xp.matmul(g_a, vh)) if m >= n else xp.matmul(xp.matmul(u, g_a), vh)


def _svd(A, full_matrices):
    """U, S, Vh as Tensors sharing one LinalgSvdBackward when A is recorded."""
    backend = A._backend
    u, s, vh = (backend.ascontiguous(backend.asarray(x, A._data.dtype))
                for x in _svd_raw(backend, A._data, full_matrices, True))
    if not _recording(A):
        return tuple(Tensor._from_op(x, None, A.dtype, backend) for x in (u, s, vh))
    node = LinalgSvdBackward(A, [u.shape, s.shape, vh.shape], full_matrices)
    outs = tuple(Tensor._from_op(x, _OutputBackward(node, k, 3), A.dtype, backend)
                 for k, x in enumerate((u, s, vh)))
    node.saved = tuple(SavedTensor(t, output_of="LinalgSvd") for t in outs)
    return outs


def _each_output_by_vjp(fn, args, kwargs, out):
    """BY_VJP for every floating output of a tuple (the SVD's): the later
    ones' tangents set here, the first's returned."""
    for k in range(1, len(out)):
        tangent = dual.BY_VJP(lambda *a, k=k, **kw: fn(*a, **kw)[k], args, kwargs, out)
        if tangent is not None and out[k].dtype.is_floating_point:
            dual.set_tangent(out[k], tangent)
    return dual.BY_VJP(fn, args, kwargs, out)


@dual.tangent_rule(_each_output_by_vjp)
def linalg_svd(A, full_matrices=True, *, driver=None):
    """linalg.svd(A, full_matrices=True, *, driver=None) -> (Tensor, Tensor, Tensor)

    The singular value decomposition ``A = U diag(S) Vh`` of each matrix of
    ``A`` (..., m, n), as a named tuple ``(U, S, Vh)``: singular values
    descending, ``U`` (..., m, m) and ``Vh`` (..., n, n), or with
    ``full_matrices=False`` (..., m, k) and (..., k, n), k = min(m, n).
    Computed by LAPACK on the host (CUDA tensors are staged through host
    memory); ``driver`` (cuSOLVER's, CUDA inputs only) changes nothing. A
    matrix with a NaN raises ``nbgrad.linalg.LinAlgError``. As in PyTorch,
    gradients are defined when the singular values are distinct and, for U
    and Vh, non-zero; with ``full_matrices`` those of the columns of ``U``
    and rows of ``Vh`` past k are ignored."""
    _check_svd(A, full_matrices, driver)
    return SvdResult(*_svd(A, full_matrices))


@dual.tangent_rule(dual.BY_VJP)
def linalg_svdvals(A, *, driver=None):
    """linalg.svdvals(A, *, driver=None) -> Tensor

    The singular values of each matrix of ``A`` (..., m, n), descending
    (..., min(m, n)). The gradient is ``U diag(grad) Vh`` (defined for any
    A whose singular values are distinct)."""
    _check_svd(A, False, driver)
    if _recording(A):  # U and Vh too, for the gradient (PyTorch's computes them too)
        return _svd(A, False)[1]
    backend = A._backend
    s = _svd_raw(backend, A._data, False, False)[1]
    return Tensor._from_op(backend.ascontiguous(backend.asarray(s, A._data.dtype)), None,
                           A.dtype, backend)


@tensor_op("svd", tangent=_each_output_by_vjp)
def _legacy_svd(self, some=True, compute_uv=True):
    """svd(input, some=True, compute_uv=True) -> (Tensor, Tensor, Tensor)

    PyTorch's older form of :func:`nbgrad.linalg.svd`: a named tuple
    ``(U, S, V)`` with ``V`` (not ``Vh``; a transposed view of it); ``some``
    the reduced decomposition. Without ``compute_uv``, ``U`` and ``V`` are
    zeros of (..., m, m) and (..., n, n)."""
    if not isinstance(self, Tensor):
        raise TypeError(f"svd(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    for name, value in (("some", some), ("compute_uv", compute_uv)):
        if type(value) is not bool:
            raise TypeError(f"svd(): argument '{name}' must be bool, not "
                            f"{dtypes.type_name(value)}")
    _check_svd(self, True, None, "linalg.svd: input should have at least 2 dimensions, but has "
                                 f"{self.ndim} dimensions instead")
    if compute_uv:
        u, s, vh = _svd(self, not some)
        return LegacySvdResult(u, s, vh.mT)
    s = linalg_svdvals(self)
    backend, shape = self._backend, tuple(self.shape)
    u, v = (Tensor._from_op(backend.zeros(shape[:-2] + (n, n), self._data.dtype), None,
                            self.dtype, backend) for n in shape[-2:])
    return LegacySvdResult(u, s, v)
