"""The everyday ops of issue 15's breadth item (nbgrad/ops/everyday_math.py,
nbgrad/ops/everyday_shapes.py) against PyTorch: values, dtypes, gradients
(and gradcheck in float64), views, errors (and that a refused call changes
nothing), on every device."""
import warnings

import numpy as np
import pytest
import torch

import nbgrad
from helpers import (assert_same_error, assert_same_tensor, lib_of, on_device, run_like_torch,
                     second_derivatives_like_torch, values)
from nbgrad.autograd import forward_ad, gradcheck

TESTED_OPS = {"diff", "trace", "logcumsumexp", "logspace", "cov", "corrcoef", "bincount", "isin",
              "rot90", "diagflat", "tensor_split", "hsplit", "vsplit", "dsplit", "block_diag",
              "cartesian_prod", "combinations", "tril_indices", "triu_indices", "select",
              "where", "mH", "H", "adjoint", "sum_to_size", "is_signed", "is_nonzero",
              "is_same_size", "get_device", "is_cpu", "quantile", "nanquantile", "unfold",
              "index_put", "put", "fill_diagonal_"}


def L(t):
    return lib_of(t)


def _ix(a, index):
    """An int64 index tensor on ``a``'s device, in ``a``'s library."""
    return L(a).tensor(index, device=a.device)


# (id, fn(*leaves), input shapes): differentiable, compared with torch
DIFFERENTIABLE = [
    ("diff", lambda a: L(a).diff(a), [(3, 4)]),
    ("diff-n2-dim0-prepend-append", lambda a, b: L(a).diff(a, n=2, dim=0, prepend=b, append=a),
     [(3, 4), (1, 4)]),
    ("diff-n-past-length", lambda a: a.diff(n=5), [(2, 3)]),
    ("trace", lambda a: L(a).trace(a), [(3, 4)]),
    ("trace-method", lambda a: a.trace(), [(4, 2)]),
    ("logcumsumexp", lambda a: L(a).logcumsumexp(a * 30, 1), [(3, 4)]),
    ("logcumsumexp-dim0-method", lambda a: a.logcumsumexp(-2), [(3, 2)]),
    ("cov", lambda a: L(a).cov(a), [(3, 5)]),
    ("cov-1d-correction0", lambda a: a.cov(correction=0), [(5,)]),
    ("cov-aweights", lambda a, w: L(a).cov(a, aweights=w + 3), [(2, 4), (4,)]),
    ("cov-fweights-aweights", lambda a, w: L(a).cov(
        a, fweights=_ix(a, [1, 0, 3, 2]), aweights=w + 3, correction=2), [(2, 4), (4,)]),
    ("corrcoef", lambda a: L(a).corrcoef(a), [(3, 5)]),
    ("rot90", lambda a: L(a).rot90(a), [(3, 4)]),
    ("rot90-k2", lambda a: a.rot90(2, [1, 2]), [(2, 3, 4)]),
    ("rot90-k-1-dims-reversed", lambda a: L(a).rot90(a, -1, [1, 0]), [(3, 4)]),
    ("rot90-k4", lambda a: L(a).rot90(a, 4), [(2, 3)]),
    ("diagflat", lambda a: L(a).diagflat(a), [(2, 2)]),
    ("diagflat-offset", lambda a: a.diagflat(-1), [(3,)]),
    ("tensor_split-sections", lambda a: L(a).stack(
        [p.sum(1) for p in L(a).tensor_split(a, 3, dim=1)]), [(2, 7)]),
    ("tensor_split-indices", lambda a: L(a).cat(
        [p * (k + 1) for k, p in enumerate(a.tensor_split([1, -1, 8]))]), [(5, 2)]),
    ("hsplit", lambda a: L(a).hsplit(a, 2)[1], [(2, 4)]),
    ("vsplit", lambda a: a.vsplit([1])[1], [(3, 2)]),
    ("dsplit", lambda a: L(a).dsplit(a, 3)[2], [(2, 1, 3)]),
    ("block_diag", lambda a, b, c: L(a).block_diag(a, b, c), [(2, 3), (4,), ()]),
    ("cartesian_prod", lambda a, b: L(a).cartesian_prod(a, b), [(3,), (2,)]),
    ("combinations", lambda a: L(a).combinations(a), [(4,)]),
    ("combinations-r3-replacement", lambda a: L(a).combinations(a, 3, True), [(3,)]),
    ("select", lambda a: a.select(1, -1), [(3, 4)]),
    ("select-function", lambda a: L(a).select(a, 0, 2), [(3, 4)]),
    ("where-method", lambda a, b: a.where(a > 0, b), [(3, 4), (4,)]),
    ("mH", lambda a: a.mH, [(2, 3, 4)]),
    ("H", lambda a: a.H, [(3, 4)]),
    ("adjoint", lambda a: L(a).adjoint(a), [(2, 3, 4)]),
    ("sum_to_size", lambda a: a.sum_to_size(3, 1), [(2, 3, 4)]),
    ("sum_to_size-list", lambda a: a.sum_to_size([1, 4]), [(3, 4)]),
    ("quantile", lambda a: L(a).quantile(a, 0.3), [(3, 4)]),
    ("quantile-q-tensor-dim-keepdim", lambda a: a.quantile(
        L(a).tensor([0.0, 0.4, 1.0], dtype=a.dtype, device=a.device), dim=1, keepdim=True),
     [(3, 4)]),
    ("quantile-lower", lambda a: L(a).quantile(a, 0.4, 0, interpolation="lower"), [(4, 3)]),
    ("quantile-higher", lambda a: a.quantile(0.4, -1, interpolation="higher"), [(2, 4)]),
    ("quantile-midpoint", lambda a: a.quantile(0.3, 0, True, interpolation="midpoint"), [(4, 2)]),
    ("quantile-nearest", lambda a: L(a).quantile(a, 0.5, interpolation="nearest"), [(3, 3)]),
    ("nanquantile-nan-rows", lambda a: L(a).nanquantile(
        a.log(), L(a).tensor([0.25, 0.5], dtype=a.dtype, device=a.device), dim=1), [(3, 5)]),
    ("quantile-nan-rows", lambda a: a.log().quantile(0.5, dim=1), [(3, 5)]),
    ("unfold-overlapping", lambda a: a.unfold(1, 3, 1), [(2, 5)]),
    ("unfold-strided-dim0", lambda a: a.unfold(0, 2, 3), [(7, 2)]),
    ("unfold-empty-window", lambda a: a.unfold(-1, 0, 2), [(2, 3)]),
    ("index_put", lambda a, b: L(a).index_put(a, (_ix(a, [2, 0]),), b), [(3, 4), (4,)]),
    ("index_put_-accumulate", lambda a, b: (a * 1).index_put_(
        (_ix(a, [1, 1, 0]), _ix(a, [2, 2, 3])), b, accumulate=True), [(3, 4), (3,)]),
    ("put", lambda a, b: L(a).put(a, _ix(a, [[5], [-1]]), b), [(3, 4), (2, 1)]),
    ("put_-accumulate-transposed", lambda a, b: (a * 1).t().put_(
        _ix(a, [0, 0, 7]), b, accumulate=True), [(2, 4), (3,)]),
    ("fill_diagonal_", lambda a: (a * 1).fill_diagonal_(2.5), [(3, 4)]),
    ("fill_diagonal_-wrap", lambda a: (a * 1).fill_diagonal_(-1.0, wrap=True), [(7, 2)]),
    ("fill_diagonal_-3d", lambda a: (a * 1).fill_diagonal_(0.5), [(2, 2, 2)]),
]

GRADCHECKED = [c for c in DIFFERENTIABLE if c[0] not in (
    "diff-n-past-length", "rot90-k4", "nanquantile-nan-rows", "quantile-nan-rows")]


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=[c[0] for c in DIFFERENTIABLE])
def test_values_and_gradients_like_torch(case, device):
    _, fn, shapes = case
    run_like_torch(fn, *[values(s, seed=k) for k, s in enumerate(shapes)], device=device)


@pytest.mark.parametrize("case", GRADCHECKED, ids=[c[0] for c in GRADCHECKED])
def test_gradcheck(case):
    _, fn, shapes = case
    leaves = [nbgrad.tensor(values(s, seed=k), dtype=nbgrad.float64, requires_grad=True)
              for k, s in enumerate(shapes)]
    assert gradcheck(fn, leaves)


SECOND_ORDER = ["corrcoef", "logcumsumexp", "cov-fweights-aweights", "quantile-midpoint",
                "unfold-overlapping", "index_put_-accumulate", "put_-accumulate-transposed"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_derivatives_like_torch(name, device):
    _, fn, shapes = next(c for c in DIFFERENTIABLE if c[0] == name)
    # (a product with itself, so the second derivative of a linear op is not zero)
    second_derivatives_like_torch(lambda *a: fn(*a) * fn(*a),
                                  *[values(s, seed=k) for k, s in enumerate(shapes)],
                                  device=device)


TANGENTS = ["diff-n2-dim0-prepend-append", "trace", "logcumsumexp-dim0-method", "cov-aweights",
            "corrcoef",
            "rot90", "diagflat", "tensor_split-indices", "block_diag", "cartesian_prod",
            "combinations", "select", "mH", "sum_to_size", "quantile-q-tensor-dim-keepdim",
            "unfold-overlapping", "index_put", "index_put_-accumulate", "put",
            "put_-accumulate-transposed", "fill_diagonal_-wrap"]


@pytest.mark.parametrize("name", TANGENTS)
def test_forward_mode_tangents_like_torch(name, device):
    _, fn, shapes = next(c for c in DIFFERENTIABLE if c[0] == name)
    tangents = {}
    for lib, fw in ((nbgrad, forward_ad), (torch, torch.autograd.forward_ad)):
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(values(s, seed=k), **on_device(lib, device)),
                                  lib.tensor(values(s, seed=k + 5), **on_device(lib, device)))
                     for k, s in enumerate(shapes)]
            tangents[lib] = fw.unpack_dual(fn(*duals)).tangent
    assert tangents[nbgrad] is not None
    assert_same_tensor(tangents[nbgrad], tangents[torch])


# (id, fn(lib, **device)): not differentiable; compared with torch (values, dtype)
NOT_DIFFERENTIABLE = [
    ("diff-bool", lambda L, **d: L.diff(L.tensor([True, False, False, True], **d))),
    ("diff-int", lambda L, **d: L.diff(L.tensor([[1, 4, 9], [2, 2, 0]], **d), dim=0)),
    ("trace-int", lambda L, **d: L.trace(L.tensor([[1, 2], [3, 4]], dtype=L.int32, **d))),
    ("logspace", lambda L, **d: L.logspace(-1, 2, 5, **d)),
    ("logspace-base2-float64", lambda L, **d: L.logspace(0, 3, 4, base=2, dtype=L.float64, **d)),
    ("logspace-int", lambda L, **d: L.logspace(0, 2, 3, dtype=L.int64, **d)),
    ("logspace-empty", lambda L, **d: L.logspace(0, 1, 0, **d)),
    ("cov-int", lambda L, **d: L.cov(L.tensor([[1, 2, 4], [0, 5, 1]], **d))),
    ("bincount", lambda L, **d: L.bincount(L.tensor([0, 3, 3, 1], **d))),
    ("bincount-minlength", lambda L, **d: L.tensor([2, 2], **d).bincount(minlength=5)),
    ("bincount-weights-float32", lambda L, **d: L.bincount(
        L.tensor([0, 2, 2], **d), L.tensor([0.5, 1.0, 2.0], **d))),
    ("bincount-weights-int", lambda L, **d: L.bincount(
        L.tensor([1, 1], **d), weights=L.tensor([3, 4], **d))),
    ("bincount-empty", lambda L, **d: L.bincount(L.tensor([], dtype=L.int64, **d))),
    ("isin", lambda L, **d: L.isin(L.tensor([[1, 2], [3, 4]], **d), L.tensor([4, 1, 7], **d))),
    ("isin-invert-scalar", lambda L, **d: L.isin(L.tensor([1, 2], **d), 2, invert=True)),
    ("isin-scalar-elements", lambda L, **d: L.isin(2, L.tensor([1.0, 2.0], **d))),
    ("isin-promoted", lambda L, **d: L.isin(L.tensor([1, 2], **d), L.tensor([1.5, 2.0], **d))),
    ("isin-sorted-lookup", lambda L, **d: L.isin(  # (many test elements: looked up, sorted)
        L.tensor([[3, 40, -1], [7, 7, 0]], **d), L.arange(30, 0, -2, **d), invert=True)),
    ("isin-sorted-lookup-nan", lambda L, **d: L.isin(
        L.tensor([float("nan"), 2.5, 1.0], **d), L.arange(0.0, 10.0, 0.5, **d))),
    ("isin-empty-test", lambda L, **d: L.isin(L.tensor([1, 2], **d), L.tensor([], **d))),
    ("tril_indices", lambda L, **d: L.tril_indices(3, 4, **d)),
    ("tril_indices-offset", lambda L, **d: L.tril_indices(4, 3, -1, **d)),
    ("triu_indices", lambda L, **d: L.triu_indices(3, 3, 1, dtype=L.int32, **d)),
    ("triu_indices-empty", lambda L, **d: L.triu_indices(0, 3, **d)),
    ("combinations-r0", lambda L, **d: L.combinations(L.tensor([1, 2], **d), r=0)),
    ("combinations-too-long", lambda L, **d: L.combinations(L.tensor([1, 2], **d), r=3)),
    ("cartesian_prod-int", lambda L, **d: L.cartesian_prod(
        L.tensor([1, 2], **d), L.tensor([3], **d), L.tensor([4, 5], **d))),
    ("block_diag-promoted", lambda L, **d: L.block_diag(
        L.tensor([[1, 2]], **d), L.tensor([[0.5], [1.5]], **d))),
    ("rot90-int", lambda L, **d: L.tensor([[1, 2], [3, 4]], **d).rot90(3)),
    ("quantile-0d", lambda L, **d: L.quantile(L.tensor(2.5, **d), 0.5, dim=0, keepdim=True)),
    ("put_-0d", lambda L, **d: L.tensor(1.0, **d).put_(L.tensor([0], **d), L.tensor([5.0], **d))),
    ("index_put_-mask-accumulate", lambda L, **d: L.ones(2, 3, **d).index_put_(
        [L.tensor([True, False], **d)], L.tensor(2.0, **d), True)),
    ("fill_diagonal_-int-tall", lambda L, **d: L.zeros(5, 2, dtype=L.int64, **d).fill_diagonal_(3)),
    ("fill_diagonal_-wide-wrap", lambda L, **d: L.zeros(2, 5, **d).fill_diagonal_(1, wrap=True)),
    ("nanquantile-all-nan", lambda L, **d: L.nanquantile(
        L.tensor([[float("nan")] * 2, [1.0, float("nan")]], dtype=L.float64, **d), 0.7, 1)),
]


@pytest.mark.parametrize("case", NOT_DIFFERENTIABLE, ids=[c[0] for c in NOT_DIFFERENTIABLE])
def test_values_like_torch(case, device):
    _, fn = case
    ours, theirs = fn(nbgrad, device=device), fn(torch)
    assert ours.device.type == nbgrad.device(device).type
    assert_same_tensor(ours, theirs)


def test_cov_warns_and_divides_by_zero_degrees_as_torch(device):
    results = []
    for lib in (nbgrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(lib.cov(lib.tensor([[1.0, 2.0]], **on_device(lib, device)),
                                   correction=2))
        assert "degrees of freedom is <= 0" in str(caught[0].message)
    assert_same_tensor(*results)


def test_splits_and_select_are_views(device):
    x = nbgrad.arange(12.0, device=device).reshape(3, 4)
    pieces = x.tensor_split(2, dim=1)
    row = x.select(0, 1)
    pieces[1][0, 0] = 100.0  # writes reach the base, and bump the shared counter
    row[0] = -1.0
    assert x[0, 2].item() == 100.0 and x[1, 0].item() == -1.0
    assert x._version == pieces[0]._version == row._version == 2
    x.mH[0, 1] = 7.0
    x.adjoint()[0, 2] = 8.0
    x.H[1, 2] = 9.0
    assert [x[1, 0].item(), x[2, 0].item(), x[2, 1].item()] == [7.0, 8.0, 9.0]


def test_select_gradient_after_in_place_write_through_it(device):
    for lib in (nbgrad, torch):
        a = lib.tensor(values((3, 2)), requires_grad=True, **on_device(lib, device))
        y = a * 2
        y.select(0, 1).mul_(3)
        y.sum().backward()
        expected = np.array([[2, 2], [6, 6], [2, 2]], dtype=float)
        np.testing.assert_allclose(a.grad.cpu().numpy(), expected)


def test_predicates_like_torch(device):
    for lib in (nbgrad, torch):
        kw = on_device(lib, device)
        x = lib.zeros(2, 3, **kw)
        assert [x.is_signed(), lib.is_signed(x.to(lib.uint8)), x.bool().is_signed(),
                x.long().is_signed()] == [True, False, False, True]
        assert [lib.is_nonzero(lib.tensor([0.0], **kw)), lib.tensor(3, **kw).is_nonzero(),
                lib.tensor([True], **kw).is_nonzero()] == [False, True, True]
        assert lib.is_same_size(x, lib.ones(2, 3)) and not x.is_same_size(x.t())
    x = nbgrad.zeros(2, device=device)
    assert x.get_device() == nbgrad.get_device(x) == (-1 if device == "cpu" else 0)
    assert x.is_cpu == (device == "cpu") and torch.zeros(2).is_cpu


def _error_cases():
    return [
        lambda L: L.diff(L.tensor(1.0)),
        lambda L: L.diff(L.ones(2, 3), n=-1),
        lambda L: L.diff(L.ones(2, 3), prepend=L.ones(3)),
        lambda L: L.diff(L.ones(2, 3), dim=2),
        lambda L: L.trace(L.ones(3)),
        lambda L: L.logcumsumexp(L.tensor([1, 2]), 0),
        lambda L: L.logcumsumexp(L.ones(2), 1),
        lambda L: L.logspace(0, 2, -1),
        lambda L: L.cov(L.ones(2, 2, 2)),
        lambda L: L.cov(L.ones(2, 3), fweights=L.ones(3)),
        lambda L: L.cov(L.ones(2, 3), fweights=L.ones(2, dtype=L.int64)),
        lambda L: L.cov(L.ones(2, 3), fweights=-L.ones(3, dtype=L.int64)),
        lambda L: L.cov(L.ones(2, 3), aweights=L.ones(3, dtype=L.int64)),
        lambda L: L.cov(L.ones(2, 3), aweights=-L.ones(3)),
        lambda L: L.cov(L.ones(2, 3), aweights=L.ones(3, 3)),
        lambda L: L.corrcoef(L.ones(2, 2, 2)),
        lambda L: L.bincount(L.tensor([1, -2])),
        lambda L: L.bincount(L.tensor([[1, 2]])),
        lambda L: L.bincount(L.tensor([1.0, 2.0])),
        lambda L: L.bincount(L.tensor([1, 2]), minlength=-1),
        lambda L: L.bincount(L.tensor([1, 2]), weights=L.tensor([1.0])),
        lambda L: L.rot90(L.ones(2, 2), 1, [0]),
        lambda L: L.rot90(L.ones(3), 1, [0, 1]),
        lambda L: L.rot90(L.ones(2, 2), 1, [0, 0]),
        lambda L: L.rot90(L.ones(2, 2), 1, [0, 2]),
        lambda L: L.tensor_split(L.ones(5), 0),
        lambda L: L.tensor_split(L.tensor(1.0), 2),
        lambda L: L.hsplit(L.ones(2, 5), 2),
        lambda L: L.vsplit(L.ones(5), 2),
        lambda L: L.dsplit(L.ones(2, 5), 2),
        lambda L: L.block_diag(L.ones(2, 2, 2)),
        lambda L: L.cartesian_prod(L.ones(2, 2)),
        lambda L: L.combinations(L.ones(2, 2)),
        lambda L: L.combinations(L.ones(3), r=-1),
        lambda L: L.tril_indices(-1, 4),
        lambda L: L.triu_indices(2, -3),
        lambda L: L.ones(2, 3).select(0, 5),
        lambda L: L.ones(2, 3).select(2, 0),
        lambda L: L.ones(3).H,
        lambda L: L.ones(3, 2, 2).H,
        lambda L: L.ones(3).mH,
        lambda L: L.ones(3).adjoint(),
        lambda L: L.ones(2, 3).sum_to_size(2),
        lambda L: L.ones(2, 3).sum_to_size(1, 3, 3),
        lambda L: L.tensor([1.0, 2.0]).is_nonzero(),
        lambda L: L.tensor([]).is_nonzero(),
        lambda L: L.quantile(L.ones(3), 1.5),
        lambda L: L.quantile(L.ones(3), -0.5),
        lambda L: L.quantile(L.ones(3), L.tensor([1.5])),
        lambda L: L.quantile(L.ones(3), L.tensor([[0.5]])),
        lambda L: L.quantile(L.ones(3), L.tensor([0.5], dtype=L.float64)),
        lambda L: L.nanquantile(L.ones(3, dtype=L.int64), 0.5),
        lambda L: L.quantile(L.ones(0), 0.5),
        lambda L: L.quantile(L.ones(3), 0.5, interpolation="abc"),
        lambda L: L.quantile(L.ones(3), 0.5, dim=1),
        lambda L: L.ones(3, 7).unfold(1, 8, 2),
        lambda L: L.ones(3, 7).unfold(1, 3, 0),
        lambda L: L.ones(3, 7).unfold(1, -1, 1),
        lambda L: L.ones(3, 7).unfold(2, 3, 1),
        lambda L: L.tensor(2.0).unfold(0, 2, 1),
        lambda L: L.zeros(2, 3).put_(L.tensor([0, 6]), L.tensor([1.0, 2.0])),
        lambda L: L.zeros(2, 3).put_(L.tensor([0, 1]), L.tensor([1.0])),
        lambda L: L.zeros(2, 3).put_(L.tensor([0.0, 1]), L.tensor([1.0, 2])),
        lambda L: L.zeros(2, 3).put_(L.tensor([0, 1]), L.tensor([1.0, 2], dtype=L.float64)),
        lambda L: L.zeros(2, 3).index_put_((L.tensor([0, 5]),), L.tensor(1.0)),
        lambda L: L.zeros(2, 3).index_put_((L.tensor([0, 5]),), L.tensor(1.0), accumulate=True),
        lambda L: L.zeros(2, 3).index_put_((L.tensor([0]),), L.tensor([1.0, 2]), True),
        lambda L: L.zeros(2, 3).index_put_((L.tensor([0]),), L.tensor([1.0, 2, 3]).double(), True),
        lambda L: L.zeros(2, 3).index_put_(L.tensor([0]), L.tensor(1.0)),
        lambda L: L.zeros(2, 3, 2).fill_diagonal_(5),
        lambda L: L.zeros(2).fill_diagonal_(5),
        lambda L: L.zeros(2, 2, requires_grad=True).fill_diagonal_(5),
        lambda L: L.zeros(2, 2, requires_grad=True).put_(L.tensor([0]), L.tensor([1.0])),
        lambda L: L.zeros(2, 2, requires_grad=True).index_put_((L.tensor([0]),), L.ones(2), True),
    ]


@pytest.mark.parametrize("call", _error_cases())
def test_errors_like_torch(call):
    assert_same_error(call)


def test_refused_calls_change_nothing(device):
    x = nbgrad.tensor(values((2, 3)), device=device, requires_grad=True)
    w = nbgrad.tensor([1, -1, 2], device=device)
    before = x.detach().clone()
    y = x.detach().clone()
    for call in (lambda: nbgrad.cov(x, fweights=w), lambda: x.select(0, 9),
                 lambda: nbgrad.rot90(x, 1, [1, 1]), lambda: x.sum_to_size(4),
                 lambda: y.put_(w * 5, y[0]), lambda: y.index_put_((w,), y[0, :1], True),
                 lambda: x.fill_diagonal_(1.0), lambda: y.unfold(1, 4, 1)):
        with pytest.raises((RuntimeError, IndexError)):
            call()
    assert x._version == 0 and x.grad is None and w.tolist() == [1, -1, 2]
    assert (x.detach() == before).all() and (y == before).all() and y._version == 0
