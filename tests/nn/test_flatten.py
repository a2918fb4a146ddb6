"""Flatten and Unflatten."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn

from ._util import DTYPES, run_on_device


@pytest.mark.parametrize("start,end", [(1, -1), (0, -1), (1, 2), (-2, -1)])
def test_flatten_matches_torch_shape_and_shares_memory(start, end):
    x = nbgrad.randn(2, 3, 4, 5)
    out = nn.Flatten(start, end)(x)
    assert tuple(out.shape) == tuple(torch.nn.Flatten(start, end)(torch.zeros(2, 3, 4, 5)).shape)
    assert out._version_counter is x._version_counter  # a view, as torch's
    assert repr(nn.Flatten(start, end)) == repr(torch.nn.Flatten(start, end))


def test_flatten_gradient_and_bad_dims():
    x = nbgrad.randn(2, 3, 4, requires_grad=True)
    (nn.Flatten()(x) * 2).sum().backward()
    assert tuple(x.grad.shape) == (2, 3, 4) and float(x.grad.numpy().min()) == 2.0
    with pytest.raises(IndexError, match=r"Flatten\(start_dim=1, end_dim=-1\).*\[5\]"):
        nn.Flatten()(nbgrad.zeros(5))


def test_unflatten_matches_torch():
    x = nbgrad.randn(2, 12)
    out = nn.Unflatten(1, (3, 4))(x)
    assert tuple(out.shape) == (2, 3, 4)
    assert repr(nn.Unflatten(1, (3, 4))) == repr(torch.nn.Unflatten(1, (3, 4)))


@pytest.mark.parametrize("dims", [(), (0, 2)], ids=["default", "0-2"])
def test_flatten_on_the_device_matches_torch(dims, device):
    run_on_device(lambda m, x: m(x), lambda lib: lib.nn.Flatten(*dims),
                  [np.random.default_rng(0).standard_normal((2, 3, 4))], DTYPES[0], device)
