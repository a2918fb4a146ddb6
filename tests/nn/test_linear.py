"""Linear and Identity against torch.nn, with copied weights."""
import math

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from helpers import on_device
from nbgrad.autograd import gradgradcheck

from ._util import (DTYPE_IDS, DTYPES, assert_close, assert_grads_match,
                    assert_second_derivatives_match, assert_values_close, copy_weights, run_both,
                    run_on_device)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 4)])
def test_linear_forward_backward_matches_torch(dtype, bias, shape):
    name = DTYPE_IDS[DTYPES.index(dtype)]
    tl = torch.nn.Linear(4, 3, bias=bias).to(dtype[1])
    nl = nn.Linear(4, 3, bias=bias, dtype=dtype[0])
    copy_weights(nl, tl)
    x = np.random.default_rng(1).standard_normal(shape)
    out, tout, (nx,), (tx,) = run_both(nl, tl, [x], dtype)
    assert_close(out, tout, name)
    assert_close(nx.grad, tx.grad, name)
    assert_grads_match(nl, tl, name)
    assert out.grad_fn.name() == ("AddmmBackward" if bias else "MmBackward")


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_functional_linear_matches_torch(dtype):
    name = DTYPE_IDS[DTYPES.index(dtype)]
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((6, 5)), rng.standard_normal((2, 5)), rng.standard_normal(2)
    out, tout, nin, tin = run_both(F.linear, torch.nn.functional.linear, [x, w, b], dtype)
    assert_close(out, tout, name)
    for a, e in zip(nin, tin):
        assert_close(a.grad, e.grad, name)


def test_linear_only_needed_gradients():
    layer = nn.Linear(3, 2)
    layer.weight.requires_grad_(False)
    x = nbgrad.randn(4, 3)
    layer(x).sum().backward()
    assert layer.weight.grad is None
    np.testing.assert_allclose(layer.bias.grad.numpy(), [4.0, 4.0])


def _twin_layers(seed):
    """Input, output gradient, and a float64 Linear(4, 3) in each library, same weights."""
    rng = np.random.default_rng(seed)
    x, g = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    tl = torch.nn.Linear(4, 3).double()
    nl = nn.Linear(4, 3, dtype=nbgrad.float64)
    copy_weights(nl, tl)
    return x, g, nl, tl


def test_linear_frozen_bias_gets_no_gradient_like_torch():
    x, g, nl, tl = _twin_layers(4)
    grads = []
    for lib, layer in ((nbgrad, nl), (torch, tl)):
        layer.bias.requires_grad_(False)
        xt = lib.tensor(x, requires_grad=True)
        layer(xt).backward(lib.tensor(g))
        assert layer.bias.grad is None
        grads.append((xt.grad.numpy(), layer.weight.grad.numpy()))
    for ours, expected in zip(*grads):
        np.testing.assert_allclose(ours, expected, rtol=1e-12)


def test_linear_refuses_a_non_tensor_input_like_torch():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="must be Tensor, not"):
        torch.nn.Linear(4, 2)(x)
    with pytest.raises(TypeError, match="must be Tensor, not"):
        nn.Linear(4, 2)(x)


def test_linear_default_init_is_pytorchs():
    nbgrad.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
    assert layer.weight.requires_grad and layer.weight.is_leaf
    assert layer.weight._version == 1  # one in-place init write, as torch's uniform_


def test_linear_repr_matches_torch():
    assert repr(nn.Linear(4, 2)) == repr(torch.nn.Linear(4, 2))
    assert repr(nn.Linear(4, 2, bias=False)) == repr(torch.nn.Linear(4, 2, bias=False))
    assert repr(nn.Identity()) == repr(torch.nn.Identity())


def test_functional_linear_shape_error_matches_torch():
    w = torch.zeros(2, 4)
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.linear(torch.zeros(3, 5), w)
    with pytest.raises(RuntimeError) as actual:
        F.linear(nbgrad.zeros(3, 5), nbgrad.zeros(2, 4))
    assert str(actual.value) == str(expected.value)


def test_identity_passes_through():
    x = nbgrad.randn(3)
    assert nn.Identity(54, unused="x")(x) is x


def test_linear_gradients_taken_without_a_copy_stay_independent():
    """LinearBackward hands its new gradient buffers to the leaves (no copy):
    accumulating a second backward into them, and writing into one leaf's
    .grad, must leave every other array as PyTorch leaves it."""
    x, g, nl, tl = _twin_layers(3)
    results = []
    for lib, layer in ((nbgrad, nl), (torch, tl)):
        xt = lib.tensor(x, requires_grad=True)
        gt = lib.tensor(g)
        out = layer(xt)
        out.backward(gt, retain_graph=True)
        first = [p.grad.clone() for p in (xt, layer.weight, layer.bias)]
        out.backward(gt)
        with lib.no_grad():
            layer.weight.grad.mul_(0)
        results.append((first, [xt.grad, layer.bias.grad], gt, xt))
    (ours, ours_acc, ng, nx), (theirs, theirs_acc, tg, tx) = results
    for a, e in zip(ours + ours_acc, theirs + theirs_acc):
        assert_close(a, e)
    np.testing.assert_array_equal(ng.numpy(), g)
    np.testing.assert_array_equal(nx.detach().numpy(), x)
    assert not np.shares_memory(nl.weight.grad.numpy(), nx.grad.numpy())


# ------------------------------------------------------------ on every device
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_on_the_device_matches_torch(dtype, bias, device):
    shape = (2, 3, 5) if bias else (4, 5)
    run_on_device(lambda m, x: m(x), lambda lib: lib.nn.Linear(5, 3, bias=bias),
                  [np.random.default_rng(1).standard_normal(shape)], dtype, device)


# -- higher-order gradients ------------------------------------------------------
LINEAR_SHAPES = [((4, 3), True), ((2, 4, 3), True), ((3,), True), ((4, 3), False)]


@pytest.mark.parametrize("shape,bias", LINEAR_SHAPES, ids=["2d", "3d", "1d", "no-bias"])
def test_linear_second_derivatives_match_torch(shape, bias, device):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape), rng.standard_normal((5, 3))]
    if bias:
        arrays.append(rng.standard_normal(5))
    assert_second_derivatives_match(lambda lib, *a: lib.nn.functional.linear(*a), arrays, device)


def test_linear_gradgradcheck():
    rng = np.random.default_rng(1)
    x, w, b = (nbgrad.tensor(rng.standard_normal(s), dtype=nbgrad.float64, requires_grad=True)
               for s in ((2, 3, 4), (2, 4), (2,)))
    assert gradgradcheck(F.linear, (x, w, b))


def test_linear_third_derivatives_match_torch():
    """Through tanh, so that every order is non-zero: the taped matmuls are
    differentiated again."""
    rng = np.random.default_rng(2)
    x0, w0 = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.linear(x, w).tanh().sum()
        (g1,) = lib.autograd.grad(y, x, create_graph=True)
        (g2,) = lib.autograd.grad((g1 * g1).sum(), w, create_graph=True)
        results.append((g1, g2, *lib.autograd.grad(g2.sum(), (x, w))))
    for mine, want in zip(*results):
        assert_values_close(mine, want)


def _mlp(lib, dtype):
    torch.manual_seed(0)
    layers = (lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 5), lib.nn.GELU(),
              lib.nn.Linear(5, 3))
    return lib.nn.Sequential(*layers)


def test_hessian_vector_product_through_an_mlp_matches_torch(device):
    """H v for the parameters of a small MLP under cross entropy:
    ``grad(grad(loss, params, create_graph=True) . v, params)``."""
    rng = np.random.default_rng(3)
    x0, t0 = rng.standard_normal((8, 4)), rng.integers(0, 3, 8)
    models = {lib: _mlp(lib, None) for lib in (nbgrad, torch)}
    copy_weights(models[nbgrad], models[torch])
    models[nbgrad].to(device=device, dtype=nbgrad.float64)
    models[torch].to(dtype=torch.float64)
    vectors = [rng.standard_normal(tuple(p.shape)) for p in models[torch].parameters()]
    results = {}
    for lib, model in models.items():
        on = on_device(lib, device)
        x = lib.tensor(x0, dtype=lib.float64, **on)
        loss = lib.nn.functional.cross_entropy(model(x), lib.tensor(t0, **on))
        params = list(model.parameters())
        grads = lib.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * lib.tensor(v, dtype=lib.float64, **on)).sum()
                  for g, v in zip(grads, vectors))
        results[lib] = grads, lib.autograd.grad(dot, params)
    for mine, want in zip(results[nbgrad][0] + results[nbgrad][1],
                          results[torch][0] + results[torch][1]):
        assert mine.device.type == device
        assert_values_close(mine, want)


def test_wgan_gp_gradient_penalty_through_an_mlp_critic_matches_torch(device):
    """A WGAN-GP critic step: the gradient of the critic at interpolates
    (``create_graph=True``), its norm's distance from 1 squared, backward into
    the critic's weights together with the Wasserstein estimate."""
    rng = np.random.default_rng(4)
    real0, fake0 = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    alpha0 = rng.random((6, 1))
    models = {lib: _mlp(lib, None) for lib in (nbgrad, torch)}
    copy_weights(models[nbgrad], models[torch])
    models[nbgrad].to(device=device, dtype=nbgrad.float64)
    models[torch].to(dtype=torch.float64)
    results = {}
    for lib, critic in models.items():
        on = on_device(lib, device)
        real, fake, alpha = (lib.tensor(a, dtype=lib.float64, **on) for a in (real0, fake0, alpha0))
        x = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        (g,) = lib.autograd.grad(critic(x)[:, 0].sum(), x, create_graph=True)
        penalty = (((g * g).sum(1).sqrt() - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
        loss.backward()
        results[lib] = [penalty, x.grad] + [p.grad for p in critic.parameters()]
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_values_close(mine, want)
