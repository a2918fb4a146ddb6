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


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_long_rows(dtype):
    """Rows long enough for the merge sort, the radix passes and topk's heap;
    in float32, short rows take the packed-word sort and long ones the radix."""
    rng = np.random.default_rng(3)
    for data in (rng.standard_normal((3, 5000)), rng.integers(-50, 50, (2, 3000)).astype(float),
                 rng.integers(-9, 9, (4, 300)).astype(float), rng.standard_normal((2, 77)),
                 rng.integers(-9, 9, (2, 1024)).astype(float)):
        data = data.astype(dtype)
        for lib_args in ({"stable": True}, {"stable": True, "descending": True},
                         {"dim": 0, "stable": True}):
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


# -- the CUDA kernels' branches (backends/cuda/sorting.py), with small tiles so
# every branch runs on tiny shapes on a GPU and in the simulator alike
@pytest.fixture
def small_tiles(monkeypatch):
    from nbgrad.backends.cuda import sorting as kernels
    for name, value in (("TILE", 8), ("SIM_TILE", 8), ("SCAN_THREADS", 4),
                        ("SIM_SCAN_THREADS", 4), ("HIST_BINS", 4), ("SIM_HIST_BINS", 4)):
        monkeypatch.setattr(kernels, name, value)


def _same_cuda(got, want):
    """``_same`` for a result on the GPU: its layout there, its values on the host."""
    if isinstance(want, tuple):
        assert type(got).__name__ == type(want).__name__ and len(got) == len(want)
        for g, w in zip(got, want):
            _same_cuda(g, w)
        return
    assert got.device.type == "cuda"
    if not want.numel():  # (the strides of an empty result are not compared)
        assert tuple(got.shape) == tuple(want.shape) and got.dtype.is_floating_point == \
            want.dtype.is_floating_point and got.element_size() == want.element_size()
        return
    assert got.stride() == want.stride()
    host, ref = got.cpu().numpy(), want.numpy()
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1] and host.shape == ref.shape
    assert np.array_equal(host, ref, equal_nan=True)
    assert np.array_equal(np.signbit(host.astype(np.float64)), np.signbit(ref.astype(np.float64)))


def _line_data(n, rng):
    """Two lines of ``n`` with ties, NaN and signed zeros, plus a line of distinct values."""
    pool = np.array([1.0, -0.0, 0.0, 2.0, np.nan, -1.0, np.inf, -np.inf, 2.0])
    return np.stack([rng.choice(pool, n), rng.choice(pool, n), rng.permutation(n) - n / 2.0])


# n against the (patched) tile of 8: a padded line, a full tile, one and two
# global stages beyond it
@pytest.mark.cuda
@pytest.mark.parametrize("n", [1, 5, 8, 9, 27])
def test_cuda_sort_and_topk_lines(small_tiles, n):
    data = _line_data(n, np.random.default_rng(n))
    for lib_args in ({}, {"descending": True}, {"dim": 0}, {"dim": 0, "descending": True}):
        got, want = (lib.tensor(data, device=dev).sort(stable=True, **lib_args)
                     for lib, dev in ((nbgrad, "cuda"), (torch, "cpu")))
        _same_cuda(got, want)
    cpu_x, x = nbgrad.tensor(data), nbgrad.tensor(data, device="cuda")
    for k in sorted({0, 1, min(2, n), min(3, n), n}):  # (1 and 2 of 9 or 27: selected in rounds)
        for largest in (True, False):
            got, want = x.topk(k, largest=largest), cpu_x.topk(k, largest=largest)
            assert np.array_equal(got.values.cpu().numpy(), want.values.numpy(), equal_nan=True)
            assert np.array_equal(got.indices.cpu().numpy(), want.indices.numpy())
            ref = torch.tensor(data).topk(k, largest=largest).values.numpy()
            assert np.array_equal(got.values.cpu().numpy(), ref, equal_nan=True)


@pytest.mark.cuda
def test_cuda_sort_dtypes_and_empty(small_tiles):
    data = np.random.default_rng(1).integers(-4, 5, (2, 11))
    for dtype in ("int64", "int32", "int16", "uint8", "bool", "float16"):
        cast = np.abs(data) % 2 if dtype == "bool" else np.abs(data) if dtype == "uint8" else data
        ops = [lambda lib, x: x.sort(stable=True), lambda lib, x: x.sort(dim=0, descending=True, stable=True),
               lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True)]
        if dtype != "bool":
            ops.append(lambda lib, x: x.topk(3, largest=False).values)
        for op in ops:
            _same_cuda(*(op(lib, lib.tensor(cast, dtype=getattr(lib, dtype), device=dev))
                         for lib, dev in ((nbgrad, "cuda"), (torch, "cpu"))))
    for shape, dim in (((0, 3), 0), ((0, 3), 1), ((2, 0), 1)):
        got, want = (lib.zeros(shape, device=dev).sort(dim)
                     for lib, dev in ((nbgrad, "cuda"), (torch, "cpu")))
        assert tuple(got.values.shape) == tuple(want.values.shape)
        assert tuple(got.indices.shape) == tuple(want.indices.shape)


@pytest.mark.cuda
@pytest.mark.parametrize("n", [0, 1, 9, 40])
def test_cuda_compactions(small_tiles, n):
    """unique, unique_consecutive, nonzero (scans of one and several blocks, nested)."""
    rng = np.random.default_rng(n)
    # (no -0.: which of -0. and 0. stands for both is PyTorch's sort's choice)
    data = rng.choice(np.array([0.0, 1.0, 2.0, np.nan, 2.0]), n)
    flat = data.copy()
    grid = rng.integers(0, 2, (3, n)).astype(np.float32)
    # (the inverse of NaNs follows the sort's order of NaNs: the CPU backend's is the reference)
    for fn, ref in ((lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True), nbgrad),
                    (lambda lib, x: lib.unique(x, return_counts=True), torch),
                    (lambda lib, x: lib.unique_consecutive(x, return_inverse=True,
                                                           return_counts=True), torch),
                    (lambda lib, x: lib.nonzero(x), torch)):
        got = fn(nbgrad, nbgrad.tensor(flat, device="cuda"))
        _same_cuda(got, fn(ref, ref.tensor(flat)))
    for x in (grid, grid.T, grid[:, ::2], np.array(1.5), np.array(0.0)):
        got, want = nbgrad.tensor(x, device="cuda").nonzero(), torch.tensor(x).nonzero()
        _same_cuda(got, want)
    got, want = (lib.unique(lib.tensor(grid, device=dev).t(), return_inverse=True)  # strided
                 for lib, dev in ((nbgrad, "cuda"), (torch, "cpu")))
    _same_cuda(got, want)


@pytest.mark.cuda
@pytest.mark.filterwarnings("ignore:torch.searchsorted")  # (torch's, on the transposed values)
@pytest.mark.parametrize("bins", [3, 7])  # per-block bins in shared memory, or global atomics
def test_cuda_histc_and_searches(small_tiles, bins):
    data = np.array([[0.0, 0.5, 1.0, 3.0, np.nan, -0.5], [2.0, 2.99, 3.0, 1.5, 0.25, 9.0]])
    for fn in (lambda lib, x: lib.histc(x, bins=bins, min=0, max=3),
               lambda lib, x: lib.histc(x.t(), bins=bins, min=0, max=3),  # strided
               lambda lib, x: lib.searchsorted(x[:, :4].sort().values, x, right=bins == 3),
               lambda lib, x: lib.bucketize(x.t(), x[1, :4], right=bins == 7)):
        for dtype in ("float32", "float64"):
            got = fn(nbgrad, nbgrad.tensor(data, dtype=getattr(nbgrad, dtype), device="cuda"))
            _same_cuda(got, fn(torch, torch.tensor(data, dtype=getattr(torch, dtype))))


def test_topk_small_k_ties_and_signed_zeros(device):
    """topk's insertion path for float rows without NaN (k <= 64): values as
    PyTorch's, both directions (-0. ties 0., infinities in order; a row with
    a NaN takes the keys' path); indices point at the values and, on the CPU,
    are a stable sort's (ties: the lower index first; PyTorch promises no order)."""
    rng = np.random.default_rng(5)
    pool = np.array([1.0, -0.0, 0.0, 2.0, -1.0, np.inf, -np.inf, 2.0, 0.5])
    data = rng.choice(pool, (6, 40)).astype(np.float32)
    data[5, 7] = np.nan
    for k in (1, 3, 5):
        for largest in (True, False):
            got = nbgrad.tensor(data, device=device).topk(k, largest=largest)
            want = torch.tensor(data).topk(k, largest=largest)
            assert np.array_equal(got.values.cpu().numpy(), want.values.numpy(), equal_nan=True)
            indices = got.indices.cpu().numpy()
            assert np.array_equal(np.take_along_axis(data, indices, 1), got.values.cpu().numpy(),
                                  equal_nan=True)
            if device == "cpu":  # (the CUDA backend picks among ties its own way)
                stable = np.argsort(-data[:5] if largest else data[:5], 1, kind="stable")
                assert np.array_equal(indices[:5], stable[:, :k])
