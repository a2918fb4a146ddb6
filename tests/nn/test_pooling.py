"""MaxPool2d and AvgPool2d against torch, plus gradchecks."""
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
              "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"}

MAX_CONFIGS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3), stride=(1, 2)),
    dict(kernel_size=2, stride=1, dilation=2),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2, stride=2, padding=1, ceil_mode=True),
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


@pytest.mark.parametrize("fn", ["max_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d"])
def test_pool_return_indices_match_torch(fn):
    x = np.random.default_rng(2).standard_normal((2, 3, 7, 9) if fn.endswith("2d") else (2, 3, 9))
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
