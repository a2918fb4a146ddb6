"""Sequential, ModuleList and ModuleDict."""
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
