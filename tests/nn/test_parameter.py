"""nn.Parameter: a leaf that requires grad, sharing memory with its data."""
import copy

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn


def test_parameter_is_a_leaf_tensor_that_requires_grad():
    data = nbgrad.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, nbgrad.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    (p * p).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [2.0, 4.0])


def test_parameter_shares_memory_and_version_with_its_data():
    data = nbgrad.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    data.add_(1)
    np.testing.assert_array_equal(p.detach().numpy(), [2.0, 3.0])
    assert p._version == data._version == 1


def test_parameter_repr_matches_torch():
    values = [[1.0, -2.5], [0.25, 3.0]]
    assert repr(nn.Parameter(nbgrad.tensor(values))) == repr(torch.nn.Parameter(torch.tensor(values)))
    assert repr(nn.Parameter(nbgrad.tensor(values), requires_grad=False)) == repr(
        torch.nn.Parameter(torch.tensor(values), requires_grad=False))


def test_parameter_of_a_non_leaf_is_a_new_leaf():
    x = nbgrad.tensor([1.0], requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.requires_grad
    p.sum().backward()
    assert x.grad is None and p.grad is not None


def test_parameter_default_and_bad_data():
    assert tuple(nn.Parameter().shape) == (0,)
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(nbgrad.tensor([1, 2]))


def test_ops_on_parameters_give_plain_tensors_and_deepcopy_copies():
    p = nn.Parameter(nbgrad.tensor([1.0, 2.0]))
    assert type(p * 2) is nbgrad.Tensor and type(p.detach()) is nbgrad.Tensor
    p.grad = nbgrad.tensor([0.5, 0.5])
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad
    assert not np.shares_memory(q.detach().numpy(), p.detach().numpy())
    np.testing.assert_array_equal(q.grad.numpy(), [0.5, 0.5])
    q.sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [0.5, 0.5])  # the original is untouched
