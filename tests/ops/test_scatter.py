"""Gathers, scatters, masked ops and nonzero (nbgrad/ops/scatter.py) against
PyTorch: values, dtypes, shapes, node names and gradients (table-driven:
one entry per op and form), gradients by finite differences and second
derivatives, in-place forms (version bumps, leaf checks), error texts."""
import warnings

import numpy as np
import pytest
import torch

import nbgrad
from helpers import (assert_close, assert_same_error, lib_of, node_name, raises_like_torch,
                     run_like_torch, second_derivatives_like_torch, values)
from nbgrad.autograd import gradcheck

TESTED_OPS = {"gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce",
              "scatter_reduce_", "index_select", "index_add", "index_add_", "index_copy",
              "index_copy_", "index_fill", "index_fill_", "masked_fill", "masked_fill_",
              "masked_select", "masked_scatter", "masked_scatter_", "take", "take_along_dim",
              "nonzero", "argwhere"}


def index(x, data, dtype=None):
    """An index (or mask) tensor of ``x``'s library, on its device."""
    if lib_of(x) is torch:
        return torch.tensor(data, dtype=dtype and getattr(torch, dtype))
    if dtype and not hasattr(nbgrad, dtype):
        pytest.skip(f"nbgrad has no {dtype} yet")
    return nbgrad.tensor(data, dtype=dtype and getattr(nbgrad, dtype), device=x.device)


I2 = [[0, 1, 1], [3, 0, 3]]  # (2, 3), repeats, into dim 1 of (3, 4)
I0 = [[2, 0, 1, 2], [0, 0, 2, 1]]  # (2, 4) into dim 0 of (3, 4)
MASK = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]


def clone(x):
    return x * 1  # a non-leaf, so the in-place forms may write into it


# name -> (fn of the leaves, the leaves' shapes)
CASES = {
    "gather1": (lambda x: x.gather(1, index(x, I2)), [(3, 4)]),
    "gather0": (lambda x: lib_of(x).gather(x, 0, index(x, I0)), [(3, 4)]),
    "gather_t": (lambda x: x.t().gather(1, index(x, [[0, 2], [1, 1]])), [(3, 4)]),
    "gather_neg_dim": (lambda x: x.gather(-1, index(x, [[1], [0], [3]])), [(3, 4)]),
    "gather_int32": (lambda x: x.gather(1, index(x, I2, "int32")), [(3, 4)]),
    "take_along_dim": (lambda x: lib_of(x).take_along_dim(x, index(x, [[0], [3], [1]]), 1),
                       [(3, 4)]),
    "take_along_dim_bcast": (lambda x: lib_of(x).take_along_dim(x, index(x, [[0, 2]]), 1), [(3, 4)]),
    "take_along_dim_flat": (lambda x: lib_of(x).take_along_dim(x, index(x, [5, 0, 5])), [(3, 4)]),
    "scatter_src": (lambda x, s: x.scatter(1, index(x, [[0, 1, 2], [3, 0, 2]]), s), [(3, 4), (2, 3)]),
    "scatter_value": (lambda x: x.scatter(0, index(x, I0), 2.5), [(3, 4)]),
    "scatter_": (lambda x, s: clone(x).scatter_(1, index(x, [[0, 1, 2], [3, 0, 2]]), s),
                 [(3, 4), (2, 3)]),
    "scatter_add": (lambda x, s: x.scatter_add(1, index(x, I2), s), [(3, 4), (2, 3)]),
    "scatter_add_fn": (lambda x, s: lib_of(x).scatter_add(x, 0, index(x, I0), s), [(3, 4), (2, 4)]),
    "scatter_add_": (lambda x, s: clone(x).scatter_add_(1, index(x, I2), s), [(3, 4), (2, 3)]),
    "index_select0": (lambda x: x.index_select(0, index(x, [2, 0, 2])), [(3, 4)]),
    "index_select1": (lambda x: lib_of(x).index_select(x, 1, index(x, [3, 1])), [(3, 4)]),
    "index_select_0d": (lambda x: x.index_select(1, index(x, 2)), [(3, 4)]),
    "index_add": (lambda x, s: x.index_add(0, index(x, [2, 0, 2]), s), [(3, 4), (3, 4)]),
    "index_add_alpha": (lambda x, s: x.index_add(1, index(x, [3, 1]), s, alpha=-2.0),
                        [(3, 4), (3, 2)]),
    "index_add_": (lambda x, s: clone(x).index_add_(0, index(x, [1]), s), [(3, 4), (1, 4)]),
    "index_copy": (lambda x, s: x.index_copy(1, index(x, [3, 0]), s), [(3, 4), (3, 2)]),
    "index_copy_": (lambda x, s: clone(x).index_copy_(0, index(x, [2, 0]), s), [(3, 4), (2, 4)]),
    "index_fill": (lambda x: x.index_fill(1, index(x, [3, 0, -1]), -1.5), [(3, 4)]),
    "index_fill_tensor": (lambda x, v: x.index_fill(0, index(x, [1]), v.sum()), [(3, 4), (2,)]),
    "index_fill_": (lambda x: clone(x).index_fill_(0, index(x, [2]), 0.5), [(3, 4)]),
    "masked_fill": (lambda x: x.masked_fill(index(x, MASK), 0.25), [(3, 4)]),
    "masked_fill_bcast": (lambda x: x.masked_fill(index(x, [True, False, True, False]), 3.0),
                          [(3, 4)]),
    "masked_fill_tensor": (lambda x, v: x.masked_fill(index(x, MASK), v.sum()), [(3, 4), (2,)]),
    "masked_fill_": (lambda x: clone(x).masked_fill_(index(x, MASK), -1.0), [(3, 4)]),
    "masked_select": (lambda x: x.masked_select(index(x, MASK)), [(3, 4)]),
    "masked_select_bcast": (lambda x: lib_of(x).masked_select(x, index(x, [[True], [False]])),
                            [(3,)]),
    "masked_scatter": (lambda x, s: x.masked_scatter(index(x, MASK), s), [(3, 4), (2, 5)]),
    "masked_scatter_": (lambda x, s: clone(x).masked_scatter_(index(x, MASK), s), [(3, 4), (6,)]),
    "take": (lambda x: x.take(index(x, [[0, 11], [-1, 5]])), [(3, 4)]),
    "take_t": (lambda x: lib_of(x).take(x.t(), index(x, [0, 1, 2, 1])), [(3, 4)]),
    "gather_0d": (lambda x: x.sum().gather(0, index(x, 0)), [(2,)]),
}
for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _include in (True, False):
        CASES[f"scatter_reduce_{_reduce}_{_include}"] = (
            lambda x, s, r=_reduce, inc=_include:
            x.scatter_reduce(1, index(x, I2), s, r, include_self=inc), [(3, 4), (2, 3)])
CASES["scatter_reduce_"] = (lambda x, s: clone(x).scatter_reduce_(0, index(x, I0), s, "amax"),
                            [(3, 4), (2, 4)])
NODE_NAMES = {"gather1": "GatherBackward", "take_along_dim": "GatherBackward",
              "scatter_src": "ScatterBackward", "scatter_value": "ScatterBackward",
              "scatter_add": "ScatterAddBackward", "index_select0": "IndexSelectBackward",
              "index_add": "IndexAddBackward", "index_copy": "IndexCopyBackward",
              "index_fill": "IndexFillBackward", "masked_fill": "MaskedFillBackward",
              "masked_fill_tensor": "MaskedFillBackward", "masked_select": "MaskedSelectBackward",
              "masked_scatter": "MaskedScatterBackward", "take": "TakeBackward",
              "scatter_reduce_amax_True": "ScatterReduceBackward"}


def _arrays(shapes, seed=0):
    # distinct values, some ties with amax/amin of the reductions (rounded)
    return [np.round(values(s, seed=seed + k), 1) for k, s in enumerate(shapes)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name):
    fn, shapes = CASES[name]
    for dtype in (nbgrad.float32, nbgrad.float64):
        out, want = run_like_torch(fn, *_arrays(shapes), device="cpu", dtype=dtype)
    if name in NODE_NAMES:
        assert node_name(out.grad_fn) == NODE_NAMES[name] == node_name(want.grad_fn)


GRADCHECKED = [n for n in sorted(CASES) if not n.startswith("scatter_reduce_prod")] + [
    "scatter_reduce_prod_True"]


@pytest.mark.parametrize("name", GRADCHECKED)
def test_gradcheck(name):
    fn, shapes = CASES[name]
    # values apart from each other, so amax/amin have no ties and finite differences are smooth
    arrays = [values(s, seed=3 + k, low=0.5, high=2.0) for k, s in enumerate(shapes)]
    leaves = [nbgrad.tensor(a, dtype=nbgrad.float64, requires_grad=True) for a in arrays]
    assert gradcheck(fn, leaves)


@pytest.mark.parametrize("name", ["gather1", "scatter_src", "scatter_add", "index_select0",
                                  "index_add_alpha", "masked_select", "masked_scatter", "take",
                                  "masked_fill_tensor", "scatter_reduce_mean_False",
                                  "scatter_reduce_amax_True", "scatter_reduce_prod_True",
                                  "scatter_reduce_"])
def test_second_derivatives(name):
    fn, shapes = CASES[name]
    second_derivatives_like_torch(fn, *_arrays(shapes, seed=11))


def test_prod_with_zeros():
    def fn(x, s):
        return x.scatter_reduce(1, index(x, I2), s, "prod")
    x = np.array([[0.0, 2.0, 3.0, 1.5], [1.0, 0.0, 2.0, 0.5], [2.0, 1.0, 1.0, 1.0]])
    s = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
    run_like_torch(fn, x, s, device="cpu", dtype=nbgrad.float64)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integer_dtypes(dtype):
    if not hasattr(nbgrad, dtype):
        pytest.skip(f"nbgrad has no {dtype} yet")
    data = np.arange(12).reshape(3, 4) % 5
    for op in (lambda lib, x: x.gather(1, index(x, I2)),
               lambda lib, x: x.scatter(1, index(x, I2), 1),
               lambda lib, x: x.index_select(0, index(x, [2, 0])),
               lambda lib, x: x.masked_fill(index(x, MASK), 1),
               lambda lib, x: x.masked_select(index(x, MASK)),
               lambda lib, x: x.take(index(x, [3, 7])),
               lambda lib, x: lib.nonzero(x),
               lambda lib, x: lib.argwhere(x)):
        got, want = (op(lib, lib.tensor(data, dtype=getattr(lib, dtype))) for lib in (nbgrad, torch))
        assert got.dtype.name == str(want.dtype).split(".")[1] and got.shape == want.shape
        assert np.array_equal(got.numpy(), want.numpy())
    if dtype != "bool":
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include in (True, False):
                got, want = (lib.tensor(data, dtype=getattr(lib, dtype)).scatter_reduce(
                    1, index(lib.tensor(0), I2), lib.tensor(data[:2, :3] + 1, dtype=getattr(
                        lib, dtype)), reduce, include_self=include) for lib in (nbgrad, torch))
                assert np.array_equal(got.numpy(), want.numpy()), (reduce, include)


def test_scatter_reduce_argument():
    x = torch.zeros(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for reduce in ("add", "multiply"):
            got = nbgrad.zeros(3, 4).scatter(1, nbgrad.tensor(I2), nbgrad.ones(2, 3) * 2, reduce=reduce)
            want = x.scatter(1, torch.tensor(I2), torch.ones(2, 3) * 2, reduce=reduce)
            assert np.array_equal(got.numpy(), want.numpy())
            got = nbgrad.ones(3, 4).scatter(1, nbgrad.tensor(I2), 3.0, reduce=reduce)
            want = torch.ones(3, 4).scatter(1, torch.tensor(I2), 3.0, reduce=reduce)
            assert np.array_equal(got.numpy(), want.numpy())


def test_nonzero_forms():
    data = np.array([[0.0, 1.5, np.nan], [0.0, 0.0, -2.0]])
    for as_tuple in (False, True):
        got, want = (lib.nonzero(lib.tensor(data), as_tuple=as_tuple) for lib in (nbgrad, torch))
        got, want = (got, want) if as_tuple else ((got,), (want,))
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(g.numpy(), w.numpy()) and g.stride() == w.stride()
    got, want = (lib.where(lib.tensor(data) > 0) for lib in (nbgrad, torch))
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    for scalar in (0.0, 3.0):  # 0-d
        got, want = (lib.nonzero(lib.tensor(scalar)) for lib in (nbgrad, torch))
        assert got.shape == want.shape
        got, want = (lib.nonzero(lib.tensor(scalar), as_tuple=True) for lib in (nbgrad, torch))
        assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert nbgrad.argwhere(nbgrad.tensor(data)).tolist() == torch.argwhere(torch.tensor(data)).tolist()


def test_in_place_bookkeeping():
    for write in (lambda lib, t: t.scatter_(0, index(t, [1]), 1.0),
                  lambda lib, t: t.scatter_add_(0, index(t, [1]), lib.ones(1)),
                  lambda lib, t: t.scatter_reduce_(0, index(t, [1]), lib.ones(1), "amax"),
                  lambda lib, t: t.index_add_(0, index(t, [1]), lib.ones(1)),
                  lambda lib, t: t.index_copy_(0, index(t, [1]), lib.ones(1)),
                  lambda lib, t: t.index_fill_(0, index(t, [1]), 2.0),
                  lambda lib, t: t.masked_fill_(index(t, [True, False, True]), 2.0),
                  lambda lib, t: t.masked_scatter_(index(t, [True, False, True]), lib.ones(3))):
        for lib in (nbgrad, torch):
            t = lib.zeros(3)
            before = t._version
            assert write(lib, t) is t and t._version == before + 1
        assert np.array_equal(write(nbgrad, nbgrad.zeros(3)).numpy(),
                              write(torch, torch.zeros(3)).numpy())
        assert_same_error(lambda lib: write(lib, lib.zeros(3, requires_grad=True)))
        assert_same_error(lambda lib: write(lib, lib.zeros(3, requires_grad=True)[1:]))


ERRORS = [
    lambda x: x.gather(1, index(x, [[5]])),
    lambda x: x.gather(0, index(x, [[-1]])),
    lambda x: x.gather(1, index(x, [[0.0]])),
    lambda x: x.gather(1, index(x, [0, 1])),
    lambda x: x.gather(1, index(x, [[0]] * 4)),
    lambda x: x.gather(2, index(x, [[0]])),
    lambda x: x.scatter(1, index(x, [[5]]), 1.0),
    lambda x: x.scatter(1, index(x, [[0]]), index(x, [[1.0]], "float64")),
    lambda x: x.scatter(1, index(x, [[0, 1, 2]]), x[:1, :2]),
    lambda x: x.scatter(1, index(x, [[0]]), x, reduce="mean"),
    lambda x: x.scatter_add(1, index(x, [[0.0]]), x),
    lambda x: x.scatter_reduce(1, index(x, [[0]]), x, "add"),
    lambda x: x.index_select(0, index(x, [5])),
    lambda x: x.index_select(0, index(x, [[0]])),
    lambda x: x.index_select(0, index(x, [0.0])),
    lambda x: x.index_add(0, index(x, [5, 0]), x[:2]),
    lambda x: x.index_add(0, index(x, [0, 1]), x),
    lambda x: x.index_add(0, index(x, [0]), x[:1, :3]),
    lambda x: x.index_add(0, index(x, [0]), index(x, [[1.0] * 4], "float64")),
    lambda x: x.index_copy(0, index(x, [5]), x[:1]),
    lambda x: x.index_copy(0, index(x, [0, 1]), x[:1]),
    lambda x: x.index_copy(0, index(x, [0], "int32"), x[:1]),
    lambda x: x.index_fill(0, index(x, [5]), 1.0),
    lambda x: x.index_fill(0, index(x, [0.0]), 1.0),
    lambda x: x.masked_fill(index(x, [[1.0]]), 1.0),
    lambda x: x.masked_select(index(x, [[1.0]])),
    lambda x: x.masked_scatter(index(x, [[True] * 4] * 3), x[:1]),
    lambda x: x.take(index(x, [12])),
    lambda x: x.take(index(x, [-13])),
    lambda x: x.take(index(x, [0], "int32")),
    lambda x: lib_of(x).take_along_dim(x, index(x, [[0.0]]), 1),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    raises_like_torch(ERRORS[k], values((3, 4)), device="cpu")


def test_refused_write_changes_nothing():
    t = nbgrad.zeros(3, 4)
    with pytest.raises(RuntimeError):
        t.scatter_(1, nbgrad.tensor([[0, 9]]), 1.0)
    assert t._version == 0 and not t.numpy().any()


CUDA_CASES = ["gather1", "scatter_src", "scatter_add_", "index_select0", "index_add",
              "masked_fill", "masked_select", "masked_scatter", "take", "scatter_reduce_amax_True",
              "scatter_reduce_mean_False"]


@pytest.mark.cuda
@pytest.mark.parametrize("name", CUDA_CASES)
def test_cuda(name):
    fn, shapes = CASES[name]
    run_like_torch(fn, *_arrays(shapes), device="cuda", dtype=nbgrad.float32)


@pytest.mark.cuda
def test_cuda_nonzero_and_second_derivatives():
    data = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -2.0]])
    got = nbgrad.nonzero(nbgrad.tensor(data, device="cuda"))
    assert got.device.type == "cuda"
    assert got.cpu().tolist() == torch.nonzero(torch.tensor(data)).tolist()
    second_derivatives_like_torch(CASES["gather1"][0], *_arrays(CASES["gather1"][1]), device="cuda")
    assert_close(nbgrad.tensor(data, device="cuda").masked_fill(
        nbgrad.tensor(data, device="cuda") > 0, 1.0).cpu(),
        torch.tensor(data).masked_fill(torch.tensor(data) > 0, 1.0))


def test_forward_mode():
    import torch.autograd.forward_ad as tfwd
    import nbgrad.autograd.forward_ad as nfwd
    x, t = values((3, 4), seed=4), values((3, 4), seed=5)
    got = {}
    for lib, fwd in ((nbgrad, nfwd), (torch, tfwd)):
        with fwd.dual_level():
            d = fwd.make_dual(lib.tensor(x), lib.tensor(t))
            i = lib.tensor([[0, 1], [2, 3], [1, 1]])
            outs = [d.gather(1, i), d.sort(1).values, d.topk(2).values,
                    d.scatter(1, i, lib.tensor(np.ones((3, 2)))), d.masked_select(d > 0),
                    d.index_select(0, lib.tensor([2, 0])), d.take(lib.tensor([5, 0])),
                    d.scatter_reduce(1, i, d[:, :2] * 2, "amax"), d.index_add(0, lib.tensor([1]), d[:1])]
            got[lib] = [fwd.unpack_dual(o).tangent.numpy() for o in outs]
    for ours, theirs in zip(got[nbgrad], got[torch], strict=True):
        assert_close(ours, theirs)


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("shape,dim", [((5, 6, 7), 1), ((5, 6, 7), 0), ((30, 25), 1),
                                       ((30, 25), 0)])
def test_contiguous_paths_like_torch(device, shape, dim, parallel, monkeypatch):
    """gather, index_select (int64 and int32 indices, on a 1-D input too) and
    the scatters on C-contiguous operands of one shape apart from ``dim``
    (the CPU's plain 3-D/row kernels) and on a transposed input (the strided
    kernels), with repeated indices, against
    PyTorch; ``parallel``: the CPU's prange kernels (threshold lowered)."""
    if parallel:
        if device != "cpu":
            pytest.skip("the CPU backend's parallel kernels")
        from nbgrad.backends.cpu import indexing
        monkeypatch.setattr(indexing, "PARALLEL_THRESHOLD", 16)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    src = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(0, shape[dim], shape)
    line = rng.integers(0, shape[dim], shape[dim] + 3)
    swapped = (shape[1], shape[0], *shape[2:])
    idx_t = rng.integers(0, swapped[dim], swapped)
    for lib in (nbgrad, torch):
        kw = {"device": device} if lib is nbgrad else {}
        t, s, i, i1, it = (lib.tensor(a, **kw) for a in (x, src, idx, line, idx_t))
        tt, st = t.transpose(0, 1), s.transpose(0, 1)  # (strided)
        out = [t.gather(dim, i), t.index_select(dim, i1), t.scatter_add(dim, i, s),
               t.scatter_reduce(dim, i, s, "amax"), t.scatter_reduce(dim, i, s, "prod"),
               tt.gather(dim, it), tt.scatter_add(dim, it, st), t.index_select(dim, i1.int()),
               tt.index_select(dim, i1 % swapped[dim]), t.reshape(-1).index_select(0, i1)]
        if lib is nbgrad:
            got = [o.cpu().numpy() for o in out]
        else:
            want = [o.numpy() for o in out]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
