"""Module.to("cuda") and back: parameters, gradients and buffers move, the
Parameter objects stay (so an optimizer made before the move keeps working,
as in PyTorch), and state dicts cross devices."""
import numpy as np
import pytest

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim


def make():
    nbgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model.register_buffer("scale", nbgrad.tensor([2.0]))
    return model


def test_to_moves_parameters_grads_and_buffers_keeping_identity():
    model = make()
    model(nbgrad.ones(2, 3)).sum().backward()
    params = list(model.parameters())
    before = [p.detach().numpy().copy() for p in params]
    grads = [p.grad.numpy().copy() for p in params]
    assert model.cuda() is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]
    for p, value, grad in zip(params, before, grads):
        assert p.device.type == "cuda" and p.grad.device.type == "cuda"
        assert p.is_leaf and p.requires_grad and isinstance(p, nn.Parameter)
        np.testing.assert_array_equal(p.detach().cpu().numpy(), value)
        np.testing.assert_array_equal(p.grad.cpu().numpy(), grad)
    assert model.scale.device.type == "cuda"
    model.to("cpu", dtype=nbgrad.float64)
    assert all(p.device.type == "cpu" and p.dtype is nbgrad.float64 for p in params)
    np.testing.assert_array_equal(params[0].detach().numpy(), before[0].astype(np.float64))


def test_an_optimizer_made_before_the_move_trains_the_moved_model():
    model = make()
    reference = make().cuda()
    opt, ref_opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9), None
    model.cuda()
    ref_opt = optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    x = nbgrad.tensor(np.random.default_rng(0).standard_normal((5, 3)), dtype=nbgrad.float32,
                      device="cuda")
    for _ in range(2):
        for m, o in ((model, opt), (reference, ref_opt)):
            o.zero_grad()
            (m(x) ** 2).mean().backward()
            o.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        assert opt.state[p]["momentum_buffer"].device.type == "cuda"
        np.testing.assert_array_equal(p.detach().cpu().numpy(), q.detach().cpu().numpy())


def test_state_made_on_one_device_is_not_mixed_with_the_other():
    model = make()
    opt = optim.Adam(model.parameters())
    model(nbgrad.ones(1, 3)).sum().backward()
    opt.step()
    model.cuda()  # PyTorch leaves the optimizer's state behind too
    model(nbgrad.ones(1, 3, device="cuda")).sum().backward()
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        opt.step()
    opt.load_state_dict(opt.state_dict())  # moves each buffer to its parameter's device
    opt.step()
    assert opt.state[model[0].weight]["exp_avg"].device.type == "cuda"


def test_state_dicts_cross_devices():
    model = make()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    gpu = make().cuda()
    for p in gpu.parameters():
        p.data.zero_()
    gpu.load_state_dict(state)  # CPU values copied into the CUDA tensors
    assert all(v.device.type == "cuda" for v in gpu.state_dict().values())
    for k, v in gpu.state_dict().items():
        np.testing.assert_array_equal(v.cpu().numpy(), state[k].numpy())
