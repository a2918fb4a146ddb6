"""Linear-algebra products of issue 15 (nbgrad/ops/products.py) against
PyTorch: values, dtypes, shapes, strides, backward node names (the
composites' last part's, as PyTorch's), gradients (gradcheck and second
derivatives in float64), forward mode, errors, out=, a few CUDA cases."""
import warnings

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.linalg
from helpers import (assert_close, assert_same_error, cuda_only, dtype_name, node_name,
                     second_derivatives_like_torch, values)
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {"bmm", "baddbmm", "addmm", "addmv", "mv", "dot", "vdot", "outer", "ger",
              "einsum", "tensordot", "kron", "cross"}

NP_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}


def make(lib, spec, seed, device="cpu"):
    """A leaf from ``spec``: a shape (float64) or (shape, dtype)."""
    shape, dtype = (spec, "float64") if not spec or isinstance(spec[0], int) else spec
    data = values(shape, seed=seed)
    data = (data > 0) if dtype == "bool" else (data * 3 if dtype == "int64" else data)
    data = data.astype(NP_DTYPES[dtype])
    if lib is torch:
        t = torch.tensor(data, dtype=getattr(torch, dtype))
    else:
        t = nbgrad.tensor(data, dtype=getattr(nbgrad, dtype), device=device)
    return t.requires_grad_(True) if dtype.startswith("float") else t


def F32(*shape):
    return (shape, "float32")


def I64(*shape):
    return (shape, "int64")


def linalg_cross(L, a, b, **kw):
    return L.linalg.cross(a, b, **kw)


# (id, fn(lib, *inputs), input specs)
CASES = [
    ("bmm", lambda L, a, b: L.bmm(a, b), [(4, 2, 3), (4, 3, 5)]),
    ("bmm-method", lambda L, a, b: a.bmm(b), [F32(2, 2, 3), F32(2, 3, 1)]),
    ("bmm-transposed", lambda L, a, b: L.bmm(a.transpose(1, 2), b), [(2, 3, 2), (2, 3, 4)]),
    ("bmm-int", lambda L, a, b: L.bmm(a, b), [I64(2, 2, 3), I64(2, 3, 2)]),
    ("bmm-empty", lambda L, a, b: L.bmm(a, b), [(2, 3, 0), (2, 0, 4)]),
    ("baddbmm", lambda L, c, a, b: L.baddbmm(c, a, b), [(4, 2, 5), (4, 2, 3), (4, 3, 5)]),
    ("baddbmm-broadcast", lambda L, c, a, b: L.baddbmm(c, a, b, beta=0.5, alpha=-2),
     [(5,), (4, 2, 3), (4, 3, 5)]),
    ("baddbmm-beta0", lambda L, c, a, b: c.baddbmm(a, b, beta=0), [(1, 5), (4, 2, 3), (4, 3, 5)]),
    ("addmm", lambda L, c, a, b: L.addmm(c, a, b), [(2, 4), (2, 3), (3, 4)]),
    ("addmm-bias", lambda L, c, a, b: L.addmm(c, a, b, beta=2, alpha=0.5), [(4,), (2, 3), (3, 4)]),
    ("addmm-method", lambda L, c, a, b: c.addmm(a, b, alpha=3), [F32(2, 1), F32(2, 3), F32(3, 4)]),
    ("addmm-beta0", lambda L, c, a, b: L.addmm(c, a, b, beta=0), [(2, 4), (2, 3), (3, 4)]),
    ("addmm-transposed", lambda L, c, a, b: L.addmm(c, a.t(), b.t()), [(4,), (3, 2), (4, 3)]),
    ("addmm-int", lambda L, c, a, b: L.addmm(c, a, b, beta=2, alpha=3),
     [I64(4), I64(2, 3), I64(3, 4)]),
    ("addmv", lambda L, c, a, b: L.addmv(c, a, b), [(2,), (2, 3), (3,)]),
    ("addmv-scaled", lambda L, c, a, b: c.addmv(a, b, beta=-1, alpha=2), [(1,), (2, 3), (3,)]),
    ("addmv-0d", lambda L, c, a, b: L.addmv(c, a, b, beta=0.5), [(), (2, 3), (3,)]),
    ("mv", lambda L, a, b: L.mv(a, b), [(2, 3), (3,)]),
    ("mv-method-transposed", lambda L, a, b: a.t().mv(b), [F32(3, 2), F32(3)]),
    ("mv-int", lambda L, a, b: L.mv(a, b), [I64(2, 3), I64(3)]),
    ("dot", lambda L, a, b: L.dot(a, b), [(3,), (3,)]),
    ("dot-method", lambda L, a, b: a.dot(b), [F32(4), F32(4)]),
    ("dot-int", lambda L, a, b: L.dot(a, b), [I64(4), I64(4)]),
    ("dot-strided", lambda L, a, b: L.dot(a[::2], b), [(6,), (3,)]),
    ("vdot", lambda L, a, b: L.vdot(a, b), [(3,), (3,)]),
    ("vdot-method", lambda L, a, b: a.vdot(b), [F32(2), F32(2)]),
    ("outer", lambda L, a, b: L.outer(a, b), [(3,), (4,)]),
    ("outer-promotes", lambda L, a, b: a.outer(b), [F32(3), (2,)]),
    ("ger", lambda L, a, b: L.ger(a, b), [(3,), (2,)]),
    ("outer-int", lambda L, a, b: L.outer(a, b), [I64(3), I64(2)]),
    ("tensordot", lambda L, a, b: L.tensordot(a, b), [(2, 3, 4), (3, 4, 5)]),
    ("tensordot-1", lambda L, a, b: L.tensordot(a, b, 1), [(2, 3), (3, 4)]),
    ("tensordot-0", lambda L, a, b: L.tensordot(a, b, dims=0), [(2, 3), (2,)]),
    ("tensordot-lists", lambda L, a, b: L.tensordot(a, b, ([0, 2], [1, 0])), [(2, 3, 4), (4, 2)]),
    ("tensordot-negative", lambda L, a, b: L.tensordot(a, b, ([-1], [0])), [(2, 3), (3, 2)]),
    ("tensordot-all", lambda L, a, b: L.tensordot(a, b, 2), [(2, 3), (2, 3)]),
    ("kron", lambda L, a, b: L.kron(a, b), [(2, 3), (3, 2)]),
    ("kron-ranks", lambda L, a, b: a.kron(b), [(3,), (2, 2)]),
    ("kron-promotes", lambda L, a, b: L.kron(a, b), [I64(2), (2, 1)]),
    ("kron-0d", lambda L, a, b: L.kron(a, b), [(), (2,)]),
    ("cross", lambda L, a, b: L.cross(a, b, dim=1), [(4, 3), (4, 3)]),
    ("cross-method", lambda L, a, b: a.cross(b, 0), [(3, 2), (3, 2)]),
    ("linalg.cross", lambda L, a, b: linalg_cross(L, a, b), [(2, 3), (1, 3)]),
    ("linalg.cross-dim", lambda L, a, b: linalg_cross(L, a, b, dim=0), [(3, 2), (3, 2)]),
    ("linalg.cross-int", lambda L, a, b: linalg_cross(L, a, b), [I64(3), I64(3)]),
]

EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(2, 2, 3), (3, 2, 3, 4)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("iij->j", [(3, 3, 2)]),
    ("iii->i", [(3, 3, 3)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("i->", [(3,)]),
    ("...->...", [(2, 3)]),
    ("i...->...", [(2, 3)]),
    ("...i->", [(2, 3)]),
    ("ab,ba->", [(2, 3), (3, 2)]),
    ("i j->j i", [(2, 3)]),
    ("Ab->bA", [(2, 3)]),
    ("Zz,z->Z", [(2, 3), (3,)]),
    ("i,i->i", [(1,), (3,)]),
    ("ij,j->i", [(2, 1), (3,)]),
    ("i->i", [(3,)]),
    ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("i...i", [(2, 3, 2)]),
    ("ijk,ikl,ilm->ijm", [(2, 2, 3), (2, 3, 4), (2, 4, 2)]),
    ("ij,kl->ijkl", [(2, 3), (2, 2)]),
    ("iijj->", [(2, 2, 3, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
    ("ij,jk->ik", [F32(2, 3), F32(3, 4)]),
    ("ij,jk->ik", [I64(2, 3), I64(3, 4)]),
    ("i,j->ij", [F32(3), (2,)]),
    ("ij,jk,k->i", [(3, 4), (4, 5), (5,)]),
    ("a,ab,bc,c->", [(2,), (2, 3), (3, 4), (4,)]),
    ("ij,kl,jl->ik", [(2, 3), (4, 5), (3, 5)]),
    ("ij->...ij", [(2, 3)]),
    ("ba,Ab", [(2, 3), (3, 2)]),
    (" i , j -> j i ", [(2,), (3,)]),
    ("bij,bkj->bki", [(2, 3, 4), (2, 5, 4)]),
]
CASES += [(f"einsum-{eq}-{k}", lambda L, *ts, eq=eq: L.einsum(eq, *ts), specs)
          for k, (eq, specs) in enumerate(EINSUM)]
CASES += [
    ("einsum-list", lambda L, a, b: L.einsum("ij,jk", [a, b]), [(2, 3), (3, 4)]),
    ("einsum-sublist", lambda L, a, b: L.einsum(a, [0, 1], b, [1, 2], [0, 2]), [(2, 3), (3, 4)]),
    ("einsum-sublist-ellipsis", lambda L, a, b: L.einsum(a, [..., 1], b, [1, ...]),
     [(2, 3), (3, 2)]),
]


def run_both(fn, specs, device="cpu"):
    results = {}
    for lib in (nbgrad, torch):
        leaves = [make(lib, s, seed=k, device=device) for k, s in enumerate(specs)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results[lib] = leaves, fn(lib, *leaves)
    return results


@pytest.mark.parametrize("fn, specs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_torch(fn, specs):
    """Values, dtype, shape, strides, node name, view or not, gradients."""
    results = run_both(fn, specs)
    (leaves, y), (tleaves, ty) = results[nbgrad], results[torch]
    assert dtype_name(y.dtype) == dtype_name(ty.dtype)
    assert tuple(y.shape) == tuple(ty.shape)
    assert_close(y.detach(), ty.detach(), rtol=1e-5 if y.dtype is nbgrad.float32 else 1e-10)
    if ty.numel() > 1:
        assert y.stride() == ty.stride()
    assert node_name(y.grad_fn) == node_name(ty.grad_fn)
    assert (y._base is not None) == (ty._base is not None)
    if ty.requires_grad:
        for lib, out in ((nbgrad, y), (torch, ty)):
            (out * lib.tensor(values(tuple(out.shape), seed=9), dtype=out.dtype)).sum().backward()
        for x, tx in zip(leaves, tleaves):
            assert (x.grad is None) == (tx.grad is None)
            if x.grad is not None:
                assert_close(x.grad, tx.grad, rtol=1e-5 if x.dtype is nbgrad.float32 else 1e-10)


GRADCHECK = [c for c in CASES if all(not s or isinstance(s[0], int) for s in c[2])]


@pytest.mark.parametrize("fn, specs", [c[1:] for c in GRADCHECK], ids=[c[0] for c in GRADCHECK])
def test_gradcheck(fn, specs):
    leaves = [make(nbgrad, s, seed=k) for k, s in enumerate(specs)]

    def f(*xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(nbgrad, *xs)
    assert gradcheck(f, leaves)
    assert gradgradcheck(f, leaves)


FORWARD_MODE = ["bmm", "baddbmm-broadcast", "addmm-bias", "addmv-scaled", "mv", "dot", "vdot",
                "outer", "tensordot-lists", "kron", "cross", "linalg.cross",
                "einsum-bn,anm,bm->ba-18", "einsum-iij->j-15", "einsum-...ij,...jk-11"]


@pytest.mark.parametrize("fn, specs", [c[1:] for c in CASES if c[0] in FORWARD_MODE],
                         ids=[c[0] for c in CASES if c[0] in FORWARD_MODE])
def test_forward_mode_like_torch(fn, specs):
    import nbgrad.autograd.forward_ad as ng_ad
    import torch.autograd.forward_ad as torch_ad
    results = []
    for lib, ad in ((nbgrad, ng_ad), (torch, torch_ad)):
        duals = []
        with ad.dual_level():
            for k, s in enumerate(specs):
                primal = make(lib, s, seed=k).detach()
                tangent = lib.tensor(values(tuple(primal.shape), seed=20 + k))
                duals.append(ad.make_dual(primal, tangent))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(ad.unpack_dual(fn(lib, *duals)).tangent)
    assert_close(results[0], results[1])


def test_cross_without_dim_warns_and_takes_the_first_dim_of_size_3():
    for lib in (nbgrad, torch):
        a, b = lib.tensor(values((2, 3, 3))), lib.tensor(values((2, 3, 3), seed=1))
        with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
            y = lib.cross(a, b)
        assert_close(y, torch.linalg.cross(torch.tensor(values((2, 3, 3))),
                                           torch.tensor(values((2, 3, 3), seed=1)), dim=1))


def test_beta_zero_ignores_nan_in_input():
    for lib in (nbgrad, torch):
        c = lib.full((2, 2), float("nan"))
        y = lib.addmm(c, lib.ones(2, 3), lib.ones(3, 2), beta=0)
        np.testing.assert_array_equal(y.numpy(), np.full((2, 2), 3.0))


@pytest.mark.parametrize("fn", [
    lambda L, o: L.bmm(L.ones(2, 2, 3), L.ones(2, 3, 1), out=o),
    lambda L, o: L.baddbmm(L.ones(2, 1, 1), L.ones(2, 1, 3), L.ones(2, 3, 1), alpha=2, out=o),
    lambda L, o: L.addmm(L.ones(1), L.ones(2, 3), L.ones(3, 2), beta=3, out=o),
    lambda L, o: L.addmv(L.ones(2), L.ones(2, 3), L.ones(3), out=o),
    lambda L, o: L.mv(L.ones(2, 3), L.ones(3), out=o),
    lambda L, o: L.dot(L.ones(3), L.ones(3), out=o),
    lambda L, o: L.vdot(L.ones(3), L.ones(3), out=o),
    lambda L, o: L.outer(L.ones(3), L.ones(2), out=o),
    lambda L, o: L.tensordot(L.ones(2, 3), L.ones(3, 2), 1, out=o),
    lambda L, o: L.kron(L.ones(2), L.ones(3), out=o),
    lambda L, o: L.cross(L.ones(3), L.arange(3.0), dim=0, out=o),
    lambda L, o: L.linalg.cross(L.ones(3), L.arange(3.0), out=o),
], ids=["bmm", "baddbmm", "addmm", "addmv", "mv", "dot", "vdot", "outer", "tensordot", "kron",
        "cross", "linalg.cross"])
def test_out(fn):
    results = []
    for lib in (nbgrad, torch):
        o = lib.zeros(0)
        assert fn(lib, o) is o
        results.append(o)
    assert tuple(results[0].shape) == tuple(results[1].shape)
    assert_close(results[0], results[1])


def test_out_refuses_autograd():
    assert_same_error(lambda L: L.mm(L.ones(2, 2, requires_grad=True), L.ones(2, 2),
                                     out=L.zeros(2, 2)))
    assert_same_error(lambda L: L.bmm(L.ones(1, 2, 2, requires_grad=True), L.ones(1, 2, 2),
                                      out=L.zeros(1, 2, 2)))


def z(L, *shape, dtype="float32"):
    return L.zeros(*shape, dtype=getattr(L, dtype))


ERRORS = [
    lambda L: L.bmm(z(L, 2, 3), z(L, 3, 4)),
    lambda L: L.bmm(z(L, 5, 2, 3), z(L, 3, 4)),
    lambda L: L.bmm(z(L, 5, 2, 3), z(L, 5, 2, 3)),
    lambda L: L.bmm(z(L, 5, 2, 3), z(L, 4, 3, 4)),
    lambda L: L.bmm(z(L, 5, 2, 3), z(L, 5, 3, 4, dtype="float64")),
    lambda L: L.bmm(z(L, 5, 2, 3, dtype="bool"), z(L, 5, 3, 4, dtype="bool")),
    lambda L: L.bmm(z(L, 5, 2, 3), [1]),
    lambda L: L.baddbmm(z(L, 3), z(L, 5, 2, 3), z(L, 5, 3, 4)),
    lambda L: L.baddbmm(z(L, 5, 2, 4), z(L, 5, 2, 3, dtype="float64"), z(L, 5, 3, 4)),
    lambda L: L.baddbmm(z(L, 5, 2, 4, dtype="float64"), z(L, 5, 2, 3), z(L, 5, 3, 4)),
    lambda L: L.baddbmm(z(L, 5, 2, 4), z(L, 5, 2, 3), z(L, 5, 3, 4, dtype="float64")),
    lambda L: L.baddbmm(z(L, 5, 2, 4), z(L, 2, 3), z(L, 5, 3, 4)),
    lambda L: L.baddbmm(z(L, 5, 2, 4), z(L, 5, 2, 3), z(L, 3, 4)),
    lambda L: L.baddbmm(z(L, 5, 2, 4), z(L, 5, 2, 3), z(L, 4, 3, 4)),
    lambda L: L.baddbmm(z(L, 5, 2, 4), z(L, 5, 2, 3), z(L, 5, 4, 4)),
    lambda L: L.addmm(z(L, 4), z(L, 2, 3), z(L, 2, 3)),
    lambda L: L.addmm(z(L, 4), z(L, 3), z(L, 3, 4)),
    lambda L: L.addmm(z(L, 4), z(L, 2, 3), z(L, 3)),
    lambda L: L.addmm(z(L, 5), z(L, 2, 3), z(L, 3, 4)),
    lambda L: L.addmm(z(L, 2, 2, 4), z(L, 2, 3), z(L, 3, 4)),
    lambda L: L.addmm(z(L, 4), z(L, 2, 3, dtype="float64"), z(L, 3, 4)),
    lambda L: L.addmm(z(L, 4, dtype="float64"), z(L, 2, 3, dtype="float64"), z(L, 3, 4)),
    lambda L: L.addmm(z(L, 4), z(L, 2, 3), z(L, 3, 4, dtype="float64")),
    lambda L: L.addmm(z(L, 4, dtype="float64"), z(L, 2, 3), z(L, 3)),
    lambda L: L.addmm(z(L, 4, dtype="bool"), z(L, 2, 3, dtype="bool"), z(L, 3, 4, dtype="bool")),
    lambda L: L.addmv(z(L, 2), z(L, 2, 3), z(L, 4)),
    lambda L: L.addmv(z(L, 3), z(L, 2, 3), z(L, 3)),
    lambda L: L.addmv(z(L, 2), z(L, 2, 3), z(L, 3, 4)),
    lambda L: L.addmv(z(L, 2, 2), z(L, 2, 3), z(L, 3)),
    lambda L: L.addmv(z(L, 2), z(L, 2, 3, dtype="float64"), z(L, 3)),
    lambda L: L.addmv(z(L, 2, dtype="float64"), z(L, 2, 3), z(L, 3)),
    lambda L: L.mv(z(L, 2, 3), z(L, 4)),
    lambda L: L.mv(z(L, 3), z(L, 3)),
    lambda L: L.mv(z(L, 2, 3), z(L, 3, 4)),
    lambda L: L.mv(z(L, 2, 3), z(L, 3, dtype="float64")),
    lambda L: L.mv(z(L, 2, 3, dtype="bool"), z(L, 3, dtype="bool")),
    lambda L: L.dot(z(L, 2, 2), z(L, 2, 2)),
    lambda L: L.dot(z(L), z(L, 3)),
    lambda L: L.dot(z(L, 3), z(L, 4)),
    lambda L: L.dot(z(L, 3), z(L, 4, dtype="float64")),
    lambda L: L.dot(z(L, 3, dtype="bool"), z(L, 3, dtype="bool")),
    lambda L: L.dot(z(L, 3), 1),
    lambda L: L.vdot(z(L, 2, 2), z(L, 2, 2)),
    lambda L: L.vdot(z(L, 3), z(L, 4)),
    lambda L: L.vdot(z(L, 3, dtype="bool"), z(L, 3, dtype="bool")),
    lambda L: L.outer(z(L, 2, 3), z(L, 4)),
    lambda L: L.outer(z(L, 3), z(L, 2, 2)),
    lambda L: L.outer(z(L, 3), z(L)),
    lambda L: L.tensordot(z(L, 2, 3), z(L, 3, 4), -1),
    lambda L: L.tensordot(z(L, 2, 3), z(L, 3, 4), 3),
    lambda L: L.tensordot(z(L, 2, 3), z(L, 3, 4), ([0, 1], [0])),
    lambda L: L.tensordot(z(L, 2, 3), z(L, 3, 4), ([2], [0])),
    lambda L: L.tensordot(z(L, 2, 3), z(L, 3, 4), ([1], [1])),
    lambda L: L.tensordot(z(L, 2, 3), z(L, 3, 4, dtype="float64"), 1),
    lambda L: L.linalg.cross(z(L, 3, 2), z(L, 3, 2)),
    lambda L: L.linalg.cross(z(L, 3, 3), z(L, 2, 3)),
    lambda L: L.linalg.cross(z(L, 3, 3), z(L, 3)),
    lambda L: L.linalg.cross(z(L, 2, 3), z(L, 2, 3), dim=0),
    lambda L: L.linalg.cross(z(L, 3, 3), z(L, 3, 3, dtype="float64")),
    lambda L: L.cross(z(L, 3, 3), z(L, 3, 3), dim=2),
    lambda L: L.cross(z(L, 3, 3), z(L, 3, 3), 5),
    lambda L: L.einsum("ij,jk->ik", z(L, 2, 3), z(L, 4, 4)),
    lambda L: L.einsum("ij->k", z(L, 2, 3)),
    lambda L: L.einsum("ij,jk", z(L, 2, 3)),
    lambda L: L.einsum("ij", z(L, 2, 3), z(L, 2)),
    lambda L: L.einsum("ijk->ij", z(L, 2, 3)),
    lambda L: L.einsum("ij->ii", z(L, 2, 2)),
    lambda L: L.einsum("ii->i", z(L, 2, 3)),
    lambda L: L.einsum("i.->i", z(L, 2)),
    lambda L: L.einsum("i$->i", z(L, 2)),
    lambda L: L.einsum("......", z(L, 2)),
    lambda L: L.einsum("ij,jk->ik", z(L, 2, 3), z(L, 3, 4, dtype="float64")),
    lambda L: L.einsum("i,i", z(L, 3, dtype="bool"), z(L, 3, dtype="bool")),
    lambda L: L.einsum("i"),
    lambda L: L.einsum("...b,b...", z(L, 2, 3), z(L, 3, 4)),
    lambda L: L.einsum("a...b,b...", z(L, 5, 2, 3), z(L, 3, 4)),
    lambda L: L.einsum(z(L, 2), [52]),
    lambda L: L.einsum("...i->......", z(L, 2, 3)),
    lambda L: L.einsum("ij->i.j", z(L, 2, 3)),
    lambda L: L.einsum("i->i.", z(L, 2, 3)),
    lambda L: L.einsum("ijk...->", z(L, 2, 3)),
    lambda L: L.einsum("i->ij", z(L, 2)),
    lambda L: L.einsum(z(L, 2), [0], [0, 0]),
    lambda L: L.einsum("...i.", z(L, 2)),
    lambda L: L.einsum("i j,k$->", z(L, 2), z(L, 2)),
    lambda L: L.einsum("i..", z(L, 2)),
    lambda L: L.einsum("i", 1),
]


@pytest.mark.parametrize("fn", ERRORS, ids=[f"error-{k}" for k in range(len(ERRORS))])
def test_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(fn)


CUDA_CASES = ["bmm", "baddbmm-broadcast", "addmm-bias", "addmv", "dot", "outer", "tensordot",
              "kron", "linalg.cross", "einsum-bn,anm,bm->ba-18", "einsum-iij->j-15"]


@pytest.mark.cuda
@pytest.mark.parametrize("fn, specs", [c[1:] for c in CASES if c[0] in CUDA_CASES],
                         ids=[c[0] for c in CASES if c[0] in CUDA_CASES])
def test_cuda_matches_torch(fn, specs):
    results = run_both(fn, specs, device="cuda")
    (leaves, y), (tleaves, ty) = results[nbgrad], results[torch]
    assert y.device.type == "cuda"
    assert_close(y.detach().cpu(), ty.detach())
    for lib, out in ((nbgrad, y), (torch, ty)):
        w = lib.tensor(values(tuple(out.shape), seed=9), dtype=out.dtype)
        (out * (w.to("cuda") if lib is nbgrad else w)).sum().backward()
    for x, tx in zip(leaves, tleaves):
        assert x.grad.device.type == "cuda"
        assert_close(x.grad.cpu(), tx.grad)


@pytest.mark.parametrize("fn, specs", [
    (lambda s, a, b: s.addmm_(a, b), [(2, 4), (2, 3), (3, 4)]),
    (lambda s, a, b: s.addmm_(a, b, beta=0.5, alpha=-2), [(2, 4), (2, 3), (3, 4)]),
    (lambda s, a, b: s.addmv_(a, b, alpha=3), [(2,), (2, 3), (3,)]),
    (lambda s, a, b: s.baddbmm_(a, b, beta=2), [(3, 2, 4), (3, 2, 3), (3, 3, 4)]),
    (lambda s, a, b: s[1:].addmm_(a, b), [(3, 4), (2, 3), (3, 4)]),
], ids=["addmm_", "addmm_-scaled", "addmv_", "baddbmm_", "addmm_-view"])
def test_in_place_like_torch(fn, specs):
    results = []
    for lib in (nbgrad, torch):
        leaves = [make(lib, s, seed=k) for k, s in enumerate(specs)]
        self = leaves[0] * 1
        r = fn(self, *leaves[1:])
        assert self._version == 1
        results.append((self, leaves, node_name(self.grad_fn)))
        (self * lib.tensor(values(tuple(self.shape), seed=5))).sum().backward()
    (y, leaves, name), (ty, tleaves, tname) = results
    assert name == tname
    assert_close(y.detach(), ty.detach())
    for x, tx in zip(leaves, tleaves):
        assert_close(x.grad, tx.grad)


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(4).addmm_(L.ones(2, 3), L.ones(3, 4)),
    lambda L: L.zeros(1).addmv_(L.ones(2, 3), L.ones(3)),
    lambda L: L.zeros(1, 2, 4).baddbmm_(L.ones(3, 2, 3), L.ones(3, 3, 4)),
    lambda L: L.zeros(2, 4, dtype=L.float64).addmm_(L.ones(2, 3), L.ones(3, 4)),
    lambda L: L.zeros(2, 4, requires_grad=True).addmm_(L.ones(2, 3), L.ones(3, 4)),
])
def test_in_place_errors_match_torch(fn):
    assert_same_error(fn)


SECOND = ["bmm", "baddbmm-broadcast", "addmm-bias", "addmv-scaled", "mv", "dot", "outer",
          "tensordot-lists", "kron", "linalg.cross", "einsum-bn,anm,bm->ba-18",
          "einsum-iij->j-15"]


@pytest.mark.parametrize("fn, specs", [c[1:] for c in CASES if c[0] in SECOND],
                         ids=[c[0] for c in CASES if c[0] in SECOND])
def test_second_derivatives_like_torch(fn, specs):
    arrays = [values(s, seed=k) for k, s in enumerate(specs)]

    def f(*xs):
        return fn(torch if isinstance(xs[0], torch.Tensor) else nbgrad, *xs)
    second_derivatives_like_torch(f, *arrays)


@cuda_only
def test_cuda_in_place_addmm(device):
    s = nbgrad.tensor(values((2, 4)), device=device, requires_grad=True)
    a = nbgrad.tensor(values((2, 3), seed=1), device=device, requires_grad=True)
    b = nbgrad.tensor(values((3, 4), seed=2), device=device)
    y = s * 1
    y.addmm_(a, b, beta=0.5, alpha=2)
    y.sum().backward()
    ts, ta, tb = (torch.tensor(values(shape, seed=k)) for k, shape in
                  enumerate(((2, 4), (2, 3), (3, 4))))
    assert y.device.type == "cuda"
    assert_close(y.detach().cpu(), torch.addmm(ts, ta, tb, beta=0.5, alpha=2))
    assert_close(s.grad.cpu(), np.full((2, 4), 0.5))
    assert_close(a.grad.cpu(), 2 * np.ones((2, 4)) @ values((3, 4), seed=2).T)
