"""Losses against torch: values and gradients for every reduction, both dtypes."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck

from ._util import DTYPE_IDS, DTYPES, assert_close, run_both

REDUCTIONS = ["mean", "sum", "none"]


def _check(make_nb, make_torch, inputs, dtype, grads_of=None):
    name = DTYPE_IDS[DTYPES.index(dtype)]
    out, tout, nin, tin = run_both(make_nb, make_torch, inputs, dtype)
    assert_close(out, tout, name)
    for k, (a, e) in enumerate(zip(nin, tin)):
        if (grads_of is None or k in grads_of) and isinstance(e, torch.Tensor) and e.requires_grad:
            assert_close(a.grad, e.grad, name)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_matches_torch(dtype, reduction):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    _check(nn.MSELoss(reduction=reduction), torch.nn.MSELoss(reduction=reduction), [x, y], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", [
    {}, {"weight": True}, {"ignore_index": 1}, {"label_smoothing": 0.2},
    {"weight": True, "ignore_index": 2, "label_smoothing": 0.1}],
    ids=["plain", "weight", "ignore", "smoothing", "all"])
def test_cross_entropy_class_indices_matches_torch(dtype, reduction, options):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4)) * 2
    y = np.array([0, 1, 2, 3, 1, 2])
    kwargs = dict(options, reduction=reduction)
    nb_kwargs, t_kwargs = dict(kwargs), dict(kwargs)
    if options.get("weight"):
        w = rng.uniform(0.5, 2.0, 4)
        nb_kwargs["weight"] = nbgrad.tensor(w, dtype=dtype[0])
        t_kwargs["weight"] = torch.tensor(w, dtype=dtype[1])
    _check(nn.CrossEntropyLoss(**nb_kwargs), torch.nn.CrossEntropyLoss(**t_kwargs), [x, y], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial_and_single_sample_match_torch(dtype, reduction):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 3, 4, 5)), rng.integers(0, 3, (2, 4, 5))
    _check(lambda a, b: F.cross_entropy(a, b, reduction=reduction),
           lambda a, b: torch.nn.functional.cross_entropy(a, b, reduction=reduction), [x, y], dtype)
    x1, y1 = rng.standard_normal(5), np.array(3)
    _check(lambda a, b: F.cross_entropy(a, b, reduction=reduction),
           lambda a, b: torch.nn.functional.cross_entropy(a, b, reduction=reduction), [x1, y1],
           dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probability_targets_match_torch(dtype, reduction):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4))
    p = rng.dirichlet(np.ones(4), 5)
    w = rng.uniform(0.5, 2.0, 4)
    _check(lambda a, b: F.cross_entropy(a, b, weight=nbgrad.tensor(w, dtype=dtype[0]),
                                        reduction=reduction, label_smoothing=0.1),
           lambda a, b: torch.nn.functional.cross_entropy(a, b, weight=torch.tensor(w, dtype=dtype[1]),
                                                          reduction=reduction, label_smoothing=0.1),
           [x, p], dtype)


def test_cross_entropy_all_ignored_mean_is_nan_like_torch():
    x = np.zeros((2, 3))
    out = F.cross_entropy(nbgrad.tensor(x), nbgrad.tensor([-100, -100]))
    expected = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor([-100, -100]))
    assert np.isnan(out.item()) and np.isnan(expected.item())


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_matches_torch(dtype, reduction):
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((5, 3)), rng.integers(0, 3, 5)
    _check(nn.NLLLoss(reduction=reduction), torch.nn.NLLLoss(reduction=reduction), [x, y], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_with_logits_matches_torch(dtype, reduction, weighted):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3)) * 4
    x[0, 0], x[0, 1] = 60.0, -60.0  # far in the tails: stable, no overflow
    y = rng.uniform(0, 1, (4, 3))
    nb_kw, t_kw = {"reduction": reduction}, {"reduction": reduction}
    if weighted:
        w, pw = rng.uniform(0.5, 2, (4, 3)), rng.uniform(0.5, 3, 3)
        nb_kw.update(weight=nbgrad.tensor(w, dtype=dtype[0]), pos_weight=nbgrad.tensor(pw, dtype=dtype[0]))
        t_kw.update(weight=torch.tensor(w, dtype=dtype[1]), pos_weight=torch.tensor(pw, dtype=dtype[1]))
    _check(nn.BCEWithLogitsLoss(**nb_kw), torch.nn.BCEWithLogitsLoss(**t_kw), [x, y], dtype)


def test_bce_with_logits_gradcheck_all_inputs():
    rng = np.random.default_rng(6)
    x = nbgrad.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    y = nbgrad.tensor(rng.uniform(0, 1, (3, 2)), requires_grad=True)
    pw = nbgrad.tensor(rng.uniform(0.5, 2, 2), requires_grad=True)
    assert gradcheck(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, pos_weight=c),
                     (x, y, pw))


@pytest.mark.parametrize("input_shape,target", [
    ((3,), [1]), ((3,), [[1]]), ((3,), [1, 2]), ((2, 3), [[1, 0]]), ((2, 3), 1),
    ((2, 3, 4), [[0] * 5] * 2), ((2, 3, 4), [0, 0]), ((2, 3, 4), [[[0]] * 4] * 2)])
def test_cross_entropy_target_shapes_match_torch(input_shape, target):
    x = np.random.default_rng(7).standard_normal(input_shape)
    try:
        expected = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(target),
                                                     reduction="none")
    except (RuntimeError, ValueError) as error:
        with pytest.raises(type(error)) as actual:
            F.cross_entropy(nbgrad.tensor(x), nbgrad.tensor(target), reduction="none")
        assert str(actual.value) == str(error)
    else:
        out = F.cross_entropy(nbgrad.tensor(x), nbgrad.tensor(target), reduction="none")
        assert_close(out, expected)


def test_cross_entropy_errors_match_torch():
    cases = [
        (lambda m, t: m.nn.functional.cross_entropy(t.zeros(3, 4), t.tensor([0, 1, 4])), IndexError),
        (lambda m, t: m.nn.functional.cross_entropy(t.zeros(3, 4), t.tensor([0, 1])), ValueError),
        (lambda m, t: m.nn.functional.cross_entropy(t.zeros(3, 4), t.tensor([0, 1, 2]),
                                                   reduction="avg"), ValueError),
        (lambda m, t: m.nn.functional.binary_cross_entropy_with_logits(t.zeros(3, 1), t.zeros(3)),
         ValueError),
    ]
    for fn, kind in cases:
        with pytest.raises(kind) as expected:
            fn(torch, torch)
        with pytest.raises(kind) as actual:
            fn(nbgrad, nbgrad)
        assert str(actual.value) == str(expected.value).replace("torch.", "nbgrad.")


def test_losses_repr_like_torch():
    for name in ("MSELoss", "CrossEntropyLoss", "BCEWithLogitsLoss", "NLLLoss"):
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())
