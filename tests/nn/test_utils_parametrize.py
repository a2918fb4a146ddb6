"""nn.utils.parametrize and parametrizations.weight_norm against torch:
state-dict keys, repr, forward values and gradients of the originals, a
custom parametrization with right_inverse, removal."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
from nbgrad.nn.utils import parametrizations, parametrize


def _linears():
    ours, theirs = nn.Linear(4, 3), torch.nn.Linear(4, 3)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    return ours, theirs


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(dim):
    ours, theirs = _linears()
    parametrizations.weight_norm(ours, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(theirs, dim=dim)
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    for key, value in ours.state_dict().items():
        np.testing.assert_allclose(value.numpy(), theirs.state_dict()[key].numpy(), rtol=1e-6)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    out, tout = ours(nbgrad.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    (out ** 2).sum().backward()
    (tout ** 2).sum().backward()
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    # a state dict saved by torch loads (through NumPy arrays)
    fresh = parametrizations.weight_norm(nn.Linear(4, 3), dim=dim)
    fresh.load_state_dict({k: nbgrad.tensor(v.detach().numpy())
                           for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(fresh.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6)


class _Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


def test_custom_parametrization_set_and_remove():
    layer = nn.Linear(3, 3)
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    w = layer.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)
    target = nbgrad.tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3))
    layer.weight = target + target.transpose(0, 1)
    np.testing.assert_array_equal(layer.parametrizations.weight.original.detach().numpy(),
                                  np.triu((target + target.transpose(0, 1)).numpy()))
    with parametrize.cached():
        assert layer.weight is layer.weight
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear and isinstance(layer.weight, nn.Parameter)
    assert list(layer.state_dict()) == ["bias", "weight"]  # re-registered last, as in torch
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(layer, "weight")


class _First(nn.Module):
    def forward(self, X):
        return X[0]


class _TFirst(torch.nn.Module):
    def forward(self, X):
        return X[0]


def _register_twice(lib, par, first):
    module = par.register_parametrization(lib.nn.Linear(3, 3), "weight", lib.nn.Identity())
    par.register_parametrization(module, "weight", first())


@pytest.mark.parametrize("case", [
    lambda lib, par, first: par.register_parametrization(lib.nn.Linear(3, 3), "nope",
                                                         lib.nn.Identity()),
    lambda lib, par, first: par.register_parametrization(lib.nn.Linear(3, 3), "weight", first()),
    lambda lib, par, first: par.remove_parametrizations(lib.nn.Linear(3, 3), "weight"),
    lambda lib, par, first: par.ParametrizationList([], lib.ones(2)),
    _register_twice,
])
def test_errors_match_torch(case):
    def error(lib, par, first):
        with pytest.raises(Exception) as info:
            case(lib, par, first)
        return type(info.value), str(info.value).replace(f"{lib.__name__}.", "")
    assert (error(nbgrad, parametrize, _First)
            == error(torch, torch.nn.utils.parametrize, _TFirst))


def test_pickling_refused_and_deepcopy_copies_the_originals():
    import copy
    import pickle
    layer = parametrize.register_parametrization(nn.Linear(3, 3), "weight", _Symmetric())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(layer)
    clone = copy.deepcopy(layer)
    assert type(clone).__name__ == "ParametrizedLinear"
    assert clone.parametrizations.weight.original is not layer.parametrizations.weight.original
    np.testing.assert_array_equal(clone.weight.detach().numpy(), layer.weight.detach().numpy())
