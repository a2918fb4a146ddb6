"""nn.Module: registration, traversal, state dicts, modes, grads, devices, repr."""
import collections

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from helpers import cuda_only


def _net_class(lib, make):
    """The same model written against nbgrad.nn or torch.nn."""

    class Net(lib.Module):
        def __init__(self):
            super().__init__()
            self.features = lib.Sequential(lib.Conv2d(1, 2, 3), lib.ReLU())
            self.fc = lib.Linear(8, 3)
            self.scale = lib.Parameter(make.ones(1))
            self.register_buffer("steps", make.zeros(1))
            self.register_buffer("cache", make.zeros(2), persistent=False)
            self.note = "plain attribute"

        def forward(self, x):
            return self.fc(self.features(x).flatten(1)) * self.scale

    return Net


Net = _net_class(nn, nbgrad)
TorchNet = _net_class(torch.nn, torch)


def test_registration_and_traversal_match_torch():
    net, tnet = Net(), TorchNet()
    assert [n for n, _ in net.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    assert [n for n, _ in net.named_buffers()] == [n for n, _ in tnet.named_buffers()]
    assert [n for n, _ in net.named_children()] == [n for n, _ in tnet.named_children()]
    assert [n for n, _ in net.named_modules()] == [n for n, _ in tnet.named_modules()]
    assert list(net.state_dict()) == list(tnet.state_dict())  # persistent buffers only
    assert [type(m).__name__ for m in net.modules()] == [type(m).__name__ for m in tnet.modules()]
    assert list(net.children()) == [net.features, net.fc]
    assert net.note == "plain attribute" and "note" not in dict(net.named_parameters())
    assert repr(net) == repr(tnet)
    assert net.get_submodule("features.0") is net.features[0]
    assert net.get_parameter("fc.bias") is net.fc.bias
    assert len(list(net.parameters(recurse=False))) == 1


def test_shared_parameters_are_listed_once():
    layer = nn.Linear(2, 2)
    seq = nn.Sequential(layer, layer)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.modules())) == 2


def test_reassignment_and_deletion():
    net = Net()
    net.fc = None
    assert net.fc is None and "fc.weight" not in net.state_dict()
    net.fc = nn.Linear(8, 3)
    with pytest.raises(TypeError, match="cannot assign 'nbgrad.FloatTensor' as parameter 'scale'"):
        net.scale = nbgrad.ones(1)
    with pytest.raises(TypeError, match="child module 'fc'"):
        net.fc = 3
    net.steps = nbgrad.ones(1)
    assert net.state_dict()["steps"].item() == 1
    del net.scale
    assert "scale" not in dict(net.named_parameters())
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'scale'"):
        net.scale


def test_assigning_before_init_is_refused():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(nbgrad.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Bad()


def test_forward_is_required():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward"'):
        nn.Module()(nbgrad.zeros(1))


def test_state_dict_values_are_detached_aliases():
    net = Net()
    state = net.state_dict()
    w = state["fc.weight"]
    assert not w.requires_grad and w.grad_fn is None
    assert np.shares_memory(w.numpy(), net.fc.weight.detach().numpy())
    assert net.state_dict(keep_vars=True)["fc.weight"] is net.fc.weight


def test_state_dict_round_trip():
    a, b = Net(), Net()
    b.steps.fill_(5)
    result = a.load_state_dict(b.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(x.numpy(), y.numpy(), err_msg=name)
    # Loading copies: the modules do not share memory afterwards.
    assert not np.shares_memory(a.fc.weight.detach().numpy(), b.fc.weight.detach().numpy())


def test_load_state_dict_reports_every_problem_at_once_and_changes_nothing():
    net = nn.Linear(3, 2)
    before = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    versions = [p._version for p in net.parameters()]
    bad = {"weight": nbgrad.zeros(3, 3), "extra": nbgrad.zeros(1)}
    with pytest.raises(RuntimeError) as actual:
        net.load_state_dict(bad)
    tnet = torch.nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as expected:
        tnet.load_state_dict({"weight": torch.zeros(3, 3), "extra": torch.zeros(1)})
    assert str(actual.value) == str(expected.value).replace("torch.", "nbgrad.")
    message = str(actual.value)
    assert '"bias"' in message and '"extra"' in message and "size mismatch for weight" in message
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    assert [p._version for p in net.parameters()] == versions


def test_load_state_dict_good_keys_are_not_written_when_another_key_is_bad():
    net = nn.Linear(3, 2)
    before = net.weight.detach().numpy().copy()
    with pytest.raises(RuntimeError, match="size mismatch for bias"):
        net.load_state_dict({"weight": nbgrad.ones(2, 3), "bias": nbgrad.ones(3)})
    np.testing.assert_array_equal(net.weight.detach().numpy(), before)  # torch would have copied it


def test_load_state_dict_non_strict_and_non_tensor_values():
    net = nn.Linear(3, 2)
    result = net.load_state_dict({"weight": nbgrad.ones(2, 3), "other": nbgrad.ones(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    assert (net.weight.detach().numpy() == 1).all()
    with pytest.raises(RuntimeError, match="size mismatch"):  # even when not strict, as torch
        net.load_state_dict({"weight": nbgrad.ones(1, 3)}, strict=False)
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias"'):
        net.load_state_dict({"weight": nbgrad.ones(2, 3), "bias": [1.0, 2.0]})
    with pytest.raises(TypeError):
        net.load_state_dict([("weight", nbgrad.ones(2, 3))])


def test_load_state_dict_bumps_versions_and_keeps_leaves():
    net = nn.Linear(3, 2)
    v = net.weight._version
    net.load_state_dict({"weight": nbgrad.ones(2, 3, dtype=nbgrad.float64), "bias": nbgrad.zeros(2)})
    assert net.weight._version == v + 1 and net.weight.is_leaf and net.weight.requires_grad
    assert net.weight.dtype == nbgrad.float32  # copied into the existing parameter


def test_train_eval_propagate():
    net = Net()
    assert net.training and net.fc.training
    assert net.eval() is net
    assert not net.training and not net.features[0].training
    net.train()
    assert net.features[1].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_zero_grad_both_ways_and_requires_grad_():
    net = Net()
    net(nbgrad.randn(2, 1, 4, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    grad = net.fc.weight.grad
    net.zero_grad(set_to_none=False)
    assert net.fc.weight.grad is grad and (grad.numpy() == 0).all()
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    assert net(nbgrad.randn(2, 1, 4, 4)).grad_fn is None
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters())


def test_to_dtype_keeps_parameter_objects():
    net = Net()
    weight = net.fc.weight
    net(nbgrad.randn(1, 1, 4, 4)).sum().backward()
    assert net.to(nbgrad.float64) is net
    assert net.fc.weight is weight and weight.dtype == nbgrad.float64
    assert weight.grad.dtype == nbgrad.float64 and net.steps.dtype == nbgrad.float64
    out = net(nbgrad.randn(1, 1, 4, 4, dtype=nbgrad.float64))
    assert out.dtype == nbgrad.float64
    net.float()
    assert weight.dtype == nbgrad.float32
    net.to("cpu")
    net.to(nbgrad.device("cpu"), dtype=nbgrad.float32)
    with pytest.raises(TypeError, match="floating point"):
        net.to(nbgrad.int64)


def test_to_cuda_goes_through_tensor_to():
    # Module.to delegates to Tensor.to: whatever the CUDA backend says, the module says too.
    net = nn.Linear(2, 2)
    try:
        expected = nbgrad.zeros(1).to("cuda")
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as actual:
            net.to("cuda")
        assert str(actual.value) == str(error)
        assert net.weight.device.type == "cpu"
    else:
        net.to("cuda")
        assert net.weight.device == expected.device


def test_forward_hooks():
    layer = nn.Linear(2, 2)
    seen = []
    handle = layer.register_forward_hook(lambda m, args, out: seen.append(tuple(out.shape)))
    pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    out = layer(nbgrad.ones(3, 2))
    assert seen == [(3, 2)]
    np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(layer.bias.detach().numpy(), (3, 2)))
    handle.remove()
    pre.remove()
    layer(nbgrad.ones(1, 2))
    assert seen == [(3, 2)]


def test_apply_and_named_modules_prefix():
    net = Net()
    names = []
    net.apply(lambda m: names.append(type(m).__name__))
    assert names == ["Conv2d", "ReLU", "Sequential", "Linear", "Net"]
    assert [n for n, _ in net.named_parameters(prefix="model")][:2] == ["model.scale", "model.features.0.weight"]


def test_state_dict_is_ordered_dict():
    assert isinstance(Net().state_dict(), collections.OrderedDict)


def test_deepcopy_gives_an_independent_module():
    import copy

    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    model(nbgrad.randn(4, 3)).sum().backward()
    grad = model[0].weight.grad.numpy().copy()
    twin = copy.deepcopy(model)
    assert isinstance(twin[0].weight, nn.Parameter) and twin[0].weight.requires_grad
    assert not np.shares_memory(twin[0].weight.detach().numpy(), model[0].weight.detach().numpy())
    twin.zero_grad()
    twin(nbgrad.randn(4, 3)).sum().backward()
    np.testing.assert_array_equal(model[0].weight.grad.numpy(), grad)


def test_deepcopy_of_a_module_with_a_buffer():
    import copy

    model = Net()
    twin = copy.deepcopy(model)
    assert not np.shares_memory(twin.steps.numpy(), model.steps.numpy())


# ------------------------------------------------------------------ to CUDA
def _moved_model():
    nbgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model.register_buffer("scale", nbgrad.tensor([2.0]))
    return model


@cuda_only
def test_module_cuda_moves_parameters_grads_and_buffers_keeping_identity(device):
    model = _moved_model()
    model(nbgrad.ones(2, 3)).sum().backward()
    params = list(model.parameters())
    before = [p.detach().numpy().copy() for p in params]
    grads = [p.grad.numpy().copy() for p in params]
    assert model.cuda() is model  # Module.cuda(), as Module.to(device)
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


@cuda_only
def test_an_optimizer_made_before_a_move_to_cuda_trains_the_moved_model(device):
    model = _moved_model()
    reference = _moved_model().to(device)
    opt, ref_opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9), None
    model.to(device)
    ref_opt = optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    x = nbgrad.tensor(np.random.default_rng(0).standard_normal((5, 3)), dtype=nbgrad.float32,
                      device=device)
    for _ in range(2):
        for m, o in ((model, opt), (reference, ref_opt)):
            o.zero_grad()
            (m(x) ** 2).mean().backward()
            o.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        assert opt.state[p]["momentum_buffer"].device.type == "cuda"
        np.testing.assert_array_equal(p.detach().cpu().numpy(), q.detach().cpu().numpy())


@cuda_only
def test_optimizer_state_made_on_the_cpu_is_not_mixed_with_cuda(device):
    model = _moved_model()
    opt = optim.Adam(model.parameters())
    model(nbgrad.ones(1, 3)).sum().backward()
    opt.step()
    model.to(device)  # PyTorch leaves the optimizer's state behind too
    model(nbgrad.ones(1, 3, device=device)).sum().backward()
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        opt.step()
    opt.load_state_dict(opt.state_dict())  # moves each buffer to its parameter's device
    opt.step()
    assert opt.state[model[0].weight]["exp_avg"].device.type == "cuda"


@cuda_only
def test_state_dicts_cross_to_cuda(device):
    model = _moved_model()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    gpu = _moved_model().to(device)
    for p in gpu.parameters():
        p.data.zero_()
    gpu.load_state_dict(state)  # CPU values copied into the CUDA tensors
    assert all(v.device.type == "cuda" for v in gpu.state_dict().values())
    for k, v in gpu.state_dict().items():
        np.testing.assert_array_equal(v.cpu().numpy(), state[k].numpy())
