"""LazyLinear, LazyConv1d, LazyConv2d and UninitializedParameter against torch."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn

from ._util import assert_close

LAZY = {  # name -> (make(lib), input shape, the class it becomes, weight shape)
    "linear": (lambda L: L.nn.LazyLinear(3), (2, 5), "Linear", (3, 5)),
    "linear-3d-nobias": (lambda L: L.nn.LazyLinear(3, bias=False), (2, 4, 5), "Linear", (3, 5)),
    "conv1d": (lambda L: L.nn.LazyConv1d(4, 3, padding=1), (2, 3, 6), "Conv1d", (4, 3, 3)),
    "conv1d-unbatched": (lambda L: L.nn.LazyConv1d(4, 2, groups=2), (6, 5), "Conv1d", (4, 3, 2)),
    "conv2d": (lambda L: L.nn.LazyConv2d(2, 2, stride=2), (1, 3, 4, 4), "Conv2d", (2, 3, 2, 2)),
}


@pytest.mark.parametrize("name", list(LAZY))
def test_lazy_module_materializes_on_first_forward_as_torch(name, device):
    make, shape, becomes, weight_shape = LAZY[name]
    mine, want = make(nbgrad), make(torch)
    assert repr(mine) == repr(want)
    assert repr(mine.weight) == "<UninitializedParameter>"
    assert isinstance(mine.weight, nn.UninitializedParameter)
    assert isinstance(mine.weight, nn.Parameter) and mine.weight.requires_grad
    assert mine.has_uninitialized_params()
    assert list(mine.state_dict()) == list(want.state_dict())
    mine.to(device)
    weight = mine.weight
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    a = nbgrad.tensor(x, device=device, requires_grad=True)
    out = mine(a)
    ref = want(torch.tensor(x))
    assert type(mine).__name__ == type(want).__name__ == becomes
    assert repr(mine) == repr(want)
    assert mine.weight is weight and type(weight) is nn.Parameter  # materialized in place
    assert tuple(mine.weight.shape) == weight_shape and mine.weight.device.type == device
    assert tuple(out.shape) == tuple(ref.shape)
    # initialised as the eager layer: kaiming-uniform bound 1/sqrt(fan_in)
    fan_in = int(np.prod(weight_shape[1:]))
    w = mine.weight.detach().cpu().numpy()
    assert np.abs(w).max() <= 1 / np.sqrt(fan_in) and np.abs(w).std() > 0
    # with torch's weights it computes torch's values and gradients
    state = {k: nbgrad.tensor(v.detach().numpy()) for k, v in want.state_dict().items()}
    mine.load_state_dict(state)
    out = mine(a)
    out.sum().backward()
    ref = want(torch.tensor(x))
    ref.sum().backward()
    assert_close(out.detach().cpu(), ref)
    for (n, p), (tn, tp) in zip(mine.named_parameters(), want.named_parameters()):
        assert n == tn
        assert_close(p.grad.cpu(), tp.grad)
    assert not mine._forward_pre_hooks  # the initializing hook is gone


def test_lazy_in_a_sequential_and_optimizer_after_first_forward():
    model = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(2))
    model(nbgrad.randn(4, 3))
    shapes = [tuple(p.shape) for p in model.parameters()]
    assert shapes == [(8, 3), (8,), (2, 8), (2,)]
    opt = nbgrad.optim.SGD(model.parameters(), lr=0.1)
    before = model[0].weight.detach().numpy().copy()
    model(nbgrad.randn(4, 3)).sum().backward()
    opt.step()
    assert not np.array_equal(before, model[0].weight.detach().numpy())


def test_uninitialized_parameter_materialize():
    p = nn.UninitializedParameter(dtype=nbgrad.float64)
    q = torch.nn.UninitializedParameter(dtype=torch.float64)
    assert repr(p) == repr(q)
    p.materialize((2, 3))
    q.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype is nbgrad.float64
    b = nn.UninitializedBuffer()
    b.materialize(4)
    assert type(b) is nn.Buffer and tuple(b.shape) == (4,)


@pytest.mark.parametrize("case", [
    lambda L: L.nn.LazyConv1d(2, 3)(L.ones(5)),
    lambda L: L.nn.LazyConv2d(2, 3)(L.ones(1, 1, 2, 5, 5)),
    lambda L: L.nn.LazyConv2d(2, 1, groups=2)(L.ones(1, 3, 2, 2)),
])
def test_errors_as_torch(case):
    with pytest.raises(Exception) as want:
        case(torch)
    with pytest.raises(type(want.value)) as got:
        case(nbgrad)
    assert str(got.value).replace("nbgrad.Size", "torch.Size") == str(want.value)


def test_lazy_module_deep_copied_or_cast_before_its_first_forward():
    import copy
    m = nn.LazyLinear(3)
    twin = copy.deepcopy(m).double()
    assert type(twin.weight) is nn.UninitializedParameter and twin.weight.dtype is nbgrad.float64
    twin(nbgrad.randn(2, 4, dtype=nbgrad.float64))
    m(nbgrad.randn(2, 5))  # each infers its own shape from its own first input
    assert tuple(twin.weight.shape) == (3, 4) and twin.weight.dtype is nbgrad.float64
    assert tuple(m.weight.shape) == (3, 5) and type(m).__name__ == "Linear"


@pytest.mark.parametrize("name", list(LAZY))
def test_a_lazy_module_loads_a_state_dict_before_its_first_forward_as_torch(name):
    """The state dict's shapes materialize the parameters (PyTorch's lazy load
    hook); the first call then computes with the loaded values."""
    make, shape, becomes, weight_shape = LAZY[name]
    torch.manual_seed(0)
    trained = make(torch)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    trained(torch.tensor(x))
    state = trained.state_dict()
    mine, want = make(nbgrad), make(torch)
    mine.load_state_dict({k: nbgrad.tensor(v.numpy()) for k, v in state.items()})
    want.load_state_dict(state)
    assert tuple(mine.weight.shape) == tuple(want.weight.shape) == weight_shape
    assert type(mine.weight) is nn.Parameter
    assert_close(mine(nbgrad.tensor(x)).detach(), want(torch.tensor(x)))
    assert repr(mine) == repr(want) and type(mine).__name__ == becomes
