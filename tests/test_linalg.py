"""nbgrad.linalg (nbgrad/linalg.py; nbgrad/ops/linalg_dense.py): inv, det,
solve against PyTorch (values, node names, gradients, second derivatives,
errors incl. singular matrices); the norms are in tests/ops/test_statistics.py.
CUDA tensors are staged through host memory: a few cases on every device."""
import numpy as np
import pytest
import torch

import nbgrad
from helpers import (assert_close, assert_same_error, dtype_name, lib_of, node_name,
                     second_derivatives_like_torch)
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {"inverse", "det", "linalg.inv", "linalg.det", "linalg.solve",
              "linalg.vector_norm", "linalg.matrix_norm", "linalg.norm"}

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
