"""ReLU, Sigmoid, Tanh, GELU, Softmax, LogSoftmax against torch."""
import os

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from helpers import on_device
from nbgrad.autograd import gradcheck, gradgradcheck

from ._util import (DTYPE_IDS, DTYPES, assert_close, assert_second_derivatives_match,
                    assert_values_close, run_both, run_on_device)

MODULES = [
    (lambda: nn.ReLU(), lambda: torch.nn.ReLU()),
    (lambda: nn.Sigmoid(), lambda: torch.nn.Sigmoid()),
    (lambda: nn.Tanh(), lambda: torch.nn.Tanh()),
    (lambda: nn.GELU(), lambda: torch.nn.GELU()),
    (lambda: nn.GELU(approximate="tanh"), lambda: torch.nn.GELU(approximate="tanh")),
    (lambda: nn.Softmax(dim=1), lambda: torch.nn.Softmax(dim=1)),
    (lambda: nn.LogSoftmax(dim=-1), lambda: torch.nn.LogSoftmax(dim=-1)),
]
IDS = ["relu", "sigmoid", "tanh", "gelu", "gelu-tanh", "softmax", "log_softmax"]
SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("make", MODULES, ids=IDS)
def test_activation_matches_torch(dtype, make):
    name = DTYPE_IDS[DTYPES.index(dtype)]
    x = np.random.default_rng(0).standard_normal((4, 5)) * 3
    nb, tm = make[0](), make[1]()
    out, tout, (nx,), (tx,) = run_both(nb, tm, [x], dtype)
    assert_close(out, tout, name)
    assert_close(nx.grad, tx.grad, name)
    assert repr(nb) == repr(tm)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradcheck(approximate):
    x = nbgrad.tensor(np.linspace(-4, 4, 13), requires_grad=True)
    assert gradcheck(lambda t: F.gelu(t, approximate=approximate), (x,))


def test_gelu_node_name_and_bad_argument():
    x = nbgrad.randn(3, requires_grad=True)
    assert F.gelu(x).grad_fn.name() == "GeluBackward"
    with pytest.raises(RuntimeError, match="approximate"):
        nn.GELU(approximate="fast")


def test_relu_inplace_module_writes_its_input():
    x = nbgrad.tensor([-1.0, 2.0])
    h = x * 1
    out = nn.ReLU(inplace=True)(h)
    assert out is h and h._version == 1
    np.testing.assert_array_equal(h.numpy(), [0.0, 2.0])
    assert repr(nn.ReLU(inplace=True)) == repr(torch.nn.ReLU(inplace=True))


def test_softmax_implicit_dim_warns_like_torch():
    x = np.random.default_rng(1).standard_normal((2, 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        out = F.softmax(nbgrad.tensor(x))
    with pytest.warns(UserWarning):
        expected = torch.nn.functional.softmax(torch.tensor(x))
    assert_close(out, expected, "float64")


# ------------------------------------------------------------ on every device
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("make", [lambda L: L.nn.ReLU(), lambda L: L.nn.Sigmoid(),
                                  lambda L: L.nn.Tanh(), lambda L: L.nn.GELU(),
                                  lambda L: L.nn.GELU(approximate="tanh")],
                         ids=["relu", "sigmoid", "tanh", "gelu", "gelu-tanh"])
def test_activations_on_the_device_match_torch(dtype, make, device):
    run_on_device(lambda m, x: m(x), make, [np.random.default_rng(0).standard_normal((2, 3, 4))],
                  dtype, device)


# -- higher-order gradients ------------------------------------------------------
def _derived_math_tanh_tolerance(device):
    """The simulator interprets kernels: there ``math.tanh`` (GELU's tanh form
    calls it) returns a Python float, which NumPy 2 (NEP 50) lets the derived
    code's float32 ``ONE`` round to float32 in ``ONE - t * t``; compiled
    kernels (CPU, GPU) compute it in float64."""
    return dict(rtol=1e-4, atol=1e-7) if SIMULATOR and device == "cuda" else {}


@pytest.mark.parametrize("make", MODULES, ids=IDS)
def test_activation_second_derivatives_match_torch(make, device, request):
    x = np.random.default_rng(5).standard_normal((3, 4)) * 2
    modules = {nbgrad: make[0](), torch: make[1]()}
    tolerance = _derived_math_tanh_tolerance(device) if "gelu-tanh" in request.node.name else {}
    assert_second_derivatives_match(lambda lib, t: modules[lib](t), [x], device, **tolerance)


@pytest.mark.parametrize("make", MODULES, ids=IDS)
def test_activation_gradgradcheck(make):
    # Away from ReLU's kink, where finite differences straddle it.
    x = nbgrad.tensor(np.array([[-1.7, -0.4, 0.3, 2.2], [0.9, -2.5, 1.4, -0.8]]),
                      requires_grad=True)
    assert gradgradcheck(make[0](), (x,))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_third_derivatives_match_torch(approximate, device):
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(np.linspace(-3, 3, 7), dtype=lib.float64, requires_grad=True,
                       **on_device(lib, device))
        y = lib.nn.functional.gelu(x, approximate=approximate)
        grads = []
        for _ in range(3):
            (y,) = lib.autograd.grad(y.sum(), x, create_graph=True)
            grads.append(y)
        results.append(grads)
    tolerance = _derived_math_tanh_tolerance(device) if approximate == "tanh" else {}
    for mine, want in zip(*results):
        assert_values_close(mine, want, **tolerance)
