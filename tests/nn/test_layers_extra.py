"""Hardshrink, Softshrink, RReLU, Bilinear and ChannelShuffle against torch."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck, gradgradcheck

from ._util import DTYPE_IDS, DTYPES, run_on_device

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 4, 3))
# One-input layers: (make(lib), input). Kinks (|x| == lambd) are avoided by the draw.
ONE_INPUT = {
    "hardshrink": (lambda L: L.nn.Hardshrink(), X),
    "hardshrink-0.9": (lambda L: L.nn.Hardshrink(0.9), X),
    "softshrink": (lambda L: L.nn.Softshrink(), X),
    "softshrink-0.2": (lambda L: L.nn.Softshrink(0.2), X),
    "rrelu-eval": (lambda L: L.nn.RReLU(0.1, 0.3).eval(), X),
    "channel_shuffle": (lambda L: L.nn.ChannelShuffle(2), X),
    "channel_shuffle-4d": (lambda L: L.nn.ChannelShuffle(3), RNG.standard_normal((2, 6, 2, 2))),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", list(ONE_INPUT))
def test_one_input_layers_match_torch(name, dtype, device):
    make, x = ONE_INPUT[name]
    run_on_device(lambda m, t: m(t), make, [x], dtype, device)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("lead", [(3,), (2, 3), ()], ids=["2d", "3d", "1d"])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(lead, bias, dtype, device):
    x1, x2 = RNG.standard_normal(lead + (4,)), RNG.standard_normal(lead + (5,))
    run_on_device(lambda m, a, b: m(a, b), lambda L: L.nn.Bilinear(4, 5, 3, bias=bias),
                  [x1, x2], dtype, device)


def test_gradcheck_float64():
    t = lambda a: nbgrad.tensor(a, dtype=nbgrad.float64, requires_grad=True)  # noqa: E731
    x = t(X)
    assert gradcheck(lambda v: F.hardshrink(v, 0.5), (x,))
    assert gradcheck(lambda v: F.softshrink(v, 0.5), (x,))
    assert gradgradcheck(lambda v: F.softshrink(v, 0.5) ** 2, (x,))
    assert gradcheck(lambda v: F.channel_shuffle(v, 2), (x,))
    a, b, w, c = t(RNG.standard_normal((3, 2))), t(RNG.standard_normal((3, 4))), \
        t(RNG.standard_normal((5, 2, 4))), t(RNG.standard_normal(5))
    assert gradcheck(F.bilinear, (a, b, w, c))
    assert gradgradcheck(F.bilinear, (a, b, w, c))


def test_shrink_at_the_kinks_and_node_names():
    x = [-1.0, -0.5, 0.0, 0.5, 1.0]
    for fn in ("hardshrink", "softshrink"):
        a = nbgrad.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        out, want = getattr(F, fn)(a), getattr(torch.nn.functional, fn)(b)
        assert out.tolist() == want.tolist()
        out.sum().backward()
        want.sum().backward()
        assert a.grad.tolist() == b.grad.tolist()
        assert type(out.grad_fn).__name__ == type(want.grad_fn).__name__.rstrip("0")


def test_rrelu_training_draws_slopes_in_range_only_for_negatives(device):
    nbgrad.manual_seed(0)
    x = nbgrad.tensor(np.linspace(-2, 2, 400), device=device, requires_grad=True)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    out.sum().backward()
    xv, yv, g = x.detach().cpu().numpy(), out.detach().cpu().numpy(), x.grad.cpu().numpy()
    neg = xv <= 0
    slopes = yv[xv < 0] / xv[xv < 0]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.02 and slopes.std() > 0.03  # random, uniform
    np.testing.assert_array_equal(yv[~neg], xv[~neg])
    np.testing.assert_allclose(g[xv < 0], slopes)  # d out / d x is the drawn slope
    np.testing.assert_array_equal(g[~neg], 1.0)
    h = x.detach() * 1
    assert nn.RReLU(inplace=True)(h) is h


def _raises_like(fn_nb, fn_torch, exc=Exception):
    with pytest.raises(exc) as want:
        fn_torch()
    with pytest.raises(type(want.value)) as got:
        fn_nb()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("case", [
    lambda L: L.nn.functional.softshrink(L.ones(3), -1.0),
    lambda L: L.nn.functional.softshrink(L.ones(3, dtype=L.float64), -0.5),
    lambda L: L.nn.functional.softshrink(L.arange(3), 0.5),
    lambda L: L.nn.functional.hardshrink(L.arange(3), 0.5),
    lambda L: L.nn.functional.hardshrink(3, 0.5),
    lambda L: L.nn.functional.rrelu(L.ones(3), 0.5, 0.1),
    lambda L: L.nn.functional.rrelu(L.arange(3)),
    lambda L: L.nn.functional.channel_shuffle(L.ones(1, 4, 2), 3),
    lambda L: L.nn.functional.channel_shuffle(L.ones(1, 4, 2), 0),
    lambda L: L.nn.functional.channel_shuffle(L.ones(4, 2), 2),
    lambda L: L.nn.functional.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 5)),
    lambda L: L.nn.functional.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 2, 4)),
    lambda L: L.nn.functional.bilinear(L.ones(2, 3), L.ones(3, 4), L.ones(5, 3, 4)),
    lambda L: L.nn.functional.bilinear(L.ones(2, 3), L.ones(2, 2, 4), L.ones(5, 3, 4)),
    lambda L: L.nn.functional.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 4), L.ones(4)),
    lambda L: L.nn.Bilinear(0, 2, 3),
])
def test_errors_as_torch(case):
    _raises_like(lambda: case(nbgrad), lambda: case(torch))


@pytest.mark.parametrize("make", [
    lambda L: L.nn.Hardshrink(), lambda L: L.nn.Softshrink(0.3), lambda L: L.nn.RReLU(),
    lambda L: L.nn.RReLU(0.2, 0.4, inplace=True), lambda L: L.nn.ChannelShuffle(3),
    lambda L: L.nn.Bilinear(2, 3, 4, bias=False)])
def test_repr_and_state_dict_keys_as_torch(make):
    mine, want = make(nbgrad), make(torch)
    assert repr(mine) == repr(want)
    assert list(mine.state_dict()) == list(want.state_dict())
    assert [tuple(v.shape) for v in mine.state_dict().values()] == \
        [tuple(v.shape) for v in want.state_dict().values()]


def test_bilinear_init_bound():
    nbgrad.manual_seed(0)
    m = nn.Bilinear(9, 3, 200)
    bound = 1 / 3  # 1 / sqrt(in1_features)
    for p in (m.weight, m.bias):
        v = p.detach().numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.9 * bound
