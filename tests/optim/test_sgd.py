"""SGD against torch.optim.SGD, step for step."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim

from ._util import DTYPE_IDS, DTYPES, LARGE, TOL, compare_with_torch

OPTIONS = [
    dict(lr=0.1),
    dict(lr=0.1, weight_decay=0.01),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.02),
    dict(lr=0.05, momentum=0.5, maximize=True),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("kwargs", OPTIONS, ids=range(len(OPTIONS)))
def test_sgd_matches_torch(dtype, kwargs):
    opt, topt, params, tparams = compare_with_torch("SGD", kwargs, dtype)
    if kwargs.get("momentum"):
        for p, tp in zip(params, tparams):
            np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(),
                                       topt.state[tp]["momentum_buffer"].numpy(), **TOL[dtype[0]])
    else:
        assert not any(opt.state.values())


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_sgd_parallel_kernel_matches_torch(dtype):
    compare_with_torch("SGD", OPTIONS[4], dtype, steps=3, shapes=LARGE)


def test_sgd_validates_arguments_like_torch():
    p = [nn.Parameter(nbgrad.zeros(1))]
    tp = [torch.nn.Parameter(torch.zeros(1))]
    for kwargs in (dict(lr=-1), dict(momentum=-0.1), dict(weight_decay=-1),
                   dict(nesterov=True), dict(nesterov=True, momentum=0.9, dampening=0.1)):
        with pytest.raises(ValueError) as actual:
            optim.SGD(p, **kwargs)
        with pytest.raises(ValueError) as expected:
            torch.optim.SGD(tp, **kwargs)
        assert str(actual.value) == str(expected.value)


def test_sgd_param_groups_have_their_own_options():
    a, b = nn.Parameter(nbgrad.ones(2)), nn.Parameter(nbgrad.ones(2))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad, b.grad = nbgrad.ones(2), nbgrad.ones(2)
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9], rtol=1e-6)
    np.testing.assert_allclose(b.detach().numpy(), [0.0, 0.0], atol=1e-7)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["momentum"] == 0
    opt.param_groups[0]["lr"] = 0.5  # schedulers change the group dict in place
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.4, 0.4], rtol=1e-6)


def test_sgd_closure_and_non_contiguous_parameter():
    base = nbgrad.tensor(np.arange(6.0).reshape(2, 3))
    p = nn.Parameter(base.t())  # a transposed (non-contiguous) leaf
    opt = optim.SGD([p], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 55.0
    np.testing.assert_allclose(p.detach().numpy(), np.zeros((3, 2)))  # p - 0.5 * 2p
