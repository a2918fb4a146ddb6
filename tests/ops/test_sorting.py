"""Sorting and selection (nbgrad/ops/sorting.py) against PyTorch: sort,
argsort, topk, kthvalue (values, indices, named tuples, node names,
gradients, second derivatives), unique and unique_consecutive, searchsorted,
bucketize, histc; NaN, ties and signed zeros; dtypes; error texts.
(clamp_min/clamp_max are rows: tests/ops/test_table.py.)"""
import numpy as np
import pytest
import torch

import nbgrad
from helpers import (lib_of, node_name, raises_like_torch, run_like_torch,
                     second_derivatives_like_torch, values)
from nbgrad.autograd import gradcheck

TESTED_OPS = {"sort", "argsort", "topk", "kthvalue", "unique", "unique_consecutive",
              "searchsorted", "bucketize", "histc"}

# Distinct values (topk's and kthvalue's positions of ties are PyTorch's implementation's)
DISTINCT = np.random.default_rng(0).permutation(60).reshape(3, 4, 5) / 8.0 - 3.0
TIES = np.array([[1.0, -0.0, 0.0, 2.0, 1.0, np.nan, -1.0, np.nan, 2.0, 0.0],
                 [3.0, 3.0, 3.0, -np.inf, np.inf, 1.0, 1.0, -0.0, 5.0, 0.0]])

# name -> (fn of one leaf, which result is differentiated (0: values), array)
CASES = {
    "sort": (lambda x: x.sort().values, DISTINCT),
    "sort_dim0_desc": (lambda x: lib_of(x).sort(x, 0, True).values, DISTINCT),
    "sort_stable_kw": (lambda x: x.sort(dim=1, stable=True).values, DISTINCT),
    "sort_transposed": (lambda x: x.transpose(0, 2).sort(dim=1).values, DISTINCT),
    "topk": (lambda x: x.topk(3).values, DISTINCT),
    "topk_smallest_dim1": (lambda x: lib_of(x).topk(x, 2, dim=1, largest=False).values, DISTINCT),
    "topk_all": (lambda x: x.topk(5, dim=-1).values, DISTINCT),
    "kthvalue": (lambda x: x.kthvalue(2).values, DISTINCT),
    "kthvalue_keepdim": (lambda x: lib_of(x).kthvalue(x, 3, 1, keepdim=True).values, DISTINCT),
}
NODE_NAMES = {"sort": "SortBackward", "topk": "TopkBackward", "kthvalue": "KthvalueBackward"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    fn, array = CASES[name]
    for dtype in (nbgrad.float32, nbgrad.float64):
        out, want = run_like_torch(fn, array, device="cpu", dtype=dtype)
    if name in NODE_NAMES:
        assert node_name(out.grad_fn) == NODE_NAMES[name] == node_name(want.grad_fn)


@pytest.mark.parametrize("name", ["sort", "topk_smallest_dim1", "kthvalue", "kthvalue_keepdim"])
def test_gradcheck_and_second_derivatives(name):
    fn, array = CASES[name]
    assert gradcheck(fn, [nbgrad.tensor(array, dtype=nbgrad.float64, requires_grad=True)])
    second_derivatives_like_torch(fn, array)


def _same(got, want):
    assert type(got).__name__ == type(want).__name__
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    assert np.array_equal(got.detach().numpy(), want.detach().numpy(), equal_nan=True)
    signs = np.signbit(got.detach().numpy().astype(np.float64))
    assert np.array_equal(signs, np.signbit(want.detach().numpy().astype(np.float64)))


# name -> fn(lib, x): whole results (named tuples included) compared exactly
EXACT = {
    "sort_ties_nan": lambda lib, x: x.sort(stable=True),
    "sort_ties_desc": lambda lib, x: lib.sort(x, dim=1, descending=True, stable=True),
    "sort_dim0": lambda lib, x: x.sort(0),
    "argsort": lambda lib, x: x.argsort(stable=True),
    "argsort_desc": lambda lib, x: lib.argsort(x, dim=-1, descending=True, stable=True),
    "unique": lambda lib, x: lib.unique(x),
    "unique_all": lambda lib, x: x.unique(return_inverse=True, return_counts=True),
    "unique_unsorted": lambda lib, x: lib.unique(x, sorted=False, return_counts=True),
    "unique_dim": lambda lib, x: lib.unique(x[:, [4, 3, 4, 0, 3]], dim=1, return_inverse=True,
                                            return_counts=True),
    "unique_consecutive": lambda lib, x: lib.unique_consecutive(x, return_inverse=True,
                                                                return_counts=True),
    "unique_consecutive_dim": lambda lib, x: x.unique_consecutive(dim=0, return_counts=True),
    "sort_0d": lambda lib, x: x[0, 0].sort(),
    "topk_0d": lambda lib, x: x[0, 0].topk(1),
    "kthvalue_nan": lambda lib, x: x.kthvalue(9),
    "topk_nan": lambda lib, x: x[:, 3:8].topk(2),
    "topk_0": lambda lib, x: x.topk(0),
    "searchsorted": lambda lib, x: lib.searchsorted(lib.tensor([-1.0, 0.0, 0.0, 2.0, 3.0]), x),
    "searchsorted_right": lambda lib, x: lib.searchsorted(lib.tensor([-1.0, 0.0, 0.0, 2.0]), x,
                                                          right=True),
    "searchsorted_side": lambda lib, x: lib.searchsorted(lib.tensor([-1.0, 0.0, 2.0]), x,
                                                         side="right"),
    "searchsorted_rows": lambda lib, x: lib.searchsorted(x.sort().values, x[:, :3].contiguous()),
    "searchsorted_sorter": lambda lib, x: lib.searchsorted(
        lib.tensor([3.0, -1.0, 1.0]), x, sorter=lib.tensor([1, 2, 0])),
    "searchsorted_scalar": lambda lib, x: lib.searchsorted(lib.tensor([1.0, 2.0, 3.0]), 2.0),
    "searchsorted_int": lambda lib, x: lib.searchsorted(lib.tensor([1, 2, 3]), x),
    "bucketize": lambda lib, x: lib.bucketize(x, lib.tensor([-1.0, 0.0, 2.0])),
    "bucketize_right": lambda lib, x: lib.bucketize(x, lib.tensor([-1.0, 0.0, 2.0]), right=True),
    "histc": lambda lib, x: lib.histc(x, bins=4, min=-1, max=3),
    "histc_edges": lambda lib, x: lib.histc(lib.tensor([0.0, 0.3, 0.7, 1.0, 0.1]), bins=10,
                                            min=0, max=1),
    "histc_range": lambda lib, x: x.nan_to_num(0.0, 4.0, -4.0).histc(bins=5)
    if hasattr(x, "nan_to_num") else None,
    "histc_constant": lambda lib, x: lib.histc(lib.ones(3), bins=2),
}


@pytest.mark.parametrize("name", sorted(EXACT))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exact(name, dtype):
    got, want = (EXACT[name](lib, lib.tensor(TIES, dtype=getattr(lib, dtype)))
                 for lib in (nbgrad, torch))
    if want is None or got is None:
        pytest.skip("nan_to_num is not there yet")
    _same(got, want)


@pytest.mark.parametrize("dtype", ["int64", "bool", "int32", "uint8"])
def test_integer_dtypes(dtype):
    if not hasattr(nbgrad, dtype):
        pytest.skip(f"nbgrad has no {dtype} yet")
    data = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]]) % (2 if dtype == "bool" else 10)
    for op in (lambda lib, x: x.sort(stable=True), lambda lib, x: x.argsort(dim=0, stable=True),
               lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True),
               lambda lib, x: x.unique_consecutive(return_counts=True),
               lambda lib, x: x.sort(descending=True, stable=True)):
        _same(*(op(lib, lib.tensor(data, dtype=getattr(lib, dtype))) for lib in (nbgrad, torch)))
    if dtype != "bool":
        got, want = (lib.tensor(data, dtype=getattr(lib, dtype)).topk(2) for lib in (nbgrad, torch))
        assert np.array_equal(got.values.numpy(), want.values.numpy())


def test_long_rows():
    """Rows long enough for the merge sort, the radix passes and topk's heap."""
    rng = np.random.default_rng(3)
    for data in (rng.standard_normal((3, 5000)), rng.integers(-50, 50, (2, 3000)).astype(float),
                 rng.integers(-9, 9, (4, 300)).astype(float), rng.standard_normal((2, 77))):
        for lib_args in ({"stable": True}, {"stable": True, "descending": True}):
            got, want = (lib.tensor(data).sort(**lib_args) for lib in (nbgrad, torch))
            _same(got, want)
        got, want = (lib.tensor(data).topk(7, largest=False) for lib in (nbgrad, torch))
        assert np.array_equal(got.values.numpy(), want.values.numpy())
        assert np.array_equal(np.take_along_axis(data, got.indices.numpy(), 1), got.values.numpy())


ERRORS = [
    lambda x: x.sort(dim=2),
    lambda x: x.topk(5),
    lambda x: x.topk(-1),
    lambda x: x.kthvalue(5),
    lambda x: x.kthvalue(0),
    lambda x: x.kthvalue(1, keepdim=1),
    lambda x: (x > 0).topk(1),
    lambda x: lib_of(x).searchsorted(x, x[0]),
    lambda x: lib_of(x).searchsorted(x[0], x[0], side="middle"),
    lambda x: lib_of(x).searchsorted(x[0], x[0], right=True, side="left"),
    lambda x: lib_of(x).searchsorted(x[0], x[0], sorter=lib_of(x).tensor([0, 1])),
    lambda x: lib_of(x).bucketize(x[0], x),
    lambda x: lib_of(x).histc(x, bins=-1),
    lambda x: lib_of(x).histc(x, bins=4, min=3, max=0),
    lambda x: lib_of(x).histc(lib_of(x).tensor([1.0, float("inf")]), bins=4),
    lambda x: lib_of(x).histc(lib_of(x).tensor([1.0, float("nan")]), bins=4),
    lambda x: lib_of(x).histc(lib_of(x).tensor([1, 2]), bins=4),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    raises_like_torch(ERRORS[k], values((3, 4)), device="cpu")


def test_out_and_named_tuple():
    x = nbgrad.tensor(DISTINCT[0])
    values_out, indices_out = nbgrad.empty(0), nbgrad.empty(0, dtype=nbgrad.int64)
    result = nbgrad.sort(x, 1, out=(values_out, indices_out))
    assert result.values is values_out and result.indices is indices_out
    assert np.array_equal(values_out.numpy(), np.sort(DISTINCT[0], 1))
    assert np.array_equal(indices_out.numpy(), np.argsort(DISTINCT[0], 1))
    r = nbgrad.topk(x, 2)
    values, indices = r
    assert r.values is values and r.indices is indices and r._fields == ("values", "indices")
    assert repr(r).startswith("nbgrad.return_types.topk(")


CUDA_CASES = ["sort", "sort_dim0_desc", "topk_smallest_dim1", "kthvalue_keepdim"]


@pytest.mark.cuda
@pytest.mark.parametrize("name", CUDA_CASES)
def test_cuda(name):
    fn, array = CASES[name]
    run_like_torch(fn, array, device="cuda", dtype=nbgrad.float32)


@pytest.mark.cuda
def test_cuda_searches():
    cases = dict(EXACT)
    cases["bucketize_device"] = lambda lib, x: lib.bucketize(
        x, (lib.tensor([-1.0, 0.0, 2.0]) if lib is torch else
            nbgrad.tensor([-1.0, 0.0, 2.0], device="cuda")))
    for name in ("sort_ties_nan", "unique_all", "searchsorted_rows", "bucketize_device", "histc"):
        got = cases[name](nbgrad, nbgrad.tensor(TIES, dtype=nbgrad.float32, device="cuda"))
        want = cases[name](torch, torch.tensor(TIES, dtype=torch.float32))
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert g.device.type == "cuda"
            assert np.array_equal(g.cpu().numpy(), w.numpy(), equal_nan=True), name
