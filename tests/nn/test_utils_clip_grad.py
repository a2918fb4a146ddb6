"""nn.utils: clip_grad_norm_ (every norm type, error_if_nonfinite, foreach),
clip_grad_value_, get_total_norm, clip_grads_with_norm_,
parameters_to_vector / vector_to_parameters, against torch.nn.utils."""
import math
import warnings

import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn



def _pair(dtype=np.float32, scale=1.0, device="cpu"):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,), (2, 1, 2)]
    values = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [(rng.standard_normal(s) * scale).astype(dtype) for s in shapes]
    ours = [nn.Parameter(nbgrad.tensor(v, device=device)) for v in values]
    theirs = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    for p, tp, g in zip(ours, theirs, grads):
        p.grad, tp.grad = nbgrad.tensor(g, device=device), torch.tensor(g)
    ours[1].grad = None  # a parameter without a gradient is skipped
    theirs[1].grad = None
    return ours, theirs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, -math.inf, 0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    ours, theirs = _pair(dtype)
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type, foreach=True)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    tol = dict(rtol=1e-5) if dtype == np.float32 else dict(rtol=1e-12)
    assert total.dtype.numpy == np.dtype(dtype) and total.shape == ()
    np.testing.assert_allclose(total.item(), ttotal.item(), **tol)
    for p, tp in zip(ours, theirs):
        assert (p.grad is None) == (tp.grad is None)
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), **tol)


def test_clip_grad_norm_of_one_tensor_and_of_nothing():
    p = nn.Parameter(nbgrad.ones(4))
    p.grad = nbgrad.full((4,), 3.0)
    assert nn.utils.clip_grad_norm_(p, 1.0).item() == pytest.approx(6.0)
    np.testing.assert_allclose(p.grad.numpy(), 3.0 / (6.0 + 1e-6), rtol=1e-6)
    empty = nn.utils.clip_grad_norm_([], 1.0)
    assert empty.item() == 0.0 and empty.dtype == nbgrad.float32
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.utils.clip_grad_norm_((q for q in []), 1.0)
    assert [str(w.message) for w in caught] == [
        "`parameters` is an empty generator, no gradient clipping will occur."]


def test_error_if_nonfinite_matches_torch():
    ours, theirs = _pair()
    ours[0].grad[0, 0] = float("nan")
    theirs[0].grad[0, 0] = float("nan")
    with pytest.raises(RuntimeError) as expected:
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as actual:
        nn.utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    assert str(actual.value) == str(expected.value)
    total = nn.utils.clip_grad_norm_(ours, 1.0)  # scaled by nan, as PyTorch does
    assert math.isnan(total.item()) and np.isnan(ours[2].grad.numpy()).all()


def test_get_total_norm_and_clip_grads_with_norm():
    ours, theirs = _pair(scale=5.0)
    total = nn.utils.get_total_norm([p.grad for p in ours if p.grad is not None], 3.0)
    ttotal = torch.nn.utils.get_total_norm([p.grad for p in theirs if p.grad is not None], 3.0)
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-5)
    nn.utils.clip_grads_with_norm_(ours, 2.0, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 2.0, ttotal)
    for p, tp in zip(ours, theirs):
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5)


def test_clip_grad_value_matches_torch():
    ours, theirs = _pair(scale=3.0)
    assert nn.utils.clip_grad_value_(ours, 1.5) is None
    torch.nn.utils.clip_grad_value_(theirs, 1.5)
    for p, tp in zip(ours, theirs):
        if p.grad is not None:
            np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())


def test_clipping_on_the_device(device):
    ours, theirs = _pair(device=device)
    total = nn.utils.clip_grad_norm_(ours, 0.5)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, 0.5)
    assert total.device.type == device
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-5)
    nn.utils.clip_grad_value_(ours, 0.1)
    torch.nn.utils.clip_grad_value_(theirs, 0.1)
    for p, tp in zip(ours, theirs):
        if p.grad is not None:
            assert p.grad.device.type == device
            np.testing.assert_allclose(p.grad.cpu().numpy(), tp.grad.numpy(), rtol=1e-5)


def test_parameters_to_vector_and_back():
    model, tmodel = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    with torch.no_grad():
        tmodel.weight.copy_(torch.tensor(model.weight.detach().numpy()))
        tmodel.bias.copy_(torch.tensor(model.bias.detach().numpy()))
    vec = nn.utils.parameters_to_vector(model.parameters())
    tvec = torch.nn.utils.parameters_to_vector(tmodel.parameters())
    np.testing.assert_array_equal(vec.detach().numpy(), tvec.detach().numpy())
    assert vec.grad_fn is not None and vec.shape == (8,)
    vec.sum().backward()  # differentiable: every parameter gets ones
    assert (model.weight.grad.numpy() == 1).all()
    weight = model.weight
    nn.utils.vector_to_parameters(nbgrad.arange(8.0), model.parameters())
    assert model.weight is weight
    np.testing.assert_array_equal(model.weight.detach().numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(model.bias.detach().numpy(), [6.0, 7.0])
    with pytest.raises(TypeError) as expected:
        torch.nn.utils.vector_to_parameters(np.ones(8), tmodel.parameters())
    with pytest.raises(TypeError) as actual:
        nn.utils.vector_to_parameters(np.ones(8), model.parameters())
    assert str(actual.value) == str(expected.value)


@pytest.mark.skipif(not hasattr(nbgrad, "float16"), reason="no float16 dtype")
def test_clip_grad_norm_of_half_gradients_accumulates_in_float32_like_torch():
    g = np.arange(8, dtype=np.float16) * 100  # squares overflow float16
    p, tp = nn.Parameter(nbgrad.ones(8, dtype=nbgrad.float16)), torch.nn.Parameter(
        torch.ones(8, dtype=torch.float16))
    p.grad, tp.grad = nbgrad.tensor(g), torch.tensor(g)
    total = nn.utils.clip_grad_norm_([p], 1.0)
    ttotal = torch.nn.utils.clip_grad_norm_([tp], 1.0)
    assert total.dtype == nbgrad.float16 and total.item() == ttotal.item()
    np.testing.assert_allclose(p.grad.numpy().astype(np.float32),
                               tp.grad.numpy().astype(np.float32), rtol=1e-3)
