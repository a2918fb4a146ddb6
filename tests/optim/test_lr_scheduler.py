"""optim.lr_scheduler against torch.optim.lr_scheduler: the learning rates
of every group over many steps, ``get_last_lr``, state dicts (and a round
trip that resumes the schedule), and PyTorch's warnings on call order."""
import math
import warnings

import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from nbgrad.optim import lr_scheduler as ours_sched

S = "lr_scheduler"


def _make(lib, name, kwargs, optimizer="SGD", opt_kwargs=None):
    """An optimizer with two groups and the scheduler ``name`` on it, from ``lib``
    (nbgrad or torch)."""
    opt_kwargs = dict(lr=0.1, momentum=0.9) if opt_kwargs is None else opt_kwargs
    groups = [{"params": [lib.nn.Parameter(lib.ones(2))]},
              {"params": [lib.nn.Parameter(lib.ones(2))], "lr": 0.05}]
    opt = getattr(lib.optim, optimizer)(groups, **opt_kwargs)
    sched_module = lib.optim.lr_scheduler
    if callable(kwargs):
        return opt, kwargs(sched_module, opt)
    return opt, getattr(sched_module, name)(opt, **kwargs)


CASES = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=6, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.01)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1 / (1 + e))),
    ("LambdaLR", dict(lr_lambda=[lambda e: 0.9 ** e, lambda e: 1 + e])),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.95)),
    ("LinearLR", dict(start_factor=0.25, total_iters=4)),
    ("ConstantLR", dict(factor=0.5, total_iters=3)),
    ("PolynomialLR", dict(total_iters=6, power=2.0)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], total_steps=16)),
    ("OneCycleLR", dict(max_lr=0.5, epochs=4, steps_per_epoch=4, anneal_strategy="linear",
                        three_phase=True)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9)),
    ("SequentialLR", lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=3), m.ExponentialLR(o, gamma=0.8)],
        milestones=[3])),
    ("ChainedScheduler", lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=4), m.ExponentialLR(o, gamma=0.9)])),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _lrs(opt):
    return [g["lr"] for g in opt.param_groups]


def _momenta(opt):
    return [g.get("momentum") for g in opt.param_groups]


def _comparable(state):
    """A scheduler state dict without what cannot be compared across libraries."""
    out = {}
    for key, value in state.items():
        if key in ("optimizer", "_scale_fn_ref", "_scale_fn_custom", "lr_lambdas"):
            continue
        if key == "_schedulers" and value and isinstance(value[0], dict):
            value = [_comparable(v) for v in value]
        out[key] = value
    return out


@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
def test_schedule_matches_torch(name, kwargs):
    opt, sched = _make(nbgrad, name, kwargs)
    topt, tsched = _make(torch, name, kwargs)
    assert type(sched).__name__ == type(tsched).__name__
    assert _lrs(opt) == pytest.approx(_lrs(topt), rel=1e-12)
    for step in range(14):
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12), step
        assert _lrs(opt) == pytest.approx(_lrs(topt), rel=1e-12), step
        assert _momenta(opt) == pytest.approx(_momenta(topt), rel=1e-12), step
    assert _comparable(sched.state_dict()) == _comparable(tsched.state_dict())


@pytest.mark.parametrize("name, kwargs", [c for c in CASES if not callable(c[1])],
                         ids=[i for i, c in zip(IDS, CASES) if not callable(c[1])])
def test_state_dict_round_trip_resumes_the_schedule(name, kwargs):
    opt, sched = _make(nbgrad, name, kwargs)
    for _ in range(5):
        opt.step()
        sched.step()
    saved = sched.state_dict()
    opt2, sched2 = _make(nbgrad, name, kwargs)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(saved)
    for _ in range(5):
        opt.step()
        sched.step()
        opt2.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()
        assert _lrs(opt2) == _lrs(opt)


def test_reduce_lr_on_plateau_matches_torch():
    kwargs = dict(mode="min", factor=0.5, patience=1, threshold=0.01, cooldown=1, min_lr=[0.01, 0])
    opt, sched = _make(nbgrad, None, lambda m, o: m.ReduceLROnPlateau(o, **kwargs))
    topt, tsched = _make(torch, None, lambda m, o: m.ReduceLROnPlateau(o, **kwargs))
    losses = [1.0, 0.9, 0.9, 0.95, 0.9, 0.91, 0.5, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6]
    for loss in losses:
        opt.step()
        topt.step()
        sched.step(nbgrad.tensor(loss))
        tsched.step(torch.tensor(loss))
        assert _lrs(opt) == pytest.approx(_lrs(topt), rel=1e-12)
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
    assert sched.state_dict() == {k: v for k, v in tsched.state_dict().items()}


def test_cyclic_lr_cycles_momentum_of_adam_betas():
    kwargs = dict(base_lr=0.01, max_lr=0.1, step_size_up=2, base_momentum=0.8, max_momentum=0.9)
    opt, sched = _make(nbgrad, None, lambda m, o: m.CyclicLR(o, **kwargs), "Adam", dict(lr=0.1))
    topt, tsched = _make(torch, None, lambda m, o: m.CyclicLR(o, **kwargs), "Adam", dict(lr=0.1))
    for _ in range(6):
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert [g["betas"] for g in opt.param_groups] == [g["betas"] for g in topt.param_groups]


def _warnings_of(lib, order):
    opt, sched = _make(lib, "StepLR", dict(step_size=1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for call in order:
            (sched.step if call == "sched" else opt.step)()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("order", [["sched"], ["sched", "opt"], ["opt", "sched"]])
def test_call_order_warnings_match_torch(order):
    """scheduler.step() before optimizer.step() warns as PyTorch warns."""
    assert _warnings_of(nbgrad, order) == _warnings_of(torch, order)


def test_epoch_argument_is_deprecated_like_torch():
    def run(lib):
        opt, sched = _make(lib, "StepLR", dict(step_size=2, gamma=0.5))
        opt.step()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step(4)
        return _lrs(opt), [str(w.message) for w in caught]
    assert run(nbgrad) == run(torch)


def test_constructor_errors_match_torch():
    cases = [
        lambda m, o: m.StepLR([], step_size=1),
        lambda m, o: m.LinearLR(o, start_factor=2.0),
        lambda m, o: m.ConstantLR(o, factor=2.0),
        lambda m, o: m.OneCycleLR(o, max_lr=0.1),
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
        lambda m, o: m.ReduceLROnPlateau(o, mode="max2"),
    ]
    for case in cases:
        topt, _ = _make(torch, "StepLR", dict(step_size=1))
        opt, _ = _make(nbgrad, "StepLR", dict(step_size=1))
        with pytest.raises(Exception) as expected:
            case(torch.optim.lr_scheduler, topt)
        with pytest.raises(expected.type) as actual:
            case(ours_sched, opt)
        assert str(actual.value) == str(expected.value).replace("torch.", "nbgrad.")


def test_tensor_learning_rate_is_updated_in_place():
    p = nn.Parameter(nbgrad.ones(2))
    lr = nbgrad.tensor(0.1)
    opt = optim.SGD([p], lr=lr)
    sched = ours_sched.StepLR(opt, step_size=1, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and math.isclose(lr.item(), 0.05, rel_tol=1e-6)


def test_public_api_and_signatures_match_torch():
    import inspect

    def params(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]
    assert ours_sched.__all__ == torch.optim.lr_scheduler.__all__
    for name in ours_sched.__all__:
        ours, theirs = getattr(ours_sched, name), getattr(torch.optim.lr_scheduler, name)
        for method in ("__init__", "step", "state_dict", "load_state_dict", "get_last_lr"):
            assert params(getattr(ours, method)) == params(getattr(theirs, method)), (name, method)
        assert ours.__doc__


CLOSED_FORM_CASES = [
    ("StepLR", dict(step_size=3, gamma=0.5), [4, 1, 7, 7, 12, 0]),
    ("MultiStepLR", dict(milestones=[2, 5, 5], gamma=0.3), [6, 1, 5, 3]),
    ("ConstantLR", dict(factor=0.5, total_iters=3), [1, 4, 2]),
    ("LinearLR", dict(start_factor=0.25, total_iters=4), [2, 9, 3]),
    ("PolynomialLR", dict(total_iters=6, power=2.0), [3, 8, 1]),
    ("CosineAnnealingLR", dict(T_max=6, eta_min=0.001), [2, 9, 5]),
    ("ExponentialLR", dict(gamma=0.9), [3, 1]),
    ("LambdaLR", dict(lr_lambda=lambda e: 1 / (1 + e)), [3, 1]),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.01), [0.5, 4.25, 11, 2]),
]


@pytest.mark.parametrize("name, kwargs, epochs", CLOSED_FORM_CASES,
                         ids=[c[0] for c in CLOSED_FORM_CASES])
def test_epoch_argument_follows_torch(name, kwargs, epochs):
    """``step(epoch)`` jumps through the closed form (or get_lr) as PyTorch does."""
    def run(lib):
        opt, sched = _make(lib, name, kwargs)
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for epoch in epochs:
                opt.step()
                sched.step(epoch)
                out.append(_lrs(opt))
                opt.step()
                sched.step()
                out.append(_lrs(opt))
        return out, [str(w.message) for w in caught]
    (ours, ours_warnings), (theirs, their_warnings) = run(nbgrad), run(torch)
    assert ours_warnings == their_warnings
    for a, b in zip(ours, theirs):
        assert a == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize("name, kwargs", [CASES[3], CASES[11], CASES[14]],
                         ids=["CosineAnnealingLR", "OneCycleLR", "CyclicLR"])
def test_tensor_learning_rates_follow_torch(name, kwargs):
    def run(lib):
        opt, sched = _make(lib, name, kwargs, opt_kwargs=dict(lr=lib.tensor(0.1), momentum=0.9))
        held = opt.param_groups[0]["lr"]
        out = []
        for _ in range(8):
            opt.step()
            sched.step()
            out.append([float(lr) for lr in sched.get_last_lr()])
            assert opt.param_groups[0]["lr"] is held
            assert sched.get_last_lr()[0] is not held
        return out
    for a, b in zip(run(nbgrad), run(torch)):
        assert a == pytest.approx(b, rel=1e-6)


def test_get_lr_outside_step_warns_like_torch():
    def run(lib):
        _, sched = _make(lib, "StepLR", dict(step_size=2))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lrs = sched.get_lr()
        return lrs, [str(w.message) for w in caught]
    assert run(nbgrad) == run(torch)
