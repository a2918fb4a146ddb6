"""optim.swa_utils against torch.optim.swa_utils: AveragedModel (SWA, EMA, custom
averages, buffers; on every device), the fused lerp behind the multi-tensor
averages, SWALR's learning rates and state dict, update_bn's statistics."""
import importlib

import numpy as np
import pytest
import torch
import torch.utils.data as tdata
from torch.optim import swa_utils as tswa

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from nbgrad.optim import swa_utils as swa
from nbgrad.utils.data import DataLoader, TensorDataset

# float32: the fused lerp rounds where torch's may fuse a multiply-add (an ulp a step).
TOL = {np.float32: dict(rtol=1e-6, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def _models(device="cpu", dtype=np.float32):
    """An nbgrad model and a torch copy (same weights): Linear, BatchNorm1d, Linear."""
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    if dtype == np.float64:
        model = model.double()
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.Linear(4, 2)).to(getattr(torch, np.dtype(dtype).name))
    tmodel.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    return model.to(device), tmodel


def _perturb(model, tmodel, rng):
    """New parameters and running statistics in both models (a training step's worth)."""
    with nbgrad.no_grad(), torch.no_grad():
        for p, tp in zip(model.parameters(), tmodel.parameters()):
            delta = rng.standard_normal(tuple(p.shape)).astype(tp.detach().numpy().dtype)
            p.add_(nbgrad.tensor(delta, device=p.device))
            tp.add_(torch.tensor(delta))
        bn, tbn = model[1], tmodel[1]
        stat = rng.standard_normal(4).astype(tbn.running_mean.numpy().dtype)
        bn.running_mean.add_(nbgrad.tensor(stat, device=bn.running_mean.device))
        tbn.running_mean.add_(torch.tensor(stat))
        bn.num_batches_tracked.add_(3)
        tbn.num_batches_tracked.add_(3)


def _cases(lib):
    return {
        "swa": dict(),
        "ema": dict(multi_avg_fn=lib.get_ema_multi_avg_fn(0.9)),
        "ema_avg_fn": dict(avg_fn=lib.get_ema_avg_fn(0.8)),
        "swa_avg_fn": dict(avg_fn=lib.get_swa_avg_fn()),
        "swa_multi": dict(multi_avg_fn=lib.get_swa_multi_avg_fn()),
        "ema_buffers": dict(multi_avg_fn=lib.get_ema_multi_avg_fn(0.7), use_buffers=True),
        "swa_buffers": dict(use_buffers=True),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(_cases(swa)))
def test_averaged_model_matches_torch(case, dtype, device):
    """Several updates: every state-dict entry (keys in torch's order) equals
    torch's; the averaged copy lives on the model's device and runs it."""
    rng = np.random.default_rng(0)
    model, tmodel = _models(device, dtype)
    averaged = swa.AveragedModel(model, **_cases(swa)[case])
    taveraged = tswa.AveragedModel(tmodel, **_cases(tswa)[case])
    for _ in range(4):
        _perturb(model, tmodel, rng)
        averaged.update_parameters(model)
        taveraged.update_parameters(tmodel)
    ours, theirs = averaged.state_dict(), taveraged.state_dict()
    assert list(ours) == list(theirs)
    assert ours["n_averaged"].dtype == nbgrad.int64 and ours["n_averaged"].item() == 4
    for key, value in ours.items():  # n_averaged on the CPU: no ``device=`` given (as torch)
        assert value.device.type == ("cpu" if key == "n_averaged" else device), key
        assert value.dtype.name == str(theirs[key].dtype).replace("torch.", ""), key
        np.testing.assert_allclose(value.cpu().numpy(), theirs[key].numpy(), **TOL[dtype],
                                   err_msg=key)
    assert averaged.module is not model and averaged.module[0].weight is not model[0].weight
    x = rng.standard_normal((2, 3)).astype(dtype)
    averaged.eval()
    taveraged.eval()
    want = taveraged(torch.tensor(x)).detach().numpy()
    # a sum of terms up to |want|: its rounding is relative to the largest output
    np.testing.assert_allclose(averaged(nbgrad.tensor(x, device=device)).detach().cpu().numpy(),
                               want, rtol=TOL[dtype]["rtol"],
                               atol=8 * np.finfo(dtype).eps * np.abs(want).max())


def test_averaged_model_on_another_device(device):
    """``device=``: the copy and ``n_averaged`` on it, the model's values averaged there."""
    model, tmodel = _models()
    averaged = swa.AveragedModel(model, device=device)
    taveraged = tswa.AveragedModel(tmodel)
    assert averaged.n_averaged.device.type == device
    rng = np.random.default_rng(1)
    for _ in range(3):
        _perturb(model, tmodel, rng)
        averaged.update_parameters(model)
        taveraged.update_parameters(tmodel)
    for (key, value), expected in zip(averaged.state_dict().items(),
                                      taveraged.state_dict().values()):
        assert value.device.type == device, key
        np.testing.assert_allclose(value.cpu().numpy(), expected.numpy(), **TOL[np.float32])


@pytest.mark.parametrize("case", ["swa", "ema"])
def test_the_default_averages_are_fused_updates(case, device, monkeypatch):
    """SWA and the EMA multi-tensor average run the fused lerp: on the CPU all the
    model's (small) float parameters in one call, on CUDA one kernel per parameter;
    each averaged parameter is written once (one version bump) per update."""
    backend = importlib.import_module(f"nbgrad.backends.{device}")
    launches = []
    for attr in ("optimizer_update", "optimizer_update_foreach"):
        real = getattr(backend, attr)
        monkeypatch.setattr(backend, attr, lambda update, arrays, scalars, real=real:
                            launches.append(update.name) or real(update, arrays, scalars))
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)).to(device)
    kwargs = {"swa": {}, "ema": dict(multi_avg_fn=swa.get_ema_multi_avg_fn(0.5))}[case]
    averaged = swa.AveragedModel(model, **kwargs)
    averaged.update_parameters(model)
    assert launches == []  # the first update copies
    with nbgrad.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    versions = [p._version for p in averaged.parameters()]
    averaged.update_parameters(model)
    assert launches == ["lerp"] * (1 if device == "cpu" else 4)
    assert [p._version for p in averaged.parameters()] == [v + 1 for v in versions]
    for p, q in zip(averaged.parameters(), model.parameters()):  # weight 1/2 for both
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy() - 0.5,
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("weight", [0.25, 0.75])
def test_foreach_lerp_matches_torch_and_takes_any_layout(weight):
    """Fused (float32/64, contiguous, small and above the parallel threshold) and
    through ``lerp_`` (float16, a transposed view): torch's ``_foreach_lerp_`` values."""
    from nbgrad.backends.cpu.updates import PARALLEL_THRESHOLD
    rng = np.random.default_rng(2)
    values = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(5),
              rng.standard_normal(PARALLEL_THRESHOLD + 1).astype(np.float32),
              rng.standard_normal((4, 3)).astype(np.float16)]
    ends = [rng.standard_normal(v.shape).astype(v.dtype) for v in values]
    targets = [nbgrad.tensor(v) for v in values]
    targets.append(nbgrad.tensor(values[0].copy()).t())  # non-contiguous
    theirs = [torch.tensor(v) for v in values] + [torch.tensor(values[0].copy()).t()]
    all_ends = ends + [ends[0].T.copy()]
    swa._foreach_lerp_(targets, [nbgrad.tensor(e) for e in all_ends], weight)
    torch._foreach_lerp_(theirs, [torch.tensor(e) for e in all_ends], weight)
    for t, expected in zip(targets, theirs):
        assert t.dtype.name == str(expected.dtype).replace("torch.", "")
        tol = dict(rtol=1e-3, atol=1e-3) if t.dtype == nbgrad.float16 else TOL[np.float32]
        np.testing.assert_allclose(t.numpy().astype(np.float64),
                                   expected.numpy().astype(np.float64), **tol)


def test_averaging_functions_match_torch():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    n = torch.tensor(2)
    pairs = [(swa.get_swa_avg_fn(), tswa.get_swa_avg_fn()),
             (swa.get_ema_avg_fn(0.6), tswa.get_ema_avg_fn(0.6))]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours(nbgrad.tensor(a), nbgrad.tensor(b), nbgrad.tensor(2))
                                   .numpy(), theirs(torch.tensor(a), torch.tensor(b), n).numpy(),
                                   rtol=1e-15)
    # integer tensors: torch's formulas through tensor ops (the EMA truncates)
    ours, theirs = [nbgrad.tensor([4, 8])], [torch.tensor([4, 8])]
    swa.get_ema_multi_avg_fn(0.5)(ours, [nbgrad.tensor([10, 9])], 1)
    tswa.get_ema_multi_avg_fn(0.5)(theirs, [torch.tensor([10, 9])], 1)
    assert ours[0].tolist() == theirs[0].tolist() and ours[0].dtype == nbgrad.int64
    # torch's SWA multi-tensor average refuses integer tensors (its addcdiv_ / add_ do)
    for n in (1, "tensor"):
        with pytest.raises(RuntimeError) as expected:
            tswa.get_swa_multi_avg_fn()([torch.tensor([4, 8])], [torch.tensor([10, 9])],
                                        torch.tensor(1) if n == "tensor" else n)
        with pytest.raises(RuntimeError) as actual:
            swa.get_swa_multi_avg_fn()([nbgrad.tensor([4, 8])], [nbgrad.tensor([10, 9])],
                                       nbgrad.tensor(1) if n == "tensor" else n)
        assert str(actual.value) == str(expected.value).replace("torch.", "nbgrad.")


def test_refusals_match_torch():
    model, tmodel = _models()
    for lib, m in ((swa, model), (tswa, tmodel)):
        with pytest.raises(AssertionError, match="^Only one of avg_fn and multi_avg_fn should "
                                                 "be provided$"):
            lib.AveragedModel(m, avg_fn=lib.get_swa_avg_fn(),
                              multi_avg_fn=lib.get_swa_multi_avg_fn())
        for make in (lib.get_ema_avg_fn, lib.get_ema_multi_avg_fn):
            for decay in (-0.1, 1.5):
                with pytest.raises(ValueError) as info:
                    make(decay)
                assert str(info.value) == (f"Invalid decay value {decay} provided. Please "
                                           "provide a value in [0,1] range.")


def test_averaged_model_state_dict_round_trip():
    model, _ = _models()
    averaged = swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.5))
    averaged.update_parameters(model)
    with nbgrad.no_grad():
        model[0].weight.add_(1.0)
    averaged.update_parameters(model)
    fresh = swa.AveragedModel(_models()[0])
    fresh.load_state_dict(averaged.state_dict())
    assert fresh.n_averaged.item() == 2
    for (k, a), b in zip(fresh.state_dict().items(), averaged.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


# ------------------------------------------------------------ SWALR
def _optimizers():
    groups = [[nn.Parameter(nbgrad.ones(2))], [nn.Parameter(nbgrad.ones(1))]]
    opt = optim.SGD([{"params": groups[0]}, {"params": groups[1], "lr": 0.3}], lr=0.1)
    tgroups = [[torch.nn.Parameter(torch.ones(2))], [torch.nn.Parameter(torch.ones(1))]]
    topt = torch.optim.SGD([{"params": tgroups[0]}, {"params": tgroups[1], "lr": 0.3}], lr=0.1)
    return opt, topt


@pytest.mark.parametrize("kwargs", [dict(swa_lr=[0.05, 0.01], anneal_epochs=3),
                                    dict(swa_lr=0.02, anneal_epochs=4, anneal_strategy="linear"),
                                    dict(swa_lr=0.05, anneal_epochs=0),
                                    dict(swa_lr=0.5)],
                         ids=["cos", "linear", "no-annealing", "defaults"])
def test_swalr_rates_and_state_dict_match_torch(kwargs):
    opt, topt = _optimizers()
    sched, tsched = swa.SWALR(opt, **kwargs), tswa.SWALR(topt, **kwargs)
    assert [g["swa_lr"] for g in opt.param_groups] == [g["swa_lr"] for g in topt.param_groups]
    assert sched.get_last_lr() == tsched.get_last_lr()
    for epoch in range(12):
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-15), epoch
        assert [g["lr"] for g in opt.param_groups] == sched.get_last_lr()
    assert sched.state_dict() == tsched.state_dict()
    # resumed from the state dicts (the groups hold lr and swa_lr; the annealing
    # function comes back from its name)
    opt2, _ = _optimizers()
    other = swa.SWALR(opt2, swa_lr=1.0, anneal_strategy="linear" if "anneal_strategy" not in
                      kwargs else "cos")
    other.load_state_dict(sched.state_dict())
    opt2.load_state_dict(opt.state_dict())
    assert other.anneal_func is sched.anneal_func
    other.step()
    sched.step()
    assert other.get_last_lr() == sched.get_last_lr()


def test_swalr_refusals_match_torch_and_change_nothing():
    cases = [dict(swa_lr=0.05, anneal_strategy="exp"), dict(swa_lr=0.05, anneal_epochs=-1),
             dict(swa_lr=0.05, anneal_epochs=2.0), dict(swa_lr=[0.1, 0.2, 0.3])]
    for kwargs in cases:
        opt, topt = _optimizers()
        with pytest.raises(ValueError) as expected:
            tswa.SWALR(topt, **kwargs)
        with pytest.raises(ValueError) as actual:
            swa.SWALR(opt, **kwargs)
        assert str(actual.value) == str(expected.value)
        # (torch writes each group's swa_lr before its checks; nbgrad leaves the groups alone)
        assert all("swa_lr" not in g and "initial_lr" not in g for g in opt.param_groups)


def test_swalr_get_lr_outside_step_warns():
    opt, _ = _optimizers()
    sched = swa.SWALR(opt, swa_lr=0.05)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


# ------------------------------------------------------------ update_bn
class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4, momentum=0.3)
        self.bn2 = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn2(self.bn(self.fc(x)).relu())


class _TNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)
        self.bn = torch.nn.BatchNorm1d(4, momentum=0.3)
        self.bn2 = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn2(self.bn(self.fc(x)).relu())


@pytest.mark.parametrize("pairs", [True, False], ids=["x-y-batches", "tensor-batches"])
def test_update_bn_matches_torch(pairs):
    """Running statistics reset and re-estimated over one pass (a cumulative
    average), as torch's; momenta and the eval mode are restored."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((10, 3)).astype(np.float32)
    net, tnet = _Net(), _TNet()
    tnet.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    with nbgrad.no_grad(), torch.no_grad():  # stale statistics, to be reset
        net.bn.running_mean.fill_(5.0)
        tnet.bn.running_mean.fill_(5.0)
    net.eval()
    tnet.eval()
    if pairs:
        loader = DataLoader(TensorDataset(nbgrad.tensor(x), nbgrad.zeros(10)), batch_size=4)
        tloader = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.zeros(10)),
                                   batch_size=4)
    else:
        loader = [nbgrad.tensor(x[:6]), nbgrad.tensor(x[6:])]
        tloader = [torch.tensor(x[:6]), torch.tensor(x[6:])]
    swa.update_bn(loader, net)
    tswa.update_bn(tloader, tnet)
    theirs = tnet.state_dict()
    for key, value in net.state_dict().items():
        np.testing.assert_allclose(value.numpy(), theirs[key].numpy(), rtol=1e-6, atol=1e-6,
                                   err_msg=key)
    assert net.bn.num_batches_tracked.item() == (3 if pairs else 2)
    assert (net.bn.momentum, net.bn2.momentum) == (0.3, 0.1)
    assert not net.training and not net.bn.training


def test_update_bn_without_batch_norm_does_nothing():
    model = nn.Linear(3, 2)
    model.eval()
    loader = [object()]  # never read: there is no statistic to update
    swa.update_bn(loader, model)
    assert not model.training
