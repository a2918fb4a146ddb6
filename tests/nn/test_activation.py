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

# -- issue 16: the rest of PyTorch's activations
NEW_MODULES = {
    "silu": lambda L: L.nn.SiLU(),
    "leaky_relu": lambda L: L.nn.LeakyReLU(0.2),
    "elu": lambda L: L.nn.ELU(0.7),
    "selu": lambda L: L.nn.SELU(),
    "celu": lambda L: L.nn.CELU(1.5),
    "softplus": lambda L: L.nn.Softplus(),
    "softplus-beta": lambda L: L.nn.Softplus(2.0, 3.0),
    "softsign": lambda L: L.nn.Softsign(),
    "hardtanh": lambda L: L.nn.Hardtanh(-0.5, 2.0),
    "relu6": lambda L: L.nn.ReLU6(),
    "hardsigmoid": lambda L: L.nn.Hardsigmoid(),
    "hardswish": lambda L: L.nn.Hardswish(),
    "mish": lambda L: L.nn.Mish(),
    "prelu": lambda L: L.nn.PReLU(),
    "tanhshrink": lambda L: L.nn.Tanhshrink(),
    "threshold": lambda L: L.nn.Threshold(0.1, 20.0),
    "glu": lambda L: L.nn.GLU(),
    "logsigmoid": lambda L: L.nn.LogSigmoid(),
    "softmin": lambda L: L.nn.Softmin(1),
}
# (PReLU's float32 weight refuses float64 inputs, GLU halves a dimension: own tests below)
MODULES += [(lambda make=make: make(nbgrad), lambda make=make: make(torch))
            for name, make in NEW_MODULES.items() if name not in ("prelu", "glu")]
IDS += [name for name in NEW_MODULES if name not in ("prelu", "glu")]
TESTED_OPS = {"silu", "leaky_relu", "elu", "selu", "celu", "softplus", "softsign", "hardtanh",
              "relu6", "hardsigmoid", "hardswish", "mish", "tanhshrink", "threshold",
              "logsigmoid", "prelu", "glu", "softmin"}
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
    if "hardsigmoid" in request.node.name:  # (nbgrad's is gradgradchecked below)
        pytest.skip("PyTorch: derivative for aten::hardsigmoid_backward is not implemented")
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


# -- issue 16: node names, in-place forms, PReLU's weight, errors, devices --------
NODE_NAMES = {"silu": "SiluBackward", "leaky_relu": "LeakyReluBackward", "elu": "EluBackward",
              "selu": "EluBackward", "celu": "CeluBackward", "softplus": "SoftplusBackward",
              "hardtanh": "HardtanhBackward", "relu6": "HardtanhBackward",
              "hardsigmoid": "HardsigmoidBackward", "hardswish": "HardswishBackward",
              "mish": "MishBackward", "threshold": "ThresholdBackward",
              "logsigmoid": "LogSigmoidBackward", "prelu": "PreluKernelBackward",
              "glu": "GluBackward"}


@pytest.mark.parametrize("name", list(NODE_NAMES))
def test_activation_node_names_match_torch(name):
    x = nbgrad.randn(2, 4, requires_grad=True)
    tx = torch.randn(2, 4, requires_grad=True)
    out, want = NEW_MODULES[name](nbgrad)(x), NEW_MODULES[name](torch)(tx)
    assert out.grad_fn.name() == NODE_NAMES[name] == type(want.grad_fn).__name__[:-1]


INPLACE = {
    "silu": lambda L: L.nn.SiLU(inplace=True),
    "leaky_relu": lambda L: L.nn.LeakyReLU(0.1, inplace=True),
    "elu": lambda L: L.nn.ELU(inplace=True),
    "selu": lambda L: L.nn.SELU(inplace=True),
    "celu": lambda L: L.nn.CELU(2.0, inplace=True),
    "hardtanh": lambda L: L.nn.Hardtanh(inplace=True),
    "relu6": lambda L: L.nn.ReLU6(inplace=True),
    "hardsigmoid": lambda L: L.nn.Hardsigmoid(inplace=True),
    "hardswish": lambda L: L.nn.Hardswish(inplace=True),
    "mish": lambda L: L.nn.Mish(inplace=True),
    "threshold": lambda L: L.nn.Threshold(0.1, 20.0, inplace=True),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_activation_matches_torch(name):
    x = np.random.default_rng(2).standard_normal((3, 4)) * 3
    results = []
    for lib in (nbgrad, torch):
        leaf = lib.tensor(x, requires_grad=True)
        h = leaf * 1
        module = INPLACE[name](lib)
        out = module(h)
        assert out is h
        out.sum().backward()
        results.append((out, leaf.grad, repr(module)))
    (out, grad, text), (want, want_grad, want_text) = results
    assert_close(out, want)
    assert_close(grad, want_grad)
    assert text == want_text


def test_prelu_per_channel_weight_matches_torch():
    run_on_device(lambda m, x: m(x), lambda L: L.nn.PReLU(3, 0.1),
                  [np.random.default_rng(3).standard_normal((2, 3, 4))], DTYPES[1], "cpu")
    w = nbgrad.tensor([0.1, 0.2, 0.3], dtype=nbgrad.float64, requires_grad=True)
    x = nbgrad.tensor(np.random.default_rng(4).standard_normal((2, 3, 2)), requires_grad=True)
    assert gradcheck(F.prelu, (x, w)) and gradgradcheck(F.prelu, (x, w))
    assert list(nn.PReLU(3).state_dict()) == ["weight"]


ACTIVATION_ERRORS = [
    ("int-silu", lambda L: L.nn.functional.silu(L.tensor([1, 2]))),
    ("not-tensor", lambda L: L.nn.functional.leaky_relu(3)),
    ("hardtanh-bounds", lambda L: L.nn.functional.hardtanh(L.ones(2), 2.0, 1.0)),
    ("hardtanh-module", lambda L: L.nn.Hardtanh(2.0, 1.0)),
    ("celu-alpha", lambda L: L.nn.functional.celu(L.ones(2), alpha=0.0)),
    ("glu-odd", lambda L: L.nn.functional.glu(L.ones(3))),
    ("softmax2d", lambda L: L.nn.Softmax2d()(L.ones(3))),
    ("prelu-channels", lambda L: L.nn.functional.prelu(L.ones(2, 3), L.ones(2))),
    ("prelu-dtypes", lambda L: L.nn.functional.prelu(L.ones(2, 3, dtype=L.float64), L.ones(3))),
]


@pytest.mark.parametrize("make", [e[1] for e in ACTIVATION_ERRORS],
                         ids=[e[0] for e in ACTIVATION_ERRORS])
def test_activation_errors_match_torch(make):
    with pytest.raises(Exception) as want:
        make(torch)
    with pytest.raises(type(want.value)) as got:
        make(nbgrad)
    assert str(got.value) == str(want.value)


def test_softmax2d_and_threshold_on_integers_match_torch():
    x = np.random.default_rng(6).standard_normal((2, 3, 2, 2))
    assert_close(nn.Softmax2d()(nbgrad.tensor(x)), torch.nn.Softmax2d()(torch.tensor(x)))
    ints = [3, -1, 5]
    out = F.threshold(nbgrad.tensor(ints), 2, 7)
    want = torch.nn.functional.threshold(torch.tensor(ints), 2, 7)
    assert out.dtype == nbgrad.int64 and out.tolist() == want.tolist()


@pytest.mark.parametrize("name", ["silu", "leaky_relu", "elu", "hardswish", "mish", "prelu"])
def test_new_activations_on_the_device_match_torch(name, device):
    run_on_device(lambda m, x: m(x), NEW_MODULES[name],
                  [np.random.default_rng(0).standard_normal((2, 3, 4)) * 3], DTYPES[0], device)


@pytest.mark.parametrize("dim", [-1, 0])
def test_glu_matches_torch(dim):
    x = np.random.default_rng(7).standard_normal((4, 6))
    run_on_device(lambda m, x: m(x), lambda L: L.nn.GLU(dim), [x], DTYPES[1], "cpu")
    t = nbgrad.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: F.glu(t, dim), (t,)) and gradgradcheck(lambda t: F.glu(t, dim), (t,))
    assert repr(nn.GLU(dim)) == repr(torch.nn.GLU(dim))


INPLACE_FUNCTIONALS = [("relu_", ()), ("elu_", (0.5,)), ("selu_", ()), ("celu_", (2.0,)),
                       ("leaky_relu_", (0.2,)), ("hardtanh_", (-1.0, 0.8)),
                       ("threshold_", (0.6, 9.0)), ("rrelu_", (0.1, 0.3))]


@pytest.mark.parametrize("name, args", INPLACE_FUNCTIONALS, ids=[n for n, _ in INPLACE_FUNCTIONALS])
def test_inplace_functionals_write_into_their_input(name, args, device):
    data = np.array([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=np.float32)
    ours = nbgrad.tensor(data, device=device)
    theirs = torch.tensor(data)
    version = ours._version
    assert getattr(F, name)(ours, *args) is ours
    getattr(torch.nn.functional, name)(theirs, *args)
    assert ours._version == version + 1
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-6)
