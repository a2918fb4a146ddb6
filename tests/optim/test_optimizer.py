"""The Optimizer base: groups, zero_grad, state dicts, the version bump."""
import importlib

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from nbgrad.serialization import load, save
from ._util import DTYPE_IDS, DTYPES, SHAPES, TOL


def _params(n=2):
    return [nn.Parameter(nbgrad.ones(3) * (k + 1)) for k in range(n)]


def _steps(opt, params, n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        for p in params:
            p.grad = nbgrad.tensor(rng.standard_normal(3).astype(np.float32))
        opt.step()


def test_zero_grad_set_to_none_and_zeroing():
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    for p in params:
        p.grad = nbgrad.ones(3)
    grad = params[0].grad
    opt.zero_grad(set_to_none=False)
    assert params[0].grad is grad and (grad.numpy() == 0).all() and grad._version == 1
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_constructor_errors_match_torch():
    cases = [
        lambda o, t: o.SGD([], lr=0.1),
        lambda o, t: o.SGD(t.zeros(2), lr=0.1),
        lambda o, t: o.SGD([t.zeros(2, requires_grad=True) * 2], lr=0.1),
        lambda o, t: o.SGD([[1.0]], lr=0.1),
        lambda o, t: o.SGD([{"params": {t.zeros(1, requires_grad=True)}}], lr=0.1),
    ]
    for case in cases:
        with pytest.raises((TypeError, ValueError)) as expected:
            case(torch.optim, torch)
        with pytest.raises(expected.type) as actual:
            case(optim, nbgrad)
        assert str(actual.value) == str(expected.value).replace("torch.", "nbgrad.")


def test_parameter_in_two_groups_is_refused():
    p = _params(1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": p}, {"params": p}], lr=0.1)


def test_named_parameters_are_accepted():
    layer = nn.Linear(2, 1)
    opt = optim.Adam(layer.named_parameters())
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"] == list(layer.parameters()) or all(
        a is b for a, b in zip(opt.param_groups[0]["params"], layer.parameters()))


def test_state_dict_layout_matches_torch():
    params = _params()
    tparams = [torch.nn.Parameter(torch.tensor(p.detach().numpy())) for p in params]
    opt = optim.Adam(params, lr=0.01, amsgrad=True)
    topt = torch.optim.Adam(tparams, lr=0.01, amsgrad=True)
    for p, tp in zip(params, tparams):
        p.grad, tp.grad = nbgrad.ones(3), torch.ones(3)
    opt.step()
    topt.step()
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert list(ours["state"]) == list(theirs["state"]) == [0, 1]
    assert list(ours["state"][0]) == list(theirs["state"][0])
    assert ours["param_groups"][0]["params"] == theirs["param_groups"][0]["params"]
    assert set(ours["param_groups"][0]) <= set(theirs["param_groups"][0])


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("AdamW", dict(lr=0.01))])
def test_state_dict_round_trip_resumes_exactly(name, kwargs, tmp_path):
    params = _params()
    opt = getattr(optim, name)(params, **kwargs)
    _steps(opt, params, 3)
    path = tmp_path / "opt.npz"
    save({"params": [p.detach() for p in params], "opt": opt.state_dict()}, path)
    _steps(opt, params, 2, seed=1)
    expected = [p.detach().numpy().copy() for p in params]

    checkpoint = load(path)
    fresh = [nn.Parameter(t) for t in checkpoint["params"]]
    opt2 = getattr(optim, name)(fresh, lr=123.0)  # hyper-parameters come from the state dict
    opt2.load_state_dict(checkpoint["opt"])
    assert opt2.param_groups[0]["lr"] == kwargs["lr"]
    _steps(opt2, fresh, 2, seed=1)
    for a, b in zip(fresh, expected):
        np.testing.assert_array_equal(a.detach().numpy(), b)


def test_load_state_dict_copies_and_casts_state():
    params = _params()
    opt = optim.Adam(params, lr=0.01)
    _steps(opt, params, 2)
    state = opt.state_dict()
    double = [nn.Parameter(p.detach().double()) for p in params]
    opt2 = optim.Adam(double)
    opt2.load_state_dict(state)
    for p in double:
        assert opt2.state[p]["exp_avg"].dtype == nbgrad.float64
        assert opt2.state[p]["step"].dtype == nbgrad.float32
    exp_avg = opt.state[params[0]]["exp_avg"]
    assert not np.shares_memory(opt2.state[double[0]]["exp_avg"].numpy(), exp_avg.numpy())


def test_load_state_dict_mismatch_changes_nothing():
    params = _params()
    opt = optim.SGD(params, lr=0.1, momentum=0.9)
    _steps(opt, params, 1)
    state = opt.state_dict()
    other = optim.SGD(_params(3), lr=0.5)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        other.load_state_dict(state)
    assert other.param_groups[0]["lr"] == 0.5 and not other.state
    two_groups = optim.SGD([{"params": params[:1]}, {"params": params[1:]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        two_groups.load_state_dict(state)
    wrong_shape = optim.SGD([nn.Parameter(nbgrad.ones(4)), nn.Parameter(nbgrad.ones(3))], lr=0.7)
    with pytest.raises(ValueError, match="does not match its parameter"):
        wrong_shape.load_state_dict(state)
    assert wrong_shape.param_groups[0]["lr"] == 0.7 and not wrong_shape.state


def test_step_bumps_version_once_and_names_itself_in_stale_errors():
    w = nn.Parameter(nbgrad.tensor([0.5, -0.5]))
    opt = optim.SGD([w], lr=0.1)
    out = (w * 2).sigmoid()
    w.grad = nbgrad.ones(2)
    loss = (w * w).sum()  # MulBackward saved w
    opt.step()  # the classic mistake: stepping before the backward that needs w
    assert w._version == 1
    with pytest.raises(RuntimeError, match=r"modified in place by SGD\.step\(\)"):
        loss.backward()
    out.sum().backward()  # sigmoid saved its output, which the step did not touch


def test_repr_lists_groups_like_torch():
    p = _params(1)
    tp = [torch.nn.Parameter(torch.zeros(1))]
    ours = repr(optim.SGD(p, lr=0.1, momentum=0.9))
    theirs = repr(torch.optim.SGD(tp, lr=0.1, momentum=0.9))
    keys = [line.split(":")[0] for line in theirs.splitlines() if ":" in line]
    for key in ("lr", "momentum", "nesterov", "weight_decay", "dampening", "maximize"):
        assert any(line.strip().startswith(key + ":") for line in ours.splitlines())
        assert any(k.strip() == key for k in keys)
    assert ours.startswith("SGD (\nParameter Group 0\n")


# ------------------------------------------------------------ on every device
# The simulator rounds float32 math as the CPU kernel does: a few ulp at most
# from PyTorch's fused multiply-adds.
CUDA_TOL = {**TOL, np.float32: dict(rtol=2e-6, atol=2e-6)}
DEVICE_CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.02)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("AdamW", dict(lr=0.02, betas=(0.3, 0.5), amsgrad=True, maximize=True)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name, kwargs", DEVICE_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(DEVICE_CASES)])
def test_steps_on_the_device_match_torch(dtype, name, kwargs, device, monkeypatch):
    """Several steps: values and state as torch's, state on the device (the
    step counter on the CPU, as in PyTorch), one fused kernel per parameter
    on CUDA; on the CPU, all small parameters in one call (for SGD once none
    needs a new momentum buffer)."""
    backend = importlib.import_module(f"nbgrad.backends.{device}")
    launches = []
    for attr in ("optimizer_update", "optimizer_update_foreach"):
        real = getattr(backend, attr)
        monkeypatch.setattr(backend, attr, lambda update, arrays, scalars, real=real:
                            launches.append(update.name) or real(update, arrays, scalars))
    np_dtype, t_dtype = dtype
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in SHAPES]
    params = [nn.Parameter(nbgrad.tensor(v.astype(np_dtype), device=device)) for v in values]
    tparams = [torch.nn.Parameter(torch.tensor(v, dtype=t_dtype)) for v in values]
    opt = getattr(optim, name)(params, **kwargs)
    topt = getattr(torch.optim, name)(tparams, **kwargs)
    kind = "sgd" if name == "SGD" else "adam"
    tol = (CUDA_TOL if device == "cuda" else TOL)[np_dtype]
    for step in range(4):
        for p, tp in zip(params, tparams):
            g = rng.standard_normal(tuple(p.shape))
            p.grad = nbgrad.tensor(g.astype(np_dtype), device=device)
            tp.grad = torch.tensor(g, dtype=t_dtype)
        versions = [p._version for p in params]
        launches.clear()
        opt.step()
        topt.step()
        # on the CPU small parameters go in one call (SGD's first momentum step excepted)
        together = device == "cpu" and (name != "SGD" or step > 0 or not kwargs.get("momentum"))
        assert launches == [kind] * (1 if together else len(params))
        assert [p._version for p in params] == [v + 1 for v in versions]
        for k, (p, tp) in enumerate(zip(params, tparams)):
            assert p.device.type == p.grad.device.type == device
            np.testing.assert_allclose(p.detach().cpu().numpy(), tp.detach().numpy(),
                                       **tol, err_msg=f"param {k} step {step}")
    for p, tp in zip(params, tparams):
        assert sorted(opt.state[p]) == sorted(topt.state[tp])
        for key, value in opt.state[p].items():
            assert value.device.type == ("cpu" if key == "step" else device), key
            np.testing.assert_allclose(value.cpu().numpy(), topt.state[tp][key].numpy(),
                                       **tol, err_msg=key)


def test_a_non_contiguous_parameter_on_the_device_is_updated_through_its_view(device):
    base = nbgrad.tensor(np.arange(12.0).reshape(3, 4), device=device)
    p = base.t().detach().requires_grad_()  # a transposed (non-contiguous) leaf
    p.grad = nbgrad.ones(4, 3, dtype=nbgrad.float64, device=device)
    optim.SGD([p], lr=0.5).step()
    np.testing.assert_array_equal(p.detach().cpu().numpy(), np.arange(12.0).reshape(3, 4).T - 0.5)
    np.testing.assert_array_equal(base.cpu().numpy(), np.arange(12.0).reshape(3, 4) - 0.5)


def test_zero_grad_and_state_dict_on_the_device(device):
    model = nn.Linear(3, 2).to(device)
    opt = optim.Adam(model.parameters(), lr=0.1)
    model(nbgrad.ones(4, 3, device=device)).sum().backward()
    opt.step()
    saved = opt.state_dict()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad.device.type == device and not p.grad.cpu().numpy().any()
               for p in model.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    # a CPU copy of the model loads the state: each buffer moves to its parameter's device
    cpu_model = nn.Linear(3, 2)
    cpu_opt = optim.Adam(cpu_model.parameters(), lr=0.1)
    cpu_opt.load_state_dict(saved)
    state = cpu_opt.state[cpu_model.weight]
    assert state["exp_avg"].device.type == "cpu" and state["step"].item() == 1.0
    np.testing.assert_array_equal(state["exp_avg"].numpy(),
                                  saved["state"][0]["exp_avg"].cpu().numpy())


# ------------------------------------------------------------------ hooks
def _hook_names(cls):
    return sorted(n for n in dir(cls) if n.startswith("register_") and "hook" in n)


def test_hook_registration_api_is_torch_s():
    assert _hook_names(optim.Optimizer) == _hook_names(torch.optim.Optimizer)
    from nbgrad.optim import optimizer as ours
    from torch.optim import optimizer as theirs
    for name in ("register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"):
        assert hasattr(ours, name) and hasattr(theirs, name)


def _record_step_hooks(lib, opt, calls):
    """Global and own step hooks on ``opt`` that append what they see to ``calls``."""
    def hook(tag):
        return lambda o, args, kwargs: calls.append(
            (tag, o is opt, len(args), args[0] is opt, dict(kwargs)))
    module = importlib.import_module(lib.__name__ + ".optim.optimizer")
    return [module.register_optimizer_step_pre_hook(hook("global pre")),
            module.register_optimizer_step_post_hook(hook("global post")),
            opt.register_step_pre_hook(hook("pre")), opt.register_step_post_hook(hook("post"))]


def test_step_hooks_run_in_torch_s_order_with_torch_s_arguments():
    seen = {}
    for lib in (torch, nbgrad):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.5)
        calls = []
        handles = _record_step_hooks(lib, opt, calls)
        try:
            p.grad = lib.ones(2)
            opt.step()
            opt.step(closure=None)
        finally:
            for handle in handles:
                handle.remove()
        opt.step()  # removed: nothing more is recorded
        seen[lib.__name__] = calls
        assert p.detach().numpy().tolist() == [-0.5, -0.5]
    assert seen["nbgrad"] == seen["torch"]
    assert [c[0] for c in seen["nbgrad"]] == ["global pre", "pre", "post", "global post"] * 2


def test_a_pre_hook_may_replace_the_arguments_of_step():
    p = nn.Parameter(nbgrad.ones(2))
    opt = optim.SGD([p], lr=0.5)
    p.grad = nbgrad.ones(2)
    seen = []
    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: 7.0}))
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append(sorted(kwargs)))
    assert opt.step() == 7.0 and seen == [["closure"]]


def test_a_pre_hook_returning_something_else_is_refused_before_the_step():
    p = nn.Parameter(nbgrad.ones(2))
    opt = optim.SGD([p], lr=0.5)
    p.grad = nbgrad.ones(2)
    tp = torch.nn.Parameter(torch.ones(2))
    topt = torch.optim.SGD([tp], lr=0.5)
    tp.grad = torch.ones(2)
    pattern = (r"^<function \w+\.step at 0x[0-9a-f]+> must return None or a tuple of "
               r"\(new_args, new_kwargs\), but got 5\.$")
    for o, param in ((topt, tp), (opt, p)):
        with o.register_step_pre_hook(lambda *_: 5):
            with pytest.raises(RuntimeError, match=pattern):
                o.step()
        assert param.detach().numpy().tolist() == [1.0, 1.0]
    assert p._version == 0
    opt.step()  # the handle removed the hook on leaving the with block
    assert p.detach().numpy().tolist() == [0.5, 0.5]


def _optimizer_cases():
    names = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
             "RAdam", "ASGD", "Rprop", "LBFGS"]
    return [(name, dict(lr=0.1) if name != "Adadelta" else {}) for name in names]


@pytest.mark.parametrize("name, kwargs", _optimizer_cases(), ids=[n for n, _ in _optimizer_cases()])
def test_every_optimizer_s_step_runs_the_hooks_once(name, kwargs):
    p = nn.Parameter(nbgrad.ones(2))
    opt = getattr(optim, name)([p], **kwargs)
    calls = []
    handles = _record_step_hooks(nbgrad, opt, calls)
    try:
        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        opt.step(closure)
    finally:
        for handle in handles:
            handle.remove()
    assert [c[0] for c in calls] == ["global pre", "pre", "post", "global post"]
    assert not np.allclose(p.detach().numpy(), 1.0)


def test_a_subclass_step_calling_super_runs_the_hooks_once():
    class Logged(optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p = nn.Parameter(nbgrad.ones(2))
    p.grad = nbgrad.ones(2)
    opt = Logged([p], lr=0.5)
    calls = []
    opt.register_step_pre_hook(lambda *_: calls.append("pre"))
    opt.register_step_post_hook(lambda *_: calls.append("post"))
    opt.step()
    assert calls == ["pre", "post"] and p.detach().numpy().tolist() == [0.5, 0.5]
    # a scheduler's wrapper of ``step`` keeps the hooks
    optim.lr_scheduler.StepLR(opt, step_size=1)
    opt.step()
    assert calls == ["pre", "post"] * 2


def test_state_dict_hooks_order_prepend_and_replacement():
    p = nn.Parameter(nbgrad.ones(2))
    opt = optim.SGD([p], lr=0.5, momentum=0.9)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append(("pre", o is opt)))
    opt.register_state_dict_pre_hook(lambda o: calls.append(("first pre", o is opt)),
                                     prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: calls.append(("post", sorted(sd))))
    replaced = {"state": {}, "param_groups": [], "extra": 1}
    handle = opt.register_state_dict_post_hook(lambda o, sd: replaced)
    assert opt.state_dict() is replaced
    assert calls == [("first pre", True), ("pre", True), ("post", ["param_groups", "state"])]
    handle.remove()
    assert sorted(opt.state_dict()) == ["param_groups", "state"]


def test_load_state_dict_hooks_see_a_copy_and_may_replace_it():
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    saved = opt.state_dict()
    other = optim.SGD(_params(), lr=0.7)
    calls = []

    def pre(o, sd):
        calls.append(("pre", sd is saved))
        new = dict(sd)
        new["param_groups"] = [dict(g, lr=0.25) for g in sd["param_groups"]]
        return new

    other.register_load_state_dict_pre_hook(pre)
    other.register_load_state_dict_pre_hook(lambda o, sd: calls.append(("first", sd is saved)),
                                            prepend=True)
    other.register_load_state_dict_post_hook(lambda o: calls.append(("post", o is other)))
    other.load_state_dict(saved)
    assert calls == [("first", False), ("pre", False), ("post", True)]
    assert other.param_groups[0]["lr"] == 0.25 and saved["param_groups"][0]["lr"] == 0.1


def test_hooks_are_not_copied_with_the_optimizer():
    import copy
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    opt.register_step_pre_hook(lambda *_: None)
    opt.register_state_dict_pre_hook(lambda o: None)
    clone = copy.deepcopy(opt)  # through __getstate__/__setstate__, as torch's
    assert not clone._optimizer_step_pre_hooks and not clone._optimizer_state_dict_pre_hooks
    handle = clone.register_load_state_dict_post_hook(lambda o: None)
    assert list(clone._optimizer_load_state_dict_post_hooks) == [handle.id]
    assert len(opt._optimizer_step_pre_hooks) == 1 and not opt._optimizer_load_state_dict_post_hooks
