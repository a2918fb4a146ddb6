"""SGD against torch.optim.SGD, step for step."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from nbgrad.backends import cpu
from nbgrad.backends.cpu.updates import PARALLEL_THRESHOLD

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


@pytest.mark.parametrize("kwargs", [dict(lr=0.1), dict(lr=0.1, momentum=0.9)],
                         ids=["plain", "momentum"])
def test_sgd_state_matches_torch(kwargs):
    """Plain SGD keeps no per-parameter state: PyTorch reads ``self.state[p]``
    only with momentum, so ``state_dict()["state"]`` is empty."""
    opt, topt, _, _ = compare_with_torch("SGD", kwargs, DTYPES[0], steps=2)
    ours, theirs = opt.state_dict()["state"], topt.state_dict()["state"]
    assert list(ours) == list(theirs)
    assert [sorted(v) for v in ours.values()] == [sorted(v) for v in theirs.values()]
    assert len(opt.state) == len(topt.state)


def test_sgd_tensor_learning_rate_is_read_at_every_step():
    """A tensor learning rate changed in place takes effect at the next step
    (the cast hyper-parameters are remembered for plain numbers only)."""
    results = []
    for lib in (nbgrad, torch):
        p = lib.nn.Parameter(lib.ones(3))
        lr = lib.tensor(0.5)
        opt = lib.optim.SGD([p], lr=lr)
        p.grad = lib.ones(3)
        opt.step()
        with lib.no_grad():
            lr.fill_(0.125)
        opt.step()
        results.append(p.detach().numpy().copy())
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], [0.375] * 3)


def test_sgd_hyper_parameters_are_cast_per_dtype():
    """The same options on float32 and float64 parameters, in one optimizer:
    each update uses the options cast to its own parameter's dtype."""
    values = [np.full(3, 1.0, np.float32), np.full(3, 1.0, np.float64)]
    params = [nn.Parameter(nbgrad.tensor(v)) for v in values]
    tparams = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    opt, topt = optim.SGD(params, lr=0.1), torch.optim.SGD(tparams, lr=0.1)
    for p, tp in zip(params, tparams):
        p.grad, tp.grad = nbgrad.ones(3, dtype=p.dtype), torch.ones(3, dtype=tp.dtype)
    opt.step()
    topt.step()
    for p, tp in zip(params, tparams):
        np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())


@pytest.mark.parametrize("kwargs", [dict(lr=0.1, weight_decay=0.01),
                                    dict(lr=0.05, momentum=0.9, nesterov=True)],
                         ids=["plain", "momentum"])
def test_sgd_updates_small_cpu_parameters_together_in_order(kwargs, monkeypatch):
    """Small contiguous CPU parameters go to one kernel call per run of one
    dtype; a large one (parallel kernel), a non-contiguous one, a first
    momentum step and a dtype change each break the run. Values, versions and
    state stay torch's either way."""
    launches = []
    one, several = cpu.optimizer_update, cpu.optimizer_update_foreach
    monkeypatch.setattr(cpu, "optimizer_update",
                        lambda *args: launches.append(1) or one(*args))
    monkeypatch.setattr(cpu, "optimizer_update_foreach",
                        lambda update, arrays, scalars: launches.append(len(arrays[0]))
                        or several(update, arrays, scalars))
    rng = np.random.default_rng(7)
    values = [rng.standard_normal((3, 4)).astype(np.float32),
              rng.standard_normal(5).astype(np.float32),
              rng.standard_normal(PARALLEL_THRESHOLD + 3).astype(np.float32),
              rng.standard_normal((2, 2)).astype(np.float32),
              rng.standard_normal((4, 3)).astype(np.float32).T,  # non-contiguous
              rng.standard_normal(6).astype(np.float64),
              rng.standard_normal(3).astype(np.float64)]
    params = [nn.Parameter(nbgrad.tensor(v)) for v in values]
    params[4] = nn.Parameter(nbgrad.tensor(values[4].T).t())
    tparams = [torch.nn.Parameter(torch.tensor(v.copy())) for v in values]
    opt, topt = optim.SGD(params, **kwargs), torch.optim.SGD(tparams, **kwargs)
    for step in range(3):
        for p, tp in zip(params, tparams):
            g = rng.standard_normal(tuple(p.shape)).astype(tp.detach().numpy().dtype)
            p.grad, tp.grad = nbgrad.tensor(g), torch.tensor(g)
        launches.clear()
        versions = [p._version for p in params]
        opt.step()
        topt.step()
        first = kwargs.get("momentum") and step == 0
        assert launches == ([1] * 7 if first else [2, 1, 1, 1, 2])
        assert [p._version for p in params] == [v + 1 for v in versions]
        for p, tp in zip(params, tparams):
            np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6,
                                       atol=1e-6)
    assert len(opt.state) == len(topt.state)


def test_sgd_read_only_gradients_are_applied_like_any_other():
    # A read-only gradient cannot share a multi-parameter kernel call: it goes alone.
    read_only = np.full((2, 3), 0.5, np.float32)
    read_only.flags.writeable = False
    lin, tlin = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    with torch.no_grad():
        for p, tp in zip(lin.parameters(), tlin.parameters()):
            tp.copy_(torch.from_numpy(p.detach().numpy().copy()))
    # from_numpy copies a read-only array (with PyTorch's warning), so wrap it directly.
    lin.weight.grad, lin.bias.grad = nbgrad.Tensor._wrap(read_only), nbgrad.ones(2)
    tlin.weight.grad, tlin.bias.grad = torch.tensor(read_only), torch.ones(2)
    optim.SGD(lin.parameters(), lr=0.1).step()
    torch.optim.SGD(tlin.parameters(), lr=0.1).step()
    for p, tp in zip(lin.parameters(), tlin.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6)
