"""Dropout: the mask, the scaling, train/eval, and its gradient."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from nbgrad.autograd import gradgradcheck


def test_dropout_zeroes_and_scales_in_training():
    nbgrad.manual_seed(0)
    x = nbgrad.ones(200, 100, requires_grad=True)
    layer = nn.Dropout(p=0.25)
    out = layer(x)
    values = out.detach().numpy()
    kept = values != 0
    np.testing.assert_allclose(values[kept], 1 / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.01
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values)  # d out / d x is the scaled mask


def test_dropout_is_identity_in_eval_and_for_p_zero():
    x = nbgrad.randn(4, 4)
    layer = nn.Dropout(0.5).eval()
    assert layer(x) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 0.9, training=False) is x


def test_dropout_p_one_gives_zeros():
    x = nbgrad.randn(3, 3, requires_grad=True)
    out = F.dropout(x, 1.0)
    np.testing.assert_array_equal(out.detach().numpy(), np.zeros((3, 3), np.float32))
    # the same as torch, where the gradient is zero too
    tx = torch.ones(3, 3, requires_grad=True)
    torch.nn.functional.dropout(tx, 1.0).sum().backward()
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_dropout_is_reproducible_under_manual_seed_and_keeps_dtype():
    nbgrad.manual_seed(7)
    a = F.dropout(nbgrad.ones(50, dtype=nbgrad.float64), 0.5)
    nbgrad.manual_seed(7)
    b = F.dropout(nbgrad.ones(50, dtype=nbgrad.float64), 0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype == nbgrad.float64


def test_dropout_inplace_and_bad_probability():
    h = nbgrad.ones(10) * 1
    out = nn.Dropout(0.5, inplace=True)(h)
    assert out is h and h._version == 1
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError) as actual:
            nn.Dropout(p)
        with pytest.raises(ValueError) as expected:
            torch.nn.Dropout(p)
        assert str(actual.value) == str(expected.value)
    assert repr(nn.Dropout(0.3)) == repr(torch.nn.Dropout(0.3))


# ------------------------------------------------------------ on every device
@pytest.mark.parametrize("dtype", [nbgrad.float32, nbgrad.float64], ids=["float32", "float64"])
def test_dropout_on_the_device_keeps_or_scales_like_on_the_cpu(dtype, device):
    """The same seed draws the same mask on every device (torch draws its own)."""
    results = {}
    for d in {"cpu", device}:
        nbgrad.manual_seed(0)
        x = nbgrad.ones(4, 5, dtype=dtype, device=d, requires_grad=True)
        out = nn.Dropout(0.4)(x)
        out.sum().backward()
        results[d] = out.detach().cpu().numpy(), x.grad.cpu().numpy()
        assert out.device.type == x.grad.device.type == d
    np.testing.assert_allclose(np.unique(results[device][0]), [0.0, 1 / 0.6], rtol=1e-6)
    for got, want in zip(results[device], results["cpu"]):
        np.testing.assert_array_equal(got, want)
    x = nbgrad.ones(3, dtype=dtype, device=device)
    assert nn.Dropout(1.0)(x).tolist() == [0.0] * 3
    assert nn.Dropout(0.5).eval()(x).tolist() == [1.0] * 3


# -- higher-order gradients ------------------------------------------------------
@pytest.mark.parametrize("inplace", [False, True])
def test_dropout_second_derivatives_are_the_mask_applied_again(inplace, device):
    """y = x * m (m: the scaled mask, read back from the output): the
    gradient of sum(y**3) is 3 y**2 m, and that of its sum 6 y m**2."""
    nbgrad.manual_seed(1)
    x0 = np.random.default_rng(2).uniform(0.5, 2.0, (4, 5))
    x = nbgrad.tensor(x0, dtype=nbgrad.float64, device=device, requires_grad=True)
    y = F.dropout(x * 1 if inplace else x, 0.4, inplace=inplace)
    mask = y.detach().cpu().numpy() / x0
    assert set(np.round(np.unique(mask), 12)) <= {0.0, round(1 / 0.6, 12)}
    (g,) = nbgrad.autograd.grad((y * y * y).sum(), x, create_graph=True)
    (gg,) = nbgrad.autograd.grad(g.sum(), x)
    yv = x0 * mask
    np.testing.assert_allclose(g.detach().cpu().numpy(), 3 * yv ** 2 * mask, rtol=1e-12)
    np.testing.assert_allclose(gg.cpu().numpy(), 6 * yv * mask ** 2, rtol=1e-12)


def test_dropout_gradgradcheck():
    x = nbgrad.tensor(np.random.default_rng(3).uniform(0.5, 2.0, (3, 4)), requires_grad=True)

    def fn(t):
        nbgrad.manual_seed(4)  # the same mask at every evaluation
        return F.dropout(t, 0.3) ** 2
    assert gradgradcheck(fn, (x,))
