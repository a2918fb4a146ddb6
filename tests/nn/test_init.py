"""nbgrad.nn.init: PyTorch's formulas, written in place under no_grad."""
import math

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.init as init


def _param(*shape):
    return nn.Parameter(nbgrad.zeros(*shape))


@pytest.mark.parametrize("nonlinearity,param", [("linear", None), ("relu", None), ("tanh", None),
                                                ("leaky_relu", None), ("leaky_relu", 0.2),
                                                ("selu", None), ("conv2d", None)])
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(
        torch.nn.init.calculate_gain(nonlinearity, param))


@pytest.mark.parametrize("shape", [(30, 20), (8, 4, 3, 3)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(nbgrad.zeros(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))


def test_bounds_and_spread_follow_the_formulas():
    nbgrad.manual_seed(1)
    w = _param(200, 300)  # fan_in 300, fan_out 200
    init.kaiming_uniform_(w, a=0, nonlinearity="relu")
    bound = math.sqrt(2.0) * math.sqrt(3.0 / 300)
    values = w.detach().numpy()
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / 500)
    values = w.detach().numpy()
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound
    init.kaiming_normal_(w, mode="fan_out")
    assert abs(w.detach().numpy().std() - math.sqrt(2.0 / (1 + 0.01 ** 2)) / math.sqrt(200)) < 0.003
    init.xavier_normal_(w)
    assert abs(w.detach().numpy().std() - math.sqrt(2.0 / 500)) < 0.002
    init.normal_(w, 3.0, 0.5)
    assert abs(w.detach().numpy().mean() - 3.0) < 0.01 and abs(w.detach().numpy().std() - 0.5) < 0.01
    init.uniform_(w, -1.0, 2.0)
    assert w.detach().numpy().min() >= -1.0 and w.detach().numpy().max() <= 2.0
    init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert np.abs(w.detach().numpy()).max() <= 0.5


def test_constant_fills_and_each_write_bumps_the_version_once():
    w = _param(3, 4)
    assert w._version == 0
    init.ones_(w)
    assert w._version == 1 and (w.detach().numpy() == 1).all()
    init.zeros_(w)
    init.constant_(w, 2.5)
    assert w._version == 3 and (w.detach().numpy() == 2.5).all()
    init.eye_(w)
    np.testing.assert_array_equal(w.detach().numpy(), np.eye(3, 4))
    assert w.requires_grad and w.is_leaf and w.grad_fn is None


def test_init_respects_dtype_and_manual_seed():
    nbgrad.manual_seed(3)
    a = init.normal_(nn.Parameter(nbgrad.zeros(5, dtype=nbgrad.float64)))
    nbgrad.manual_seed(3)
    b = init.normal_(nn.Parameter(nbgrad.zeros(5, dtype=nbgrad.float64)))
    assert a.dtype == nbgrad.float64
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_fan_errors_match_torch():
    with pytest.raises(ValueError) as expected:
        torch.nn.init.xavier_uniform_(torch.zeros(3))
    with pytest.raises(ValueError) as actual:
        init.xavier_uniform_(nbgrad.zeros(3))
    assert str(actual.value) == str(expected.value)
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(_param(2, 2), mode="fan_avg")


INT_INITS = [
    ("uniform_", lambda I, t: I.uniform_(t)),
    ("normal_", lambda I, t: I.normal_(t)),
    ("trunc_normal_", lambda I, t: I.trunc_normal_(t)),
    ("xavier_uniform_", lambda I, t: I.xavier_uniform_(t)),
    ("xavier_normal_", lambda I, t: I.xavier_normal_(t)),
    ("kaiming_uniform_", lambda I, t: I.kaiming_uniform_(t)),
    ("kaiming_normal_", lambda I, t: I.kaiming_normal_(t)),
    ("constant_", lambda I, t: I.constant_(t, 2)),
    ("constant_-float", lambda I, t: I.constant_(t, 1.5)),
    ("zeros_", lambda I, t: I.zeros_(t)),
    ("ones_", lambda I, t: I.ones_(t)),
    ("eye_", lambda I, t: I.eye_(t)),
]


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("fill", [c[1] for c in INT_INITS], ids=[c[0] for c in INT_INITS])
def test_inits_of_integer_and_bool_tensors_match_torch(fill, dtype):
    """Random inits refuse integer and bool tensors (PyTorch's NotImplementedError,
    before anything is written); deterministic ones fill them."""
    results = {}
    for lib, module in ((torch, torch.nn.init), (nbgrad, init)):
        t = lib.full((3, 3), 7, dtype=getattr(lib, dtype))
        try:
            fill(module, t)
            results[lib] = ("filled", t.numpy().tolist(), t._version)
        except NotImplementedError as error:
            results[lib] = ("raised", str(error), t.numpy().tolist(), t._version)
    assert results[nbgrad] == results[torch]
