"""Reductions and the softmax family (nbgrad/ops/reductions.py) against
PyTorch and NumPy: values, dtypes, gradients (ties included), layouts
(results' and gradients' strides), backward node names, error texts,
numerical stability; gradients also by finite differences; second
derivatives (and the softmaxes' third) against PyTorch and by finite
differences."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import nbgrad
from helpers import (assert_close, assert_same_error, assert_same_tensor, dtype_name, leaf,
                     lib_of, node_name, raises_like_torch, run_like_torch,
                     second_derivatives_like_torch, values)
from strided import strided
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {"sum", "mean", "amax", "amin", "max", "min", "softmax", "log_softmax"}  # tests/ops/test_exports.py


def outputs(result):
    """The tensors of a result (a tensor, or a values/indices pair)."""
    return list(result) if isinstance(result, tuple) else [result]


TIES = np.array([[1.0, 5.0, 5.0, -2.0], [5.0, 0.0, 5.0, 5.0], [-3.0, -3.0, 2.0, -3.0]])
RANDOM = np.random.default_rng(5).standard_normal((2, 3, 4))


def compare(op, array, dtype="float64", requires_grad=True):
    """Run ``op`` on nbgrad and torch; compare every output, then the
    gradient of a weighted sum of the first output."""
    rtol, atol = (1e-6, 1e-12) if dtype != "float32" else (2e-5, 1e-6)
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=requires_grad)
        result = op(lib, x)
        first = outputs(result)[0]
        if first.requires_grad:
            w = np.linspace(-1.0, 2.0, first.numel()).reshape(tuple(first.shape))
            (first * lib.tensor(w, dtype=first.dtype)).sum().backward()
        results.append((result, x))
    (result, x), (t_result, tx) = results
    assert type(result).__name__ == type(t_result).__name__ or not isinstance(t_result, tuple)
    for ours, theirs in zip(outputs(result), outputs(t_result), strict=True):
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert dtype_name(ours.dtype) == dtype_name(theirs.dtype)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                                   atol=atol, equal_nan=True)
        assert node_name(ours.grad_fn) == node_name(theirs.grad_fn)
    assert (x.grad is None) == (tx.grad is None)
    if x.grad is not None:
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=atol,
                                   equal_nan=True)
    return result, t_result


SUM_MEAN = [
    ("sum", lambda L, x: x.sum()),
    ("sum-dim", lambda L, x: x.sum(1)),
    ("sum-negative-dim", lambda L, x: x.sum(-1)),
    ("sum-tuple", lambda L, x: x.sum((0, 2))),
    ("sum-list-negative", lambda L, x: x.sum([-1, 0])),
    ("sum-keepdim", lambda L, x: x.sum(1, keepdim=True)),
    ("sum-tuple-keepdim", lambda L, x: x.sum((0, -1), keepdim=True)),
    ("sum-empty-tuple-is-all", lambda L, x: x.sum(())),
    ("sum-all-keepdim", lambda L, x: x.sum(dim=None, keepdim=True)),
    ("sum-dtype", lambda L, x: x.sum(dtype=L.float32)),
    ("sum-dim-dtype", lambda L, x: x.sum(0, dtype=L.float32)),
    ("sum-function", lambda L, x: L.sum(x, 2)),
    ("mean", lambda L, x: x.mean()),
    ("mean-dim", lambda L, x: x.mean(0)),
    ("mean-tuple-keepdim", lambda L, x: x.mean((1, 2), keepdim=True)),
    ("mean-negative", lambda L, x: x.mean(-2)),
    ("mean-empty-tuple-is-all", lambda L, x: x.mean(dim=[])),
    ("mean-function", lambda L, x: L.mean(x, 1)),
    ("sum-numpy-int-dim", lambda L, x: x.sum(np.int64(1))),
    ("sum-0d-tensor-dim", lambda L, x: x.sum(L.tensor(1))),
    ("mean-0d-tensor-dims", lambda L, x: x.mean((L.tensor(0), 2))),
]


@pytest.mark.parametrize("op", [c[1] for c in SUM_MEAN], ids=[c[0] for c in SUM_MEAN])
def test_sum_and_mean_match_torch(op):
    compare(op, RANDOM)


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("op", [
    lambda L, x: x.sum(), lambda L, x: x.sum(0), lambda L, x: x.sum((0, 1), keepdim=True),
    lambda L, x: x.sum(dtype=L.float64), lambda L, x: x.mean(dtype=L.float64),
    lambda L, x: x.mean(1, dtype=L.float32),
], ids=["sum", "sum-dim", "sum-keepdim", "sum-float-dtype", "mean-dtype", "mean-dim-dtype"])
def test_integer_and_bool_reductions(op, dtype):
    """Integer and bool sums are int64, as in PyTorch; means need a float dtype."""
    compare(op, np.array([[3, 0, 2], [1, 1, 0]]), dtype=dtype, requires_grad=False)


def test_float_sum_cast_to_an_integer_dtype():
    compare(lambda L, x: x.sum(dtype=L.int64), np.array([1.7, 2.6, -0.5]), requires_grad=False)


@pytest.mark.parametrize("op", [
    lambda L, x: x.sum(), lambda L, x: x.sum(0), lambda L, x: x.sum(1), lambda L, x: x.mean(),
    lambda L, x: x.mean(0), lambda L, x: x.mean(1, keepdim=True),
], ids=["sum", "sum-0", "sum-1", "mean", "mean-0", "mean-1"])
def test_reductions_of_empty_tensors(op):
    compare(op, np.zeros((0, 3)))


@pytest.mark.parametrize("op", [
    lambda L, x: x.sum(), lambda L, x: x.sum(0), lambda L, x: x.sum(-1, keepdim=True),
    lambda L, x: x.mean(), lambda L, x: x.max(), lambda L, x: x.max(0),
    lambda L, x: x.min(-1, keepdim=True), lambda L, x: x.amax(), lambda L, x: x.amin(0),
    lambda L, x: x.softmax(0), lambda L, x: x.log_softmax(-1),
], ids=["sum", "sum-0", "sum-keepdim", "mean", "max", "max-0", "min-keepdim", "amax", "amin-0",
        "softmax", "log_softmax"])
def test_reductions_of_0d_tensors(op):
    compare(op, np.array(3.5))


EXTREMA = [
    ("max", lambda L, x: x.max()),
    ("min", lambda L, x: x.min()),
    ("max-dim", lambda L, x: x.max(1)),
    ("max-dim0", lambda L, x: x.max(0)),
    ("max-keepdim", lambda L, x: x.max(-1, keepdim=True)),
    ("min-dim", lambda L, x: x.min(dim=1)),
    ("min-keepdim", lambda L, x: x.min(0, keepdim=True)),
    ("max-function", lambda L, x: L.max(x, 1)),
    ("amax", lambda L, x: x.amax()),
    ("amax-dim", lambda L, x: x.amax(1)),
    ("amax-tuple", lambda L, x: x.amax((0, 1))),
    ("amax-keepdim", lambda L, x: x.amax(0, keepdim=True)),
    ("amin-negative", lambda L, x: x.amin(-1)),
    ("amin-empty-tuple-is-all", lambda L, x: x.amin(())),
    ("amin-function", lambda L, x: L.amin(x, (1,), keepdim=True)),
]


@pytest.mark.parametrize("op", [c[1] for c in EXTREMA], ids=[c[0] for c in EXTREMA])
def test_extrema_with_ties_match_torch(op):
    """Whole-tensor max/min and amax/amin share a tied gradient evenly; max/min
    along a dim send it to the returned index (PyTorch picks the first)."""
    compare(op, TIES)


@pytest.mark.parametrize("op", [c[1] for c in EXTREMA], ids=[c[0] for c in EXTREMA])
def test_extrema_match_torch(op):
    compare(op, RANDOM[0])


@pytest.mark.parametrize("op", [c[1] for c in EXTREMA], ids=[c[0] for c in EXTREMA])
def test_extrema_with_nan_match_torch(op):
    compare(op, np.array([[1.0, np.nan, 5.0], [2.0, 0.0, 5.0]]))


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("op", [c[1] for c in EXTREMA[:8]], ids=[c[0] for c in EXTREMA[:8]])
def test_extrema_of_integers_and_bools(op, dtype):
    compare(op, np.array([[3, 0, 3], [1, 4, 0]]), dtype=dtype, requires_grad=False)


def test_whole_tensor_max_ties_share_the_gradient_evenly():
    x = nbgrad.tensor([[1.0, 5.0], [5.0, 5.0]], requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 1 / 3], [1 / 3, 1 / 3]])
    x.grad = None
    x.amax(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 1], [0.5, 0.5]])
    x.grad = None
    x.max(1).values.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 1], [1, 0]])


def test_max_with_dim_returns_a_values_indices_pair():
    result = nbgrad.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]]).max(1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert indices.dtype is nbgrad.int64 and not indices.requires_grad
    np.testing.assert_array_equal(values.numpy(), [5.0, 7.0])
    np.testing.assert_array_equal(indices.numpy(), [1, 0])
    assert repr(result) == repr(torch.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]]).max(1)).replace(
        "torch.", "nbgrad.")
    assert type(nbgrad.zeros(2).min(0)).__name__ == "min"


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_reductions_match_numpy(shape, data):
    array = data.draw(st.lists(st.integers(-3, 3), min_size=int(np.prod(shape)),
                               max_size=int(np.prod(shape)))).copy()
    array = np.array(array, dtype=np.float64).reshape(shape)  # small integers: ties are common
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1),
                              unique_by=lambda d: d % len(shape), max_size=len(shape)))
    keepdim = data.draw(st.booleans())
    x = nbgrad.tensor(array, dtype=nbgrad.float64)
    numpy_axes = tuple(axes) if axes else None  # an empty dim list reduces everything, as in PyTorch
    dims = tuple(axes)
    for ours, expected in ((x.sum(dims, keepdim=keepdim), array.sum(numpy_axes, keepdims=keepdim)),
                           (x.mean(dims, keepdim=keepdim), array.mean(numpy_axes, keepdims=keepdim)),
                           (x.amax(dims, keepdim=keepdim), array.max(numpy_axes, keepdims=keepdim)),
                           (x.amin(dims, keepdim=keepdim), array.min(numpy_axes, keepdims=keepdim))):
        assert ours.shape == expected.shape
        np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-12)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    values, indices = x.max(dim, keepdim=keepdim)
    np.testing.assert_array_equal(values.numpy(), array.max(dim, keepdims=keepdim))
    np.testing.assert_array_equal(indices.numpy(), array.argmax(dim, keepdims=keepdim))


# ---------------------------------------------------------------- softmax
SOFTMAX = [
    ("softmax-last", lambda L, x: x.softmax(-1)),
    ("softmax-first", lambda L, x: x.softmax(0)),
    ("softmax-middle", lambda L, x: x.softmax(1)),
    ("log_softmax-last", lambda L, x: x.log_softmax(2)),
    ("log_softmax-first", lambda L, x: x.log_softmax(-3)),
    ("log_softmax-middle", lambda L, x: x.log_softmax(-2)),
    ("softmax-function", lambda L, x: L.softmax(x, dim=1)),
    ("log_softmax-function", lambda L, x: L.log_softmax(x, 0)),
    ("softmax-of-view", lambda L, x: x.transpose(0, 2).softmax(1)),
]


@pytest.mark.parametrize("op", [c[1] for c in SOFTMAX], ids=[c[0] for c in SOFTMAX])
def test_softmax_matches_torch(op):
    compare(op, RANDOM)
    compare(op, RANDOM, dtype="float32")


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_a_transposed_tensor_is_contiguous_like_torch(name, dim):
    """PyTorch's softmax results and input gradients are C-contiguous whatever
    the input's layout (so ``view(-1)`` works); a dense leaf's .grad takes the
    leaf's layout."""
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(RANDOM[0], dtype=lib.float64).t().detach().requires_grad_()
        y = getattr(x, name)(dim)
        g = lib.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape)))
        (gx,) = (lib.autograd.grad(y, x, g, retain_graph=True))
        (y * g).sum().backward()
        results.append((y, gx, x.grad))
    for ours, theirs in zip(*results):
        assert ours.stride() == theirs.stride()
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    assert results[0][0].view(-1).shape == (RANDOM[0].size,)


@pytest.mark.parametrize("op", [c[1] for c in SOFTMAX], ids=[c[0] for c in SOFTMAX])
def test_softmax_is_numerically_stable(op):
    """Inputs like 1000 and -1000 must neither overflow nor give NaN."""
    big = np.array([[[1000.0, -1000.0, 0.0, 999.0]] * 3, [[-1000.0, -1000.0, -999.0, 1000.0]] * 3])
    ours, _ = compare(op, big)
    assert np.isfinite(ours.detach().numpy()).all()
    ours, _ = compare(op, big, dtype="float32")
    assert np.isfinite(ours.detach().numpy()).all()


@pytest.mark.parametrize("op", [lambda L, x: x.softmax(-1), lambda L, x: x.log_softmax(1)],
                         ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_softmax_last_axis_rows_with_nan_and_infinities_match_torch(op, dtype):
    """The last-axis row kernel (CPU): a NaN row, an all -inf row, a row with
    +inf, a row with -inf entries and a one-element row, forward and backward."""
    rows = np.array([[1.0, np.nan, 2.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, 1.0],
                     [-np.inf, 3.0, 2.0], [0.5, -0.5, 40.0]])
    compare(op, rows, dtype)
    compare(op, rows[:, :1], dtype)


@pytest.mark.parametrize("shape, dim", [((), 0), ((3,), 0), ((2, 3), 1), ((2, 3), 0), ((3, 1), 0)])
@pytest.mark.parametrize("expanded", [False, True], ids=["contiguous", "expanded"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_backward_of_negative_zeros_gives_torchs_signs(name, shape, dim, expanded):
    """PyTorch's last-axis kernel sums a row from its first element (a row of
    -0. sums to -0., so the input gradient is +0.); its other kernels from +0.
    (the input gradient is -0.). An expanded gradient (from sum()) too."""
    grads = []
    for lib in (nbgrad, torch):
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        y = getattr(x, name)(dim)
        g = lib.tensor(-0.0, dtype=lib.float64)
        y.backward(g.expand(shape) if expanded else lib.full(shape, -0.0, dtype=lib.float64))
        grads.append(x.grad)
    np.testing.assert_array_equal(np.signbit(grads[0].numpy()), np.signbit(grads[1].numpy()))


def test_softmax_sums_to_one_and_log_softmax_is_its_log():
    x = nbgrad.tensor(RANDOM * 30, dtype=nbgrad.float64)
    for dim in range(3):
        s = x.softmax(dim).numpy()
        np.testing.assert_allclose(s.sum(axis=dim), 1.0, rtol=1e-12)
        np.testing.assert_allclose(np.log(s), x.log_softmax(dim).numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("op", [
    lambda L, x: x.softmax(0, dtype=L.float64), lambda L, x: x.log_softmax(1, dtype=L.float64),
], ids=["softmax", "log_softmax"])
def test_softmax_dtype_argument(op):
    ours, theirs = compare(op, RANDOM[0], dtype="float32")
    assert ours.dtype is nbgrad.float64


@pytest.mark.parametrize("op", [
    lambda L, x: x.softmax(0), lambda L, x: x.log_softmax(1), lambda L, x: x.softmax(1),
], ids=["softmax-0", "log_softmax-1", "softmax-1"])
def test_softmax_of_empty_tensors(op):
    compare(op, np.zeros((0, 3)))


def test_softmax_with_infinities_matches_torch():
    compare(lambda L, x: x.softmax(0), np.array([np.inf, 1.0]))
    compare(lambda L, x: x.softmax(0), np.array([-np.inf, -np.inf, -np.inf]))
    compare(lambda L, x: x.log_softmax(0), np.array([-np.inf, 0.0, 1.0]))


def test_the_row_kernels_serve_the_last_axis_of_contiguous_float_arrays():
    from nbgrad.backends.cpu import softmax_kernels
    a = np.ones((3, 4))
    served = [(1, a), (1, a.T.copy()), (2, np.ones((2, 3, 4))), (1, a, a.copy()),
              (1, a.astype(np.float32), np.ones((3, 4), np.float32))]
    refused = [(0, a), (-1, a), (0, a.T), (1, a[:, ::2]), (1, np.ones((0, 4))), (1, a.T),
               (1, np.ones((3, 4), np.int64)), (1, a, a.astype(np.float32)), (1, a, np.ones((3, 5))),
               (1, a, np.asfortranarray(a)), (1, np.asfortranarray(a), a), (0, np.ones(())),
               (0, np.ones(3).tolist())]
    for axis, *arrays in served:
        assert softmax_kernels.applies(axis, *arrays), (axis, [x.strides for x in arrays])
    for axis, *arrays in refused:
        assert not softmax_kernels.applies(axis, *arrays), axis


# ---------------------------------------------------- finite differences
GRADCHECK = [
    ("sum", lambda x: x.sum((0, 2)) * x.sum(-1, keepdim=True)[0, :, 0]),
    ("mean", lambda x: x.mean(1) + x.mean()),
    ("max-dim", lambda x: x.max(1).values * x.min(-1).values[:, :1]),
    ("max", lambda x: x.max() * x.min()),
    ("amax", lambda x: x.amax((0, 2)) + x.amin(1).sum()),
    ("softmax", lambda x: x.softmax(1) * x.softmax(-1)[:, :1, :]),
    ("log_softmax", lambda x: x.log_softmax(0) + x.log_softmax(2)),
    ("softmax-large", lambda x: (x * 400).softmax(1)),
]


@pytest.mark.parametrize("fn", [c[1] for c in GRADCHECK], ids=[c[0] for c in GRADCHECK])
def test_gradcheck(fn):
    x = nbgrad.tensor(RANDOM, dtype=nbgrad.float64, requires_grad=True)  # no ties: smooth
    assert gradcheck(fn, (x,))


# ---------------------------------------------------------------- layouts
# Input layouts (torch tensors), and ops with every dim (negative ones too) and
# keepdim both ways: PyTorch's reductions and softmaxes are C order whatever the
# input's layout.
LAYOUT_INPUTS = [
    ("transposed", lambda: torch.rand(4, 3).t()),
    ("permuted-3d", lambda: torch.rand(2, 3, 4).permute(2, 0, 1)),
    ("permuted-3d-b", lambda: torch.rand(2, 3, 4).permute(1, 2, 0)),
    ("channels-last", lambda: torch.rand(2, 3, 2, 4).to(memory_format=torch.channels_last)),
    ("size-1-permuted", lambda: torch.rand(3, 1, 4).permute(2, 1, 0)),
    ("stepped", lambda: torch.rand(3, 8)[:, ::2]),
    ("expanded", lambda: torch.rand(3, 1).expand(3, 4)),
    ("empty-transposed", lambda: torch.rand(0, 3).t()),
    ("empty-permuted", lambda: torch.rand(2, 0, 3).permute(2, 0, 1)),
]


def _dims(ndim):
    return [*range(-ndim, ndim), (0, ndim - 1), (-1, 0, 1)[:ndim]]


LAYOUT_OPS = [
    ("sum", lambda x, d, k: x.sum(d, keepdim=k), _dims),
    ("mean", lambda x, d, k: x.mean(d, keepdim=k), _dims),
    ("amax", lambda x, d, k: x.amax(d, keepdim=k), _dims),
    ("amin", lambda x, d, k: x.amin(d, keepdim=k), _dims),
    ("max", lambda x, d, k: x.max(d, keepdim=k), lambda n: range(-n, n)),
    ("min", lambda x, d, k: x.min(d, keepdim=k), lambda n: range(-n, n)),
    ("softmax", lambda x, d, k: x.softmax(d), lambda n: range(-n, n)),
    ("log_softmax", lambda x, d, k: x.log_softmax(d), lambda n: range(-n, n)),
]


def _run_for_layout(lib, original, op, dim, keepdim):
    """The op on a leaf of ``original``'s layout and on a non-leaf of that
    layout (retaining its gradient); the error's type if it raises."""
    leaf = strided(lib, original, requires_grad=True)
    inner = leaf.clone()
    inner.retain_grad()
    try:
        result = op(inner, dim, keepdim)
    except (RuntimeError, IndexError) as error:
        return type(error)
    first = outputs(result)[0]
    if first.numel():
        (first * lib.tensor(np.linspace(-1.0, 2.0, first.numel()).reshape(tuple(first.shape)))) \
            .sum().backward()
    return outputs(result), leaf, inner


def _layout(t):
    """Strides of the dims of size > 1 (size-1 and empty ones are no layout)."""
    return tuple(s for s, n in zip(t.stride(), t.shape) if n > 1) if t.numel() else ()


@pytest.mark.parametrize("op, dims", [c[1:] for c in LAYOUT_OPS], ids=[c[0] for c in LAYOUT_OPS])
@pytest.mark.parametrize("make", [c[1] for c in LAYOUT_INPUTS], ids=[c[0] for c in LAYOUT_INPUTS])
def test_layouts_match_torch(make, op, dims):
    """Every output's strides exactly (indices too, and empty results), the
    values, a retained gradient's strides (C order, as PyTorch's retain_grad)
    and a leaf's gradient's layout."""
    original = make()
    for dim in dims(original.ndim):
        for keepdim in (False, True):
            ours = _run_for_layout(nbgrad, original, op, dim, keepdim)
            theirs = _run_for_layout(torch, original, op, dim, keepdim)
            if isinstance(theirs, type):
                assert ours is theirs, (dim, keepdim)
                continue
            (results, leaf, inner), (t_results, t_leaf, t_inner) = ours, theirs
            for y, ty in zip(results, t_results, strict=True):
                assert y.stride() == ty.stride(), (dim, keepdim)
                np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6,
                                           equal_nan=True)
            assert (leaf.grad is None) == (t_leaf.grad is None)
            if leaf.grad is not None:
                assert inner.grad.stride() == t_inner.grad.stride(), (dim, keepdim)
                assert _layout(leaf.grad) == _layout(t_leaf.grad), (dim, keepdim)
                np.testing.assert_allclose(leaf.grad.numpy(), t_leaf.grad.numpy(), rtol=1e-6,
                                           equal_nan=True)


# ---------------------------------------------------------------- errors
ERRORS = [
    ("sum-dim-out-of-range", lambda L: L.zeros(2, 3).sum(2)),
    ("sum-dim-repeated", lambda L: L.zeros(2, 3).sum((1, -1))),
    ("mean-int", lambda L: L.zeros(2, dtype=L.int64).mean()),
    ("mean-bool", lambda L: L.zeros(2, dtype=L.bool).mean(0)),
    ("mean-int-dtype", lambda L: L.zeros(2).mean(dtype=L.int64)),
    ("mean-dim-out-of-range", lambda L: L.zeros(2).mean(-2)),
    ("max-empty", lambda L: L.zeros(0, 3).max()),
    ("min-empty", lambda L: L.zeros(0).min()),
    ("max-empty-dim", lambda L: L.zeros(0, 3).max(0)),
    ("min-dim-out-of-range", lambda L: L.zeros(2, 3).min(2)),
    ("amax-empty", lambda L: L.zeros(0, 3).amax()),
    ("amin-empty-dim", lambda L: L.zeros(2, 0).amin((0, 1))),
    ("amax-dim-repeated", lambda L: L.zeros(2, 3).amax((0, 0))),
    ("amax-empty-dim-repeated", lambda L: L.zeros(0, 3).amax((0, 0))),  # size 0 checked first
    ("amin-empty-negative-dim", lambda L: L.zeros(0, 3).amin((1, -2))),  # reported as given
    ("amax-empty-dim-then-out-of-range", lambda L: L.zeros(0, 3).amax((0, 5))),
    ("max-empty-negative-dim", lambda L: L.zeros(0, 3).max(-2)),  # reported wrapped
    ("softmax-int", lambda L: L.arange(6).reshape(2, 3).softmax(0)),
    ("softmax-int-last", lambda L: L.arange(6).reshape(2, 3).softmax(-1)),
    ("log_softmax-int", lambda L: L.arange(6).reshape(2, 3).log_softmax(0)),
    ("log_softmax-int-last", lambda L: L.arange(6).log_softmax(0)),
    ("softmax-int-dtype", lambda L: L.zeros(3).softmax(0, dtype=L.int64)),
    ("softmax-dim-out-of-range", lambda L: L.zeros(2, 3).softmax(2)),
]


@pytest.mark.parametrize("fn", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(2, 3).softmax(), lambda L: L.zeros(2, 3).log_softmax(),
    lambda L: L.zeros(2, 3).max((0, 1)),
], ids=["softmax-no-dim", "log_softmax-no-dim", "max-tuple-dim"])
def test_bad_arguments_raise_type_error(fn):
    assert_same_error(fn, exact=False)


def test_mean_of_integers_error_text():
    with pytest.raises(RuntimeError, match=r"^mean\(\): could not infer output dtype\. Input dtype "
                                           r"must be either a floating point or complex dtype\. "
                                           r"Got: Long$"):
        nbgrad.tensor([1, 2]).mean()


@pytest.mark.parametrize("op", ["amax", "amin", "max"])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
def test_tied_signed_zeros_keep_the_sign_torch_keeps(op, dim):
    # amax/amin keep the first of tied zeros, max() the last (PyTorch 2.13).
    if op == "max" and isinstance(dim, tuple):
        pytest.skip("max takes one dim")
    x = np.array([[0.0, -0.0, -1.0], [-0.0, 0.0, -2.0], [-0.0, -0.0, 1.0]])
    for data in (x, x.T.copy(), -x):
        results = []
        for lib in (nbgrad, torch):
            t = lib.tensor(data)
            out = getattr(t, op)() if dim is None else getattr(t, op)(dim)
            results.append((out.values if op == "max" and dim is not None else out).numpy())
        got, expected = results
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_softmax_of_an_empty_integer_tensor_is_empty_as_in_torch(op, dtype):
    # PyTorch refuses integer softmax in its kernel, which an empty input never reaches.
    for shape, dim in (((0,), -1), ((2, 0), 0)):
        out = getattr(nbgrad.zeros(shape, dtype=getattr(nbgrad, dtype)), op)(dim)
        expected = getattr(torch.zeros(shape, dtype=getattr(torch, dtype)), op)(dim)
        assert tuple(out.shape) == tuple(expected.shape) and dtype_name(out.dtype) == dtype_name(expected.dtype)
    assert_same_error(lambda lib: getattr(lib.zeros(2, dtype=getattr(lib, dtype)), op)(0))


# ------------------------------------------------------------ on every device
DIMS = [dict(), dict(dim=0), dict(dim=1, keepdim=True), dict(dim=-1), dict(dim=(0, 2)),
        dict(dim=(1,), keepdim=True)]
DIM_IDS = ["all", "0", "1-keep", "-1", "0,2", "(1,)-keep"]


@pytest.mark.parametrize("kwargs", DIMS, ids=DIM_IDS)
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin"])
def test_reductions_over_dims_on_the_device_match_torch(name, kwargs, device):
    run_like_torch(lambda x: getattr(x, name)(**kwargs), values((2, 3, 2), 1), device=device,
                   dtype=nbgrad.float64)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("kwargs", [dict(dim=0), dict(dim=1, keepdim=True), dict(dim=-1)],
                         ids=["0", "1-keep", "-1"])
def test_max_min_along_a_dim_on_the_device_match_torch(name, kwargs, device):
    run_like_torch(lambda x: getattr(x, name)(**kwargs).values, values((3, 4), 2), device=device)
    got = getattr(nbgrad.tensor(values((3, 4), 2), device=device), name)(**kwargs)
    assert_same_tensor(got.indices, getattr(torch.tensor(values((3, 4), 2)), name)(**kwargs).indices)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_ties_share_the_gradient_on_the_device_like_torch(name, device):
    tied = np.array([[1.0, 3.0, 3.0], [0.5, -1.0, -1.0]])
    run_like_torch(lambda x: getattr(x, name)(), tied, device=device)
    if name in ("amax", "amin"):
        run_like_torch(lambda x: getattr(x, name)(dim=1), tied, device=device)
    else:
        run_like_torch(lambda x: getattr(x, name)(dim=1).values, tied, device=device)


def test_nan_propagates_through_max_and_min_on_the_device_like_torch(device):
    with_nan = np.array([[1.0, np.nan, 2.0], [3.0, 0.0, -1.0]])
    for name in ("max", "min", "amax"):
        run_like_torch(lambda x: getattr(x, name)(), with_nan, device=device)
    ours, theirs = nbgrad.tensor(with_nan, device=device), torch.tensor(with_nan)
    assert_same_tensor(ours.max(dim=1).indices, theirs.max(dim=1).indices)
    assert_same_tensor(ours.sum(dim=0), theirs.sum(dim=0))


def test_reductions_of_views_and_zero_dim_tensors_on_the_device_match_torch(device):
    run_like_torch(lambda x: x.t()[::2].sum(dim=0) + x[1:].mean(), values((3, 4), 3),
                   device=device)
    run_like_torch(lambda x: x.sum() * x.max(dim=0).values, np.float64(1.5), device=device)
    run_like_torch(lambda x: x.amax() * x.softmax(0), np.float64(-0.5), device=device)
    run_like_torch(lambda x: x.amin() * x.log_softmax(0), np.float64(-0.5), device=device)


def test_integer_and_bool_sums_on_the_device_match_torch(device):
    ours = nbgrad.tensor([[1, 2, 3], [4, 5, 6]], device=device)
    theirs = torch.tensor([[1, 2, 3], [4, 5, 6]])
    for kwargs in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
        assert_same_tensor(ours.sum(**kwargs), theirs.sum(**kwargs))
        assert_same_tensor((ours > 2).sum(**kwargs), (theirs > 2).sum(**kwargs))
    assert_same_tensor(ours.max(), theirs.max())
    assert_same_tensor(ours.sum(dtype=nbgrad.float64), theirs.sum(dtype=torch.float64))
    assert_same_tensor(ours.float().mean(dim=1), theirs.float().mean(dim=1))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family_on_the_device_matches_torch(name, dim, device):
    run_like_torch(lambda x: getattr(x, name)(dim), values((3, 4), 4), device=device)
    run_like_torch(lambda x: getattr(x, name)(dim) * x, values((3, 4), 5), device=device,
                   dtype=nbgrad.float64)


def test_softmax_of_a_transposed_view_and_large_values_on_the_device_matches_torch(device):
    big = values((2, 3), 6) * 1000
    run_like_torch(lambda x: x.t().softmax(1), big, device=device, dtype=nbgrad.float64)
    run_like_torch(lambda x: x.log_softmax(0, dtype=lib_of(x).float64), big, device=device)


REDUCTION_ERRORS = {
    "dim-range": lambda t: t.sum(dim=3), "dup-dims": lambda t: t.mean(dim=(0, 0)),
    "max-tuple": lambda t: t.max(dim=(0, 1)), "empty-max": lambda t: t[:0].max(),
    "int-mean": lambda t: t.long().mean(), "int-softmax": lambda t: t.long().softmax(0),
    "no-dim": lambda t: t.softmax(),
}
LISTS_OVERLOADS = {"max-tuple"}  # torch's message lists its overloads: the type only


@pytest.mark.parametrize("name", sorted(REDUCTION_ERRORS))
def test_reduction_errors_on_the_device_match_torch(name, device):
    raises_like_torch(REDUCTION_ERRORS[name], values((2, 3), 7), device=device,
                      exact=name not in LISTS_OVERLOADS)


def test_empty_reductions_on_the_device_match_torch(device):
    ours, theirs = nbgrad.zeros(0, 3, device=device), torch.zeros(0, 3)
    assert_same_tensor(ours.sum(dim=0), theirs.sum(dim=0))
    assert_same_tensor(ours.mean(dim=0), theirs.mean(dim=0))  # NaN
    assert_same_tensor(ours.amax(dim=1), theirs.amax(dim=1))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_formula_and_fused_kernels_on_the_device_match_torch(name, dim, device):
    # The CPU's fused row kernels serve the last axis; other axes (and CUDA)
    # take the op's formula: rows and reductions. Special rows go through both.
    rows = np.array([[1.0, np.nan, 2.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, 1.0],
                     [-np.inf, 3.0, 2.0], [0.5, -0.5, 40.0]])
    run_like_torch(lambda x: getattr(x, name)(dim), values((3, 5), 4) * 3, device=device)
    ours = getattr(nbgrad.tensor(rows, dtype=nbgrad.float32, device=device), name)(dim)
    assert_same_tensor(ours, getattr(torch.tensor(rows, dtype=torch.float32), name)(dim))



# -- higher-order gradients (create_graph=True)
# Each op between two nonlinear maps, so its backward's own gradient is used
# both ways: with respect to the incoming gradient and to the input.
HIGHER_ORDER = {
    "max": lambda t: t.max(), "min": lambda t: t.min(),
    "amax-dim": lambda t: t.amax(1), "amin-dims-keepdim": lambda t: t.amin((0, 2), keepdim=True),
    "amax-all": lambda t: t.amax(),
    "max-dim": lambda t: t.max(1)[0], "min-dim-keepdim": lambda t: t.min(0, keepdim=True)[0],
    "max-dim-0d": lambda t: t[0, 0, 0].max(0)[0],
    "softmax": lambda t: t.softmax(1), "softmax-last": lambda t: t.softmax(-1),
    "log_softmax": lambda t: t.log_softmax(0), "log_softmax-last": lambda t: t.log_softmax(2),
    "softmax-0d": lambda t: t[1, 1, 1].softmax(0),
}
TIED = np.array([[[1.0, 3.0, 3.0, -1.0], [0.5, 3.0, 2.0, 2.0], [-2.0, 0.0, 3.0, 1.5]],
                 [[3.0, -0.5, 1.0, 3.0], [2.0, 2.0, 0.0, 1.0], [1.0, -3.0, 0.25, 0.75]]]) / 2


@pytest.mark.parametrize("name", sorted(HIGHER_ORDER))
def test_second_derivatives_on_the_device_match_torch(name, device):
    op = HIGHER_ORDER[name]
    second_derivatives_like_torch(lambda x: op(x.sin()).sin(), values((2, 3, 4), 11),
                                  device=device)
    second_derivatives_like_torch(op, values((2, 3, 4), 12), device=device)


@pytest.mark.parametrize("name", ["max", "min", "amax-dim", "amin-dims-keepdim", "amax-all"])
def test_second_derivatives_with_ties_on_the_device_match_torch(name, device):
    """Tied extrema share the gradient (evenly, or scaled by the count):
    the shares are constants, and the second derivatives match PyTorch's."""
    op = HIGHER_ORDER[name]
    second_derivatives_like_torch(lambda x: op(x * x).exp(), TIED, device=device)


@pytest.mark.parametrize("name", sorted(HIGHER_ORDER))
def test_gradgradcheck(name):
    op = HIGHER_ORDER[name]
    x = nbgrad.tensor(values((2, 3, 4), 13), dtype=nbgrad.float64, requires_grad=True)
    assert gradgradcheck(lambda t: op(t).sin(), [x])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_third_derivatives_of_the_softmaxes_on_the_device_match_torch(name, device):
    results = []
    for lib in (nbgrad, torch):
        x = leaf(lib, values((3, 4), 14), nbgrad.float64, device, requires_grad=True)
        out = getattr(x, name)(1)
        grads = []
        for k in range(3):  # each derivative weighted, so the next is not trivially zero
            weight = leaf(lib, values(tuple(out.shape), 15 + k), nbgrad.float64, device)
            (out,) = lib.autograd.grad((out * weight).sum(), x, create_graph=k < 2)
            grads.append(out)
        results.append(grads)
    for k, (mine, want) in enumerate(zip(*results)):
        assert mine.device.type == nbgrad.device(device).type, k
        assert_close(mine, want)


def test_max_dims_second_derivative_is_a_gather_of_a_scatter():
    """max(dim)'s gradient is a scatter of the incoming gradient (PyTorch's
    value_selecting_reduction_backward), whose gradient is a gather, whose
    gradient is the scatter again: to any order, named as PyTorch's."""
    names = {}
    for lib in (nbgrad, torch):
        x = leaf(lib, values((3, 4), 16), nbgrad.float64, requires_grad=True)
        g = leaf(lib, values((3, 1), 17), nbgrad.float64, requires_grad=True)
        (first,) = lib.autograd.grad(x.max(1, keepdim=True)[0], x, g, create_graph=True)
        w = leaf(lib, values((3, 4), 18), nbgrad.float64, requires_grad=True)
        (second,) = lib.autograd.grad(first, g, w, create_graph=True)
        names[lib] = node_name(first.grad_fn), node_name(second.grad_fn)
        if lib is nbgrad:
            picked = x.detach().numpy().argmax(1)
            np.testing.assert_array_equal(second.detach().numpy()[:, 0],
                                          w.detach().numpy()[range(3), picked])
            (third,) = lib.autograd.grad(second, w, lib.ones(3, 1, dtype=lib.float64))
            want = np.zeros((3, 4))
            want[range(3), picked] = 1
            np.testing.assert_array_equal(third.numpy(), want)
    assert names[nbgrad] == names[torch] == ("ScatterBackward", "GatherBackward")
