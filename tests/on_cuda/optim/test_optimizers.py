"""SGD, Adam and AdamW on CUDA: several steps against the same optimizer on
the CPU and against PyTorch, state on the device, one fused kernel per
parameter, and moving a model after the optimizer was made."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from nbgrad.optim import _kernels

DTYPES = [(nbgrad.float32, torch.float32), (nbgrad.float64, torch.float64)]
DTYPE_IDS = ["float32", "float64"]
# One kernel, the same formulas on both devices: the simulator rounds float32
# math like the CPU kernel, a few ulp at most; PyTorch's fused multiply-adds
# give about one ulp of the operands (as in tests/optim).
TOL = {"float32": dict(rtol=2e-6, atol=2e-6), "float64": dict(rtol=1e-12, atol=1e-12)}
SHAPES = [(3, 4), (5,)]

CASES = [
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
@pytest.mark.parametrize("name, kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_steps_match_the_cpu_and_torch(dtype, name, kwargs, monkeypatch):
    launches = {"cpu": [], "cuda": []}
    real = _kernels._run

    def run(kind, arrays, scalars):
        launches["cpu" if isinstance(arrays[0], (tuple, np.ndarray)) else "cuda"].append(kind)
        real(kind, arrays, scalars)
    monkeypatch.setattr(_kernels, "_run", run)
    nb_dtype, t_dtype = dtype
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in SHAPES]
    on = {d: [nn.Parameter(nbgrad.tensor(v, dtype=nb_dtype, device=d)) for v in values]
          for d in ("cpu", "cuda")}
    opts = {d: getattr(optim, name)(on[d], **kwargs) for d in on}
    tparams = [torch.nn.Parameter(torch.tensor(v, dtype=t_dtype)) for v in values]
    topt = getattr(torch.optim, name)(tparams, **kwargs)
    for step in range(4):
        for k, tp in enumerate(tparams):
            g = rng.standard_normal(SHAPES[k])
            for d in on:
                on[d][k].grad = nbgrad.tensor(g, dtype=nb_dtype, device=d)
            tp.grad = torch.tensor(g, dtype=t_dtype)
        versions = [p._version for p in on["cuda"]]
        for calls in launches.values():
            calls.clear()
        for opt in (*opts.values(), topt):
            opt.step()
        # One fused kernel per parameter on the device; on the CPU, SGD updates the
        # parameters in one call once none needs a new momentum buffer.
        kind = "sgd" if name == "SGD" else "adam"
        assert launches["cuda"] == [kind] * 2
        together = name == "SGD" and (step > 0 or not kwargs.get("momentum"))
        assert launches["cpu"] == [kind] * (1 if together else 2)
        assert [p._version for p in on["cuda"]] == [v + 1 for v in versions]
        for k, (cpu_p, cuda_p, tp) in enumerate(zip(on["cpu"], on["cuda"], tparams)):
            assert cuda_p.device.type == "cuda" and cuda_p.grad.device.type == "cuda"
            got = cuda_p.detach().cpu().numpy()
            np.testing.assert_allclose(got, cpu_p.detach().numpy(), **TOL[nb_dtype.name],
                                       err_msg=f"vs cpu, param {k} step {step}")
            np.testing.assert_allclose(got, tp.detach().numpy(), **TOL[nb_dtype.name],
                                       err_msg=f"vs torch, param {k} step {step}")
    for cpu_p, cuda_p in zip(on["cpu"], on["cuda"]):
        cpu_state = opts["cpu"].state[cpu_p]
        assert sorted(opts["cuda"].state[cuda_p]) == sorted(cpu_state)
        for key, value in opts["cuda"].state[cuda_p].items():
            if key != "step":  # buffers on the device; the step counter on the CPU, as PyTorch
                assert value.device.type == "cuda", key
                np.testing.assert_allclose(value.cpu().numpy(), cpu_state[key].numpy(),
                                           **TOL[nb_dtype.name])


def test_non_contiguous_parameter_is_updated_through_its_view():
    base = nbgrad.tensor(np.arange(12.0).reshape(3, 4), device="cuda")
    p = base.t().detach().requires_grad_()  # a transposed (non-contiguous) leaf
    p.grad = nbgrad.ones(4, 3, dtype=nbgrad.float64, device="cuda")
    optim.SGD([p], lr=0.5).step()
    np.testing.assert_array_equal(p.detach().cpu().numpy(), np.arange(12.0).reshape(3, 4).T - 0.5)
    np.testing.assert_array_equal(base.cpu().numpy(), np.arange(12.0).reshape(3, 4) - 0.5)


def test_zero_grad_and_state_dict_round_trip_on_the_device():
    model = nn.Linear(3, 2).to("cuda")
    opt = optim.Adam(model.parameters(), lr=0.1)
    model(nbgrad.ones(4, 3, device="cuda")).sum().backward()
    opt.step()
    saved = opt.state_dict()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad.device.type == "cuda" and not p.grad.cpu().numpy().any()
               for p in model.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    # a CPU copy of the model loads the CUDA state: each buffer moves to its parameter's device
    cpu_model = nn.Linear(3, 2)
    cpu_opt = optim.Adam(cpu_model.parameters(), lr=0.1)
    cpu_opt.load_state_dict(saved)
    state = cpu_opt.state[cpu_model.weight]
    assert state["exp_avg"].device.type == "cpu" and state["step"].item() == 1.0
    np.testing.assert_array_equal(state["exp_avg"].numpy(),
                                  saved["state"][0]["exp_avg"].cpu().numpy())
