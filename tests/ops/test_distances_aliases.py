"""Distances (nbgrad/ops/distances.py, nn/distance.py), one_hot
(nn/functional_encoding.py), PyTorch's alias names and div's rounding_mode
(nbgrad/ops/aliases.py) and Tensor.new_* (nbgrad/ops/new_tensors.py),
against PyTorch: values, dtypes, gradients (and gradcheck in float64),
errors, on every device."""
import warnings

import numpy as np
import pytest
import torch

import nbgrad
from helpers import (assert_same_error, assert_same_tensor, lib_of, raises_like_torch,
                     run_like_torch, second_derivatives_like_torch, values)
from nbgrad.autograd import gradcheck
from nbgrad.ops import aliases

TESTED_OPS = {"cosine_similarity", "pairwise_distance", "cdist", "div", "divide", "positive",
              "ravel", "msort", "ndimension", "is_floating_point", "is_complex", "new_empty",
              "new_zeros", "new_ones", "new_full", "new_tensor"}


def F(t):
    return lib_of(t).nn.functional


# (id, fn(*leaves), input shapes): differentiable, compared with torch
DIFFERENTIABLE = [
    ("cosine", lambda a, b: F(a).cosine_similarity(a, b), [(3, 4), (3, 4)]),
    ("cosine-broadcast-dim", lambda a, b: F(a).cosine_similarity(a, b, dim=-1), [(2, 3, 4), (4,)]),
    ("cosine-eps", lambda a, b: F(a).cosine_similarity(a * 1e-3, b, dim=0, eps=0.5),
     [(3, 4), (3, 4)]),
    ("cosine-module", lambda a, b: lib_of(a).nn.CosineSimilarity(0)(a, b), [(3, 4), (3, 1)]),
    ("pairwise", lambda a, b: F(a).pairwise_distance(a, b), [(3, 4), (3, 4)]),
    ("pairwise-p1-keepdim", lambda a, b: F(a).pairwise_distance(a, b, 1.0, keepdim=True),
     [(3, 4), (4,)]),
    ("pairwise-1d-p3", lambda a, b: F(a).pairwise_distance(a, b, p=3.0), [(5,), (5,)]),
    ("pairwise-module", lambda a, b: lib_of(a).nn.PairwiseDistance(p=1.5, eps=0.1)(a, b),
     [(2, 3), (2, 3)]),
    ("cdist", lambda a, b: lib_of(a).cdist(a, b), [(3, 4), (5, 4)]),
    ("cdist-mm", lambda a, b: lib_of(a).cdist(a, b), [(2, 27, 3), (4, 3)]),
    ("cdist-no-mm", lambda a, b: lib_of(a).cdist(
        a, b, compute_mode="donot_use_mm_for_euclid_dist"), [(27, 3), (4, 3)]),
    ("cdist-p1", lambda a, b: lib_of(a).cdist(a, b, p=1.0), [(3, 4), (2, 4)]),
    ("cdist-pinf", lambda a, b: lib_of(a).cdist(a, b, p=float("inf")), [(3, 4), (2, 4)]),
    ("div-trunc", lambda a, b: lib_of(a).div(a * 3, b, rounding_mode="trunc"), [(3, 4), (4,)]),
    ("div-floor", lambda a, b: (a * 3).div(b, rounding_mode="floor"), [(3, 4), (4,)]),
    ("divide", lambda a, b: lib_of(a).divide(a, b + 3), [(3, 4), (3, 4)]),
    ("absolute", lambda a: lib_of(a).absolute(a), [(3, 4)]),
    ("subtract-multiply", lambda a, b: lib_of(a).multiply(lib_of(a).subtract(a, b), b),
     [(3,), (3,)]),
    ("arctan2", lambda a, b: a.arctan2(b), [(3,), (3,)]),
    ("ravel", lambda a: a.mT.ravel(), [(3, 4)]),
    ("msort", lambda a: lib_of(a).msort(a), [(4, 3)]),
]


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=[c[0] for c in DIFFERENTIABLE])
def test_values_and_gradients_like_torch(case, device):
    _, fn, shapes = case
    run_like_torch(fn, *[values(s, seed=k) for k, s in enumerate(shapes)], device=device)


@pytest.mark.parametrize("case", DIFFERENTIABLE[:13], ids=[c[0] for c in DIFFERENTIABLE[:13]])
def test_gradcheck(case):
    _, fn, shapes = case
    leaves = [nbgrad.tensor(values(s, seed=k), dtype=nbgrad.float64, requires_grad=True)
              for k, s in enumerate(shapes)]
    assert gradcheck(fn, leaves)


def test_second_derivatives_of_cosine_similarity():
    second_derivatives_like_torch(lambda a, b: F(a).cosine_similarity(a, b),
                                  values((3, 4)), values((3, 4), seed=1))


def test_zero_vectors_have_zero_similarity_and_gradient(device):
    for lib in (nbgrad, torch):
        z = lib.zeros(2, 3, requires_grad=True, **({"device": device} if lib is nbgrad else {}))
        out = lib.nn.functional.cosine_similarity(z, z)
        out.sum().backward()
        assert out.tolist() == [0.0, 0.0] and not z.grad.cpu().numpy().any()


@pytest.mark.parametrize("args", [((-7, 7, -8, 9, 0, 5), (2, -2, 3, 3, -5, 5)),
                                  ((-7, 7, -8), (2,))])
@pytest.mark.parametrize("mode", ["trunc", "floor", None])
def test_integer_division_modes(args, mode, device):
    out = {}
    for lib in (nbgrad, torch):
        kw = {"device": device} if lib is nbgrad else {}
        a, b = lib.tensor(args[0], **kw), lib.tensor(args[1], **kw)
        c = a.clone()
        c.div_(b, rounding_mode=mode) if mode else None
        out[lib] = (lib.div(a, b, rounding_mode=mode), lib.div(-7, b, rounding_mode=mode), c)
    for ours, theirs in zip(out[nbgrad], out[torch]):
        assert_same_tensor(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda L: L.div(L.tensor([1, 2]), L.tensor([0, 1]), rounding_mode="trunc"),
    lambda L: L.div(L.tensor([1, 2]), 2, rounding_mode="round"),
    lambda L: L.positive(L.tensor([True])),
    lambda L: L.cdist(L.randn(3), L.randn(4, 3)),
    lambda L: L.cdist(L.randn(2, 3), L.randn(4, 2)),
    lambda L: L.cdist(L.randn(2, 3), L.randn(4, 3), p=-1),
    lambda L: L.cdist(L.randn(2, 3).long(), L.randn(4, 3).long()),
    lambda L: L.cdist(L.randn(2, 3), L.randn(4, 3).double()),
    lambda L: L.cdist(L.randn(2, 3), L.randn(4, 3), compute_mode="x"),
    lambda L: L.nn.functional.cosine_similarity(L.tensor([1, 2]), L.tensor([1, 2]), dim=0),
    lambda L: L.nn.functional.cosine_similarity(L.randn(2, 3), L.randn(2, 4)),
    lambda L: L.nn.functional.one_hot(L.tensor([0.0, 1.0])),
    lambda L: L.nn.functional.one_hot(L.tensor([], dtype=L.int64)),
    lambda L: L.nn.functional.one_hot(L.tensor([-1])),
    lambda L: L.nn.functional.one_hot(L.tensor([3]), 3),
    lambda L: L.zeros(2).new_full(2, 3.0),
    lambda L: L.zeros(2).new_zeros(-1),
])
def test_errors_like_torch(call):
    assert_same_error(call)


@pytest.mark.parametrize("data, classes", [([[0, 2], [1, 1]], -1), ([3, 0], 5), (2, 4),
                                           ([], 3)])
def test_one_hot(data, classes, device):
    ours = nbgrad.nn.functional.one_hot(nbgrad.tensor(data, dtype=nbgrad.int64, device=device),
                                        classes)
    theirs = torch.nn.functional.one_hot(torch.tensor(data, dtype=torch.int64), classes)
    assert ours.device.type == nbgrad.device(device).type
    assert_same_tensor(ours, theirs)


def test_aliases_are_the_ops_they_name():
    for alias, name in aliases.ALIASES.items():
        # (a row's method is generated on first call: the alias may hold its stub)
        assert getattr(nbgrad.Tensor, alias).__name__ == name
        assert getattr(nbgrad, alias) is getattr(nbgrad, name)
        assert hasattr(torch, alias) and hasattr(torch.Tensor, alias + "_")
    x = nbgrad.tensor([-1.5, 2.5])
    x.fix_()
    assert x.tolist() == [-1.0, 2.0]
    assert nbgrad.concat is nbgrad.concatenate is nbgrad.cat


def test_small_predicates():
    x = nbgrad.zeros(2, 3)
    assert nbgrad.positive(x) is x and x.ndimension() == 2
    assert nbgrad.is_floating_point(x) and not nbgrad.is_floating_point(x.long())
    assert not nbgrad.is_complex(x) and not x.is_complex()


@pytest.mark.parametrize("call", [
    lambda x: x.new_zeros(2, 3), lambda x: x.new_zeros((2,)), lambda x: x.new_ones(3),
    lambda x: x.new_ones(2, dtype=lib_of(x).int32), lambda x: x.new_full((2, 2), 3),
    lambda x: x.new_full((2,), 7, dtype=lib_of(x).int64), lambda x: x.new_empty(0),
    lambda x: x.new_tensor([1, 2]), lambda x: x.new_tensor([[1.5]], requires_grad=True),
])
def test_new_tensors_take_dtype_and_device_from_self(call, device):
    x = nbgrad.zeros(1, dtype=nbgrad.float64, device=device)
    ours, theirs = call(x), call(torch.zeros(1, dtype=torch.float64))
    assert ours.device == x.device and ours.requires_grad == theirs.requires_grad
    if ours.numel():  # (new_empty's values are unspecified: it is called with size 0)
        assert_same_tensor(ours.detach(), theirs.detach())
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype)[6:]


def test_new_tensor_copies_and_warns_on_a_tensor():
    x = nbgrad.tensor([1.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x.new_tensor(x)
    assert "sourceTensor.detach().clone()" in str(caught[0].message)
    y[0] = 5.0
    assert x.tolist() == [1.0, 2.0]


def test_bad_distance_inputs_change_nothing(device):
    raises_like_torch(lambda a, b: lib_of(a).cdist(a, b), values((2, 3)), values((4, 2)),
                      device=device, requires_grad=True)
    a = nbgrad.tensor(values((2, 3)), device=device)
    version = a._version
    with pytest.raises(RuntimeError):
        a.div_(2, rounding_mode="x")
    assert a._version == version and np.array_equal(a.cpu().numpy(), values((2, 3)))


@pytest.mark.parametrize("name", aliases.INPLACE_FUNCTIONS)
def test_inplace_functions_like_torch(name, device):
    data = values((5,), low=0.2, high=0.9)
    args = (0.5,) if name.startswith(("clamp", "xlogy")) else ()
    theirs = torch.tensor(data)
    ours = nbgrad.tensor(data, device=device)
    assert getattr(nbgrad, name)(ours, *args) is ours
    getattr(torch, name)(theirs, *args)
    assert_same_tensor(ours, theirs)
