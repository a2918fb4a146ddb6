"""Containers (Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict),
Identity, Unflatten, buffers (persistent or not), apply and dtype casts, against torch."""
import collections

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn

from ._util import DTYPE_IDS, DTYPES, run_on_device


def test_sequential_chains_and_names_like_torch():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    tseq = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    assert repr(seq) == repr(tseq)
    assert [n for n, _ in seq.named_parameters()] == [n for n, _ in tseq.named_parameters()]
    x = nbgrad.randn(5, 3)
    expected = seq[2](seq[1](seq[0](x)))
    assert (seq(x) == expected).numpy().all()


def test_sequential_indexing_slicing_and_editing():
    a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)
    seq = nn.Sequential(a, b, c)
    assert seq[0] is a and seq[-1] is c and len(seq) == 3 and list(seq) == [a, b, c]
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and list(head) == [a, b]
    seq.append(nn.Tanh())
    assert len(seq) == 4 and isinstance(seq[3], nn.Tanh)
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and seq[1] is c
    seq.insert(0, b)
    assert seq[0] is b
    with pytest.raises(IndexError):
        seq[10]


def test_sequential_from_ordered_dict():
    seq = nn.Sequential(collections.OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    assert list(dict(seq.named_children())) == ["fc", "act"]
    assert [n for n, _ in seq.named_parameters()] == ["fc.weight", "fc.bias"]
    assert seq.fc is seq[0]


def test_module_list_registers_and_repr_collapses_like_torch():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.ReLU())
    tl = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])
    tl.append(torch.nn.ReLU())
    assert repr(layers) == repr(tl)
    assert len(list(layers.parameters())) == 6
    assert [n for n, _ in layers.named_parameters()] == [n for n, _ in tl.named_parameters()]
    layers.extend([nn.Tanh()])
    assert len(layers) == 5 and isinstance(layers[-1], nn.Tanh)
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    with pytest.raises(NotImplementedError, match="forward"):
        layers(nbgrad.zeros(2))


def test_module_dict():
    d = nn.ModuleDict({"enc": nn.Linear(2, 3), "dec": nn.Linear(3, 2)})
    assert list(d.keys()) == ["enc", "dec"] and "enc" in d and len(d) == 2
    assert [n for n, _ in d.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_sequential_cnn_on_the_device_matches_torch(dtype, device):
    def make(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3, padding=1), lib.nn.ReLU(),
                                 lib.nn.MaxPool2d(2), lib.nn.Flatten(), lib.nn.Linear(12, 4),
                                 lib.nn.Tanh())
    run_on_device(lambda m, x: m(x), make, [np.random.default_rng(0).standard_normal((2, 2, 5, 5))],
                  dtype, device)


# -- issue 16: ParameterList, ParameterDict, Identity, Unflatten, buffers, apply, casts ------

def _both(fn):
    return fn(nbgrad), fn(torch)


def test_parameter_list_matches_torch():
    def build(lib):
        plist = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(4)])
        plist.append(lib.ones(1))
        plist.extend([lib.nn.Parameter(lib.ones(2))])
        plist += [lib.ones(3, dtype=lib.float64)]
        plist[0] = lib.full((2, 3), 2.0)
        return plist
    ours, theirs = _both(build)
    assert len(ours) == len(theirs) == 5
    assert all(isinstance(p, nn.Parameter) for p in ours)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs).replace("torch.", "nbgrad.")
    assert (ours[0].detach().numpy() == 2).all() and ours[-1].dtype == nbgrad.float64
    assert len(ours[1:3]) == 2 and isinstance(ours[1:3], nn.ParameterList)
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        ours(1)
    with pytest.raises(TypeError) as expected:
        theirs.extend(torch.ones(2))
    with pytest.raises(TypeError) as actual:
        ours.extend(nbgrad.ones(2))
    assert str(actual.value) == str(expected.value)


def test_parameter_dict_matches_torch():
    def build(lib):
        pdict = lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.ones(2)), "a": lib.zeros(3)})
        pdict["c"] = lib.ones(1, 2)
        pdict.update([("d", lib.nn.Parameter(lib.ones(4)))])
        return pdict
    ours, theirs = _both(build)
    assert list(ours.keys()) == list(theirs.keys())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours) == repr(theirs).replace("torch.", "nbgrad.")
    assert "a" in ours and ours.get("zz") is None and len(ours) == 4
    popped = ours.pop("a")
    theirs.pop("a")
    assert isinstance(popped, nn.Parameter) and list(ours) == list(theirs)
    merged = ours | nn.ParameterDict({"e": nbgrad.ones(1)})
    assert list(merged) == list(ours) + ["e"]
    with pytest.raises(TypeError) as expected:
        theirs[3] = torch.ones(1)
    with pytest.raises(TypeError) as actual:
        ours[3] = nbgrad.ones(1)
    assert str(actual.value) == str(expected.value)


def test_module_list_and_dict_editing_like_torch():
    def build(lib):
        mlist = lib.nn.ModuleList([lib.nn.Linear(2, 2), lib.nn.ReLU()])
        mlist.insert(1, lib.nn.Tanh())
        mlist.append(lib.nn.Identity())
        mlist.pop(0)
        mdict = lib.nn.ModuleDict({"x": lib.nn.ReLU()})
        mdict.update([("y", lib.nn.Tanh()), ("z", mlist)])
        del mdict["x"]
        return mdict
    ours, theirs = _both(build)
    assert repr(ours) == repr(theirs)
    assert list(ours.keys()) == list(theirs.keys())
    with pytest.raises(ValueError) as expected:
        theirs.update([("a", torch.nn.ReLU(), 3)])
    with pytest.raises(ValueError) as actual:
        ours.update([("a", nn.ReLU(), 3)])
    assert str(actual.value) == str(expected.value)


def test_identity_and_unflatten_like_torch():
    x = np.arange(24.0).reshape(2, 12)
    ident, tident = nn.Identity(3, key="ignored"), torch.nn.Identity(3, key="ignored")
    out = ident(nbgrad.tensor(x))
    np.testing.assert_array_equal(out.numpy(), x)
    unflat, tunflat = nn.Unflatten(1, (3, 4)), torch.nn.Unflatten(1, (3, 4))
    assert repr(unflat) == repr(tunflat) and repr(ident) == repr(tident)
    assert tuple(unflat(nbgrad.tensor(x)).shape) == tuple(tunflat(torch.tensor(x)).shape)
    assert tuple(nn.Unflatten(-1, [2, 6])(nbgrad.tensor(x)).shape) == (2, 2, 6)
    with pytest.raises(TypeError) as expected:
        torch.nn.Unflatten(1, (3, 4.0))
    with pytest.raises(TypeError) as actual:
        nn.Unflatten(1, (3, 4.0))
    assert str(actual.value) == str(expected.value)


class _WithBuffers:
    @staticmethod
    def make(lib):
        module = lib.nn.Linear(2, 3)
        module.register_buffer("running", lib.zeros(3))
        module.register_buffer("scratch", lib.ones(3), persistent=False)
        module.register_buffer("steps", lib.tensor(0))
        module.register_buffer("nothing", None)
        return lib.nn.Sequential(module, lib.nn.ReLU())


def test_buffers_persistent_false_and_named_buffers_like_torch():
    ours, theirs = _WithBuffers.make(nbgrad), _WithBuffers.make(torch)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())  # no "0.scratch"
    assert [n for n, _ in ours.named_buffers(prefix="m", recurse=True)] == \
        [n for n, _ in theirs.named_buffers(prefix="m", recurse=True)]
    assert list(ours[0].named_buffers(recurse=False)) and not list(ours.named_buffers(recurse=False))
    missing = ours.load_state_dict({k: v for k, v in ours.state_dict().items()})
    assert missing.missing_keys == [] and missing.unexpected_keys == []
    ours[0].extra = nn.Buffer(nbgrad.ones(2), persistent=False)
    assert "extra" in dict(ours[0].named_buffers()) and "0.extra" not in ours.state_dict()


def test_apply_visits_children_first_like_torch():
    def visit(lib):
        seen = []
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.ReLU()))
        returned = model.apply(lambda m: seen.append(type(m).__name__))
        assert returned is model
        return seen
    ours, theirs = _both(visit)
    assert ours == theirs


def test_float_double_half_and_to_dtype_cast_floating_state_only():
    model = _WithBuffers.make(nbgrad)
    weight = model[0].weight
    assert model.double() is model and model[0].weight is weight
    assert weight.dtype == nbgrad.float64 and model[0].running.dtype == nbgrad.float64
    assert model[0].steps.dtype == nbgrad.int64  # integer buffers keep their dtype
    model.float()
    assert weight.dtype == nbgrad.float32 and model[0].scratch.dtype == nbgrad.float32
    model.to(nbgrad.float64)
    assert weight.dtype == nbgrad.float64 and model[0].steps.dtype == nbgrad.int64
    if hasattr(nbgrad, "float16"):
        model.half()
        assert weight.dtype == nbgrad.float16 and model[0].steps.dtype == nbgrad.int64
    with pytest.raises(TypeError) as expected:
        torch.nn.Linear(2, 2).to(torch.int64)
    with pytest.raises(TypeError) as actual:
        nn.Linear(2, 2).to(nbgrad.int64)
    assert str(actual.value) == str(expected.value).replace("torch.", "nbgrad.")
