"""Linear and Identity against torch.nn, with copied weights."""
import math

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F

from ._util import (DTYPE_IDS, DTYPES, assert_close, assert_grads_match, copy_weights, run_both,
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
