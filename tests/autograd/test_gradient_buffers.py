"""The engine hands a new gradient buffer to a leaf as its ``.grad`` without a
copy, and adds later gradients into a buffer in place, only when nothing else
can see that buffer. These tests check the cases where something else can: a
``.grad`` must never share memory with another leaf's ``.grad``, with the
gradient the user passed, with a retained gradient or with a tensor a hook
kept, and later accumulation must not change what the user holds. Values are
checked against PyTorch.
"""
import numpy as np
import pytest
import torch

import nbgrad


def _pair(values):
    return (nbgrad.tensor(values, requires_grad=True),
            torch.tensor(values, dtype=torch.float32, requires_grad=True))


def _shares(a, b):
    return np.shares_memory(np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()))


def _assert_disjoint(*tensors):
    for i, a in enumerate(tensors):
        for b in tensors[i + 1:]:
            assert not _shares(a, b)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_leaves_of_one_node_get_separate_gradients(op):
    (a, ta), (b, tb) = _pair([1.0, 2.0, 3.0]), _pair([4.0, 5.0, 6.0])
    g = nbgrad.tensor([1.0, -1.0, 0.5])
    getattr(a, op)(b).backward(g)
    getattr(ta, op)(tb).backward(torch.tensor([1.0, -1.0, 0.5]))
    _assert_disjoint(a.grad, b.grad, g)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy())


def test_the_same_leaf_twice_sums_both_gradients():
    (a, ta) = _pair([1.0, -2.0, 3.0])
    (a * a).sigmoid().sum().backward()
    (ta * ta).sigmoid().sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    first = a.grad
    (a * a).sigmoid().sum().backward()  # accumulates into the same .grad
    (ta * ta).sigmoid().sum().backward()
    assert a.grad is first
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)


def test_a_gradient_given_to_a_hook_is_not_taken_as_grad():
    (a, ta) = _pair([1.0, 2.0])
    kept, tkept = [], []
    a.register_hook(kept.append)
    ta.register_hook(tkept.append)
    for _ in range(2):
        (a * 3).sigmoid().sum().backward()
        (ta * 3).sigmoid().sum().backward()
    assert not _shares(a.grad, kept[0])
    np.testing.assert_allclose(kept[0].numpy(), tkept[0].numpy(), rtol=1e-6)  # not accumulated into
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)


def test_a_retained_gradient_is_not_shared_with_a_leaf():
    (a, ta), (b, tb) = _pair([1.0, 2.0]), _pair([3.0, -1.0])
    z, tz = a + b, ta + tb
    z.retain_grad()
    tz.retain_grad()
    for _ in range(2):
        (z * 3).sum().backward(retain_graph=True)
        (tz * 3).sum().backward(retain_graph=True)
    _assert_disjoint(a.grad, b.grad, z.grad)
    for ours, theirs in ((a, ta), (b, tb), (z, tz)):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


def test_a_broadcast_input_gets_its_own_summed_gradient():
    (a, ta), (b, tb) = _pair([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), _pair([0.5])
    for _ in range(2):
        (a * b + b).exp().sum().backward()
        (ta * tb + tb).exp().sum().backward()
    _assert_disjoint(a.grad, b.grad)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5)


def test_autograd_grad_and_backward_inputs_return_unshared_gradients():
    (a, _), (b, _) = _pair([1.0, 2.0]), _pair([3.0, 4.0])
    y = (a * b).exp()
    ga, gb = nbgrad.autograd.grad(y.sum(), [a, b], retain_graph=True)
    _assert_disjoint(ga, gb)
    y.sum().backward(inputs=[a, b])
    _assert_disjoint(a.grad, b.grad, ga, gb)
    np.testing.assert_allclose(a.grad.numpy(), ga.numpy())
