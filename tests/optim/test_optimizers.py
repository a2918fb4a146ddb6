"""RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and LBFGS
against torch.optim: several steps from copied weights and gradients (float32
and float64; CPU, and a few cases on CUDA), state and state-dict layout,
round trips, a torch state dict loaded through NumPy arrays, per-group
options, ``add_param_group`` and the flags PyTorch accepts."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from ._util import DTYPE_IDS, DTYPES, TOL, compare_with_torch

CASES = [
    ("RMSprop", {}),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", {}),
    ("Adagrad", dict(lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5,
                     maximize=True)),
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, weight_decay=0.1, maximize=True, rho=0.8)),
    ("Adamax", {}),
    ("Adamax", dict(weight_decay=0.1, maximize=True, betas=(0.3, 0.6))),
    ("NAdam", {}),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01)),
    ("NAdam", dict(weight_decay=0.1, maximize=True)),
    ("RAdam", {}),
    ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True, betas=(0.9, 0.5))),
    ("RAdam", dict(weight_decay=0.1, maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(t0=2, weight_decay=0.1, maximize=True, lambd=0.01)),
    ("Rprop", {}),
    ("Rprop", dict(maximize=True, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05))),
    ("Adam", dict(amsgrad=True, maximize=True, foreach=False)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, foreach=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
NAMES = sorted({n for n, _ in CASES} - {"Adam", "SGD"})


def _numpy_state(state):
    return {k: v.detach().numpy() if isinstance(v, torch.Tensor) else v for k, v in state.items()}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
def test_steps_match_torch(name, kwargs, dtype):
    opt, topt, params, tparams = compare_with_torch(name, kwargs, dtype, steps=7)
    for p, tp in zip(params, tparams):
        assert list(opt.state[p]) == list(topt.state[tp])
        for key, value in opt.state[p].items():
            expected = topt.state[tp][key]
            if isinstance(expected, torch.Tensor):
                assert value.dtype.numpy == np.dtype(str(expected.dtype).split(".")[1]), key
                np.testing.assert_allclose(value.numpy(), expected.numpy(), **TOL[dtype[0]],
                                           err_msg=key)
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    assert repr(opt) == repr(topt)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_and_torch_state_through_numpy(name):
    """Three steps in torch; its state dict, as NumPy arrays, loaded into a fresh
    nbgrad optimizer; three more steps on both agree. Then nbgrad's own state
    dict, loaded into a third optimizer, resumes exactly."""
    rng = np.random.default_rng(3)
    values = [rng.standard_normal(s) for s in [(3, 4), (5,)]]
    tparams = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    topt = getattr(torch.optim, name)(tparams)
    grads = [[rng.standard_normal(v.shape) for v in values] for _ in range(6)]
    for step in range(3):
        for tp, g in zip(tparams, grads[step]):
            tp.grad = torch.tensor(g)
        topt.step()
    saved = topt.state_dict()
    converted = {"param_groups": saved["param_groups"],
                 "state": {k: {n: nbgrad.tensor(v.detach().numpy()) if isinstance(v, torch.Tensor)
                               else v for n, v in s.items()} for k, s in saved["state"].items()}}
    params = [nn.Parameter(nbgrad.tensor(tp.detach().numpy())) for tp in tparams]
    opt = getattr(optim, name)(params)
    opt.load_state_dict(converted)
    for step in range(3, 6):
        for p, tp, g in zip(params, tparams, grads[step]):
            p.grad, tp.grad = nbgrad.tensor(g), torch.tensor(g)
        if step == 4:  # nbgrad's own state dict resumes exactly
            copies = [nn.Parameter(p.detach().clone()) for p in params]
            again = getattr(optim, name)(copies)
            again.load_state_dict(opt.state_dict())
        if step >= 4:
            for c, p in zip(copies, params):
                c.grad = p.grad
            again.step()
        opt.step()
        topt.step()
        for p, tp in zip(params, tparams):
            # (1e-10: a loaded 0-dim state such as NAdam's mu_product takes the parameter's
            # float64, as PyTorch's load does, where torch's unloaded one stays float32)
            np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-10,
                                       atol=1e-10)
    for c, p in zip(copies, params):
        np.testing.assert_array_equal(c.detach().numpy(), p.detach().numpy())
    for p, tp in zip(params, tparams):
        for key, value in opt.state[p].items():
            np.testing.assert_allclose(value.numpy(), topt.state[tp][key].numpy(), rtol=1e-7,
                                       atol=1e-10, err_msg=key)


@pytest.mark.parametrize("name", NAMES)
def test_per_group_options_and_add_param_group(name):
    rng = np.random.default_rng(4)
    a, b, c = (rng.standard_normal(3) for _ in range(3))
    ours = [nn.Parameter(nbgrad.tensor(v)) for v in (a, b, c)]
    theirs = [torch.nn.Parameter(torch.tensor(v)) for v in (a, b, c)]
    opt = getattr(optim, name)([{"params": [ours[0]], "lr": 0.05}, {"params": [ours[1]]}],
                               lr=0.01, maximize=True)
    topt = getattr(torch.optim, name)([{"params": [theirs[0]], "lr": 0.05},
                                       {"params": [theirs[1]]}], lr=0.01, maximize=True)
    for step in range(4):
        if step == 2:
            opt.add_param_group({"params": ours[2], "lr": 0.2, "weight_decay": 0.1})
            topt.add_param_group({"params": theirs[2], "lr": 0.2, "weight_decay": 0.1})
        for p, tp in zip(ours, theirs):
            g = rng.standard_normal(3)
            p.grad, tp.grad = nbgrad.tensor(g), torch.tensor(g)
        opt.step()
        topt.step()
        for p, tp in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-12,
                                       atol=1e-12)
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


def test_flags_accepted_and_refused_like_torch():
    for name in NAMES + ["Adam", "SGD"]:
        if name == "LBFGS":
            continue
        kwargs = dict(lr=0.1, foreach=True, maximize=True)
        p, tp = nn.Parameter(nbgrad.ones(2)), torch.nn.Parameter(torch.ones(2))
        opt = getattr(optim, name)([p], **kwargs)
        topt = getattr(torch.optim, name)([tp], **kwargs)
        assert opt.defaults == topt.defaults, name
    for name, kwargs in [("RMSprop", dict(lr=-1)), ("RMSprop", dict(alpha=-1)),
                         ("Adagrad", dict(lr_decay=-1)), ("Adadelta", dict(rho=2.0)),
                         ("Adamax", dict(betas=(1.0, 0.5))), ("NAdam", dict(momentum_decay=-1)),
                         ("RAdam", dict(eps=-1)), ("Rprop", dict(etas=(1.5, 1.2))),
                         ("ASGD", dict(weight_decay=-1)), ("Adam", dict(fused=True, foreach=True))]:
        with pytest.raises((ValueError, RuntimeError)) as expected:
            getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], **kwargs)
        with pytest.raises(expected.type) as actual:
            getattr(optim, name)([nn.Parameter(nbgrad.ones(2))], **kwargs)
        assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_matches_torch(dtype, line_search_fn):
    np_dtype, t_dtype = dtype
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 4)).astype(np_dtype)
    b = rng.standard_normal(6).astype(np_dtype)
    w = rng.standard_normal(4).astype(np_dtype)
    p, tp = nn.Parameter(nbgrad.tensor(w)), torch.nn.Parameter(torch.tensor(w))
    kwargs = dict(lr=0.8, max_iter=5, history_size=3, line_search_fn=line_search_fn)
    opt, topt = optim.LBFGS([p], **kwargs), torch.optim.LBFGS([tp], **kwargs)

    def closure(lib, x, o, A=A, b=b):
        o.zero_grad()
        loss = ((lib.tensor(A).matmul(x) - lib.tensor(b)) ** 2).sum() + (x ** 4).sum()
        loss.backward()
        return loss

    for _ in range(3):
        loss = opt.step(lambda: closure(nbgrad, p, opt))
        tloss = topt.step(lambda: closure(torch, tp, topt))
        np.testing.assert_allclose(loss.item(), tloss.item(), **TOL[np_dtype])
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-5 if
                                   np_dtype == np.float32 else 1e-12, atol=1e-6)
        if np_dtype == np.float64:  # float32's line search near convergence turns on
            # last-bit differences in the BLAS product (OPENBLAS_CORETYPE changes them)
            assert opt.state[p]["func_evals"] == topt.state[tp]["func_evals"]
            assert opt.state[p]["n_iter"] == topt.state[tp]["n_iter"]
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [p]}, {"params": [nn.Parameter(nbgrad.ones(1))]}])


CUDA_CASES = [("RMSprop", dict(momentum=0.9, centered=True)), ("Adagrad", {}), ("Adadelta", {}),
              ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("ASGD", {}), ("Rprop", {})]


@pytest.mark.parametrize("name, kwargs", CUDA_CASES, ids=[n for n, _ in CUDA_CASES])
def test_steps_on_the_device_match_torch(name, kwargs, device):
    """Float32, two steps: values and state as torch's; state buffers on the
    device (ASGD's counters too, as PyTorch keeps them by the parameter)."""
    rng = np.random.default_rng(5)
    value = rng.standard_normal((2, 3)).astype(np.float32)
    p = nn.Parameter(nbgrad.tensor(value, device=device))
    tp = torch.nn.Parameter(torch.tensor(value))
    opt, topt = getattr(optim, name)([p], **kwargs), getattr(torch.optim, name)([tp], **kwargs)
    for _ in range(2):
        g = rng.standard_normal((2, 3)).astype(np.float32)
        p.grad, tp.grad = nbgrad.tensor(g, device=device), torch.tensor(g)
        opt.step()
        topt.step()
        np.testing.assert_allclose(p.detach().cpu().numpy(), tp.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    for key, value in opt.state[p].items():
        if value.dim() > 0:
            assert value.device.type == device, key
        np.testing.assert_allclose(value.cpu().numpy(), topt.state[tp][key].numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=key)


@pytest.mark.skipif(not hasattr(nbgrad, "float16"), reason="no float16 dtype")
@pytest.mark.parametrize("name", NAMES + ["Adam", "SGD"])
def test_float16_parameters_step_like_torch(name):
    """Half parameters (the CPU kernels compute in float32 and round once; PyTorch
    rounds after each op): within a float16 ulp or two of torch, state in float16."""
    if name == "LBFGS":
        return
    rng = np.random.default_rng(6)
    value = rng.standard_normal(7).astype(np.float16)
    p, tp = nn.Parameter(nbgrad.tensor(value)), torch.nn.Parameter(torch.tensor(value))
    kwargs = dict(lr=0.01, momentum=0.9) if name == "SGD" else dict(lr=0.01)
    opt, topt = getattr(optim, name)([p], **kwargs), getattr(torch.optim, name)([tp], **kwargs)
    for _ in range(4):
        g = rng.standard_normal(7).astype(np.float16)
        p.grad, tp.grad = nbgrad.tensor(g), torch.tensor(g)
        opt.step()
        topt.step()
    assert p.dtype == nbgrad.float16
    np.testing.assert_allclose(p.detach().numpy().astype(np.float32),
                               tp.detach().numpy().astype(np.float32), rtol=2e-3, atol=2e-3)
    for key, value in opt.state[p].items():
        assert value.dtype.numpy == topt.state[tp][key].numpy().dtype, key


def _rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_lbfgs_strong_wolfe_on_rosenbrock_matches_torch(dtype):
    """Rosenbrock over two parameters of different shapes (flattened and
    joined) plus one the loss never uses (no gradient): iterates, evaluation
    counts and the state (keys in order, values) as torch's; a state dict
    loaded into a new optimizer carries on as torch does. The valley amplifies
    rounding (torch's BLAS sums dot products in another order), so float32
    runs one short step at a looser tolerance."""
    np_dtype, _ = dtype
    wide = np_dtype == np.float64
    rng = np.random.default_rng(1)
    values = [rng.standard_normal(s).astype(np_dtype) for s in [(2, 2), (3,), (2,)]]
    params = [nn.Parameter(nbgrad.tensor(v)) for v in values]
    tparams = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    kwargs = dict(max_iter=20 if wide else 8, history_size=5, line_search_fn="strong_wolfe")
    opt, topt = optim.LBFGS(params, **kwargs), torch.optim.LBFGS(tparams, **kwargs)
    tol = dict(rtol=1e-9, atol=1e-9) if wide else dict(rtol=1e-4, atol=1e-4)

    def closure(lib, ps, o):
        o.zero_grad()
        loss = _rosenbrock(lib.cat([ps[0].reshape(-1), ps[1]]))
        loss.backward()
        return loss

    def check(ps, o):
        for p, tp in zip(ps, tparams):
            np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), **tol)
        state, tstate = o.state[ps[0]], topt.state[tparams[0]]
        assert list(state) == list(tstate)
        for key in ("func_evals", "n_iter"):
            assert state[key] == tstate[key], key
        for key in ("d", "prev_flat_grad", "t", "H_diag", "prev_loss"):
            np.testing.assert_allclose(np.asarray(values_of(state[key])),
                                       np.asarray(values_of(tstate[key])), **tol, err_msg=key)
        for key in ("old_dirs", "old_stps", "ro"):
            assert len(state[key]) == len(tstate[key]), key
            for ours, theirs in zip(state[key], tstate[key]):
                np.testing.assert_allclose(values_of(ours), values_of(theirs), **tol, err_msg=key)
        assert params[2].grad is None and tparams[2].grad is None

    def values_of(x):
        if isinstance(x, (nbgrad.Tensor, torch.Tensor)):
            return x.detach().numpy()
        return x

    for _ in range(2 if wide else 1):
        loss = opt.step(lambda: closure(nbgrad, params, opt))
        tloss = topt.step(lambda: closure(torch, tparams, topt))
        np.testing.assert_allclose(loss.item(), tloss.item(), **tol)
        check(params, opt)
    if not wide:
        return
    # a copy of the parameters and a new optimizer from the state dict continue alike
    copies = [nn.Parameter(p.detach().clone()) for p in params]
    again = optim.LBFGS(copies, **kwargs)
    again.load_state_dict(opt.state_dict())
    again.step(lambda: closure(nbgrad, copies, again))
    topt.step(lambda: closure(torch, tparams, topt))
    check(copies, again)


def test_lbfgs_refusals_like_torch():
    for kwargs in [dict(lr=-1.0), dict(lr=torch.ones(2))]:
        with pytest.raises(ValueError) as expected:
            torch.optim.LBFGS([torch.nn.Parameter(torch.ones(2))], **kwargs)
        if "lr" in kwargs and isinstance(kwargs["lr"], torch.Tensor):
            kwargs = dict(lr=nbgrad.ones(2))
        with pytest.raises(ValueError) as actual:
            optim.LBFGS([nn.Parameter(nbgrad.ones(2))], **kwargs)
        assert str(actual.value) == str(expected.value)
    p, tp = nn.Parameter(nbgrad.ones(2)), torch.nn.Parameter(torch.ones(2))
    opt = optim.LBFGS([p], line_search_fn="bogus")
    topt = torch.optim.LBFGS([tp], line_search_fn="bogus")
    with pytest.raises(RuntimeError) as expected:
        topt.step(lambda: (tp ** 2).sum().backward() or (tp ** 2).sum())
    with pytest.raises(RuntimeError) as actual:
        opt.step(lambda: (p ** 2).sum().backward() or (p ** 2).sum())
    assert str(actual.value) == str(expected.value)
    assert opt.defaults == topt.defaults
    assert repr(opt) == repr(topt)
