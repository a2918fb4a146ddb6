"""Dropout: the mask, the scaling, train/eval, and its gradient."""
import warnings

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck, gradgradcheck


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


# -- the dropout family (issue 16 breadth): channel-wise and alpha dropout -----------
FEATURE = {  # F name -> (shape, leading dims that get one draw each)
    "dropout1d": [((8, 30, 5), 2), ((30, 5), 1)],
    "dropout2d": [((8, 30, 2, 3), 2)],
    "dropout3d": [((4, 30, 2, 2, 2), 2), ((30, 2, 2, 2), 1)],
}
FEATURE_CASES = [(name, shape, lead) for name, cases in FEATURE.items() for shape, lead in cases]


@pytest.mark.parametrize("name, shape, lead", FEATURE_CASES,
                         ids=[f"{n}-{len(s)}d" for n, s, _ in FEATURE_CASES])
def test_feature_dropout_drops_whole_channels(name, shape, lead, device):
    nbgrad.manual_seed(0)
    x = nbgrad.ones(*shape, dtype=nbgrad.float64, device=device, requires_grad=True)
    out = getattr(F, name)(x, 0.25)
    out.sum().backward()
    v = out.detach().cpu().numpy()
    channels = v.reshape(int(np.prod(shape[:lead])), -1)
    # every channel is all zero or all 1 / (1 - p), and about p of them are zero
    assert all(len(set(row)) == 1 for row in channels.tolist())
    assert set(np.unique(channels)) <= {0.0, 1 / 0.75}
    dropped = (channels[:, 0] == 0).mean()
    n = channels.shape[0]
    assert abs(dropped - 0.25) < 4 * np.sqrt(0.25 * 0.75 / n)
    np.testing.assert_array_equal(x.grad.cpu().numpy(), v)  # the gradient is the noise
    # torch's masks have the same structure
    t = getattr(torch.nn.functional, name)(torch.ones(*shape, dtype=torch.float64), 0.25)
    assert all(len(set(row)) == 1 for row in t.numpy().reshape(channels.shape).tolist())


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_keeps_mean_and_variance_like_torch(name, device):
    """On a standard normal input (SELU's fixed point) alpha dropout keeps mean 0
    and variance 1; dropped entries all take one value; the gradient is the scale a."""
    p = 0.2
    nbgrad.manual_seed(0)
    x0 = np.random.default_rng(0).standard_normal((200, 50, 2))  # (the bounds: 4 sigma or more)
    x = nbgrad.tensor(x0, device=device, requires_grad=True)
    out = getattr(F, name)(x, p, training=True)
    out.sum().backward()
    v = out.detach().cpu().numpy()
    torch.manual_seed(0)
    want = getattr(torch.nn.functional, name)(torch.tensor(x0), p, training=True).numpy()
    for stats in (v, want):
        assert abs(stats.mean()) < 0.03 and abs(stats.var() - 1) < 0.05
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    kept = np.isclose(v, x0 * a + alpha * a * p)
    np.testing.assert_allclose(v[~kept], a * p * alpha - alpha * a)  # the dropped value
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.where(kept, a, 0.0), rtol=1e-12)
    assert abs((~kept).mean() - p) < 0.02
    if name == "feature_alpha_dropout":
        assert (kept.all(axis=2) | (~kept).all(axis=2)).all()


def test_dropout_family_gradcheck():
    x = nbgrad.tensor(np.random.default_rng(3).standard_normal((3, 4, 2)), requires_grad=True)
    for fn in (F.dropout1d, F.dropout2d, F.alpha_dropout, F.feature_alpha_dropout):
        def seeded(t, fn=fn):
            nbgrad.manual_seed(4)  # the same mask at every evaluation
            return fn(t, 0.3, True) ** 2
        with pytest.warns(UserWarning) if fn is F.dropout2d else _no_warning():
            assert gradcheck(seeded, (x,))


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_dropout_family_eval_p0_p1_and_inplace(name):
    fn, tfn = getattr(F, name), getattr(torch.nn.functional, name)
    shape = {"dropout2d": (2, 3, 2, 2), "dropout3d": (2, 3, 2, 2, 2)}.get(name, (2, 3, 4))
    x = nbgrad.randn(*shape)
    assert fn(x, 0.5, False) is x
    assert fn(x, 0.0, True) is x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zeros = fn(x, 1.0, True)
        want = tfn(torch.tensor(x.numpy()), 1.0, True)
        np.testing.assert_array_equal(zeros.numpy(), want.numpy())
        h = x * 1
        out = fn(h, 0.5, True, True)
    assert out is h and h._version == (2 if "alpha" in name else 1)  # as torch: mul_, add_


@pytest.mark.parametrize("case", [
    lambda L: L.nn.functional.dropout1d(L.ones(2, 3, 4, 5)),
    lambda L: L.nn.functional.dropout1d(L.ones(3)),
    lambda L: L.nn.functional.dropout1d(L.ones(2, 3), 1.5),
    lambda L: L.nn.functional.dropout2d(L.ones(2, 3), -0.1),
    lambda L: L.nn.functional.dropout3d(L.ones(2, 3, 2, 2), 2.0),
    lambda L: L.nn.functional.alpha_dropout(L.ones(2), 1.1),
    lambda L: L.nn.functional.feature_alpha_dropout(L.ones(2), 0.5, True),
    lambda L: L.nn.Dropout2d(1.5),
    lambda L: L.nn.AlphaDropout(-1),
])
def test_dropout_family_errors_as_torch(case):
    with pytest.raises(Exception) as want:
        case(torch)
    with pytest.raises(type(want.value)) as got:
        case(nbgrad)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name, shape", [("dropout2d", (2, 3, 4)), ("dropout2d", (2, 3)),
                                         ("dropout2d", (1, 2, 3, 4, 5)), ("dropout3d", (2, 3, 4))])
def test_dropout_family_warnings_as_torch(name, shape):
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        getattr(torch.nn.functional, name)(torch.ones(*shape))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        getattr(F, name)(nbgrad.ones(*shape))
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert all(w.filename == __file__ for w in got)


@pytest.mark.parametrize("cls", ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                 "FeatureAlphaDropout"])
def test_dropout_family_modules_as_torch(cls):
    for args in [(), (0.3,), (0.2, True)]:
        mine, want = getattr(nn, cls)(*args), getattr(torch.nn, cls)(*args)
        assert repr(mine) == repr(want)
        assert list(mine.state_dict()) == []
    x = nbgrad.randn(*{"Dropout1d": (2, 3, 2), "Dropout2d": (2, 3, 2, 2)}.get(cls, (2, 3, 2, 2, 2)))
    m = getattr(nn, cls)(0.5).eval()
    assert m(x) is x
