"""nbgrad.nn losses on CUDA against the same loss on the CPU, forward and
backward, both float dtypes, with the options that change the computation."""
import numpy as np
import pytest

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F

from ._util import DTYPE_IDS, DTYPES, on_both

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((5, 4))
TARGET = np.array([0, 3, 1, 3, 2])
WEIGHT = np.array([0.5, 1.0, 2.0, 1.5])
pytestmark = pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)


def loss_of(make):
    return lambda _, *args: make()(*args)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse(dtype, reduction):
    on_both(loss_of(lambda: nn.MSELoss(reduction=reduction)),
            None, [LOGITS, RNG.standard_normal((5, 4))], dtype)


@pytest.mark.parametrize("kwargs", [dict(), dict(reduction="sum"), dict(reduction="none"),
                                    dict(ignore_index=3), dict(label_smoothing=0.2),
                                    dict(ignore_index=1, label_smoothing=0.1, reduction="none")],
                         ids=["mean", "sum", "none", "ignore", "smoothing", "ignore-smoothing"])
def test_cross_entropy_class_indices(dtype, kwargs):
    on_both(loss_of(lambda: nn.CrossEntropyLoss(**kwargs)), None, [LOGITS, TARGET], dtype)


def test_cross_entropy_class_weights_on_the_device(dtype):
    on_both(lambda _, x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=0,
                                               label_smoothing=0.1),
            None, [LOGITS, TARGET, WEIGHT], dtype)


def test_cross_entropy_probabilities_and_spatial_targets(dtype):
    probs = RNG.random((5, 4))
    probs /= probs.sum(1, keepdims=True)
    on_both(loss_of(lambda: nn.CrossEntropyLoss(label_smoothing=0.1)), None, [LOGITS, probs], dtype)
    spatial = RNG.standard_normal((2, 4, 3, 2))
    on_both(loss_of(nn.CrossEntropyLoss), None, [spatial, RNG.integers(0, 4, (2, 3, 2))], dtype)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_nll(dtype, reduction):
    on_both(lambda _, x, t: F.nll_loss(x.log_softmax(1), t, reduction=reduction), None,
            [LOGITS, TARGET], dtype)


def test_bce_with_logits(dtype):
    target = RNG.random((5, 4))
    on_both(loss_of(nn.BCEWithLogitsLoss), None, [LOGITS * 10, target], dtype)
    on_both(lambda _, x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, weight=w,
                                                                        pos_weight=pw),
            None, [LOGITS, target, RNG.random(4), RNG.random(4) + 0.5], dtype)


def test_bad_targets_raise_as_on_the_cpu(dtype):
    x = nbgrad.tensor(LOGITS, dtype=dtype, device="cuda")
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        F.cross_entropy(x, nbgrad.tensor([0, 4, 1, 1, 1], device="cuda"))
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        F.cross_entropy(x, nbgrad.tensor(TARGET))
