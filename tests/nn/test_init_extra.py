"""orthogonal_, sparse_, dirac_, the deprecated aliases and calculate_gain against torch."""
import math

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.init as init


@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (7, 3), (4, 2, 3)])
@pytest.mark.parametrize("dtype", [nbgrad.float32, nbgrad.float64], ids=["float32", "float64"])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, dtype, device):
    nbgrad.manual_seed(0)
    w = nbgrad.empty(*shape, dtype=dtype, device=device, requires_grad=True)
    out = init.orthogonal_(w, gain=2.0)
    assert out is w and w.device.type == device and w.dtype is dtype and w._version == 1
    m = w.detach().cpu().numpy().reshape(shape[0], -1)
    small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-5)
    nbgrad.manual_seed(0)
    again = init.orthogonal_(nbgrad.empty(*shape, dtype=dtype), gain=2.0)
    np.testing.assert_array_equal(again.numpy(), w.detach().cpu().numpy())  # seeded


def test_orthogonal_is_uniform_not_biased_by_qr_signs():
    """Without the sign fix QR's R has a positive diagonal: Q's diagonal is biased."""
    nbgrad.manual_seed(1)
    diag = [init.orthogonal_(nbgrad.empty(3, 3)).numpy()[0, 0] for _ in range(300)]
    assert abs(np.mean(diag)) < 0.1


def test_sparse_zeroes_a_fraction_of_each_column(device):
    nbgrad.manual_seed(0)
    w = nbgrad.empty(10, 40, device=device)
    init.sparse_(w, 0.3, std=0.5)
    v = w.cpu().numpy()
    np.testing.assert_array_equal((v == 0).sum(axis=0), np.full(40, math.ceil(0.3 * 10)))
    assert 0.35 < v[v != 0].std() < 0.65
    zero_rows = [tuple(np.flatnonzero(v[:, c] == 0)) for c in range(40)]
    assert len(set(zero_rows)) > 10  # random rows per column


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((2, 3, 3, 2, 5), 1),
                                           ((4, 2, 5), 2)])
def test_dirac_matches_torch(shape, groups, device):
    w = nbgrad.ones(*shape, device=device)
    init.dirac_(w, groups)
    want = torch.nn.init.dirac_(torch.ones(*shape), groups)
    np.testing.assert_array_equal(w.cpu().numpy(), want.numpy())
    # a Conv1d with it is the identity on its channels
    if len(shape) == 3 and groups == 1 and shape[0] == shape[1]:
        conv = nn.Conv1d(shape[1], shape[0], shape[2], padding=shape[2] // 2, bias=False)
        init.dirac_(conv.weight)
        x = nbgrad.randn(2, shape[1], 6)
        np.testing.assert_allclose(conv(x).detach().numpy(), x.numpy(), rtol=1e-6)


@pytest.mark.parametrize("case", [
    lambda L: L.nn.init.orthogonal_(L.ones(3)),
    lambda L: L.nn.init.sparse_(L.ones(3, 3, 3), 0.1),
    lambda L: L.nn.init.dirac_(L.ones(3, 3)),
    lambda L: L.nn.init.dirac_(L.ones(3, 3, 3), 2),
    lambda L: L.nn.init.eye_(L.ones(3)),
    lambda L: L.nn.init.calculate_gain("leaky_relu", "a"),
    lambda L: L.nn.init.calculate_gain("softmax"),
])
def test_errors_as_torch(case):
    with pytest.raises(Exception) as want:
        case(torch)
    with pytest.raises(type(want.value)) as got:
        case(nbgrad)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name, param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain_matches_torch(name, param):
    got = init.calculate_gain(name, param)
    want = torch.nn.init.calculate_gain(name, param)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("old", ["uniform", "normal", "constant", "eye", "dirac",
                                 "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                 "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_aliases_warn_as_torch(old):
    args = {"constant": (0.5,), "sparse": (0.1,)}.get(old, ())
    shape = (3, 3, 3) if old == "dirac" else (3, 4)
    with pytest.warns(FutureWarning) as want:
        getattr(torch.nn.init, old)(torch.empty(*shape), *args)
    with pytest.warns(FutureWarning) as got:
        out = getattr(init, old)(nbgrad.empty(*shape), *args)
    assert str(got[0].message) == str(want[0].message)
    assert got[0].filename == __file__  # points at the caller
    assert tuple(out.shape) == shape


def test_every_torch_init_function_exists():
    missing = [n for n in dir(torch.nn.init) if not n.startswith("_") and
               callable(getattr(torch.nn.init, n)) and n[0].islower() and n != "torch"
               and not hasattr(init, n)]
    assert missing == []
