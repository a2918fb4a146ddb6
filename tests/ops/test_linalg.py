"""``matmul``/``@``/``mm`` (nbgrad/ops/linalg.py) against PyTorch and NumPy:
every operand-rank form, batch broadcasting, gradients (also by finite
differences), backward node names and PyTorch's error texts."""

import re

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import nbgrad
from helpers import (MIXED, assert_same_error, cuda_only, dtype_name, lib_of, node_name,
                     raises_like_torch, run_like_torch, values)
from nbgrad.autograd import gradcheck

TESTED_OPS = {"matmul", "mm"}  # tests/ops/test_exports.py


SHAPES = [
    ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
    ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((3, 4), (5, 4, 6)),
    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)),
    ((2, 1, 2, 3), (4, 3, 2)), ((4, 1, 2, 3), (1, 5, 3, 2)), ((2, 1, 3), (2, 3, 1)),
    ((1, 3), (2, 3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((2, 0, 3), (3, 2)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("requires", ["both", "left", "right"])
@pytest.mark.parametrize("shapes", SHAPES, ids=[f"{a}@{b}" for a, b in SHAPES])
def test_matmul_matches_torch(shapes, requires, dtype):
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s) for s in shapes]
    flags = {"both": (True, True), "left": (True, False), "right": (False, True)}[requires]
    results = []
    for lib in (nbgrad, torch):
        a, b = (lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=f)
                for x, f in zip(arrays, flags))
        y = a @ b
        w = lib.tensor(np.linspace(-1, 2, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
        (y * w).sum().backward()
        results.append((y, a, b))
    (y, a, b), (ty, ta, tb) = results
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-5, 1e-5)
    assert tuple(y.shape) == tuple(ty.shape)
    assert dtype_name(y.dtype) == dtype
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=rtol, atol=atol)
    assert node_name(y.grad_fn) == node_name(ty.grad_fn)
    for ours, theirs in ((a, ta), (b, tb)):
        assert (ours.grad is None) == (theirs.grad is None)
        if ours.grad is not None:
            assert ours.grad.shape == ours.shape
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("call", ["operator", "method", "function"])
def test_matmul_spellings_agree(call):
    a = nbgrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = nbgrad.tensor([[5.0], [6.0]])
    y = {"operator": lambda: a @ b, "method": lambda: a.matmul(b),
         "function": lambda: nbgrad.matmul(a, b)}[call]()
    np.testing.assert_array_equal(y.detach().numpy(), [[17.0], [39.0]])
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[5.0, 6.0], [5.0, 6.0]])


def test_mm():
    for lib in (nbgrad, torch):
        a = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        b = lib.tensor([[1.0], [0.0], [-1.0]], requires_grad=True)
        y = lib.mm(a, b) + a.mm(b)
        y.backward(lib.ones(1, 1))
        np.testing.assert_array_equal(a.grad.numpy(), [[2.0, 0.0, -2.0]])
        np.testing.assert_array_equal(b.grad.numpy(), [[2.0], [4.0], [6.0]])
        assert node_name(lib.mm(a, b).grad_fn) == "MmBackward"


def test_integer_matmul():
    for lib in (nbgrad, torch):
        y = lib.arange(6).reshape(2, 3) @ lib.arange(3)
        assert dtype_name(y.dtype) == "int64" and not y.requires_grad
        np.testing.assert_array_equal(y.numpy(), [5, 14])


# Operands whose products include -0: PyTorch's gemm over one term (more than
# one row and column), ger and mul give the products themselves; its sums
# (and gemv) add them to +0.
ZERO_SIGN_CASES = [
    ("mm-one-term", [[-1.0], [2.0]], [[0.0, -0.0, 1.0]]),
    ("mm-one-term-one-row", [[-1.0]], [[0.0, -0.0, 1.0]]),
    ("mm-one-row", [[-1.0, 2.0, 1.0]], [[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]]),
    ("mm", [[-1.0, 2.0], [1.0, -1.0]], [[1.0, -1.0, 1.0], [1.0, 1.0, -1.0]]),
    ("vm", [-1.0, 2.0], [[1.0, -1.0, 1.0], [1.0, 1.0, -1.0]]),
    ("vm-one-term", [-1.0], [[1.0, -1.0, 1.0]]),
    ("mv-one-row", [[-1.0, -2.0, 3.0]], [1.0, -1.0, 1.0]),
    ("mv", [[-1.0, -2.0], [3.0, 1.0]], [1.0, -1.0]),
    ("dot-one-term", [-1.0], [1.0]), ("dot", [-1.0, 2.0], [1.0, -1.0]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a, b", [c[1:] for c in ZERO_SIGN_CASES],
                         ids=[c[0] for c in ZERO_SIGN_CASES])
def test_signs_of_zero_match_torch(a, b, dtype):
    """The product of a zero operand, and the gradients of a zero upstream gradient."""
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=True)
        zero = x.detach() * 0
        out = (zero @ y.detach(), x @ y)
        (out[1] * 0).sum().backward()
        results.append([np.signbit(t.detach().numpy()).tolist() for t in (out[0], x.grad, y.grad)])
    assert results[0] == results[1]


BOOL_SHAPES = [((0,), (0, 3)), ((3,), (3, 0)), ((0, 3), (3,)), ((2, 0), (0,)), ((2, 0), (0, 3)),
               ((0, 3), (3, 2)), ((2, 3, 0), (0, 3)), ((0, 2, 3), (3,)), ((2, 0, 3), (2, 3, 2)),
               ((3, 0), (1, 0, 3)), ((0,), (2, 0, 3)), ((2, 3), (3, 2)), ((3,), (3,)),
               ((0,), (0,)), ((2, 2, 3), (2, 3, 2)), ((2, 3), (3,)), ((2, 3, 2), (2,))]


@pytest.mark.parametrize("shapes", BOOL_SHAPES, ids=[f"{a}@{b}" for a, b in BOOL_SHAPES])
def test_bool_matmul_only_of_empty_operands(shapes):
    """PyTorch has no bool matmul kernel, but mm/mv/bmm return (False) before
    reaching it when an operand is empty; dot always refuses."""
    def product(lib):
        a, b = (lib.tensor(np.arange(np.prod(s)).reshape(s) % 2 == 0) for s in shapes)
        return a @ b
    if 0 in shapes[0] + shapes[1] and shapes != ((0,), (0,)):
        ours, theirs = product(nbgrad), product(torch)
        assert dtype_name(ours.dtype) == "bool" and tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    else:
        assert_same_error(product)


def test_result_is_a_new_tensor():
    a, b = nbgrad.ones(2, 2), nbgrad.ones(2, 2)
    y = a @ b
    a.add_(1.0)
    assert y._version == 0 and (y.numpy() == 2).all()


@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)),
                                    ((2, 2, 3), (3, 2)), ((3, 2), (2, 2, 3)), ((2, 1, 1, 2), (3, 2, 2))],
                         ids=["mm", "dot", "mv", "vm", "batched-matrix", "matrix-batched", "broadcast"])
def test_gradcheck(shapes):
    rng = np.random.default_rng(7)
    a, b = (nbgrad.tensor(rng.standard_normal(s), dtype=nbgrad.float64, requires_grad=True)
            for s in shapes)
    assert gradcheck(lambda a, b: a @ b, (a, b))
    assert gradcheck(lambda a, b: (a @ b) * (a @ b), (a, b))  # the graph is reused by both factors


@given(st.data())
def test_batch_broadcasting_matches_numpy(data):
    ndim_a, ndim_b = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    batch = data.draw(st.lists(st.integers(1, 3), min_size=2, max_size=2))
    n, k, m = (data.draw(st.integers(1, 3)) for _ in range(3))

    def shape(ndim, last2):
        if ndim == 1:
            return (last2[0] if last2 == (k, m) else last2[1],)
        lead = [b if data.draw(st.booleans()) else 1 for b in batch[-(ndim - 2):]] if ndim > 2 else []
        return tuple(lead) + last2

    sa, sb = shape(ndim_a, (n, k)), shape(ndim_b, (k, m))
    rng = np.random.default_rng(8)
    a_np, b_np = rng.standard_normal(sa), rng.standard_normal(sb)
    a = nbgrad.tensor(a_np, dtype=nbgrad.float64, requires_grad=True)
    b = nbgrad.tensor(b_np, dtype=nbgrad.float64, requires_grad=True)
    y = a @ b
    expected = np.matmul(a_np, b_np)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y.detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    y.sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    ta, tb = torch.tensor(a_np, requires_grad=True), torch.tensor(b_np, requires_grad=True)
    (ta @ tb).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


ERRORS = [
    ("mm-shapes", lambda L: L.zeros(2, 3) @ L.zeros(2, 3)),
    ("mm-function", lambda L: L.mm(L.zeros(2, 3), L.zeros(2, 3))),
    ("mv-shapes", lambda L: L.zeros(2, 3) @ L.zeros(4)),
    ("dot-shapes", lambda L: L.zeros(3) @ L.zeros(4)),
    ("vm-shapes", lambda L: L.zeros(3) @ L.zeros(4, 5)),
    ("batched-shapes", lambda L: L.zeros(2, 3, 4) @ L.zeros(2, 5, 6)),
    ("folded-shapes", lambda L: L.zeros(2, 3, 4) @ L.zeros(5, 6)),
    ("folded-vector-shapes", lambda L: L.zeros(2, 3, 4) @ L.zeros(5)),
    ("batch-broadcast", lambda L: L.zeros(2, 3, 4) @ L.zeros(3, 4, 6)),
    ("batch-broadcast-inner", lambda L: L.zeros(2, 3, 1, 4) @ L.zeros(5, 4, 6)),
    ("batch-broadcast-empty", lambda L: L.zeros(0, 3) @ L.zeros(0, 2, 3)),
    ("batch-broadcast-empty-left", lambda L: L.zeros(0, 2, 3) @ L.zeros(1, 0, 3)),
    ("left-0d", lambda L: L.tensor(2.0) @ L.zeros(2, 3)),
    ("right-0d", lambda L: L.zeros(2, 3) @ L.tensor(2.0)),
    ("mm-dtype", lambda L: L.zeros(2, 3) @ L.zeros(3, 2, dtype=L.float64)),
    ("mm-int-float", lambda L: L.zeros(2, 3, dtype=L.int64) @ L.zeros(3, 2)),
    ("dot-dtype", lambda L: L.zeros(3) @ L.zeros(3, dtype=L.int64)),
    ("mv-dtype", lambda L: L.zeros(2, 3) @ L.zeros(3, dtype=L.float64)),
    ("vm-dtype", lambda L: L.zeros(3, dtype=L.float64) @ L.zeros(3, 2)),
    ("batched-dtype", lambda L: L.zeros(4, 2, 3) @ L.zeros(4, 3, 2, dtype=L.float64)),
    ("folded-dtype", lambda L: L.zeros(4, 2, 3) @ L.zeros(3, 2, dtype=L.float64)),
    ("mm-not-matrix", lambda L: L.mm(L.zeros(3), L.zeros(3, 2))),
    ("mm-mat2-not-matrix", lambda L: L.mm(L.zeros(2, 3), L.zeros(3))),
    ("mm-batched", lambda L: L.mm(L.zeros(2, 2, 3), L.zeros(3, 2))),
]


@pytest.mark.parametrize("fn", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_match_torch(fn):
    assert_same_error(fn)


def test_error_texts():
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 2x3\)$"):
        nbgrad.ones(2, 3) @ nbgrad.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"^both arguments to matmul need to be at least 1D, "
                                           r"but they are 0D and 1D$"):
        nbgrad.tensor(1.0) @ nbgrad.ones(3)
    with pytest.raises(RuntimeError, match=r"^expected m1 and m2 to have the same dtype, but got: "
                                           r"float != double$"):
        nbgrad.ones(2, 3) @ nbgrad.ones(3, 2, dtype=nbgrad.float64)


@pytest.mark.parametrize("fn", [
    lambda L: L.matmul(L.zeros(2, 3), [1.0, 2.0, 3.0]),
    lambda L: L.matmul([1.0, 2.0], L.zeros(2, 3)),
    lambda L: L.zeros(2, 3) @ [1.0, 2.0, 3.0],
    lambda L: L.mm(L.zeros(2, 2), [[1.0], [2.0]]),
], ids=["function-right", "function-left", "operator", "mm"])
def test_non_tensor_operands_raise_type_error(fn):
    assert_same_error(fn, exact=False)


def test_failed_matmul_records_nothing():
    a = nbgrad.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        a @ nbgrad.ones(2, 3)
    (a * 1).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((2, 3)))


# ------------------------------------------------------------ on every device
FORMS = {
    "dot": ((3,), (3,)), "mv": ((2, 3), (3,)), "vm": ((3,), (3, 2)), "mm": ((2, 3), (3, 4)),
    "batched-vector": ((2, 2, 3), (3,)), "vector-batched": ((3,), (2, 3, 2)),
    "folded": ((2, 2, 3), (3, 2)), "folded-left": ((2, 3), (2, 3, 2)),
    "bmm": ((2, 2, 3), (2, 3, 1)), "broadcast-batch": ((2, 1, 2, 3), (3, 3, 2)),
}


@pytest.mark.parametrize("dtype", [nbgrad.float32, nbgrad.float64], ids=dtype_name)
@pytest.mark.parametrize("form", sorted(FORMS))
def test_matmul_forms_on_the_device_match_torch(form, dtype, device):
    a_shape, b_shape = FORMS[form]
    out, want = run_like_torch(lambda a, b: a @ b, values(a_shape, 1), values(b_shape, 2),
                               device=device, dtype=dtype)
    assert node_name(out.grad_fn) == node_name(want.grad_fn)


def test_matmul_of_strided_views_and_mm_on_the_device_match_torch(device):
    run_like_torch(lambda a, b: a.t() @ b[:, ::2], values((3, 2), 3), values((3, 4), 4),
                   device=device)
    run_like_torch(lambda a, b: lib_of(a).Tensor.mm(a, b.mT), values((2, 3), 5), values((4, 3), 6),
                   device=device)
    run_like_torch(lambda a, b: b.__rmatmul__(a), values((2, 3), 7), values((3,), 8),
                   device=device)


def test_matmul_with_one_operand_requiring_grad_matches_torch(device):
    def fn(a):
        other = lib_of(a).tensor(values((3, 2), 9), dtype=a.dtype, device=a.device)
        return (a @ other) + (other.t() @ a.t()).t()
    run_like_torch(fn, values((2, 3), 10), device=device)


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((3,), (4,)), ((2, 3), (4,)),
                                    ((2, 2, 3), (2, 2, 3)), ((3, 2, 3), (2, 3, 2))],
                         ids=["mm", "dot", "mv", "bmm", "batch"])
def test_matmul_shape_errors_on_the_device_match_torch(shapes, device):
    raises_like_torch(lambda a, b: a @ b, values(shapes[0], 1), values(shapes[1], 2),
                      device=device)


@cuda_only
def test_matmul_of_tensors_on_two_devices_is_refused(device):
    a, b = nbgrad.ones(2, 2, device=device), nbgrad.ones(2, 2)
    for call, devices in ((lambda: a @ b, ("cuda:0", "cpu")), (lambda: b @ a, ("cpu", "cuda:0"))):
        with pytest.raises(RuntimeError, match=f"^{re.escape(MIXED.format(*devices))}$"):
            call()
