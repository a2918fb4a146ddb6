"""Statistics and further reductions (nbgrad/ops/statistics.py) and the norms
of nbgrad.linalg against PyTorch: values, dtypes, shapes, result types,
backward node names, gradients (against PyTorch and by finite differences),
second derivatives, and error texts. Table-driven: a new op is a new entry."""
import math
import warnings

import numpy as np
import pytest
import torch

import nbgrad
from helpers import (assert_close, assert_same_error, dtype_name, lib_of, node_name,
                     second_derivatives_like_torch)
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {"prod", "std", "var", "std_mean", "var_mean", "norm", "logsumexp", "median",
              "nanmedian", "mode", "argmax", "argmin", "any", "all", "count_nonzero", "aminmax",
              "nansum", "nanmean"}

RNG = np.random.default_rng(15)
DATA = {
    "rand": RNG.standard_normal((3, 4)),
    "rand3": RNG.standard_normal((2, 3, 4)),
    "ties": np.array([[1.0, 5.0, 5.0, -2.0], [5.0, 0.0, 5.0, 5.0], [-3.0, -3.0, 2.0, -3.0]]),
    "zeros": np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0], [0.5, -2.0, 1.5, 3.0]]),
    "nan": np.array([[1.0, np.nan, 0.5, 2.0], [np.nan, np.nan, 4.0, np.nan],
                     [3.0, -1.0, np.nan, 0.0]]),
    "int": np.array([[3, 0, 2, 5], [1, 1, 0, 7], [2, 4, 6, 2]]),
    "bool": np.array([[True, False, True], [True, True, True]]),
    "scalar": np.array(1.5),
    "vec": np.array([0.5, -2.0, 1.5, 3.0, -0.25]),
    "dups": RNG.integers(0, 4, (6, 9)).astype(float),  # many ties: which index is picked
    # columns of -inf, nan, inf and plain numbers (reductions over dim 0: the column kernels)
    "specials": np.array([[-np.inf, np.nan, 1.0, np.inf, 0.5], [-np.inf, 1.0, np.inf, 2.0, -1.0],
                          [-np.inf, 2.0, 3.0, np.inf, 2.0]]),
}
DTYPES = {"dups": "float64", "specials": "float64",
          "rand": "float64", "rand3": "float64", "ties": "float64", "zeros": "float64",
          "nan": "float64", "int": "int64", "bool": "bool", "scalar": "float64", "vec": "float64"}


def outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def make(lib, key, dtype=None, device="cpu"):
    dtype = getattr(lib, dtype or DTYPES[key])
    grad = dtype_name(dtype).startswith("float")
    extra = {"device": device} if lib is nbgrad else {}
    return lib.tensor(DATA[key], dtype=dtype, requires_grad=grad, **extra)


def compare(fn, key, dtype=None, device="cpu", grad=True):
    """``fn(lib, x)`` in nbgrad and torch: every output's values, dtype, shape
    and node name; the result type's name; the gradient of a weighted sum of
    the first output."""
    results = []
    for lib in (nbgrad, torch):
        x = make(lib, key, dtype, device if lib is nbgrad else "cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(lib, x)
        first = outputs(result)[0]
        if grad and first.requires_grad:
            w = np.linspace(-1.0, 2.0, first.numel()).reshape(tuple(first.shape))
            (first * lib.tensor(w, dtype=first.dtype, **({"device": device} if lib is nbgrad
                                                          else {}))).sum().backward()
        results.append((result, x))
    (ours, x), (theirs, tx) = results
    assert type(ours).__name__ == type(theirs).__name__
    if hasattr(theirs, "_fields"):
        assert ours._fields == theirs._fields
    for a, b in zip(outputs(ours), outputs(theirs), strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert dtype_name(a.dtype) == dtype_name(b.dtype)
        assert a.device.type == nbgrad.device(device).type
        assert_close(a, b)
        assert node_name(a.grad_fn) == node_name(b.grad_fn), (a.grad_fn, b.grad_fn)
    assert (x.grad is None) == (tx.grad is None)
    if x.grad is not None:
        assert_close(x.grad, tx.grad)
    return ours, theirs


INF = math.inf
# (id, fn(lib, x), data key, gradcheck the first output)
CASES = [
    ("prod", lambda L, x: x.prod(), "rand", True),
    ("prod-dim", lambda L, x: L.prod(x, 1), "rand", True),
    ("prod-dim-keepdim", lambda L, x: x.prod(-1, keepdim=True), "rand3", True),
    ("prod-zeros", lambda L, x: x.prod(), "zeros", False),
    ("prod-zeros-dim0", lambda L, x: x.prod(0), "zeros", False),
    ("prod-zeros-dim1", lambda L, x: x.prod(1), "zeros", False),
    ("prod-dtype", lambda L, x: x.prod(1, dtype=L.float32), "rand", False),
    ("prod-int", lambda L, x: x.prod(), "int", False),
    ("prod-bool", lambda L, x: x.prod(0), "bool", False),
    ("prod-scalar", lambda L, x: x.prod(0), "scalar", True),
    ("var", lambda L, x: x.var(), "rand", True),
    ("var-dim", lambda L, x: x.var(1), "rand3", True),
    ("var-tuple-keepdim", lambda L, x: L.var(x, (0, 2), keepdim=True), "rand3", True),
    ("var-unbiased-false", lambda L, x: x.var(1, False), "rand", True),
    ("var-unbiased-positional", lambda L, x: x.var(False), "rand", True),
    ("var-correction", lambda L, x: x.var(0, correction=2), "rand", True),
    ("var-one-element", lambda L, x: x.var(), "scalar", False),
    ("std", lambda L, x: x.std(), "rand", True),
    ("std-dim-keepdim", lambda L, x: L.std(x, -1, True, True), "rand3", True),
    ("std-correction0", lambda L, x: x.std(dim=0, correction=0), "rand", True),
    ("std-constant", lambda L, x: (x * 0).std(1), "rand", False),
    ("std_mean", lambda L, x: L.std_mean(x, 1), "rand", True),
    ("var_mean", lambda L, x: L.var_mean(x), "rand3", True),
    ("var_mean-keepdim", lambda L, x: L.var_mean(x, (1,), keepdim=True), "rand3", True),
    ("logsumexp", lambda L, x: x.logsumexp(1), "rand", True),
    ("logsumexp-tuple", lambda L, x: L.logsumexp(x, (0, 2), keepdim=True), "rand3", True),
    ("logsumexp-large", lambda L, x: (x * 1000).logsumexp(0), "rand", False),
    ("logsumexp-int", lambda L, x: x.logsumexp(0), "int", False),
    ("logsumexp-scalar", lambda L, x: x.logsumexp(0), "scalar", True),
    ("logsumexp-dim0", lambda L, x: x.logsumexp(0), "rand", True),
    ("logsumexp-leading", lambda L, x: L.logsumexp(x, (0, 1)), "rand3", True),
    ("logsumexp-dim0-specials", lambda L, x: x.logsumexp(0), "specials", False),
    ("var-leading", lambda L, x: L.var(x, (1, 0)), "rand3", True),
    ("var-dim0-specials", lambda L, x: x.var(0), "specials", False),
    ("prod-leading", lambda L, x: x.prod(0), "rand3", True),
    ("prod-dim0-specials", lambda L, x: x.prod(0), "specials", False),
    ("median", lambda L, x: x.median(), "rand", True),
    ("median-ties", lambda L, x: x.median(), "ties", False),
    ("median-dim", lambda L, x: x.median(1), "rand", True),
    ("median-dim-keepdim", lambda L, x: L.median(x, 0, keepdim=True), "rand3", True),
    ("median-nan", lambda L, x: x.median(1), "nan", False),
    ("median-nan-all", lambda L, x: x.median(), "nan", False),
    ("median-int", lambda L, x: x.median(), "int", False),
    ("median-scalar", lambda L, x: x.median(0), "scalar", True),
    ("nanmedian", lambda L, x: x.nanmedian(), "nan", False),
    ("nanmedian-dim", lambda L, x: x.nanmedian(1), "nan", False),
    ("nanmedian-rand", lambda L, x: x.nanmedian(0), "rand", True),
    ("median-dups", lambda L, x: x.median(1), "dups", False),
    ("median-dups-dim0", lambda L, x: x.median(0), "dups", False),
    ("mode-dups", lambda L, x: x.mode(1), "dups", False),
    ("mode-dups-dim0", lambda L, x: x.mode(0), "dups", False),
    ("mode", lambda L, x: x.mode(), "ties", False),
    ("mode-dim0", lambda L, x: L.mode(x, 0), "ties", False),
    ("mode-int-keepdim", lambda L, x: x.mode(1, True), "int", False),
    ("argmax", lambda L, x: x.argmax(), "ties", False),
    ("argmax-dim", lambda L, x: L.argmax(x, 1), "ties", False),
    ("argmax-keepdim", lambda L, x: x.argmax(keepdim=True), "rand3", False),
    ("argmax-nan", lambda L, x: x.argmax(1), "nan", False),
    ("argmin-dim-keepdim", lambda L, x: x.argmin(0, keepdim=True), "ties", False),
    ("argmin-int", lambda L, x: L.argmin(x), "int", False),
    ("any", lambda L, x: x.any(), "zeros", False),
    ("any-dim", lambda L, x: (x * 0).any(1), "zeros", False),
    ("any-tuple", lambda L, x: L.any(x, (0, 1), keepdim=True), "rand3", False),
    ("all", lambda L, x: x.all(), "bool", False),
    ("all-dim", lambda L, x: L.all(x, 1), "int", False),
    ("all-nan", lambda L, x: x.all(0), "nan", False),
    ("count_nonzero", lambda L, x: L.count_nonzero(x), "zeros", False),
    ("count_nonzero-tuple", lambda L, x: x.count_nonzero((0, 1)), "rand3", False),
    ("count_nonzero-dim", lambda L, x: x.count_nonzero(dim=0), "int", False),
    ("aminmax", lambda L, x: x.aminmax(), "rand", True),
    ("aminmax-dim", lambda L, x: L.aminmax(x, dim=1, keepdim=True), "ties", False),
    ("aminmax-int", lambda L, x: x.aminmax(dim=0), "int", False),
    ("nansum", lambda L, x: x.nansum(), "nan", False),
    ("nansum-dim", lambda L, x: L.nansum(x, 1, keepdim=True), "nan", False),
    ("nansum-int", lambda L, x: x.nansum(0), "int", False),
    ("nansum-rand", lambda L, x: x.nansum((0, 2)), "rand3", True),
    ("nanmean", lambda L, x: x.nanmean(), "nan", False),
    ("nanmean-dim", lambda L, x: L.nanmean(x, 1), "nan", False),
    ("nanmean-rand", lambda L, x: x.nanmean(0), "rand", True),
    ("norm", lambda L, x: x.norm(), "rand", True),
    ("norm-p1-dim", lambda L, x: x.norm(1, dim=1), "rand", True),
    ("norm-inf", lambda L, x: L.norm(x, INF), "rand", True),
    ("norm-ninf-dim", lambda L, x: x.norm(-INF, 0), "rand", True),
    ("norm-p3", lambda L, x: x.norm(3, dim=(0, 2), keepdim=True), "rand3", True),
    ("norm-p0.5", lambda L, x: x.norm(0.5), "rand", True),
    ("norm-p0", lambda L, x: x.norm(0), "zeros", False),
    ("norm-fro-dim", lambda L, x: x.norm("fro", dim=(1, 2)), "rand3", True),
    ("norm-zeros", lambda L, x: (x * 0).norm(dim=1), "rand", False),
    ("norm-ties-inf", lambda L, x: x.norm(INF, 1), "ties", False),
    ("norm-dtype", lambda L, x: x.float().norm(dtype=L.float64), "rand", False),
    ("vector_norm", lambda L, x: L.linalg.vector_norm(x), "rand3", True),
    ("vector_norm-ord", lambda L, x: L.linalg.vector_norm(x, 1.5, -1, True), "rand3", True),
    ("matrix_norm", lambda L, x: L.linalg.matrix_norm(x), "rand3", True),
    ("matrix_norm-1", lambda L, x: L.linalg.matrix_norm(x, 1), "rand3", True),
    ("matrix_norm-ninf", lambda L, x: L.linalg.matrix_norm(x, -INF, dim=(2, 0)), "rand3", True),
    ("matrix_norm-inf-keepdim", lambda L, x: L.linalg.matrix_norm(x, INF, keepdim=True), "rand",
     True),
    ("linalg.norm", lambda L, x: L.linalg.norm(x), "rand3", True),
    ("linalg.norm-vec", lambda L, x: L.linalg.norm(x, 3), "vec", True),
    ("linalg.norm-matrix", lambda L, x: L.linalg.norm(x, -1), "rand", True),
    ("linalg.norm-dim", lambda L, x: L.linalg.norm(x, dim=1), "rand", True),
]


@pytest.mark.parametrize("fn,key,check", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_like_torch(fn, key, check):
    compare(fn, key)


@pytest.mark.parametrize("fn,key", [c[1:3] for c in CASES if c[3]],
                         ids=[c[0] for c in CASES if c[3]])
def test_gradients_by_finite_differences(fn, key):
    x = make(nbgrad, key)

    def first(t):
        return outputs(fn(nbgrad, t))[0]
    assert gradcheck(first, (x,))
    assert gradgradcheck(first, (x,))


FLOAT32 = ["prod-dim", "var-dim", "std", "logsumexp", "logsumexp-dim0", "var-leading", "median-dim", "norm", "norm-p3",
           "nanmean-rand", "aminmax"]


@pytest.mark.parametrize("name", FLOAT32)
def test_float32(name):
    fn, key = next(c[1:3] for c in CASES if c[0] == name)
    compare(fn, key, "float32")


def test_nanmedian_of_nans():
    # (PyTorch's index of an all-NaN line depends on its selection's order: not compared)
    values, _ = nbgrad.full((2, 4), math.nan).nanmedian(1)
    assert np.isnan(values.numpy()).all()
    assert math.isnan(nbgrad.full((3,), math.nan).nanmedian().item())


def test_std_warns_without_degrees_of_freedom():
    x = nbgrad.tensor([1.0])
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert math.isnan(x.var().item())


def test_out():
    x = nbgrad.tensor(DATA["rand"])
    out = nbgrad.empty(0, dtype=nbgrad.float64)
    assert nbgrad.prod(x, 1, out=out) is out
    assert_close(out, torch.tensor(DATA["rand"]).prod(1))
    out = nbgrad.empty(4, dtype=nbgrad.float64)
    nbgrad.logsumexp(x, 0, out=out)
    assert_close(out, torch.tensor(DATA["rand"]).logsumexp(0))


ERRORS = [
    ("var-int", lambda L: L.tensor([1, 2]).var()),
    ("std-int", lambda L: L.ones(3, dtype=L.int64).std()),
    ("var_mean-int", lambda L: L.var_mean(L.ones(3, dtype=L.int64))),
    ("prod-tuple", lambda L: L.ones(2, 3).prod((0, 1))),
    ("prod-dim-range", lambda L: L.ones(2, 3).prod(2)),
    ("logsumexp-no-dim", lambda L: L.ones(2).logsumexp()),
    ("median-empty-dim", lambda L: L.ones(2, 0).median(1)),
    ("median-bool", lambda L: L.tensor([True, False]).median()),
    ("nanmedian-bool-dim", lambda L: L.tensor([[True, False]]).nanmedian(1)),
    ("argmax-empty", lambda L: L.ones(0).argmax()),
    ("argmax-bool", lambda L: L.ones(3, dtype=L.bool).argmax()),
    ("argmax-tuple", lambda L: L.ones(2, 3).argmax((0, 1))),
    ("aminmax-empty", lambda L: L.ones(0).aminmax()),
    ("aminmax-positional", lambda L: L.aminmax(L.ones(2), 0), False),
    ("nanmean-int", lambda L: L.tensor([1, 2]).nanmean()),
    ("keepdim-not-bool", lambda L: L.ones(2, 3).std(1, True, 1), False),
    ("any-dim-range", lambda L: L.ones(2, 3).any(3)),
    ("vector_norm-int", lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.int64))),
    ("vector_norm-dim", lambda L: L.linalg.vector_norm(L.ones(3), dim=2)),
    ("vector_norm-ord-str", lambda L: L.linalg.vector_norm(L.ones(3), ord="fro")),
    ("vector_norm-empty-inf", lambda L: L.linalg.vector_norm(L.ones(0), ord=math.inf)),
    ("vector_norm-empty-neg", lambda L: L.linalg.vector_norm(L.ones(0), ord=-1)),
    ("matrix_norm-1d", lambda L: L.linalg.matrix_norm(L.ones(3))),
    ("matrix_norm-ord", lambda L: L.linalg.matrix_norm(L.ones(3, 3), ord=3)),
    ("matrix_norm-same-dims", lambda L: L.linalg.matrix_norm(L.ones(3, 3), dim=(0, 0))),
    ("linalg.norm-3d-ord", lambda L: L.linalg.norm(L.ones(3, 3, 3), 2)),
    ("norm-int", lambda L: L.norm(L.ones(3, dtype=L.int64))),
    ("norm-nuc-1d", lambda L: L.norm(L.ones(3), "nuc")),
]


@pytest.mark.parametrize("fn,exact", [(e[1], e[2] if len(e) > 2 else True) for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_errors_like_torch(fn, exact):
    assert_same_error(fn, exact)


def test_second_derivatives_like_torch():
    x = DATA["rand"]
    for fn in (lambda t: t.std(1), lambda t: t.logsumexp(0), lambda t: t.prod(1),
               lambda t: lib_of(t).linalg.vector_norm(t, 3, 1),
               lambda t: lib_of(t).var_mean(t, 0)[0], lambda t: t.median(1)[0],
               lambda t: t.nansum(1), lambda t: lib_of(t).linalg.matrix_norm(t)):
        second_derivatives_like_torch(fn, x)


CUDA_CASES = ["prod-dim", "prod-zeros-dim1", "std_mean", "logsumexp", "median-dim", "median",
              "nanmedian-dim", "var_mean-keepdim", "nanmedian", "prod", "median-dups",
              "mode-dups-dim0", "prod-int", "all-dim",
              "mode-dim0", "argmax-dim", "any-dim", "count_nonzero", "aminmax-dim", "nansum-dim",
              "nanmean-dim", "norm-p3", "norm-inf", "matrix_norm-1", "var-dim"]


@pytest.mark.parametrize("name", CUDA_CASES)
def test_devices(name, device):
    fn, key = next(c[1:3] for c in CASES if c[0] == name)
    compare(fn, key, device=device)


def forward_mode_like_torch(fn, x, v):
    """The tangent of ``fn``'s output (forward-mode AD) in nbgrad and torch."""
    import torch.autograd.forward_ad as tfw
    import nbgrad.autograd.forward_ad as nfw
    tangents = []
    for lib, fw in ((nbgrad, nfw), (torch, tfw)):
        with fw.dual_level():
            out = fn(lib, fw.make_dual(lib.tensor(x), lib.tensor(v)))
            tangents.append(fw.unpack_dual(out).tangent)
    assert tangents[0] is not None
    assert_close(tangents[0], tangents[1])


FORWARD_MODE = [lambda L, t: t.std(1), lambda L, t: t.prod(1), lambda L, t: t.logsumexp(0),
                lambda L, t: t.median(1)[0], lambda L, t: L.var_mean(t, 1)[1],
                lambda L, t: L.aminmax(t, dim=0)[1], lambda L, t: t.nansum(0),
                lambda L, t: L.linalg.vector_norm(t, 3), lambda L, t: L.linalg.matrix_norm(t, 1)]


@pytest.mark.parametrize("k", range(len(FORWARD_MODE)))
def test_forward_mode_like_torch(k):
    forward_mode_like_torch(FORWARD_MODE[k], DATA["rand"], RNG.standard_normal((3, 4)))
