"""weight_norm / spectral_norm (hook-based and parametrizations) against torch,
with torch's weights and power-iteration vectors copied in."""
import warnings

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
from nbgrad.autograd import gradcheck

from ._util import assert_close

LAYERS = {
    "linear": (lambda L: L.nn.Linear(4, 3), (2, 4)),
    "conv1d": (lambda L: L.nn.Conv1d(2, 3, 3), (2, 2, 5)),
    "conv2d": (lambda L: L.nn.Conv2d(2, 3, 2), (1, 2, 3, 3)),
    "conv_transpose1d": (lambda L: L.nn.ConvTranspose1d(2, 3, 2), (2, 2, 4)),  # dim 1 by default
}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return fn(*args, **kwargs)


def _pair(layer, apply, device, **kwargs):
    """The same layer in both libraries with ``apply`` (a ``nn.utils`` path)
    registered, torch's state (weights and power-iteration vectors) copied
    into nbgrad's, as float64 on ``device``."""
    make, shape = LAYERS[layer]
    modules = {}
    for lib in (nbgrad, torch):
        fn = lib.nn.utils
        for part in apply.split("."):
            fn = getattr(fn, part)
        torch.manual_seed(0)
        modules[lib] = _quiet(fn, make(lib).double(), **kwargs)
    state = {k: nbgrad.tensor(v.detach().numpy()) for k, v in modules[torch].state_dict().items()}
    assert list(modules[nbgrad].state_dict()) == list(state)
    modules[nbgrad].load_state_dict(state)
    modules[nbgrad].to(device)
    x = np.random.default_rng(1).standard_normal(shape)
    return modules[nbgrad], modules[torch], x


def _forward_backward_match(mine, want, x, device):
    a = nbgrad.tensor(x, device=device, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    out, ref = mine(a), want(b)
    assert_close(out.cpu(), ref, "float64")
    g = np.random.default_rng(2).standard_normal(tuple(ref.shape))
    out.backward(nbgrad.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    assert_close(a.grad.cpu(), b.grad, "float64")
    want_params = dict(want.named_parameters())
    for name, p in mine.named_parameters():
        assert p.grad.device.type == device
        assert_close(p.grad.cpu(), want_params[name].grad, "float64")
    want_state = want.state_dict()
    for name, v in mine.state_dict().items():  # the power iteration updated u and v alike
        assert_close(v.cpu(), want_state[name], "float64")


@pytest.mark.parametrize("layer", list(LAYERS))
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(layer, dim, device):
    mine, want, x = _pair(layer, "weight_norm", device, dim=dim)
    assert repr(mine) == repr(want)
    _forward_backward_match(mine, want, x, device)
    nn.utils.remove_weight_norm(mine)
    torch.nn.utils.remove_weight_norm(want)
    assert list(mine.state_dict()) == list(want.state_dict())
    assert isinstance(mine.weight, nn.Parameter)
    assert_close(mine.weight.cpu(), want.weight, "float64")


@pytest.mark.parametrize("layer", list(LAYERS))
@pytest.mark.parametrize("apply", ["spectral_norm", "parametrizations.spectral_norm"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_spectral_norm_matches_torch(layer, apply, train, device):
    mine, want, x = _pair(layer, apply, device, n_power_iterations=2)
    mine.train(train)
    want.train(train)
    _forward_backward_match(mine, want, x, device)
    _forward_backward_match(mine, want, x, device)  # a second step: the buffers moved on


def test_spectral_norm_divides_by_the_largest_singular_value():
    nbgrad.manual_seed(0)
    m = nn.utils.parametrizations.spectral_norm(nn.Linear(5, 4).double())
    for _ in range(20):
        w = m.weight
    assert abs(np.linalg.svd(w.detach().numpy(), compute_uv=False)[0] - 1) < 1e-6
    h = nn.utils.spectral_norm(nn.Linear(5, 4).double())
    for _ in range(30):
        h(nbgrad.randn(1, 5, dtype=nbgrad.float64))
    assert abs(np.linalg.svd(h.weight.detach().numpy(), compute_uv=False)[0] - 1) < 1e-6
    nn.utils.remove_spectral_norm(h)
    assert list(h.state_dict()) == ["bias", "weight"]  # as torch: re-registered last
    assert isinstance(h.weight, nn.Parameter)


def test_gradcheck_float64():
    from nbgrad.nn.utils.parametrizations import _SpectralNorm
    w = nbgrad.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    sn = _SpectralNorm(w.detach()).eval()  # eval: u, v fixed, weight / sigma differentiable
    assert gradcheck(lambda t: sn(t), (w,))
    g = nbgrad.tensor(np.random.default_rng(1).uniform(0.5, 1, (3, 1)), requires_grad=True)
    from nbgrad.nn.utils.weight_norm import WeightNorm
    fn = WeightNorm("weight", 0)
    holder = type("Holder", (), {})()

    def weight(gg, vv):
        holder.weight_g, holder.weight_v = gg, vv
        return fn.compute_weight(holder)
    assert gradcheck(weight, (g, w))


def test_weight_norm_warns_as_torch():
    with pytest.warns(FutureWarning) as want:
        torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))
    with pytest.warns(FutureWarning) as got:
        nn.utils.weight_norm(nn.Linear(2, 2))
    assert str(got[0].message) == str(want[0].message)


@pytest.mark.parametrize("case", [
    lambda L: _quiet(L.nn.utils.weight_norm, _quiet(L.nn.utils.weight_norm, L.nn.Linear(2, 2))),
    lambda L: L.nn.utils.remove_weight_norm(L.nn.Linear(2, 2)),
    lambda L: L.nn.utils.spectral_norm(L.nn.utils.spectral_norm(L.nn.Linear(2, 2))),
    lambda L: L.nn.utils.spectral_norm(L.nn.Linear(2, 2), n_power_iterations=0),
    lambda L: L.nn.utils.spectral_norm(L.nn.Linear(2, 2, bias=False), name="bias"),
    lambda L: L.nn.utils.remove_spectral_norm(L.nn.Linear(2, 2)),
    lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2), dim=2),
    lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2), name="w"),
    lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2),
                                                        n_power_iterations=-1),
    lambda L: _quiet(L.nn.utils.weight_norm, L.nn.LazyLinear(2)),
    lambda L: L.nn.utils.spectral_norm(L.nn.LazyLinear(2)),
])
def test_errors_as_torch(case):
    with pytest.raises(Exception) as want:
        case(torch)
    with pytest.raises(type(want.value)) as got:
        case(nbgrad)
    assert str(got.value) == str(want.value)
