"""The pooling layers (1-D, 2-D, 3-D, adaptive) against torch, plus gradchecks."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from helpers import assert_same_error, node_name, on_device
from nbgrad.autograd import gradcheck, gradgradcheck

from ._util import (DTYPE_IDS, DTYPES, assert_close, assert_second_derivatives_match,
                    assert_values_close, run_both, run_on_device)

TESTED_OPS = {"max_pool2d", "avg_pool2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d",
              "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "max_pool3d",
              "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool1d",
              "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"}

MAX_CONFIGS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3), stride=(1, 2)),
    dict(kernel_size=2, stride=1, dilation=2),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(6, 5), stride=1, padding=(3, 2)),  # past the unrolled one-pass form (CPU)
]
AVG_CONFIGS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(1, 2)),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=2, divisor_override=3),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("config", MAX_CONFIGS, ids=range(len(MAX_CONFIGS)))
def test_max_pool2d_matches_torch(dtype, config):
    name = DTYPE_IDS[DTYPES.index(dtype)]
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    out, tout, (nx,), (tx,) = run_both(nn.MaxPool2d(**config), torch.nn.MaxPool2d(**config),
                                       [x], dtype)
    assert_close(out, tout, name)
    assert_close(nx.grad, tx.grad, name)
    assert repr(nn.MaxPool2d(**config)) == repr(torch.nn.MaxPool2d(**config))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("config", AVG_CONFIGS, ids=range(len(AVG_CONFIGS)))
def test_avg_pool2d_matches_torch(dtype, config):
    name = DTYPE_IDS[DTYPES.index(dtype)]
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 6))
    out, tout, (nx,), (tx,) = run_both(nn.AvgPool2d(**config), torch.nn.AvgPool2d(**config),
                                       [x], dtype)
    assert_close(out, tout, name)
    assert_close(nx.grad, tx.grad, name)
    assert repr(nn.AvgPool2d(**config)) == repr(torch.nn.AvgPool2d(**config))


def test_max_pool2d_ties_and_overlap_route_gradient_like_torch():
    # Equal values in overlapping windows: the first maximum of each window wins.
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 1.0, 2.0], [0.0, 2.0, 2.0]]]])
    out, tout, (nx,), (tx,) = run_both(lambda a: F.max_pool2d(a, 2, stride=1),
                                       lambda a: torch.nn.functional.max_pool2d(a, 2, stride=1),
                                       [x], DTYPES[1])
    assert_close(out, tout)
    assert_close(nx.grad, tx.grad)


def test_max_pool2d_return_indices_and_unbatched_input():
    x = np.random.default_rng(2).standard_normal((3, 6, 5))
    out, idx = F.max_pool2d(nbgrad.tensor(x), 3, stride=2, padding=1, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, stride=2, padding=1,
                                                return_indices=True)
    assert_close(out, tout)
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    assert idx.dtype == nbgrad.int64


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 2, stride=1, padding=1),
    lambda x: F.max_pool2d(x, 2, stride=2, dilation=2),
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1),
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
], ids=["max-pad", "max-dilation", "avg-pad", "avg-ceil"])
def test_pool_gradcheck(fn):
    # Distinct values keep the max away from ties, where it has no derivative.
    x = nbgrad.tensor(np.random.default_rng(3).permutation(50).reshape(1, 2, 5, 5) / 10.0,
                      requires_grad=True)
    assert gradcheck(fn, (x,))


def test_pool_padding_limit_matches_torch():
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.max_pool2d(torch.zeros(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(RuntimeError) as actual:
        F.max_pool2d(nbgrad.zeros(1, 1, 4, 4), 2, padding=2)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
def test_pool_saved_input_modified_in_place_is_caught(pool):
    # As PyTorch, both save their input (so a second backward is refused too).
    x = nbgrad.randn(1, 1, 4, 4, requires_grad=True)
    h = x * 1
    out = getattr(F, pool)(h, 2)
    h.relu_()
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.* relu_\(\)"):
        out.sum().backward()
    th = torch.randn(1, 1, 4, 4, requires_grad=True) * 1
    out = getattr(torch.nn.functional, pool)(th, 2)
    th.relu_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_max_pool2d_nan_handling_matches_torch():
    x = np.arange(32.0).reshape(1, 2, 4, 4)
    x[0, 0, 0, 1] = np.nan
    x[0, 0, 1, 0] = np.nan
    x[0, 1, 3, 3] = np.nan
    out, idx = F.max_pool2d(nbgrad.tensor(x), 2, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())


# ------------------------------------------------------------ on every device
IMAGES = np.random.default_rng(0).standard_normal((2, 2, 5, 5))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                    dict(kernel_size=2, stride=2, ceil_mode=True),
                                    dict(kernel_size=2, stride=1, dilation=2)],
                         ids=["k2", "k3s2p1", "ceil", "dilation"])
def test_max_pool2d_on_the_device_matches_torch(dtype, kwargs, device):
    run_on_device(lambda m, x: m(x), lambda lib: lib.nn.MaxPool2d(**kwargs), [IMAGES], dtype,
                  device)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_max_pool2d_nan_and_ties_on_the_device_pick_pytorchs_index(dtype, device):
    x = np.array([[[[1.0, 1.0, np.nan, 0.0], [2.0, 2.0, 0.0, np.nan]]]])
    run_on_device(lambda _, x: (nbgrad if isinstance(x, nbgrad.Tensor) else torch).nn.functional
                  .max_pool2d(x, 2), None, [x], dtype, device)
    _, indices = F.max_pool2d(nbgrad.tensor(x, dtype=dtype[0], device=device), 2,
                              return_indices=True)
    _, want = torch.nn.functional.max_pool2d(torch.tensor(x, dtype=dtype[1]), 2,
                                             return_indices=True)
    assert indices.device.type == device and indices.tolist() == want.tolist() == [[[[4, 7]]]]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                    dict(kernel_size=3, padding=1, count_include_pad=False),
                                    dict(kernel_size=2, ceil_mode=True, divisor_override=3)],
                         ids=["k2", "k3s2p1", "no-pad-count", "ceil-divisor"])
def test_avg_pool2d_on_the_device_matches_torch(dtype, kwargs, device):
    run_on_device(lambda m, x: m(x), lambda lib: lib.nn.AvgPool2d(**kwargs), [IMAGES], dtype,
                  device)


# -- higher-order gradients ------------------------------------------------------
SMALL = np.random.default_rng(4).standard_normal((1, 2, 7, 6))


@pytest.mark.parametrize("config", MAX_CONFIGS, ids=range(len(MAX_CONFIGS)))
def test_max_pool2d_second_derivatives_match_torch(config, device):
    """The gradient of a max pool's gradient: with respect to the incoming
    gradient, the gather of the picked elements; with respect to the input,
    zeros (the picks are constant), as PyTorch's."""
    assert_second_derivatives_match(lambda lib, x: lib.nn.functional.max_pool2d(x, **config),
                                    [SMALL], device)


@pytest.mark.parametrize("config", AVG_CONFIGS, ids=range(len(AVG_CONFIGS)))
def test_avg_pool2d_second_derivatives_match_torch(config, device):
    assert_second_derivatives_match(lambda lib, x: lib.nn.functional.avg_pool2d(x, **config),
                                    [SMALL], device)


def test_max_pool2d_ties_second_derivatives_match_torch(device):
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 1.0, 2.0], [0.0, 2.0, 2.0]]]])
    assert_second_derivatives_match(
        lambda lib, x: lib.nn.functional.max_pool2d(x, 2, stride=1), [x], device)


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 2, stride=1, padding=1),
    lambda x: F.max_pool2d(x, 2, stride=2, dilation=2),
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1),
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
], ids=["max-pad", "max-dilation", "avg-pad", "avg-ceil"])
def test_pool_gradgradcheck(fn):
    x = nbgrad.tensor(np.random.default_rng(3).permutation(50).reshape(1, 2, 5, 5) / 10.0,
                      requires_grad=True)
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
def test_pool_third_derivatives_match_torch(pool, device):
    """Through a cube, so that every order is non-zero: the window gather and
    scatter are each differentiated again."""
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(SMALL, dtype=lib.float64, requires_grad=True, **on_device(lib, device))
        y = getattr(lib.nn.functional, pool)(x, 3, stride=2, padding=1)
        (g1,) = lib.autograd.grad((y * y * y).sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad((g1 * g1).sum(), x, create_graph=True)
        results.append((g1, g2, *lib.autograd.grad((g2 * g2 * g2).sum(), x)))
    for mine, want in zip(*results):
        assert_values_close(mine, want)


@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
def test_a_pool_gradient_is_named_and_linked_as_torchs(pool):
    """The gradient's node is the pooling's backward (``...BackwardBackward``),
    and it reaches the input (PyTorch's zeros), so ``autograd.grad`` finds it used."""
    names = []
    for lib in (nbgrad, torch):
        x = lib.tensor(SMALL, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(lib.nn.functional, pool)(x, 2).sum(), x,
                                 create_graph=True)
        names.append(node_name(g.grad_fn))
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        assert not gg.numpy().any()
    assert names[0] == names[1] == pool.replace("max_pool2d", "MaxPool2DWithIndices").replace(
        "avg_pool2d", "AvgPool2D") + "BackwardBackward"


@pytest.mark.parametrize("lib", [nbgrad, torch], ids=["nbgrad", "torch"])
def test_a_freed_max_pool_gradient_graph_refuses_a_second_backward(lib):
    """Max pooling's double backward saves the indices (freed with the graph);
    average pooling's saves nothing, so it may run again."""
    x = lib.tensor(SMALL, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(lib.nn.functional.max_pool2d(x, 2).sum(), x, create_graph=True)
    g.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        g.sum().backward()
    (g,) = lib.autograd.grad(lib.nn.functional.avg_pool2d(x, 2).sum(), x, create_graph=True)
    g.sum().backward()
    g.sum().backward()


# ------------------------------------------------- 1-D and adaptive pooling (issue 16)
# name: (make(lib) -> layer, input shape, PyTorch's node name or None (a squeeze))
POOLS = {
    "max1d": (lambda L: L.nn.MaxPool1d(3, 2, 1), (2, 3, 10), None),
    "max1d-ceil-dilation": (lambda L: L.nn.MaxPool1d(2, 2, dilation=2, ceil_mode=True),
                            (3, 11), None),
    "avg1d": (lambda L: L.nn.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 3, 10), None),
    "adaptive-avg1d": (lambda L: L.nn.AdaptiveAvgPool1d(4), (2, 3, 10), None),
    "adaptive-avg2d": (lambda L: L.nn.AdaptiveAvgPool2d((4, 3)), (2, 3, 10, 9),
                       "AdaptiveAvgPool2DBackward"),
    "adaptive-avg2d-none-unbatched": (lambda L: L.nn.AdaptiveAvgPool2d((3, None)), (3, 7, 5),
                                      "AdaptiveAvgPool2DBackward"),
    "adaptive-avg2d-global": (lambda L: L.nn.AdaptiveAvgPool2d(1), (2, 3, 5, 4),
                              "AdaptiveAvgPool2DBackward"),
    "adaptive-max1d": (lambda L: L.nn.AdaptiveMaxPool1d(3), (2, 3, 10), None),
    "adaptive-max2d": (lambda L: L.nn.AdaptiveMaxPool2d((4, 3)), (2, 3, 10, 9),
                       "AdaptiveMaxPool2DBackward"),
    "adaptive-max2d-upsampling": (lambda L: L.nn.AdaptiveMaxPool2d(7), (1, 2, 5, 4),
                                  "AdaptiveMaxPool2DBackward"),
    "adaptive-max2d-unbatched": (lambda L: L.nn.AdaptiveMaxPool2d((2, None)), (2, 5, 4),
                                 "AdaptiveMaxPool2DBackward"),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(POOLS))
def test_1d_and_adaptive_pools_match_torch(name, dtype):
    make, shape, node = POOLS[name]
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    nm, tm = make(nbgrad), make(torch)
    assert repr(nm) == repr(tm)
    x = np.random.default_rng(1).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(nm, tm, [x], dtype)
    assert_close(out, tout, dname)
    assert_close(nx.grad, tx.grad, dname)
    assert node_name(out.grad_fn) == (node or "SqueezeBackward")


@pytest.mark.parametrize("fn", ["max_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d",
                                "adaptive_max_pool3d", "max_pool3d"])
def test_pool_return_indices_match_torch(fn):
    x = np.random.default_rng(2).standard_normal(
        {"1d": (2, 3, 9), "2d": (2, 3, 7, 9), "3d": (2, 2, 5, 7, 6)}[fn[-2:]])
    args = (3,) if fn.startswith("adaptive") else (3, 2)
    out, idx = getattr(F, fn)(nbgrad.tensor(x), *args, return_indices=True)
    tout, tidx = getattr(torch.nn.functional, fn)(torch.tensor(x), *args, return_indices=True)
    assert_close(out, tout)
    assert idx.dtype is nbgrad.int64 and np.array_equal(idx.numpy(), tidx.numpy())


@pytest.mark.parametrize("fn", [
    lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
    lambda x: F.adaptive_max_pool2d(x, (2, 3)),
    lambda x: F.avg_pool1d(x.flatten(2), 3, 2, 1),
    lambda x: F.max_pool1d(x.flatten(2), 3, 2),
], ids=["adaptive-avg2d", "adaptive-max2d", "avg1d", "max1d"])
def test_1d_and_adaptive_pool_gradcheck(fn):
    x = nbgrad.tensor(np.random.default_rng(3).standard_normal((1, 2, 5, 4)), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


POOL_ERRORS = [
    lambda L: L.nn.functional.adaptive_avg_pool2d(L.zeros(2, 3), 2),
    lambda L: L.nn.functional.adaptive_avg_pool2d(L.zeros(2, 3, 4, 4), (2,)),
    lambda L: L.nn.functional.adaptive_avg_pool1d(L.zeros(2, 3, 4, 4), 2),
    lambda L: L.nn.functional.max_pool1d(L.zeros(2, 3, 4, 4), 2),
    lambda L: L.nn.functional.avg_pool1d(L.zeros(3, 4, 4, 4), 2),
    lambda L: L.nn.functional.adaptive_avg_pool2d(L.zeros(2, 3, 0, 4), 2),
    lambda L: L.nn.functional.adaptive_max_pool2d(L.zeros(3, 4), 2),
    lambda L: L.nn.functional.adaptive_max_pool2d(L.zeros(1, 3, 4, 4), (2,)),
    lambda L: L.nn.functional.adaptive_max_pool2d(L.zeros(1, 3, 4, 4, dtype=L.int64), 2),
]


@pytest.mark.parametrize("fn", POOL_ERRORS, ids=range(len(POOL_ERRORS)))
def test_1d_and_adaptive_pool_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ["adaptive-avg2d", "adaptive-max2d", "max1d"])
def test_1d_and_adaptive_pools_on_the_device_match_torch(name, dtype, device):
    make, shape, _ = POOLS[name]
    x = np.random.default_rng(4).standard_normal(shape)
    run_on_device(lambda m, x: m(x), make, [x], dtype, device)


# ------------------------------------------------------------ 3-D pooling (issue 16)
# name: (make(lib) -> layer, input shape, PyTorch's node name); unbatched inputs too
POOLS_3D = {
    "max3d": (lambda L: L.nn.MaxPool3d(2), (2, 2, 4, 5, 4), "MaxPool3DWithIndicesBackward"),
    "max3d-k3s2p1-ceil": (lambda L: L.nn.MaxPool3d(3, 2, 1, ceil_mode=True), (1, 2, 5, 6, 5),
                          "MaxPool3DWithIndicesBackward"),
    "max3d-dilation-unbatched": (lambda L: L.nn.MaxPool3d((2, 1, 2), (1, 2, 1), (1, 0, 1),
                                                          dilation=(1, 1, 2)),
                                 (2, 4, 5, 6), "MaxPool3DWithIndicesBackward"),
    "avg3d": (lambda L: L.nn.AvgPool3d(2), (2, 2, 4, 5, 4), "AvgPool3DBackward"),
    "avg3d-pad-ceil-no-count": (lambda L: L.nn.AvgPool3d(3, 2, 1, ceil_mode=True,
                                                         count_include_pad=False),
                                (1, 2, 5, 6, 5), "AvgPool3DBackward"),
    "avg3d-divisor-unbatched": (lambda L: L.nn.AvgPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0),
                                                         divisor_override=5),
                                (2, 4, 5, 6), "AvgPool3DBackward"),
    "adaptive-avg3d": (lambda L: L.nn.AdaptiveAvgPool3d((2, 3, 2)), (2, 2, 5, 7, 4),
                       "AdaptiveAvgPool3DBackward"),
    "adaptive-avg3d-none-unbatched": (lambda L: L.nn.AdaptiveAvgPool3d((None, 2, 3)),
                                      (2, 4, 5, 7), "AdaptiveAvgPool3DBackward"),
    "adaptive-max3d": (lambda L: L.nn.AdaptiveMaxPool3d((2, 3, 2)), (2, 2, 5, 7, 4),
                       "AdaptiveMaxPool3DBackward"),
    "adaptive-max3d-upsampling-unbatched": (lambda L: L.nn.AdaptiveMaxPool3d((3, None, 6)),
                                            (2, 2, 4, 5), "AdaptiveMaxPool3DBackward"),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(POOLS_3D))
def test_3d_pools_match_torch(name, dtype):
    make, shape, node = POOLS_3D[name]
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    nm, tm = make(nbgrad), make(torch)
    assert repr(nm) == repr(tm)
    x = np.random.default_rng(5).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(nm, tm, [x], dtype)
    assert_close(out, tout, dname)
    assert_close(nx.grad, tx.grad, dname)
    assert node_name(out.grad_fn) == node_name(tout.grad_fn) == node


def test_max_pool3d_module_return_indices_and_nan_match_torch():
    x = np.arange(2 * 4 * 4 * 4.0).reshape(2, 4, 4, 4)
    x[0, 0, 0, 1] = x[0, 1, 1, 0] = x[1, 3, 3, 3] = np.nan
    x[1, :2, :2, :2] = 7.0  # a tie: the first maximum in (d, h, w) order wins
    results = [lib.nn.MaxPool3d(2, return_indices=True)(lib.tensor(x)) for lib in (nbgrad, torch)]
    (out, idx), (tout, tidx) = results
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
    assert idx.dtype is nbgrad.int64 and idx.tolist() == tidx.tolist()


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool3d(x, 2, stride=1, padding=1),
    lambda x: F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 1), dilation=(2, 1, 1), ceil_mode=True),
    lambda x: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
    lambda x: F.adaptive_max_pool3d(x[0], (2, 3, 5)),
], ids=["max-pad", "max-dilation-ceil", "avg-ceil", "adaptive-avg", "adaptive-max-unbatched"])
def test_3d_pool_gradcheck(fn):
    # Distinct values keep the max away from ties, where it has no derivative.
    x = nbgrad.tensor(np.random.default_rng(3).permutation(72).reshape(1, 2, 3, 4, 3) / 10.0,
                      requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("pool", ["max_pool3d", "avg_pool3d"])
def test_a_3d_pool_gradient_is_named_as_torchs_and_second_derivatives_match(pool, device):
    x = np.random.default_rng(6).standard_normal((1, 2, 4, 5, 4))
    assert_second_derivatives_match(
        lambda lib, x: getattr(lib.nn.functional, pool)(x, 3, stride=2, padding=1), [x], device)
    names = []
    for lib in (nbgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(lib.nn.functional, pool)(t, 2).sum(), t,
                                 create_graph=True)
        names.append(node_name(g.grad_fn))
    assert names[0] == names[1] == {"max_pool3d": "MaxPool3DWithIndicesBackwardBackward",
                                    "avg_pool3d": "AvgPool3DBackwardBackward"}[pool]


def _z(L, *shape, dtype=None):
    return L.zeros(*shape, dtype=dtype or L.float32)


POOL_3D_ERRORS = {
    "max-input-type": lambda L: L.nn.functional.max_pool3d([1.0], 2),
    "avg-input-type": lambda L: L.nn.functional.avg_pool3d([1.0], 2),
    "max-6d": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 2, 3, 4, 4, 4), 2),
    "avg-3d": lambda L: L.nn.functional.avg_pool3d(_z(L, 2, 3, 4), 2),
    "max-kernel-pair": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 4, 4, 4), (2, 2)),
    "avg-kernel-pair": lambda L: L.nn.functional.avg_pool3d(_z(L, 1, 1, 4, 4, 4), (2, 2)),
    "max-stride-pair": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 4, 4, 4), 2, (1, 1)),
    "avg-padding-pair": lambda L: L.nn.functional.avg_pool3d(_z(L, 1, 1, 4, 4, 4), 2, 1, (1, 1)),
    "max-dilation-pair": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 4, 4, 4), 2, 1, 0,
                                                              (1, 1)),
    "max-kernel-zero": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 4, 4, 4), 0, 1),
    "avg-stride-zero": lambda L: L.nn.functional.avg_pool3d(_z(L, 1, 1, 4, 4, 4), 2, 0),
    "max-stride-negative": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 4, 4, 4), 2, -1),
    "avg-pad-negative": lambda L: L.nn.functional.avg_pool3d(_z(L, 1, 1, 4, 4, 4), 2, 1, -1),
    "max-dilation-zero": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 4, 4, 4), 2, 1, 0, 0),
    "max-pad-too-large": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 4, 4, 4), 2, padding=2),
    "max-output-too-small": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 1, 4, 4), 2),
    "avg-input-smaller-than-kernel": lambda L: L.nn.functional.avg_pool3d(
        _z(L, 1, 1, 1, 4, 4), 3, padding=1),
    "max-empty-channels": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 0, 4, 4, 4), 2),
    "avg-empty-depth": lambda L: L.nn.functional.avg_pool3d(_z(L, 1, 1, 0, 4, 4), 2),
    "avg-divisor-zero": lambda L: L.nn.functional.avg_pool3d(_z(L, 1, 1, 4, 4, 4), 2,
                                                             divisor_override=0),
    "max-bool": lambda L: L.nn.functional.max_pool3d(_z(L, 1, 1, 4, 4, 4, dtype=L.bool), 2),
    "adaptive-avg-3d-input": lambda L: L.nn.functional.adaptive_avg_pool3d(_z(L, 3, 4, 4), 2),
    "adaptive-max-3d-input": lambda L: L.nn.functional.adaptive_max_pool3d(_z(L, 3, 4, 4), 2),
    "adaptive-avg-output-pair": lambda L: L.nn.functional.adaptive_avg_pool3d(
        _z(L, 1, 3, 4, 4, 4), (2, 2)),
    "adaptive-max-output-pair": lambda L: L.nn.functional.adaptive_max_pool3d(
        _z(L, 1, 3, 4, 4, 4), (2, 2)),
    "adaptive-avg-empty": lambda L: L.nn.functional.adaptive_avg_pool3d(_z(L, 1, 3, 0, 4, 4), 2),
    "adaptive-max-empty": lambda L: L.nn.functional.adaptive_max_pool3d(_z(L, 1, 3, 4, 0, 4), 2),
    "adaptive-avg-long": lambda L: L.nn.functional.adaptive_avg_pool3d(
        _z(L, 1, 3, 4, 4, 4, dtype=L.int64), 2),
    "adaptive-max-long": lambda L: L.nn.functional.adaptive_max_pool3d(
        _z(L, 1, 3, 4, 4, 4, dtype=L.int64), 2),
}


@pytest.mark.parametrize("name", list(POOL_3D_ERRORS))
def test_3d_pool_errors_match_torch(name):
    assert_same_error(POOL_3D_ERRORS[name])


@pytest.mark.parametrize("fn", ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
                                "adaptive_max_pool3d"])
def test_3d_pools_of_an_empty_batch_match_torch(fn):
    out = getattr(F, fn)(nbgrad.zeros(0, 2, 4, 4, 4), 2)
    assert tuple(out.shape) == tuple(getattr(torch.nn.functional, fn)(torch.zeros(0, 2, 4, 4, 4),
                                                                      2).shape)


def test_max_pool3d_of_integers_matches_torch():
    x = np.random.default_rng(7).integers(-50, 50, (1, 2, 3, 4, 5))
    out, idx = F.max_pool3d(nbgrad.tensor(x), 2, 1, 1, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool3d(torch.tensor(x), 2, 1, 1, return_indices=True)
    assert out.dtype is nbgrad.int64
    assert out.tolist() == tout.tolist() and idx.tolist() == tidx.tolist()


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ["max3d-k3s2p1-ceil", "avg3d-divisor-unbatched", "adaptive-avg3d",
                                  "adaptive-max3d-upsampling-unbatched"])
def test_3d_pools_on_the_device_match_torch(name, dtype, device):
    make, shape, _ = POOLS_3D[name]
    x = np.random.default_rng(8).standard_normal(shape)
    run_on_device(lambda m, x: m(x), make, [x], dtype, device)


# ------------------------------------------- unpooling and LP pooling (issue 16)
def _unpooled(nd, kernel, stride=None, padding=0, output_size=None):
    """A max pool's output (times 2, so that it is not a leaf) unpooled by its indices."""
    def run(lib, x):
        pooled, indices = getattr(lib.nn, f"MaxPool{nd}d")(kernel, stride, padding,
                                                          return_indices=True)(x)
        unpool = getattr(lib.nn, f"MaxUnpool{nd}d")(kernel, stride, padding)
        assert repr(unpool) == repr(getattr(torch.nn, f"MaxUnpool{nd}d")(kernel, stride, padding))
        return unpool(pooled * 2, indices, output_size)
    return run


# name: (fn(lib, x), input shape, PyTorch's node name)
UNPOOL_LP = {
    "unpool1d": (_unpooled(1, 2), (2, 2, 6), "SqueezeBackward"),
    "unpool1d-overlap-unbatched": (_unpooled(1, 3, 2, 1), (2, 7), "SqueezeBackward"),
    "unpool2d-output-size": (_unpooled(2, 2, output_size=(5, 4)), (1, 2, 5, 4),
                             "MaxUnpool2DBackward"),
    "unpool2d-overlap": (_unpooled(2, 3, 2, 1), (2, 2, 5, 5), "MaxUnpool2DBackward"),
    "unpool3d": (_unpooled(3, 2), (1, 2, 4, 6, 4), "MaxUnpool3DBackward"),
    "unpool3d-overlap-unbatched": (_unpooled(3, 3, 2, 1, (4, 5, 3)), (2, 4, 5, 3),
                                   "MaxUnpool3DBackward"),
    "lp1d": (lambda lib, x: lib.nn.LPPool1d(2, 3, 2)(x), (2, 3, 9), "PowBackward"),
    "lp2d-ceil": (lambda lib, x: lib.nn.LPPool2d(3, (2, 3), ceil_mode=True)(x.abs() + 0.1),
                  (2, 3, 5, 7), "PowBackward"),
    "lp3d-unbatched": (lambda lib, x: lib.nn.LPPool3d(1.5, 2, stride=1)(x.abs() + 0.1),
                       (2, 3, 4, 3), "PowBackward"),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(UNPOOL_LP))
def test_unpool_and_lp_pool_match_torch(name, dtype):
    fn, shape, node = UNPOOL_LP[name]
    dname = DTYPE_IDS[DTYPES.index(dtype)]
    x = np.random.default_rng(9).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(lambda x: fn(nbgrad, x), lambda x: fn(torch, x), [x], dtype)
    assert_close(out, tout, dname)
    assert_close(nx.grad, tx.grad, dname)
    assert node_name(out.grad_fn) == node_name(tout.grad_fn) == node


# (not the overlapping unpools: a maximum two windows picked is put back once but
# receives both gradients, PyTorch's rule, which finite differences do not see)
@pytest.mark.parametrize("name", ["unpool2d-output-size", "unpool3d", "lp2d-ceil",
                                  "lp3d-unbatched"])
def test_unpool_and_lp_pool_gradcheck(name):
    fn, shape, _ = UNPOOL_LP[name]
    # distinct positive values: away from max ties and from abs's kink
    x = nbgrad.tensor((np.random.default_rng(3).permutation(int(np.prod(shape))) + 1.0)
                      .reshape(shape) / 10.0, requires_grad=True)
    assert gradcheck(lambda x: fn(nbgrad, x), (x,))
    assert gradgradcheck(lambda x: fn(nbgrad, x), (x,))


def _indices(L, shape, scale=1, dtype=None):
    x = L.tensor(np.arange(float(np.prod(shape))).reshape(shape))
    _, idx = getattr(L.nn.functional, f"max_pool{len(shape) - 2}d")(x, 2, return_indices=True)
    idx = idx * scale
    return idx if dtype is None else idx.to(dtype)


UNPOOL_ERRORS = {
    "2d-float-indices": lambda L: L.nn.functional.max_unpool2d(
        L.zeros(1, 2, 2, 2), _indices(L, (1, 2, 4, 4), dtype=L.float32), 2),
    "3d-float-indices": lambda L: L.nn.functional.max_unpool3d(
        L.zeros(1, 2, 2, 2, 2), _indices(L, (1, 2, 4, 4, 4), dtype=L.float32), 2),
    "2d-shape": lambda L: L.nn.functional.max_unpool2d(L.zeros(1, 2, 2, 1),
                                                       _indices(L, (1, 2, 4, 4)), 2),
    # one invalid index: PyTorch checks in parallel, so of several it names any one
    "2d-invalid-index": lambda L: L.nn.functional.max_unpool2d(
        L.zeros(1, 2, 2, 2), L.tensor([[[[0, 3], [8, 10]], [[1, 2], [40, 15]]]]), 2),
    "1d-invalid-index": lambda L: L.nn.functional.max_unpool1d(
        L.zeros(1, 3), L.tensor([[0, 9, 3]]), 2),
    "3d-invalid-index": lambda L: L.nn.functional.max_unpool3d(
        L.zeros(1, 1, 2, 1, 1), L.tensor([[[[[3]], [[-2]]]]]), 2),
    "2d-output-size-range": lambda L: L.nn.functional.max_unpool2d(
        L.zeros(1, 2, 2, 2), _indices(L, (1, 2, 4, 4)), 2, output_size=(9, 5)),
    "2d-output-size-length": lambda L: L.nn.functional.max_unpool2d(
        L.zeros(1, 2, 2, 2), _indices(L, (1, 2, 4, 4)), 2, output_size=(5,)),
    "2d-input-2d": lambda L: L.nn.functional.max_unpool2d(L.zeros(2, 2),
                                                          _indices(L, (1, 1, 4, 4))[0, 0], 2),
    "3d-input-3d": lambda L: L.nn.functional.max_unpool3d(L.zeros(2, 2, 2),
                                                          _indices(L, (1, 2, 4, 4, 4))[0, 0], 2),
    "3d-empty-channels": lambda L: L.nn.functional.max_unpool3d(
        L.zeros(1, 0, 2, 2, 2), L.zeros(1, 0, 2, 2, 2, dtype=L.int64), 2),
    "3d-stride-zero": lambda L: L.nn.functional.max_unpool3d(
        L.zeros(1, 2, 2, 2, 2), _indices(L, (1, 2, 4, 4, 4)), 2, stride=0),
}


@pytest.mark.parametrize("name", list(UNPOOL_ERRORS))
def test_unpool_errors_match_torch(name):
    assert_same_error(UNPOOL_ERRORS[name])


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ["unpool2d-overlap", "unpool3d", "lp3d-unbatched"])
def test_unpool_and_lp_pool_on_the_device_match_torch(name, dtype, device):
    fn, shape, _ = UNPOOL_LP[name]
    x = np.random.default_rng(10).standard_normal(shape)
    run_on_device(lambda _, x: fn(nbgrad if isinstance(x, nbgrad.Tensor) else torch, x), None,
                  [x], dtype, device)


@pytest.mark.parametrize("fn", [
    lambda L, t: L.nn.functional.max_pool3d(t, 2, 1, 1),
    lambda L, t: L.nn.functional.avg_pool3d(t, 3, 2, 1, count_include_pad=False),
    lambda L, t: L.nn.functional.adaptive_avg_pool3d(t, (2, 3, 2)),
    lambda L, t: L.nn.functional.adaptive_max_pool3d(t, 3),
], ids=["max", "avg", "adaptive-avg", "adaptive-max"])
def test_3d_pools_forward_mode_matches_torch(fn):
    import torch.autograd.forward_ad as tfa

    import nbgrad.autograd.forward_ad as nfa
    x = np.random.default_rng(11).standard_normal((1, 2, 4, 5, 4))
    v = np.random.default_rng(12).standard_normal(x.shape)
    tangents = []
    for lib, fa in ((nbgrad, nfa), (torch, tfa)):
        with fa.dual_level():
            dual = fa.make_dual(lib.tensor(x), lib.tensor(v))
            tangents.append(fa.unpack_dual(fn(lib, dual)).tangent)
    assert_values_close(*tangents)


# Every pooling function and dtype as PyTorch 2.13's CPU kernels take it: max pooling
# takes every dtype but bool (max_pool1d without indices: floats only); average
# pooling floats and int64, averaged with truncating division (3-D: no float16).
# Values, dtype and (floats) the gradient as PyTorch's, or PyTorch's refusal.
POOL_CALLS = {
    "max_pool1d": (1, dict(kernel_size=2)),
    "max_pool1d-indices": (1, dict(kernel_size=2, return_indices=True)),
    "max_pool2d": (2, dict(kernel_size=3, stride=2, padding=1)),
    "max_pool3d": (3, dict(kernel_size=2)),
    "avg_pool1d": (1, dict(kernel_size=3, stride=2, padding=1)),
    "avg_pool2d": (2, dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    "avg_pool2d-divisor": (2, dict(kernel_size=2, divisor_override=3)),
    "avg_pool3d": (3, dict(kernel_size=2, ceil_mode=True)),
    "adaptive_max_pool1d": (1, dict(output_size=3)),
    "adaptive_max_pool2d": (2, dict(output_size=3)),
    "adaptive_avg_pool2d": (2, dict(output_size=3)),
}
POOL_DTYPES = ["float16", "int64", "int32", "uint8", "bool"]


@pytest.mark.parametrize("dtype", POOL_DTYPES)
@pytest.mark.parametrize("call", list(POOL_CALLS))
def test_pooling_dtypes_as_torch(call, dtype):
    nd, kwargs = POOL_CALLS[call]
    name = call.split("-")[0]
    rng = np.random.default_rng(0)
    x = rng.integers(-40, 40, (2, 3) + (5, 6, 7)[:nd]).astype(dtype)
    if dtype == "float16":
        x = x / 8
        x.flat[5] = np.nan
    floating = dtype == "float16"

    def run(lib):
        t = lib.tensor(x, requires_grad=floating)
        out = getattr(lib.nn.functional, name)(t, **kwargs)
        values = out[0] if isinstance(out, tuple) else out
        if floating:
            values.sum().backward()
        return out, t.grad

    try:
        want, want_grad = run(torch)
    except Exception:
        assert_same_error(lambda lib: run(lib))
        return
    out, grad = run(nbgrad)
    # float16 averages: PyTorch sums in float32 and rounds once, nbgrad's sums and
    # averaging products round in float16 (a known deviation: a few ulps); maxima are
    # exact, and a NaN stays in the windows that hold it.
    rtol = 2.0 ** -8 if floating and "avg" in name else 0
    for ours, theirs in zip(*(o if isinstance(o, tuple) else (o,) for o in (out, want))):
        assert ours.dtype.name == str(theirs.dtype).split(".")[1]
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol)
    if floating:
        np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=rtol)


# Windows that begin in the padding, over values equal to the padding's fill (-inf,
# an integer dtype's lowest): PyTorch never reads padding, so its pick is the
# window's first offset inside the input, and the gradient goes there.
PADDED_WINDOWS = [
    ("max_pool2d", "uint8", (1, 1, 4, 4), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", "float32", (2, 2, 5, 4), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", "float64", (2, 2, 5, 4), dict(kernel_size=(3, 2), padding=1, dilation=(2, 1))),
    ("max_pool2d", "float32", (1, 1, 7, 7), dict(kernel_size=7, stride=1, padding=3)),  # generic
    ("max_pool1d", "float32", (1, 2, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool3d", "float32", (1, 1, 4, 5, 6), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool3d", "int32", (1, 1, 4, 5, 6), dict(kernel_size=3, stride=2, padding=1)),
]


@pytest.mark.parametrize("name, dtype, shape, kwargs", PADDED_WINDOWS,
                         ids=[f"{n}-{d}-{k}" for k, (n, d, _, _) in enumerate(PADDED_WINDOWS)])
def test_windows_starting_in_the_padding_pick_as_torch(name, dtype, shape, kwargs):
    low = -np.inf if dtype.startswith("float") else np.iinfo(dtype).min
    x = np.full(shape, low, dtype)
    x.flat[7] = 1  # one window with a larger value
    floating = dtype.startswith("float")
    results = []
    for lib in (torch, nbgrad):
        t = lib.tensor(x, requires_grad=floating)
        values, indices = getattr(lib.nn.functional, name)(t, return_indices=True, **kwargs)
        if floating:
            values.backward(lib.ones(*values.shape, dtype=values.dtype))
        results.append((values.detach().numpy(), indices.numpy(),
                        t.grad.numpy() if floating else None))
    (v, i, g), (tv, ti, tg) = results
    np.testing.assert_array_equal(v, tv)
    np.testing.assert_array_equal(i, ti)
    if floating:
        np.testing.assert_array_equal(g, tg)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name, size", [("adaptive_avg_pool1d", 4), ("adaptive_avg_pool2d", (2, 4)),
                                        ("adaptive_avg_pool3d", 2)])
def test_adaptive_average_keeps_a_nan_and_an_inf_in_their_windows(name, size, dtype, device):
    """The averaging products' zeros would spread them (0 * inf is NaN): outputs,
    and the gradient of an inf, as PyTorch's windows give them."""
    nd = int(name[-2])
    x = np.arange(2 * 3 * 6 ** nd, dtype=np.float64).reshape((2, 3) + (6,) * nd) / 7
    x.flat[4], x.flat[22] = np.nan, np.inf
    results = []
    for lib in (torch, nbgrad):
        t = lib.tensor(x, dtype=dtype[0] if lib is nbgrad else dtype[1], requires_grad=True,
                       **on_device(lib, device))
        y = getattr(lib.nn.functional, name)(t, size)
        g = np.ones(tuple(y.shape))
        g.flat[1] = np.inf
        y.backward(lib.tensor(g, dtype=y.dtype, **on_device(lib, device)))
        results.append((y.detach().cpu().numpy(), t.grad.cpu().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)  # (NaN where PyTorch has NaN)
