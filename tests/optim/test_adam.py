"""Adam and AdamW against torch, step for step."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim

from ._util import DTYPE_IDS, DTYPES, LARGE, TOL, compare_with_torch

ADAM = [
    dict(lr=0.01),
    dict(lr=0.01, betas=(0.5, 0.9), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, weight_decay=0.1, amsgrad=True),
    dict(lr=0.01, maximize=True),
    dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
]
ADAMW = [dict(), dict(lr=0.01, weight_decay=0.5), dict(lr=0.01, amsgrad=True, betas=(0.6, 0.95))]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("kwargs", ADAM, ids=range(len(ADAM)))
def test_adam_matches_torch(dtype, kwargs):
    opt, topt, params, tparams = compare_with_torch("Adam", kwargs, dtype)
    for p, tp in zip(params, tparams):
        state, tstate = opt.state[p], topt.state[tp]
        assert sorted(state) == sorted(tstate)
        assert state["step"].item() == tstate["step"].item() == 6
        for key in state:
            np.testing.assert_allclose(state[key].numpy(), tstate[key].numpy(), **TOL[dtype[0]])


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("kwargs", ADAMW, ids=range(len(ADAMW)))
def test_adamw_matches_torch(dtype, kwargs):
    compare_with_torch("AdamW", kwargs, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name,kwargs", [("Adam", ADAM[3]), ("AdamW", ADAMW[2])])
def test_adam_parallel_kernel_matches_torch(dtype, name, kwargs):
    compare_with_torch(name, kwargs, dtype, steps=3, shapes=LARGE)


def test_adam_defaults_match_torch():
    p = [nn.Parameter(nbgrad.zeros(1))]
    tp = [torch.nn.Parameter(torch.zeros(1))]
    for name in ("Adam", "AdamW", "SGD"):
        ours = getattr(optim, name)(p).param_groups[0]
        theirs = getattr(torch.optim, name)(tp).param_groups[0]
        for key, value in ours.items():
            if key != "params":
                assert theirs[key] == value, (name, key)


def test_adam_validates_arguments_like_torch():
    p = [nn.Parameter(nbgrad.zeros(1))]
    tp = [torch.nn.Parameter(torch.zeros(1))]
    for kwargs in (dict(lr=-1), dict(eps=-1), dict(betas=(1.0, 0.9)), dict(betas=(0.9, -0.1)),
                   dict(weight_decay=-1)):
        with pytest.raises(ValueError) as actual:
            optim.Adam(p, **kwargs)
        with pytest.raises(ValueError) as expected:
            torch.optim.Adam(tp, **kwargs)
        assert str(actual.value) == str(expected.value)


def test_step_skips_parameters_without_grad():
    a, b = nn.Parameter(nbgrad.ones(3)), nn.Parameter(nbgrad.ones(3))
    opt = optim.AdamW([a, b], lr=0.1, weight_decay=0.5)
    a.grad = nbgrad.ones(3)
    opt.step()
    assert (b.detach().numpy() == 1).all() and b._version == 0 and b not in opt.state
    assert a._version == 1 and (a.detach().numpy() < 1).all()
