"""nbgrad.linalg (nbgrad/linalg.py; nbgrad/ops/linalg_dense.py): inv, det,
solve, svd, svdvals (and nbgrad.svd) against PyTorch (values, node names,
gradients, second derivatives, errors incl. singular matrices and NaNs), and
the matrix norms that take singular values ('nuc', 2, -2); the other norms are
in tests/ops/test_statistics.py. CUDA tensors are staged through host memory:
a few cases on every device."""
import numpy as np
import pytest
import torch

import nbgrad
from helpers import (assert_close, assert_same_error, dtype_name, lib_of, node_name,
                     on_device, second_derivatives_like_torch)
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {"inverse", "det", "linalg.inv", "linalg.det", "linalg.solve",
              "linalg.vector_norm", "linalg.matrix_norm", "linalg.norm", "svd", "linalg.svd",
              "linalg.svdvals"}

RNG = np.random.default_rng(17)
A3 = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
BATCH = RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)
B = RNG.standard_normal((3, 2))
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])

CASES = [
    ("inv", lambda L, a, b: L.linalg.inv(a), A3, None),
    ("inv-batch", lambda L, a, b: L.linalg.inv(a), BATCH, None),
    ("inverse-method", lambda L, a, b: a.inverse(), A3, None),
    ("inverse-function", lambda L, a, b: L.inverse(a), BATCH, None),
    ("det", lambda L, a, b: L.linalg.det(a), A3, None),
    ("det-batch", lambda L, a, b: L.det(a), BATCH, None),
    ("det-method", lambda L, a, b: a.det(), A3, None),
    ("solve", lambda L, a, b: L.linalg.solve(a, b), A3, B),
    ("solve-vector", lambda L, a, b: L.linalg.solve(a, b[:, 0]), A3, B),
    ("solve-batch-broadcast", lambda L, a, b: L.linalg.solve(a, b), BATCH, B),
    ("solve-right", lambda L, a, b: L.linalg.solve(a, b.t(), left=False), A3, B),
]


def run(lib, fn, a, b, dtype="float64", device="cpu"):
    extra = {"device": device} if lib is nbgrad else {}
    ta = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True, **extra)
    tb = None if b is None else lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=True,
                                           **extra)
    out = fn(lib, ta, tb)
    w = lib.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype,
                   **extra)
    (out * w).sum().backward()
    return out, ta, tb


@pytest.mark.parametrize("fn,a,b", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_like_torch(fn, a, b):
    for dtype in ("float64", "float32"):
        (out, ta, tb), (want, wa, wb) = (run(lib, fn, a, b, dtype) for lib in (nbgrad, torch))
        assert dtype_name(out.dtype) == dtype_name(want.dtype)
        assert node_name(out.grad_fn) == node_name(want.grad_fn)
        rtol = None if dtype == "float64" else 1e-4
        assert_close(out, want, rtol=rtol, atol=rtol)
        assert_close(ta.grad, wa.grad, rtol=rtol, atol=rtol)
        if tb is not None:
            assert_close(tb.grad, wb.grad, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("fn,a,b", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradients_by_finite_differences(fn, a, b):
    inputs = [nbgrad.tensor(x, dtype=nbgrad.float64, requires_grad=True)
              for x in (a, b) if x is not None]

    def f(*ts):
        return fn(nbgrad, ts[0], ts[1] if len(ts) > 1 else None)
    assert gradcheck(f, tuple(inputs))
    assert gradgradcheck(f, tuple(inputs))


def test_second_derivatives_like_torch():
    second_derivatives_like_torch(lambda a: lib_of(a).linalg.inv(a), A3)
    second_derivatives_like_torch(lambda a: lib_of(a).linalg.det(a), BATCH)
    second_derivatives_like_torch(lambda a, b: lib_of(a).linalg.solve(a, b), A3, B)


def test_det_gradient_of_singular_matrix():
    # The cofactor matrix, as finite differences say; PyTorch 2.13 gives zeros
    # here (grad * det * inv(A)^T with det == 0): a difference on purpose.
    a = nbgrad.tensor(SINGULAR, requires_grad=True)
    det = nbgrad.linalg.det(a)
    det.backward()
    assert det.item() == 0.0
    cofactors = np.array([[-2.0, -2.0, 2.0], [1.0, 1.0, -1.0], [0.0, 0.0, 0.0]])
    assert_close(a.grad, cofactors, atol=1e-12)
    assert gradcheck(nbgrad.linalg.det, (nbgrad.tensor(SINGULAR, requires_grad=True),))


def test_singular_errors():
    for fn in (lambda L, a: L.linalg.inv(a),
               lambda L, a: L.linalg.solve(a, L.ones(*a.shape[:-1], 2))):
        for make in (lambda L: L.tensor(SINGULAR, dtype=L.float32),
                     lambda L: L.stack([L.eye(3), L.tensor(SINGULAR, dtype=L.float32)])):
            with pytest.raises(torch.linalg.LinAlgError) as theirs:
                fn(torch, make(torch))
            with pytest.raises(nbgrad.linalg.LinAlgError) as ours:
                fn(nbgrad, make(nbgrad))
            assert isinstance(ours.value, RuntimeError)
            assert str(ours.value) == str(theirs.value).replace("torch.", "nbgrad.")


ERRORS = [
    ("inv-not-square", lambda L: L.linalg.inv(L.ones(2, 3))),
    ("inv-1d", lambda L: L.linalg.inv(L.ones(3))),
    ("inv-int", lambda L: L.linalg.inv(L.ones(3, 3, dtype=L.int64))),
    ("det-not-square", lambda L: L.det(L.ones(2, 3))),
    ("det-int", lambda L: L.linalg.det(L.ones(3, 3, dtype=L.int64))),
    ("solve-shapes", lambda L: L.linalg.solve(L.eye(3), L.ones(4, 2))),
    ("solve-dtypes", lambda L: L.linalg.solve(L.eye(3), L.ones(3, 2, dtype=L.float64))),
    ("solve-batch-shapes", lambda L: L.linalg.solve(L.ones(2, 3, 3), L.ones(4, 3, 2))),
    ("inv-half", lambda L: L.linalg.inv(L.ones(3, 3, dtype=L.float16))),
    ("det-half", lambda L: L.linalg.det(L.ones(3, 3, dtype=L.float16))),
    ("solve-half", lambda L: L.linalg.solve(L.ones(3, 3, dtype=L.float16),
                                            L.ones(3, dtype=L.float16))),
    ("svd-1d", lambda L: L.linalg.svd(L.ones(3))),
    ("svd-int", lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.int64))),
    ("svd-bool", lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.bool))),
    ("svd-half", lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.float16))),
    ("svd-list", lambda L: L.linalg.svd([[1.0]])),
    ("svd-full_matrices-int", lambda L: L.linalg.svd(L.ones(3, 3), full_matrices=1)),
    ("svd-driver-int", lambda L: L.linalg.svd(L.ones(3, 3), driver=3)),
    ("svd-driver-on-cpu", lambda L: L.linalg.svd(L.ones(3, 3), driver="gesvd")),
    ("svd-driver-positional", lambda L: L.linalg.svd(L.ones(3, 3), True, "gesvd")),
    ("svdvals-1d", lambda L: L.linalg.svdvals(L.ones(3))),
    ("svdvals-int", lambda L: L.linalg.svdvals(L.ones(2, 3, dtype=L.int32))),
    ("svdvals-driver-on-cpu", lambda L: L.linalg.svdvals(L.ones(3, 3), driver="gesvdj")),
    ("legacy-svd-1d", lambda L: L.svd(L.ones(3))),
    ("legacy-svd-list", lambda L: L.svd([[1.0]])),
    ("legacy-svd-int", lambda L: L.ones(2, 2, dtype=L.int64).svd()),
    ("legacy-svd-compute_uv-int", lambda L: L.svd(L.ones(2, 2), compute_uv=1)),
    ("nuc-int", lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.int64), "nuc")),
    ("nuc-int-with-dtype", lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.int64), "nuc",
                                                          dtype=L.float64)),
    ("two-int-dtype", lambda L: L.linalg.matrix_norm(L.ones(3, 3), 2, dtype=L.int64)),
    ("nuc-half", lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.float16), "nuc")),
    ("minus-two-empty", lambda L: L.linalg.matrix_norm(L.ones(0, 3), -2)),
    ("norm-nuc-3d", lambda L: L.norm(L.ones(2, 3, 3), "nuc")),
    ("linalg.norm-nuc-1d", lambda L: L.linalg.norm(L.ones(3), "nuc")),
    ("linalg.norm-two-3d", lambda L: L.linalg.norm(L.ones(2, 3, 3), 2)),
]


@pytest.mark.parametrize("fn", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_like_torch(fn):
    assert_same_error(fn)


def test_empty_matrices():
    assert nbgrad.linalg.inv(nbgrad.ones(0, 0)).shape == (0, 0)
    assert nbgrad.linalg.det(nbgrad.ones(0, 0)).item() == 1.0


@pytest.mark.parametrize("name", ["inv-batch", "det", "solve-vector"])
def test_devices(name, device):
    fn, a, b = next(c[1:] for c in CASES if c[0] == name)
    (out, ta, tb), (want, wa, wb) = run(nbgrad, fn, a, b, device=device), run(torch, fn, a, b)
    assert out.device.type == ta.grad.device.type == nbgrad.device(device).type
    assert node_name(out.grad_fn) == node_name(want.grad_fn)
    assert_close(out, want)
    assert_close(ta.grad, wa.grad)
    if tb is not None:
        assert_close(tb.grad, wb.grad)


def test_forward_mode_like_torch():
    from ops.test_statistics import forward_mode_like_torch
    v = RNG.standard_normal((3, 3))
    forward_mode_like_torch(lambda L, a: L.linalg.inv(a), A3, v)
    forward_mode_like_torch(lambda L, a: L.linalg.det(a), A3, v)
    forward_mode_like_torch(lambda L, a: L.linalg.solve(a, a[:, :2] * 2 + 1), A3, v)



# -- singular value decomposition ---------------------------------------------------
def separated(shape, seed=5):
    """Matrices of ``shape`` with well-separated singular values (k+1, ..., 2)
    and random singular vectors: gradients of the SVD are well conditioned."""
    rng = np.random.default_rng(seed)
    m, n = shape[-2:]
    k = min(m, n)
    q1 = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, m)))[0]
    q2 = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))[0]
    s = np.zeros(shape)
    s[..., range(k), range(k)] = np.arange(k, 0, -1) + 1.0
    return q1 @ s @ q2


def sign_free(L, U, S, Vh):
    """Functions of the factors that do not depend on the signs LAPACK picks
    for the singular vectors (so nbgrad's and torch's gradients compare)."""
    k = S.shape[-1]
    u, vh = U[..., :, :k], Vh[..., :k, :]
    where = on_device(L, U.device)
    w = L.tensor(np.linspace(-1.0, 2.0, u.shape[-2] ** 2).reshape(u.shape[-2], -1),
                 dtype=U.dtype, **where)
    return ((u @ u.mT) * w).sum() + (vh ** 4).sum() + (u * S.unsqueeze(-2) ** 2 @ vh).sum() \
        + (S * L.arange(1, k + 1, dtype=S.dtype, **where)).sum()


SVD_SHAPES = [(4, 3), (3, 4), (3, 3), (2, 4, 3), (2, 3, 5)]


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
def test_svd_like_torch(shape, full_matrices):
    a = RNG.standard_normal(shape)
    k = min(shape[-2:])
    for dtype in ("float64", "float32"):
        tol = None if dtype == "float64" else 1e-4
        results = {}
        for L in (nbgrad, torch):
            A = L.tensor(a, dtype=getattr(L, dtype), requires_grad=True)
            result = L.linalg.svd(A, full_matrices=full_matrices)
            sign_free(L, *result).backward()
            results[L] = result, A.grad
        (ours, grad), (theirs, want) = results[nbgrad], results[torch]
        assert type(ours).__name__ == "linalg_svd" and ours._fields == ("U", "S", "Vh")
        for x, y in zip(ours, theirs, strict=True):
            assert tuple(x.shape) == tuple(y.shape)
            assert dtype_name(x.dtype) == dtype_name(y.dtype)
            assert node_name(x.grad_fn) == node_name(y.grad_fn)
        U, S, Vh = (x.detach().numpy() for x in ours)
        tU, tS, tVh = (x.detach().numpy() for x in theirs)
        kind = getattr(nbgrad, dtype)
        assert_close(S, tS, kind, rtol=tol, atol=tol)
        assert_close((U[..., :k] * S[..., None, :]) @ Vh[..., :k, :], a, kind, tol, tol)
        for q in (U.swapaxes(-1, -2), Vh):  # orthogonal
            assert_close(q @ q.swapaxes(-1, -2), np.broadcast_to(
                np.eye(q.shape[-2]), q.shape[:-1] + q.shape[-2:-1]), kind, tol, tol)
        # the same singular vectors as torch's, up to sign
        for mine, ref in ((U[..., :k], tU[..., :k]), (Vh[..., :k, :].swapaxes(-1, -2),
                                                      tVh[..., :k, :].swapaxes(-1, -2))):
            overlap = np.abs(mine.swapaxes(-1, -2) @ ref)
            assert_close(overlap, np.broadcast_to(np.eye(k), overlap.shape), kind, 1e-3, 1e-3)
        assert_close(grad, want, rtol=tol, atol=tol)


def test_svdvals_like_torch():
    for dtype in ("float64", "float32"):
        for a in (BATCH, B, RNG.standard_normal((2, 1, 2, 4))):
            results = [run(lib, lambda L, x, _: L.linalg.svdvals(x), a, None, dtype)
                       for lib in (nbgrad, torch)]
            (out, ta, _), (want, wa, _) = results
            assert dtype_name(out.dtype) == dtype_name(want.dtype)
            assert node_name(out.grad_fn) == node_name(want.grad_fn) == "LinalgSvdBackward"
            tol = None if dtype == "float64" else 1e-4
            assert_close(out, want, rtol=tol, atol=tol)
            assert_close(ta.grad, wa.grad, rtol=tol, atol=tol)
    # without gradients, the values alone
    assert_close(nbgrad.linalg.svdvals(nbgrad.tensor(B)), torch.linalg.svdvals(torch.tensor(B)))


def test_legacy_svd_like_torch():
    a = RNG.standard_normal((2, 4, 3))
    for kwargs in ({}, {"some": False}, {"compute_uv": False}):
        results = {}
        for L in (nbgrad, torch):
            A = L.tensor(a, requires_grad=True)
            result = L.svd(A, **kwargs) if L is nbgrad else A.svd(**kwargs)
            (result.S * L.tensor([1.0, 2.0, 3.0])).sum().backward()
            results[L] = result, A.grad
        (ours, grad), (theirs, want) = results[nbgrad], results[torch]
        assert type(ours).__name__ == "svd" and ours._fields == ("U", "S", "V")
        for x, y in zip(ours, theirs, strict=True):
            assert tuple(x.shape) == tuple(y.shape)
            assert node_name(x.grad_fn) == node_name(y.grad_fn)
        assert_close(ours.S, theirs.S)
        assert_close(grad, want)
        if kwargs.get("compute_uv", True):  # V is Vh transposed: A = U diag(S) V^T
            U, S, V = (x.detach().numpy() for x in ours)
            assert_close((U[..., :3] * S[..., None, :]) @ V.swapaxes(-1, -2), a, nbgrad.float64)
        else:
            assert not ours.U.numpy().any() and not ours.V.numpy().any()


SVD_FUNCTIONS = [
    ("svdvals", lambda A: nbgrad.linalg.svdvals(A)),
    ("svd-reduced", lambda A: sign_free(nbgrad, *nbgrad.linalg.svd(A, full_matrices=False))),
    ("svd-full", lambda A: sign_free(nbgrad, *nbgrad.linalg.svd(A))),
    ("legacy-svd-V", lambda A: (A.svd().V ** 2).sum(-1)),
]


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (2, 2, 2)], ids=str)
@pytest.mark.parametrize("fn", [f[1] for f in SVD_FUNCTIONS], ids=[f[0] for f in SVD_FUNCTIONS])
def test_svd_gradients_by_finite_differences(fn, shape):
    a = nbgrad.tensor(separated(shape), requires_grad=True)
    assert gradcheck(fn, (a,))
    assert gradgradcheck(fn, (a,))


def test_svd_second_derivatives_like_torch():
    a = separated((2, 4, 3))
    second_derivatives_like_torch(lambda t: lib_of(t).linalg.svdvals(t), a)
    second_derivatives_like_torch(lambda t: sign_free(lib_of(t), *lib_of(t).linalg.svd(t)), a)
    second_derivatives_like_torch(lambda t: lib_of(t).linalg.matrix_norm(t, "nuc"), a)


def test_svd_of_a_zero_singular_value():
    # Only S used: U diag(gS) Vh, no division by the zero singular value
    # (the largest one's gradient: the other's vectors are any pair of the null spaces)
    a = nbgrad.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]], requires_grad=True)
    nbgrad.linalg.svd(a).S[0].backward()
    want = torch.tensor(a.detach().numpy(), requires_grad=True)
    torch.linalg.svd(want).S[0].backward()
    assert np.isfinite(a.grad.numpy()).all()
    assert_close(a.grad, want.grad)


def test_svd_nan_errors():
    nan = [[1.0, float("nan")], [0.0, 1.0]]
    for fn in (lambda L, a: L.linalg.svd(a), lambda L, a: L.linalg.svdvals(a),
               lambda L, a: L.linalg.matrix_norm(a, 2)):
        for make in (lambda L: L.tensor(nan), lambda L: L.stack([L.eye(2), L.tensor(nan)])):
            with pytest.raises(torch.linalg.LinAlgError) as theirs:
                fn(torch, make(torch))
            with pytest.raises(nbgrad.linalg.LinAlgError) as ours:
                fn(nbgrad, make(nbgrad))
            assert str(ours.value) == str(theirs.value)
    # an inf gives NaNs, as LAPACK gives PyTorch
    inf = [[1.0, float("inf")], [0.0, 1.0]]
    assert np.isnan(nbgrad.linalg.svdvals(nbgrad.tensor(inf)).numpy()).all()
    assert np.isnan(torch.linalg.svdvals(torch.tensor(inf)).numpy()).all()


def test_svd_of_empty_matrices():
    for shape in [(0, 3), (3, 0), (2, 0, 0), (0, 2, 2)]:
        for full_matrices in (True, False):
            ours = nbgrad.linalg.svd(nbgrad.ones(*shape), full_matrices=full_matrices)
            theirs = torch.linalg.svd(torch.ones(*shape), full_matrices=full_matrices)
            for x, y in zip(ours, theirs, strict=True):
                assert_close(x, y)
        a = nbgrad.ones(*shape, requires_grad=True)
        nbgrad.linalg.matrix_norm(a, "nuc").sum().backward()
        assert_close(a.grad, np.zeros(shape))
        assert_close(nbgrad.linalg.matrix_norm(nbgrad.ones(*shape), 2),
                     torch.linalg.matrix_norm(torch.ones(*shape), 2))


# -- the matrix norms of singular values ----------------------------------------------
NORMS = [
    ("nuc", lambda L, x: L.linalg.matrix_norm(x, "nuc")),
    ("two", lambda L, x: L.linalg.matrix_norm(x, 2)),
    ("minus-two", lambda L, x: L.linalg.matrix_norm(x, -2)),
    ("nuc-dims", lambda L, x: L.linalg.matrix_norm(x, "nuc", dim=(2, 0))),
    ("two-float-keepdim", lambda L, x: L.linalg.matrix_norm(x, 2.0, keepdim=True)),
    ("minus-two-dims-keepdim", lambda L, x: L.linalg.matrix_norm(x, -2, (0, 2), True)),
    ("nuc-keepdim", lambda L, x: L.linalg.matrix_norm(x, "nuc", (-1, -2), keepdim=True)),
    ("nuc-dtype", lambda L, x: L.linalg.matrix_norm(x.float(), "nuc", dtype=L.float64)),
    ("linalg.norm-nuc", lambda L, x: L.linalg.norm(x[0], "nuc")),
    ("linalg.norm-two", lambda L, x: L.linalg.norm(x[1], 2)),
    ("linalg.norm-minus-two-dim", lambda L, x: L.linalg.norm(x, -2, dim=(1, 2))),
    ("norm-nuc", lambda L, x: L.norm(x[0], "nuc")),
    ("norm-nuc-method-dims", lambda L, x: x.norm("nuc", dim=(0, 2), keepdim=True)),
]
NORM_DATA = RNG.standard_normal((2, 3, 4))


@pytest.mark.parametrize("fn", [n[1] for n in NORMS], ids=[n[0] for n in NORMS])
def test_singular_value_norms_like_torch(fn):
    (out, ta, _), (want, wa, _) = (run(lib, lambda L, x, _: fn(L, x), NORM_DATA, None)
                                   for lib in (nbgrad, torch))
    assert tuple(out.shape) == tuple(want.shape)
    assert dtype_name(out.dtype) == dtype_name(want.dtype)
    assert node_name(out.grad_fn) == node_name(want.grad_fn)
    assert_close(out, want)
    assert_close(ta.grad, wa.grad)


@pytest.mark.parametrize("name", ["nuc", "two", "minus-two-dims-keepdim"])
def test_singular_value_norms_by_finite_differences(name):
    fn = next(n[1] for n in NORMS if n[0] == name)
    x = nbgrad.tensor(separated((3, 2, 3)).transpose(1, 0, 2), requires_grad=True)
    assert gradcheck(lambda t: fn(nbgrad, t), (x,))
    assert gradgradcheck(lambda t: fn(nbgrad, t), (x,))


@pytest.mark.parametrize("name", ["svd", "svdvals", "legacy-svd", "nuc", "two-keepdim"])
def test_svd_devices(name, device):
    fns = {"svd": lambda L, x: sign_free(L, *L.linalg.svd(x)),
           "svdvals": lambda L, x: L.linalg.svdvals(x),
           "legacy-svd": lambda L, x: L.svd(x, some=False).S,
           "nuc": lambda L, x: L.linalg.matrix_norm(x, "nuc"),
           "two-keepdim": lambda L, x: L.linalg.matrix_norm(x, 2, (0, 2), True)}
    fn = fns[name]
    a = separated((2, 4, 3))
    (out, ta, _), (want, wa, _) = run(nbgrad, lambda L, x, _: fn(L, x), a, None,
                                      device=device), run(torch, lambda L, x, _: fn(L, x), a, None)
    assert out.device.type == ta.grad.device.type == nbgrad.device(device).type
    assert node_name(out.grad_fn) == node_name(want.grad_fn)
    assert_close(out, want)
    assert_close(ta.grad, wa.grad)


def test_svd_driver_on_cuda(device):
    if device != "cuda":
        pytest.skip("cuSOLVER's drivers are for CUDA inputs")
    a = nbgrad.tensor(B, device=device)
    for driver in ("gesvd", "gesvdj", "gesvda"):
        assert_close(nbgrad.linalg.svd(a, False, driver=driver).S, torch.linalg.svdvals(
            torch.tensor(B)))
    with pytest.raises(RuntimeError, match="driver"):
        nbgrad.linalg.svdvals(a, driver="lapack")


def test_svd_forward_mode_like_torch():
    from ops.test_statistics import forward_mode_like_torch
    a, v = separated((3, 4)), RNG.standard_normal((3, 4))
    forward_mode_like_torch(lambda L, x: L.linalg.svdvals(x), a, v)
    forward_mode_like_torch(lambda L, x: L.linalg.svd(x).S, a, v)
    forward_mode_like_torch(lambda L, x: L.linalg.matrix_norm(x, "nuc"), a, v)
